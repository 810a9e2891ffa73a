"""The web board in headless Chromium (Debian's ``chromium`` and ``chromedriver``), against
``nard serve`` started from its command: play moves by clicking and dragging checkers,
commit, undo, ask for hints at every kind of decision, analyse pasted IDs, flip the home
board side, play whole games against the bot, and screenshot each state a player sees.

Screenshots go to ``$NARD_WEB_SHOTS`` (default: ``<tmp>/nard-web-shots``), one PNG per
state, named after it, so a person can look at them.

Skipped (with the reason) only where Chromium or its driver is not installed.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from browser import chromium, nard_serve, needs_browser

SHOTS = Path(os.environ.get("NARD_WEB_SHOTS") or Path(tempfile.gettempdir()) / "nard-web-shots")

pytestmark = needs_browser


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with nard_serve() as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as driver:
        yield driver


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

    # a game is ready on first load; then a money game in which the human wins the opening
    wait(d, lambda _: state() is not None and state()["phase"] == "opening")
    first_id = state()["id"]
    find(By.ID, "seed").send_keys("3")
    find(By.CSS_SELECTOR, "#first option[value=human]").click()
    find(By.ID, "btn-new").click()
    wait(d, lambda _: state()["id"] != first_id and state()["phase"] == "opening")
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
        wait(d, lambda _: find(By.ID, "hint-body").find_elements(By.ID, "cube-advice"))
        find(By.ID, "btn-roll").click()
        wait(d, lambda _: state()["phase"] != "roll_or_double" or state()["to_act"] != "human")
    if state()["phase"] == "move" and state()["to_act"] == "human":
        find(By.ID, "btn-hint").click()
        wait(d, lambda _: find(By.ID, "hint-body").find_elements(By.ID, "hint-table"))

    # paste IDs: a Position ID with dice, the same without (cube), an XGID
    pos = find(By.ID, "pos-text")
    pos.clear()
    pos.send_keys("4HPwATDgc/ABMA")
    find(By.ID, "dice-text").send_keys("31")
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: "8/5 6/5" in find(By.ID, "analysis-body").text)
    first_row = find(By.CSS_SELECTOR, "#analysis-table tr:nth-child(2)").text
    assert first_row.startswith("1. 8/5 6/5")
    find(By.ID, "dice-text").clear()
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: find(By.ID, "analysis-body").find_elements(By.ID, "cube-decision"))
    assert find(By.ID, "cube-decision").text in ("No double", "Double, take", "Double, pass",
                                                 "Too good to double")  # fmt: skip
    pos.clear()
    pos.send_keys("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")
    find(By.ID, "btn-analyse").click()
    wait(d, lambda _: "ranked by money equity" in find(By.ID, "analysis-body").text)
    assert "money_equity" not in find(By.ID, "analysis-body").text
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
    wait(d, lambda _: (d.execute_script("return window.nard.state()") or {}).get("rules") == "mars")  # type: ignore[attr-defined]
    s = d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]
    assert s["rules"] == "mars" and s["match_length"] == 3
    assert not find(By.ID, "board").find_elements(By.ID, "cube")
    assert "Match to 3" in find(By.ID, "score").text


# --------------------------------------------------------------------------------------
# what a player sees: screenshots of each state, and a whole game against the bot


def shoot(driver: object, name: str) -> Path:
    """Save a screenshot of the page as ``SHOTS/name.png`` (and check it is a drawing)."""
    from PIL import Image

    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    assert driver.save_screenshot(str(path))  # type: ignore[attr-defined]
    colours = Image.open(path).convert("RGB").resize((200, 140)).getcolors(maxcolors=28000)
    assert colours is not None and len(colours) > 30, f"{path} looks blank"
    return path


OVERLAPS = """
const box = (e) => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
const cut = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
const labels = [...document.querySelectorAll('#board text')];
const covers = [...document.querySelectorAll('#board .die, #board #cube')];
const out = [];
for (const t of labels) for (const c of covers) {
  if (t.closest('g') && t.closest('g') === c.closest('g')) continue;
  if (t.id === 'cube-value') continue;
  if (cut(box(t), box(c))) out.push(t.textContent + ' under ' + c.getAttribute('class'));
}
return out;
"""


def _new_game(d: object, **settings: str) -> dict:
    """Start a game from the header form; returns the new session's first state."""
    from selenium.webdriver.common.by import By

    find = d.find_element  # type: ignore[attr-defined]
    state = lambda: d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]  # noqa: E731
    wait(d, lambda _: state() is not None)
    before = state()["id"]
    for key, value in settings.items():
        if key in ("rules", "first", "bot-ply"):
            find(By.CSS_SELECTOR, f"#{key} option[value='{value}']").click()
        else:
            box = find(By.ID, key)
            box.clear()
            if value:
                box.send_keys(value)
    find(By.ID, "btn-new").click()
    wait(d, lambda _: state()["id"] != before)
    return state()


