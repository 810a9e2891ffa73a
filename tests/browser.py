"""Headless Chromium and a ``nard serve`` process for the browser tests (the web board,
offline ``/docs``, the analysis pages): one home for the driver's flags, the skip when
Debian's ``chromium``/``chromedriver`` are absent, and the server start-up."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

needs_browser = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason=f"headless browser test needs {CHROMIUM} and chromedriver (apt-get install chromium "
    "chromium-driver)",
)
"""Skip, saying why, only where Chromium or its driver is not installed."""

FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)
"""Without the background-networking flags Chromium keeps dialling out on a closed network."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def nard_serve(*args: str, timeout: float = 180.0) -> Iterator[str]:
    """``nard serve`` started from its command on a free port; yields its URL once
    ``/health`` answers, and stops it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nard_rl", "serve", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > end:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise RuntimeError(f"nard serve did not start: {err[-2000:]}") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextlib.contextmanager
def chromium(
    window: str = "1400,1000", extra: tuple[str, ...] = (), script_timeout: float = 60.0
) -> Iterator[object]:
    """A headless Chromium driver with its own fresh profile (removed afterwards)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="nard-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--window-size={window}", f"--user-data-dir={profile}", *extra):
        opts.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(script_timeout)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
