"""The web board in headless Chromium (Debian's ``chromium`` and ``chromedriver``), against
``nard serve`` started from its command: play moves by clicking and dragging checkers,
commit, ask for a hint and a cube analysis, analyse pasted IDs, flip the home board side,
and take a screenshot that must show the board.

Skipped (with the reason) only where Chromium or its driver is not installed.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason=f"headless browser test needs {CHROMIUM} and chromedriver (apt-get install chromium "
    "chromium-driver)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
def browser() -> Iterator[object]:
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
    ):
        opts.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait(driver: object, predicate: Callable[[object], object], timeout: float = 120.0) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: predicate(d))


def steps_of(move: str) -> list[tuple[int, int]]:
    """(from, to) single-checker steps of a simple move text (bar 25, off 0)."""
    out: list[tuple[int, int]] = []
    for part in move.split():
        m = re.fullmatch(r"([^()]+)(?:\((\d)\))?", part)
        assert m, part
        points = [25 if p == "bar" else 0 if p == "off" else int(p)
                  for p in m.group(1).replace("*", "").split("/")]  # fmt: skip
        for _ in range(int(m.group(2) or 1)):
            out.extend(itertools.pairwise(points))
    return out


def test_play_hint_and_analysis_in_chromium(server: str, browser: object, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    d = browser
    d.get(server + "/")  # type: ignore[attr-defined]
    assert "nard" in d.title.lower()  # type: ignore[attr-defined]
    find = d.find_element  # type: ignore[attr-defined]
    state = lambda: d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]  # noqa: E731

    # a money game in which the human wins the opening roll
    find(By.ID, "seed").send_keys("3")
    find(By.CSS_SELECTOR, "#first option[value=human]").click()
    find(By.ID, "btn-new").click()
    wait(d, lambda _: state() is not None and state()["phase"] == "opening")
    find(By.ID, "btn-roll").click()
    wait(d, lambda _: state()["phase"] == "move")
    s = state()
    play = next(p for p in s["legal_plays"] if "(" not in p["move"])
    steps = steps_of(play["move"])

    def point(p: int) -> object:
        return find(By.CSS_SELECTOR, f"rect[data-point='{p}']" if p else "#tray-off")

    # first step by dragging, the others by clicking source then destination
    src, dst = steps[0]
    ActionChains(d).drag_and_drop(point(src), point(dst)).perform()
    for src, dst in steps[1:]:
        point(src).click()
        point(dst).click()
    wait(d, lambda _: find(By.ID, "btn-commit").is_enabled(), 10)
    assert d.execute_script("return window.nard.working()") == play["board"]  # type: ignore[attr-defined]
    find(By.ID, "btn-commit").click()
    wait(d, lambda _: any("human plays" in line for line in state()["log"]))
    wait(d, lambda _: state()["to_act"] == "human" or state()["result"] is not None)
    log_items = find(By.ID, "log").find_elements(By.TAG_NAME, "li")
    assert any(play["move"] in li.text for li in log_items)

    # a hint in the game: the cube analysis before the roll, the ranked plays after it
    if state()["phase"] == "roll_or_double":
        find(By.ID, "btn-hint").click()
        wait(d, lambda _: find(By.ID, "analysis-body").find_elements(By.ID, "cube-decision"))
        find(By.ID, "btn-roll").click()
        wait(d, lambda _: state()["phase"] != "roll_or_double" or state()["to_act"] != "human")
    if state()["phase"] == "move" and state()["to_act"] == "human":
        find(By.ID, "btn-hint").click()
        wait(d, lambda _: find(By.ID, "analysis-body").find_elements(By.ID, "hint-table"))

    # paste IDs: a Position ID with dice, the same without (cube), an XGID
    pos = find(By.ID, "pos-text")
    pos.clear()
    pos.send_keys("4HPwATDgc/ABMA")
    find(By.ID, "dice-text").send_keys("31")
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: "8/5 6/5" in find(By.ID, "analysis-body").text)
    first_row = find(By.CSS_SELECTOR, "#hint-table tr:nth-child(2)").text
    assert first_row.startswith("1. 8/5 6/5")
    find(By.ID, "dice-text").clear()
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: find(By.ID, "analysis-body").find_elements(By.ID, "cube-decision"))
    assert find(By.ID, "cube-decision").text in ("no_double", "double_take", "double_pass",
                                                 "too_good")  # fmt: skip
    pos.clear()
    pos.send_keys("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: "(money_equity" in find(By.ID, "analysis-body").text)
    pos.clear()
    pos.send_keys("not an id")
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: "Position ID" in find(By.ID, "analysis-body").text)

    # R30's display option: the home board moves to the other side
    x_right = float(point(1).get_attribute("x"))
    find(By.ID, "home-left").click()
    x_left = float(point(1).get_attribute("x"))
    assert x_right > 380 > x_left

    shot = tmp_path / "board.png"
    assert d.save_screenshot(str(shot))  # type: ignore[attr-defined]
    from PIL import Image

    img = Image.open(shot).convert("RGB")
    assert img.size[0] >= 1000
    colours = img.resize((200, 140)).getcolors(maxcolors=200 * 140)
    assert colours is not None and len(colours) > 30  # a drawn board, not a blank page
    board_el = find(By.ID, "board")
    assert board_el.size["width"] > 500 and board_el.size["height"] > 300


def test_mars_match_has_no_cube(server: str, browser: object) -> None:
    from selenium.webdriver.common.by import By

    d = browser
    d.get(server + "/")  # type: ignore[attr-defined]
    find = d.find_element  # type: ignore[attr-defined]
    find(By.CSS_SELECTOR, "#rules option[value=mars]").click()
    match = find(By.ID, "match-length")
    match.clear()
    match.send_keys("3")
    find(By.ID, "btn-new").click()
    wait(d, lambda _: d.execute_script("return window.nard.state()") is not None)  # type: ignore[attr-defined]
    s = d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]
    assert s["rules"] == "mars" and s["match_length"] == 3
    assert not find(By.ID, "board").find_elements(By.ID, "cube")
    assert "Match to 3" in find(By.ID, "score").text
