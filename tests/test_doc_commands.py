"""Every ``cbai`` command shown in README.md and docs/*.md runs on a fresh clone.

Which lines are commands, which run, and the exit code each must end with: the rule of
:mod:`tests.doc_commands` (fenced shell blocks, ``$ `` transcripts, ``<!-- not-run:
REASON -->`` before a block that is not meant to run, only commands whose first word is
``cbai``; ``pip install``, ``git clone``, ``python …`` and every other line are not run).

Each page gets a folder holding the files a fresh clone has (the files git tracks, copied
from this checkout), and its commands run there in the page's order through bash (so
``> run.json`` and ``| python …`` work, and a file one command makes is there for the
next), with ``cbai`` on PATH running this checkout's code, standard input empty. A command
must end with the exit code the page shows, with the ``cbai: error:`` lines it shows and
no others, and no traceback.

Cheap variants, so that the suite stays fast (the rule, applied to a command's text before
it runs; nothing else is changed):

- ``--seeds N`` becomes at most :data:`SEEDS` and ``--runs N`` at most :data:`RUNS`; a
  ``cbai compare --config STUDY`` without ``--seeds`` gets ``--seeds SEEDS`` (the study
  file's count would apply), and one whose study file sets a ``budget`` above
  :data:`BUDGET` gets ``--budget BUDGET`` (command-line values win over the study's);
- ``cbai driver-arms --n N`` builds at most ``max(64, 1 + K)`` policies, K the largest arm
  index any command of the page names with ``--arm K`` (the first n policies of a seed are
  the same for every n, so those arms are the ones the page means);
- ``cbai session serve`` listens on ``--port 0`` (a free port, not one another program may
  hold), runs until it prints its two links, and is then stopped with SIGTERM, which ends
  it with exit code 0.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from tests.doc_commands import Command, commands, fenced_blocks, shows

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SEEDS, RUNS, BUDGET = 1, 3, 200
#: Fewest policies a capped ``driver-arms --n`` builds.
DRIVER_POLICIES = 64
#: Guards against a command that hangs (never a measure of speed): a first run compiles
#: numba kernels, and a loaded machine is slow.
HANG_SECONDS = 1800


def _runnable(page: Path) -> list[Command]:
    return [command for command in commands(page)[0] if command.runs]


RUN_PAGES = [page for page in PAGES if _runnable(page)]


# ------------------------------------------------------------------ the rule of extraction


def test_the_rule_reads_transcripts_scripts_continuations_markers_and_shown_errors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "Prose with `cbai inline --not-a-command`.",
        "```console",
        "$ cbai solve a.yaml \\",
        "      --runs 5",
        "output line",
        "$ cbai solve b.yaml --algo acl",
        "cbai: error: unknown algorithm 'acl'; did you mean 'acol'? (valid: …)",
        "$ python3 -m pip install .",
        "```",
        "",
        "<!-- not-run: a synopsis -->",
        "",
        "```bash",
        "cbai solve FILE [--json]",
        "```",
        "```",
        "# a comment",
        "cbai bound c.yaml",
        "```",
        "```yaml",
        "cbai: not a command",
        "```",
        "- a list item:",
        "  ```console",
        "  $ cbai generate regret-1d",
        "  ```",
    ]))
    found, skipped = commands(page)
    assert [(command.line, command.text, command.exit_code, command.runs) for command in found] == [
        (3, "cbai solve a.yaml --runs 5", 0, True),
        (6, "cbai solve b.yaml --algo acl", 2, True),
        (8, "python3 -m pip install .", 0, False),
        (18, "cbai bound c.yaml", 0, True),
        (25, "cbai generate regret-1d", 0, True)]
    assert found[1].errors == ("cbai: error: unknown algorithm 'acl'; did you mean 'acol'? (valid: …)",)
    assert skipped == [(14, "a synopsis")]
    assert shows(found[1].errors[0], "cbai: error: unknown algorithm 'acl'; did you mean 'acol'? (valid: acol, x)")
    assert not shows(found[1].errors[0], "cbai: error: unknown algorithm 'acl'")


def test_a_not_run_marker_needs_its_reason(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- not-run: -->\n```bash\ncbai solve x.yaml\n```\n")
    with pytest.raises(ValueError, match="without its reason"):
        commands(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_not_run_marker_stands_before_a_shell_block(page):
    markers = re.findall(r"^\s*<!--\s*not-run:", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(markers) == len(commands(page)[1]), "a not-run marker that marks no shell block"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_cbai_command_hides_in_a_block_the_rule_does_not_read(page):
    # a block tagged ```text (or any other language) would keep its commands from being run
    hidden = [f"{page.name}:{block.line + number}: {line}" for block in fenced_blocks(page.read_text(encoding="utf-8"))
              if not block.shell for number, line in enumerate(block.lines) if re.match(r"\s*(\$ )?cbai\s", line)]
    assert not hidden


def test_the_pages_show_commands_to_run():
    # the rule still finds the README's commands (a change of fences would silently drop them)
    assert len(_runnable(ROOT / "README.md")) >= 10


# ------------------------------------------------------------------ cheap variants


def test_cheap_variants_cap_seeds_runs_budgets_and_policies_and_give_servers_a_free_port(tmp_path):
    (tmp_path / "study.yaml").write_text("seeds: 30\noptions: {budget: 1000000}\n")
    (tmp_path / "cheap.yaml").write_text("options: {budget: 100}\n")
    assert cheap("cbai solve x.yaml --runs 20 --seed 4", 600, tmp_path) == "cbai solve x.yaml --runs 3 --seed 4"
    assert cheap("cbai solve x.yaml --runs=2", 600, tmp_path) == "cbai solve x.yaml --runs=2"
    assert cheap("cbai compare a --seeds 30 --out r.sqlite", 600, tmp_path) == "cbai compare a --seeds 1 --out r.sqlite"
    assert cheap("cbai compare --config study.yaml --out r.sqlite", 600, tmp_path) \
        == "cbai compare --seeds 1 --budget 200 --config study.yaml --out r.sqlite"
    assert cheap("cbai compare --config cheap.yaml --seeds 10 | python x.py -", 600, tmp_path) \
        == "cbai compare --config cheap.yaml --seeds 1 | python x.py -"
    assert cheap("cbai driver-arms --n 1000 --seed 0 -o a.npz", 508, tmp_path) \
        == "cbai driver-arms --n 508 --seed 0 -o a.npz"
    assert cheap("cbai generate unit-sphere --d 3 --n 1000", 64, tmp_path) == "cbai generate unit-sphere --d 3 --n 1000"
    assert cheap("cbai session serve s.db", 64, tmp_path) == "cbai session serve --port 0 s.db"


def cheap(text: str, policies: int, folder: Path) -> str:
    """``text``, a command run in ``folder``, made cheap by the rule of this module's
    docstring; ``policies`` is the most ``driver-arms --n`` may build."""
    text = re.sub(r"(?<!\S)(--seeds|--runs)(\s+|=)(\d+)",
                  lambda match: f"{match[1]}{match[2]}{min(int(match[3]), SEEDS if match[1] == '--seeds' else RUNS)}",
                  text)
    if re.match(r"cbai\s+driver-arms\s", text):
        text = re.sub(r"(?<!\S)--n(\s+|=)(\d+)", lambda match: f"--n{match[1]}{min(int(match[2]), policies)}", text)
    added = []
    study = re.search(r"(?<!\S)--config(?:\s+|=)(\S+)", text)
    if re.match(r"cbai\s+compare\s", text) and study is not None:
        if not re.search(r"(?<!\S)--seeds(\s|=)", text):
            added.append(f"--seeds {SEEDS}")
        budget = (yaml.safe_load((folder / study[1]).read_text()).get("options") or {}).get("budget")
        if budget is not None and budget > BUDGET and not re.search(r"(?<!\S)--budget(\s|=)", text):
            added.append(f"--budget {BUDGET}")
    if _serves(text):
        added.append("--port 0")
    if added:
        subcommand = re.match(r"cbai\s+(session\s+\S+|\S+)", text)
        text = f"{subcommand[0]} {' '.join(added)}{text[subcommand.end():]}"
    return text


def _serves(text: str) -> bool:
    return re.match(r"cbai\s+session\s+serve\s", text) is not None


def policies_cap(page_commands: list[Command]) -> int:
    """The most policies a ``driver-arms --n`` of the page builds: every arm the page names
    with ``--arm K`` must exist."""
    named = [int(arm) for command in page_commands for arm in re.findall(r"(?<!\S)--arm(?:\s+|=)(\d+)", command.text)]
    return max([DRIVER_POLICIES, *(arm + 1 for arm in named)])


# ------------------------------------------------------------------ running them


@lru_cache(maxsize=1)
def shipped_files() -> tuple[str, ...]:
    """The files a fresh clone of this checkout has: git's tracked files (a file not yet
    added is not shipped)."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if listed.returncode != 0:
        return ()
    return tuple(name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file())


