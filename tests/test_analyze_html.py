"""The analysis reports in headless Chromium (Debian's ``chromium`` and ``chromedriver``):
the ``--html`` page with its matplotlib chart and marked decisions, and the web board's
analysis page served by ``nard serve`` (upload a match file, step through the decisions,
the chart, the "Roll out" button), each checked by a screenshot that must show them.

Skipped (with the reason) only where Chromium or its driver is not installed.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import chromium, free_port, needs_browser

DATA = Path(__file__).parent / "data" / "records"

pytestmark = needs_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium(window="1300,1400") as driver:
        yield driver


def wait(driver: object, predicate: Callable[[object], object], timeout: float = 120.0) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: predicate(d))


def _screenshot_shows_content(png: bytes) -> np.ndarray:
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int64)
    assert img.shape[0] > 400 and img.shape[1] > 400
    assert img.std() > 20  # not a blank page
    return img


def _has_colour(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 40) -> bool:
    return bool((np.abs(img - np.array(rgb)).sum(axis=2) < tol).sum() > 50)


def test_html_report_in_chromium(browser: object, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from nard_rl.analysis import MatchAnalyser, Settings, analyse
    from nard_rl.analysis.report import html_report
    from nard_rl.records import load_match

    result = analyse(
        load_match(DATA / "gnubg_3pt.mat"), MatchAnalyser.load("default", Settings(ply=0))
    ).to_dict()
    page = tmp_path / "report.html"
    page.write_text(html_report(result))
    d = browser
    d.get(page.as_uri())  # type: ignore[attr-defined]
    assert "Alice vs Bob" in d.title  # type: ignore[attr-defined]
    chart = d.find_element(By.ID, "chart")  # type: ignore[attr-defined]
    wait(d, lambda _: chart.get_property("naturalWidth") > 0, 20)
    assert chart.get_property("naturalWidth") == 1000  # the matplotlib figure, 10 in at 100 dpi
    marked = [x for x in result["decisions"] if x["mark"]]
    boxes = d.find_elements(By.CSS_SELECTOR, "#decisions .decision")  # type: ignore[attr-defined]
    assert len(boxes) == len(marked) > 0
    assert marked[0]["best"] in boxes[0].text
    rows = d.find_elements(By.CSS_SELECTOR, "#players tr")  # type: ignore[attr-defined]
    assert "Overall error rate" in " ".join(r.text for r in rows)
    img = _screenshot_shows_content(d.get_screenshot_as_png())  # type: ignore[attr-defined]
    assert _has_colour(img, (0x1F, 0x5F, 0xA8))  # the chart's line for player 0
    (tmp_path / "report.png").write_bytes(d.get_screenshot_as_png())  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    import uvicorn

    from nard_rl.server.app import create_app

    port = free_port()
    config = uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    end = time.monotonic() + 120
    while not srv.started:
        if time.monotonic() > end or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=30)


@pytest.mark.slow
def test_analysis_page_in_chromium(server: str, browser: object, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(server + "/analysis")  # type: ignore[attr-defined]
    find = d.find_element  # type: ignore[attr-defined]
    find(By.ID, "match-file").send_keys(str(DATA / "gnubg_3pt.sgf"))
    Select(find(By.ID, "an-ply")).select_by_visible_text("0")
    find(By.ID, "btn-upload").click()
    items = lambda: d.find_elements(By.CSS_SELECTOR, "#decision-list li")  # type: ignore[attr-defined]  # noqa: E731
    wait(d, lambda _: len(items()) > 0)
    state = d.execute_script("return window.nardAnalysis.state().result")  # type: ignore[attr-defined]
    assert len(items()) == len(state["decisions"])
    assert "Alice" in find(By.ID, "players").text and "Bob" in find(By.ID, "players").text
    chart = find(By.ID, "chart")
    wait(d, lambda _: chart.get_property("naturalWidth") > 0, 60)

    # step to the worst decision through the "only marked" list
    find(By.ID, "only-marked").click()
    marked = [x for x in state["decisions"] if x["mark"]]
    assert len(items()) == len(marked) > 0
    items()[0].click()
    first = marked[0]
    assert f"move {first['move_number']}" in find(By.ID, "dec-title").text
    assert first["best"] in find(By.ID, "dec-best").text
    assert f"{first['equity_lost']:.1f}" in find(By.ID, "dec-lost").text
    checkers = d.find_elements(By.CSS_SELECTOR, "#an-board circle")  # type: ignore[attr-defined]
    assert 20 <= len(checkers) <= 30  # up to five drawn per point, both sides
    find(By.ID, "btn-next").click()
    if len(marked) > 1:
        assert f"move {marked[1]['move_number']}" in find(By.ID, "dec-title").text

    # the rollout button: a result from /v1/rollout, or a plain notice without it
    find(By.ID, "rollout-trials").clear()
    find(By.ID, "rollout-trials").send_keys("36")
    find(By.ID, "btn-rollout").click()
    out = lambda: find(By.ID, "rollout-result").text  # noqa: E731
    wait(d, lambda _: out() and not out().startswith(("Starting", "Rolling")), 120)
    assert "undefined" not in out() and "TypeError" not in out()
    assert out().startswith(
        ("Rollout, 36 trials", "This server has no rollouts", "Rollout refused")
    )

    png = d.get_screenshot_as_png()  # type: ignore[attr-defined]
    (tmp_path / "analysis_page.png").write_bytes(png)
    img = _screenshot_shows_content(png)
    assert _has_colour(img, (0xF3, 0xEC, 0xD9))  # the board
    assert _has_colour(img, (0x1F, 0x5F, 0xA8))  # the chart