def progress_key(s: dict) -> str:
    """What changes with every action in a session (the log is capped, so not its length)."""
    return repr((s["id"], s["game_number"], s["phase"], s["board"], s["dice"], s["log"][-1:]))


def pips_of(board: list[int]) -> tuple[int, int]:
    human = sum(n * p for p, n in enumerate(board) if n > 0)
    bot = sum(-n * (25 if p == 0 else 25 - p) for p, n in enumerate(board) if n < 0)
    return human, bot


@pytest.mark.slow
def test_whole_games_against_the_bot_with_every_state_shown(server: str, browser: object) -> None:
    """Play until one game is over and the bot has doubled once (at most four games): a
    weak human (the last listed play) so the bot doubles; every state is checked on the
    page and screenshotted: the first load, your dice, the bot's dice and last move with
    pip counts, the cube advice before a roll, undo's status line, the take-or-pass
    advice, the finished game with "play again", and the record download."""
    from selenium.webdriver.common.by import By

    d = browser
    find = d.find_element  # type: ignore[attr-defined]
    state = lambda: d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]  # noqa: E731
    d.get(server + "/")  # type: ignore[attr-defined]
    wait(d, lambda _: state() is not None and state()["phase"] == "opening")
    assert find(By.ID, "btn-roll").is_enabled()  # a new game ready on first load
    shoot(d, "01-first-load")
    s = _new_game(d, seed="5", first="human", **{"bot-ply": "0", "match-length": "3"})
    assert s["ply"] == 0 and "bot at 0-ply" in find(By.ID, "score").text
    seen: set[str] = set()
    games_over = 0
    for _ in range(1500):
        s = state()
        if s["result"] is not None:
            games_over += 1
            assert find(By.ID, "btn-again").is_displayed()
            assert "play again" in find(By.ID, "status").text.lower()
            if "over" not in seen:
                seen.add("over")
                shoot(d, "08-game-over-play-again")
            if "take" in seen or games_over >= 4:
                break
            if s["match_over"]:
                before = s["id"]
                find(By.ID, "btn-again").click()
                wait(d, lambda _, before=before: state()["id"] != before)
            else:
                before = s["game_number"]
                find(By.ID, "btn-next").click()
                wait(d, lambda _, before=before: state()["game_number"] != before)
            continue
        if s["to_act"] != "human":
            time.sleep(0.1)
            continue
        key = progress_key(s)
        phase = s["phase"]
        if phase in ("opening", "roll_or_double"):
            last = s["last_move"]
            if phase == "roll_or_double" and last and last["by"] == "bot" and last["steps"]:
                # the bot's dice on its half and its play outlined; pip counts in the bar
                bot_dice = find(By.ID, "board").find_elements(By.CSS_SELECTOR, ".die-group-bot")
                assert sorted(int(g.get_attribute("data-value")) for g in bot_dice) == sorted(
                    last["dice"]
                )
                marks = ".point.last-to, .point.last-from, .mark-last"  # a bear-off marks the tray
                assert find(By.ID, "board").find_elements(By.CSS_SELECTOR, marks)
                assert last["move"] in find(By.ID, "status").text
                human, bot = pips_of(s["board"])
                assert find(By.ID, "pips-human").text == str(human)
                assert find(By.ID, "pips-bot").text == str(bot)
                assert find(By.ID, "pips").text == f"Pips: you {human}, bot {bot}"
                assert d.execute_script(OVERLAPS) == []  # type: ignore[attr-defined]
                if "bot-move" not in seen:
                    seen.add("bot-move")
                    shoot(d, "03-bot-dice-last-move-pips")
                if "cube-hint" not in seen and s["can_double"]:
                    find(By.ID, "btn-hint").click()
                    wait(d, lambda _: find(By.ID, "hint-body").find_elements(By.ID, "cube-advice"))
                    assert "Advice: " in find(By.ID, "cube-advice").text
                    seen.add("cube-hint")
                    shoot(d, "04-double-or-roll-advice")
            find(By.ID, "btn-roll").click()
        elif phase == "move":
            dice = find(By.ID, "board").find_elements(By.CSS_SELECTOR, ".die-group-human")
            assert sorted(int(g.get_attribute("data-value")) for g in dice) == sorted(s["dice"])
            if "dice" not in seen:
                seen.add("dice")
                assert d.execute_script(OVERLAPS) == []  # type: ignore[attr-defined]
                shoot(d, "02-your-dice")
            plays = find(By.ID, "plays").find_elements(By.TAG_NAME, "li")
            plays[-1].click()
            wait(d, lambda _: find(By.ID, "btn-commit").is_enabled(), 10)
            if "undo" not in seen:
                seen.add("undo")
                find(By.ID, "btn-undo").click()
                assert find(By.ID, "status").text.startswith("Took back your play.")
                assert not find(By.ID, "btn-commit").is_enabled()
                shoot(d, "05-status-after-undo")
                plays[-1].click()
                wait(d, lambda _: find(By.ID, "btn-commit").is_enabled(), 10)
            find(By.ID, "btn-commit").click()
        elif phase == "take_or_drop":
            assert find(By.ID, "hint-body").text.startswith("Press Hint")  # no stale hint
            assert find(By.ID, "cube-value").text == str(2 * s["cube"]["value"])
            find(By.ID, "btn-hint").click()
            wait(d, lambda _: find(By.ID, "hint-body").find_elements(By.ID, "take-advice"))
            advice = find(By.ID, "take-advice").text
            assert advice in ("Advice: take.", "Advice: pass.")
            assert "Take" in find(By.ID, "take-table").text
            if "take" not in seen:
                seen.add("take")
                shoot(d, "06-take-or-pass-advice")
            find(By.ID, "btn-take").click()
            wait(d, lambda _: state()["phase"] != "take_or_drop")
            if "owned" not in seen and state()["cube"]["owner"] == "human":
                seen.add("owned")
                shoot(d, "07-cube-owned-by-you")
        else:
            pytest.fail(f"unexpected phase {phase}")
        wait(d, lambda _, key=key: (lambda t: t["result"] is not None or progress_key(t) != key)(
            state()))  # fmt: skip
    assert games_over >= 1
    assert {"dice", "bot-move", "undo", "over"} <= seen, seen
    assert "take" in seen, "the bot never doubled in four games"
    href = find(By.ID, "record-link").get_attribute("href")
    with urllib.request.urlopen(href, timeout=30) as r:
        record = r.read().decode()
    assert record.startswith(" 3 point match\n") and " Doubles => 2" in record


