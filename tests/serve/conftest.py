"""Real servers of ``cbai session serve`` on 127.0.0.1, a client for their API, and a
headless browser.

:func:`serve` starts ``python -m cbai_cli session serve STUDY --port 0`` from this checkout
and waits for its ready line (the first start compiles the algorithm's kernels, about half
a minute; later ones load them from numba's cache). The browser is Debian's headless
Chromium driven by Selenium through /usr/bin/chromedriver, so nothing is downloaded; where
it is missing the browser tests skip with one line, except in CI (``CI`` set), where they
fail.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds import save

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
       "CBAI_PROGRESS_INTERVAL": "1000000"}  # no progress lines beside the ones a test reads
TOKEN = "test-token-0123456789"
#: How long a server may take to say it is ready: a first start compiles numba kernels.
READY_SECONDS = 240
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def cbai(*args: Any, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m cbai_cli ARGS`` as a process of this checkout."""
    return subprocess.run([sys.executable, "-m", "cbai_cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


@dataclass
class Server:
    """A running ``cbai session serve``: its process, its base address and token."""

    process: subprocess.Popen
    base: str
    token: str
    study: Path
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(urlsplit(self.base).port)

    def url(self, path: str, token: bool = True) -> str:
        if not token:
            return self.base + path
        return f"{self.base}{path}{'&' if '?' in path else '?'}token={self.token}"

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = "", raw: bytes | None = None,
             timeout: float = 30) -> tuple[int, Any]:
        """One request: the status and the decoded JSON (text when the reply is not JSON).
        ``token`` "" sends the server's own as a Bearer header, None sends none."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token or self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, kind, payload = response.status, response.headers.get("Content-Type", ""), response.read()
        except urllib.error.HTTPError as error:
            status, kind, payload = error.code, error.headers.get("Content-Type", ""), error.read()
        if kind.startswith("application/json"):
            return status, json.loads(payload)
        return status, payload.decode("utf-8", "replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send ``sig`` and wait for the process; its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def describe(self) -> str:
        return "stdout: " + "".join(self.stdout) + "\nstderr: " + "".join(self.stderr)[-3000:]


def _pump(stream, lines: list[str], seen: queue.Queue | None) -> None:
    for line in iter(stream.readline, ""):
        lines.append(line)
        if seen is not None:
            seen.put(line)
    stream.close()
    if seen is not None:
        seen.put(None)


def start_server(study: Path, *args: Any, token: str = TOKEN, port: int = 0) -> Server:
    """Start a server of ``study`` and wait for its two links."""
    process = subprocess.Popen([sys.executable, "-m", "cbai_cli", "session", "serve", str(study), "--port", str(port),
                                "--token", token, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=ENV)
    server = Server(process, "", token, Path(study))
    seen: queue.Queue = queue.Queue()
    threading.Thread(target=_pump, args=(process.stdout, server.stdout, seen), daemon=True).start()
    threading.Thread(target=_pump, args=(process.stderr, server.stderr, None), daemon=True).start()
    deadline = time.monotonic() + READY_SECONDS
    links = {}
    while "dashboard" not in links:
        try:
            line = seen.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            process.kill()
            process.wait()
            raise AssertionError(f"no ready line within {READY_SECONDS} s\n" + server.describe()) from None
        if line is None:
            process.wait()
            raise AssertionError(f"the server ended with {process.returncode}\n" + server.describe())
        name, _, link = line.strip().partition(": ")
        links[name] = link
    assert set(links) == {"rater page", "dashboard"}, links
    parts = urlsplit(links["rater page"])
    server.base = f"{parts.scheme}://{parts.netloc}"
    assert links["rater page"] == f"{server.base}/?token={token}"
    assert links["dashboard"] == f"{server.base}/dashboard?token={token}"
    return server


@pytest.fixture
def serve():
    """Start servers (``serve(study, *options)``); each is stopped after the test."""
    started: list[Server] = []

    def start(study: Path, *args: Any, **options: Any) -> Server:
        server = start_server(study, *args, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


# ------------------------------------------------------------------ studies


def gaussian_instance(path: Path) -> Path:
    """Five arms in d = 4 with Gaussian answers (σ = 0.05), arm 3 the answer; with its truth."""
    save(generate_instance("irrelevant-dims", d=4, eps=0.2), path)
    return path


def binary_instance(path: Path) -> Path:
    """Two arms with yes/no answers ("yes" counts against feasibility); arm 1 the answer."""
    path.write_text("kind: cbai\nname: two\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 0.5]\n"
                    "constraint: [0.5, -0.5]\nthreshold: 0.0\nnoise: {kind: binary}\n")
    return path


def driver_instance(path: Path) -> Path:
    """A small driver-like instance with yes/no answers: three policies of the base scenario
    (so each arm's trajectory can be drawn) as three independent arms, the first the
    answer; with its truth (arm 1 is infeasible)."""
    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.kinds.cbai.instance import save as save_instance
    from cbai_cli.kinds.cbai.noise import BinaryNoise

    actions = np.zeros((3, 20, 2))
    actions[0, :, 1] = 0.5  # steer one way
    actions[1] = np.random.default_rng(1).uniform(-1, 1, (20, 2))  # swerve
    actions[2, :, 0] = 0.3  # go straight, faster
    save_instance(Instance(name="drive-3", arms=np.eye(3), constraint=np.array([-0.8, 0.8, -0.8]),
                           reward_values=np.array([3.0, 2.0, 1.0]), threshold=0.0, noise=BinaryNoise(),
                           meta={"generator": "driver-arms", "scenario": "base",
                                 "labels": ["gentle left", "swerve", "straight ahead"]},
                           data={"actions": actions}), path)
    return path


def start_study(instance: Path, study: Path, algorithm: str, **options: Any) -> Path:
    """A new study of ``instance`` (its truth left out, as ``cbai session start`` does)."""
    from cbai_cli.session.session import Session

    Session.start(study, instance, algorithm, **options).close()
    return study


# ------------------------------------------------------------------ the browser


def browser_missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for program in (CHROMIUM, CHROMEDRIVER):
        if not program.exists() and shutil.which(program.name) is None:
            return f"{program} is not installed (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture
def browser(tmp_path):
    """A headless Chromium, driven through Debian's chromedriver; skips (fails in CI) without one."""
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests need a browser in CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--window-size=420,900", f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(argument)
    options.binary_location = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    driver_path = CHROMEDRIVER if CHROMEDRIVER.exists() else Path(shutil.which("chromedriver"))
    # an explicit driver: selenium-manager never looks for (nor downloads) one
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
