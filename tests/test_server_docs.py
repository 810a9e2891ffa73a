"""``/docs`` renders with the network off: headless Chromium, every host but the server
unresolvable, shows the API's operations from Swagger UI files the package serves itself
(FastAPI's default page loads them from a CDN and stays blank offline).

Skipped (with the reason) only where Chromium or its driver is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_web_board import CHROMEDRIVER, CHROMIUM, free_port, wait

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason=f"headless browser test needs {CHROMIUM} and chromedriver",
)

OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
"""Chromium resolves no host name at all: a CDN is as unreachable as without a network."""


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nard_rl", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 180
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


@pytest.fixture(scope="module")
def offline_browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="nard-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
        OFFLINE,
    ):
        opts.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_docs_render_the_operations_offline(server: str, offline_browser: object) -> None:
    d: object = offline_browser
    d.get(server + "/docs")  # type: ignore[attr-defined]
    # the control: the CDN FastAPI's default page uses cannot be reached from here
    cdn = d.execute_async_script(  # type: ignore[attr-defined]
        "const done = arguments[0]; const s = document.createElement('script');"
        "s.src = 'https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui-bundle.js';"
        "s.onload = () => done('loaded'); s.onerror = () => done('blocked');"
        "document.head.appendChild(s);"
    )
    assert cdn == "blocked"
    count = "return document.querySelectorAll('.opblock').length"
    wait(d, lambda drv: drv.execute_script(count) >= 10, timeout=60)
    paths = d.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('.opblock-summary-path')].map(e => e.innerText)"
    )
    for route in ("/v1/hint", "/v1/evaluate", "/v1/games", "/move", "/health"):
        assert any(p.replace("\u200b", "") == route for p in paths), (route, paths)
    title = d.execute_script("return document.querySelector('.title').innerText")  # type: ignore[attr-defined]
    assert "nard-rl" in title
    resources = d.execute_script(  # type: ignore[attr-defined]
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert all(r.startswith(server) for r in resources if "jsdelivr" not in r), resources