@pytest.fixture
def clone(tmp_path) -> Path:
    """A folder with the files of a fresh clone."""
    files = shipped_files() if shutil.which("git") else ()
    if not files:
        pytest.skip("needs git and a git checkout: the files of a fresh clone are the files git tracks")
    folder = tmp_path / "clone"
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / name)
    return folder


@pytest.fixture
def shell_environment(tmp_path) -> dict[str, str]:
    """The environment of the commands: ``cbai`` on PATH runs this checkout's code with
    this interpreter, whose folder (``python``) comes next.

    ``cbai`` is a script, as an installed console script is: ``python -m cbai_cli`` would
    import the clone's copy of the package from the working folder, and compile its
    kernels anew in every clone."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "cbai").write_text(f'#!{sys.executable}\nfrom cbai_cli.entry import main\n\nif __name__ == "__main__":\n'
                                "    main()\n")  # guarded: worker processes are spawned, and import it again
    (tools / "cbai").chmod(0o755)
    path = os.pathsep.join([str(tools), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": path, "PYTHONPATH": python_path}


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="the pages' commands are bash")


@needs_bash
@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda page: page.name)
def test_every_command_of_the_page_runs_on_a_fresh_clone(page, clone, shell_environment):
    run_in_order(_runnable(page), clone, shell_environment)


def run_in_order(page_commands: list[Command], folder: Path, environment: dict[str, str]) -> None:
    """Run the commands of a page one after the other in ``folder`` (cheap variants); each
    must end as the page shows, or this fails naming it."""
    policies = policies_cap(page_commands)
    for command in page_commands:
        text = cheap(command.text, policies, folder)
        if _serves(text):
            code, stderr = serve_until_ready(text, folder, environment)
        else:
            process = subprocess.run(["bash", "-o", "pipefail", "-c", text], cwd=folder, env=environment,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, timeout=HANG_SECONDS)
            code, stderr = process.returncode, process.stderr
        said = f"{command.where}: {text}\nexit code {code}, stderr:\n{stderr[-3000:]}"
        assert code == command.exit_code and "Traceback" not in stderr, said
        errors = [line for line in stderr.splitlines() if line.startswith("cbai: error:")]
        assert len(errors) == len(command.errors) and all(map(shows, command.errors, errors)), said


def serve_until_ready(text: str, folder: Path, environment: dict[str, str]) -> tuple[int, str]:
    """Run the server command ``text`` until it prints its two links, then stop it with
    SIGTERM; its exit code and stderr (the exit code is the server's own when it ends
    before that)."""
    process = subprocess.Popen(["bash", "-c", f"exec {text}"], cwd=folder, env=environment, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_pass_lines, args=(process.stdout, lines), daemon=True).start()
    links = set()
    try:
        while links != {"rater page", "dashboard"}:
            line = lines.get(timeout=HANG_SECONDS)
            if line is None:  # it ended before it listened
                break
            links.add(line.partition(": ")[0])
        else:
            process.send_signal(signal.SIGTERM)
        stderr = process.stderr.read()
        return process.wait(timeout=HANG_SECONDS), stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _pass_lines(stream, lines: queue.Queue) -> None:
    """Put every line of ``stream`` into ``lines``, then None."""
    for line in stream:
        lines.put(line)
    lines.put(None)


@needs_bash
@pytest.mark.parametrize("shown, fails", [
    ("$ cbai solve missing.yaml", True),  # exit code 2 where the page shows success
    ("$ cbai solve missing.yaml\ncbai: error: missing.yaml: no such file", False),
    ("$ cbai solve missing.yaml\ncbai: error: missing.yaml: … is a folder", True),  # another error than shown
])
def test_a_command_that_ends_otherwise_than_its_page_shows_fails_the_page(shown, fails, tmp_path,
                                                                           shell_environment):
    page = tmp_path / "page.md"
    page.write_text(f"```console\n{shown}\n```\n")
    if fails:
        with pytest.raises(AssertionError, match="page.md:2: cbai solve missing.yaml"):
            run_in_order(_runnable(page), tmp_path, shell_environment)
    else:
        run_in_order(_runnable(page), tmp_path, shell_environment)