def test_the_mars_clock_of_both_sides_counts_down(server: str, browser: object) -> None:
    from selenium.webdriver.common.by import By

    d = browser
    find = d.find_element  # type: ignore[attr-defined]
    state = lambda: d.execute_script("return window.nard.state()")  # type: ignore[attr-defined]  # noqa: E731
    d.get(server + "/")  # type: ignore[attr-defined]
    _new_game(d, rules="mars", first="human", seed="2", **{"match-length": "0"})
    find(By.ID, "btn-roll").click()
    wait(d, lambda _: state()["phase"] == "move")
    assert find(By.ID, "clock").is_displayed()

    def shown(who: str, attr: str = "textContent") -> str:  # redrawn 4 times a second
        return d.execute_script(f"return document.getElementById('clock-{who}').{attr}")  # type: ignore[attr-defined]

    pattern = r"(you|bot) (\d+)s \+ (\d+):(\d\d)"
    assert re.search(pattern, shown("human"))
    assert shown("bot") == "bot 11s + 1:30"  # not on roll: not running
    first = int(re.search(pattern, shown("human")).group(2))  # type: ignore[union-attr]
    time.sleep(2.5)
    later = int(re.search(pattern, shown("human")).group(2))  # type: ignore[union-attr]
    assert later <= first - 2  # the human's turn time runs
    assert "running" in shown("human", "className")
    assert not find(By.ID, "board").find_elements(By.ID, "cube")  # no cube under mars (R28)
    shoot(d, "09-mars-clock")
