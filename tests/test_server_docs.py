"""``/docs`` renders with the network off: headless Chromium, every host but the server
unresolvable, shows the API's operations from Swagger UI files the package serves itself
(FastAPI's default page loads them from a CDN and stays blank offline).

Skipped (with the reason) only where Chromium or its driver is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser import chromium, nard_serve, needs_browser
from test_web_board import wait

pytestmark = needs_browser

OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
"""Chromium resolves no host name at all: a CDN is as unreachable as without a network."""


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with nard_serve() as url:
        yield url


@pytest.fixture(scope="module")
def offline_browser() -> Iterator[object]:
    with chromium(extra=(OFFLINE,), script_timeout=30) as driver:
        yield driver


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
