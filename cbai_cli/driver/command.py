"""``cbai driver-arms`` as one library call: build a driver instance, or draw its policies
(Lindner et al. 2022, §4.3 and Appendix C)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path

from cbai_cli.contracts.errors import OptionError


def driver_arms(output: str | Path | None, *, show: str | Path | None = None, arms: Sequence[int] = (),
                highlight: int | None = None, solved: str | Path | None = None, n: int | None = None,
                seed: int | None = None, scenario: str | None = None, jobs: int | None = None,
                feedback: str | None = None, sigma: float | None = None, rescale_rewards: bool = False,
                policies: str | Path | None = None, no_truth: bool = False,
                progress: Callable[[int], None] | None = None) -> list[str]:
    """Build (``output`` an instance file) or, with ``show``, draw (``output`` a picture);
    returns the lines that say what was written. ``None`` means not given. Options of the
    other mode are one-line errors, and so is an output that cannot be written (checked
    before the CEM runs, and again when writing)."""
    building = {"--n": n, "--seed": seed, "--scenario": scenario, "--jobs": jobs, "--feedback": feedback,
                "--sigma": sigma, "--policies": policies, "--rescale-rewards": rescale_rewards or None,
                "--no-truth": no_truth or None}
    from cbai_cli.io.outputs import check_writable, typed_path, write_errors

    if show is not None:
        given = [name for name, value in building.items() if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise OptionError(f"{', '.join(given)} {verb} only when building an instance, not with --show")
        if output is None:
            raise OptionError("--show needs -o PICTURE (.png, .pdf or .svg)")
        typed_path(output, "-o")  # the text as typed: a trailing slash still shows (draw checks the rest)
        from cbai_cli.driver.show import draw

        return [draw(show, output, arms, highlight, solved)]
    if arms or highlight is not None or solved is not None:
        raise OptionError("--arm, --highlight and --solved draw pictures: use them with --show FILE")
    from cbai_cli.driver.instances import build_driver_files, output_paths, scenario_names

    if output is not None:  # every file the scenarios will write, checked before the CEM runs
        if str(output) != "-":  # the text as typed first: a trailing slash still shows
            typed_path(output, "-o")
        for path in output_paths(output, scenario_names(scenario if scenario is not None else "base")).values():
            check_writable(path, "-o")
    with write_errors(output, "-o") if output is not None else nullcontext():
        return build_driver_files(output, n=n, seed=seed, scenario=scenario, jobs=jobs, feedback=feedback,
                                  sigma=sigma, rescale_rewards=rescale_rewards, policies=policies,
                                  truth=not no_truth, progress=None if progress is None else lambda done, total: progress(done))
