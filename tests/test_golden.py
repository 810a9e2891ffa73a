"""Golden transcripts: ``nard demo`` for seed 1 (standard) and seed 2 (mars) must not
change unless the rules' behaviour is meant to change.

A failure prints a unified diff.  After an intended change, regenerate the files with::

    python tests/test_golden.py --update

and review the diff of ``tests/data/golden_game*.txt`` before committing it.

Besides the byte-for-byte comparison, the golden text is checked for internal sense
independently of the code that wrote it: turns alternate between the players, and each
line's pip counts agree with the position its Position ID decodes to.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import pytest

from nard_rl.commands.demo import transcript
from nard_rl.engine.ids import decode_position_id

DATA = Path(__file__).parent / "data"
GOLDEN = {
    "golden_game.txt": (1, "standard"),
    "golden_game_mars.txt": (2, "mars"),
}
TURN = re.compile(r"^\s*(\d+)  ([XO])  (\d)(\d)  (.+?)\s+pips X\s+(\d+) O\s+(\d+)  ID (\S+)$")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_transcript_matches_golden(name: str) -> None:
    seed, rules = GOLDEN[name]
    expected = (DATA / name).read_text()
    actual = transcript(seed=seed, rules=rules)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"tests/data/{name}",
            tofile=f"transcript(seed={seed}, rules={rules!r})",
        )
        pytest.fail("golden transcript changed:\n" + "".join(diff), pytrace=False)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_is_consistent(name: str) -> None:
    lines = (DATA / name).read_text().splitlines()
    turns = [m for m in map(TURN.match, lines) if m]
    assert len(turns) > 20
    for number, match in enumerate(turns, start=1):
        turn, player, _, _, _, pips_x, pips_o, pid = match.groups()
        assert int(turn) == number
        if number > 1:
            assert player != turns[number - 2].group(2), "turns alternate"
        # The ID is seen by the player to roll next, the opponent of the mover.
        b = decode_position_id(pid)
        on_roll = 25 * b[25] + sum(p * b[p] for p in range(1, 25) if b[p] > 0)
        other = 25 * -b[0] + sum((25 - p) * -b[p] for p in range(1, 25) if b[p] < 0)
        x, o = (on_roll, other) if player == "O" else (other, on_roll)
        assert (x, o) == (int(pips_x), int(pips_o)), match.string
    assert re.search(r"^[XO] wins ", lines[-1])


def test_demo_command_prints_the_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    from nard_rl.cli import main

    assert main(["demo", "--seed", "1"]) == 0
    assert capsys.readouterr().out == transcript(seed=1, rules="standard")


def test_demo_match_plays_to_the_end() -> None:
    text = transcript(seed=5, rules="standard", match=3)
    headers = re.findall(r"^Game (\d+): score X (\d+), O (\d+)", text, flags=re.M)
    assert [int(h[0]) for h in headers] == list(range(1, len(headers) + 1))
    final = re.search(r"^([XO]) wins the match (\d+)-(\d+)$", text, flags=re.M)
    assert final is not None and int(final.group(2)) == 3 and int(final.group(3)) < 3


def _update() -> None:
    for name, (seed, rules) in GOLDEN.items():
        (DATA / name).write_text(transcript(seed=seed, rules=rules))
        print(f"wrote tests/data/{name}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_golden.py --update")
    _update()
