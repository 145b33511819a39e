"""The screenshots of docs/img: the rater page on a phone-sized screen and the dashboard.

Builds a driver study (`cbai driver-arms --n 40 --seed 3 --no-truth`, the default
algorithm), serves it, answers a few hundred questions through the API from the scenario's
hidden truth (so the dashboard has intervals to show), and photographs both pages in
Debian's headless Chromium (/usr/bin/chromium, /usr/bin/chromedriver, Selenium). Not run
by CI.

    python benchmarks/serve_screenshots.py --out docs/img
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
TOKEN = "screenshot-token-0123"


def cbai(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "cbai_cli", *args], check=True, env=ENV, capture_output=True)


def call(base: str, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(base + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def browser(width: int, height: int):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--window-size={width},{height}", f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def photograph(url: str, size: tuple[int, int], path: Path) -> None:
    """A screenshot of the page at ``url`` in a window of ``size`` (pixels), once it has loaded."""
    window = browser(*size)
    try:
        window.get(url)
        time.sleep(2)  # the page's first request for a question
        window.save_screenshot(str(path))
    finally:
        window.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--answers", type=int, default=120)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    truth, bare, study = folder / "drive.npz", folder / "drive-study.npz", folder / "drive.db"
    cbai("driver-arms", "--n", "40", "--seed", "3", "-o", str(truth), "-q")
    cbai("driver-arms", "--n", "40", "--seed", "3", "--no-truth", "-o", str(bare), "-q")
    cbai("session", "start", str(bare), "-o", str(study))
    from cbai_cli.kinds import load

    hidden = load(truth)
    means = hidden.truth.means(hidden.problem.arms)
    rng = np.random.default_rng(0)
    server = subprocess.Popen([sys.executable, "-m", "cbai_cli", "session", "serve", str(study), "--port", "0",
                               "--token", TOKEN, "--undo-seconds", "0"], env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        base = line.split()[-1].split("/?")[0]
        server.stdout.readline()
        for number in range(args.answers):
            rater = f"rater-{number % 3}"
            query = call(base, "GET", f"/api/next?rater={rater}")["query"]
            if query is None:
                break
            # binary answers: "no" (+1, unsafe) with probability (φᵀx + 1)/2
            unsafe = rng.random() < (means[query["arm"]] + 1) / 2
            call(base, "POST", "/api/answer", {"id": query["id"], "rater": rater, "answer": "no" if unsafe else "yes"})
        args.out.mkdir(parents=True, exist_ok=True)
        photograph(f"{base}/?token={TOKEN}&rater=bea", (420, 760), args.out / "serve-rater.png")  # a phone
        photograph(f"{base}/dashboard?token={TOKEN}", (1280, 1000), args.out / "serve-dashboard.png")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"wrote {args.out / 'serve-rater.png'} and {args.out / 'serve-dashboard.png'}")


if __name__ == "__main__":
    main()
