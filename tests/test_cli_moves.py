"""``nard moves`` run as a user runs it: a subprocess, human output and JSON lines.

Expected plays come from the naive reference generator, never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from reference_movegen import START, flip, reference_afterstates

CLOSED = [0] * 26
for _p in range(19, 25):
    CLOSED[_p] = -2
CLOSED[13], CLOSED[6], CLOSED[25] = 5, 5, 1  # on the bar against a closed board (R12)
BEAROFF = [0] * 26
BEAROFF[6], BEAROFF[3], BEAROFF[20] = 1, 1, -3  # 6-2: two plays, one under mars (R29)


def nard_moves(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nard_rl", "moves", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- human output ----------------------------------------------------------------------------


def listed_positions(stdout: str) -> tuple[str, list[tuple[str, tuple[int, ...]]]]:
    """The header line and, per listed play, its move and its position (mover's view)."""
    from nard_rl.engine.ids import decode_position_id

    header, *lines = stdout.strip().splitlines()
    plays = []
    for line in lines:
        if not line.strip()[0].isdigit():
            continue
        _, rest = line.split(".", 1)
        move, pid = rest.strip().rsplit(None, 1)
        # the ID is of the position handed over: the opponent is on roll
        plays.append((move.strip(), flip(decode_position_id(pid))))
    return header, plays


def test_board_and_dice() -> None:
    res = nard_moves("--board", json.dumps(START), "--dice", "3", "1")
    assert res.returncode == 0, res.stderr
    header, plays = listed_positions(res.stdout)
    expected = reference_afterstates(START, 3, 1)
    assert header == "Position ID 4HPwATDgc/ABMA, roll 3-1, 16 legal plays (standard)"
    assert sorted(b for _, b in plays) == expected
    assert ("8/5 6/5", (*START[:5], 2, 4, 0, 2, *START[9:])) in plays  # the classic 3-1


def test_position_id_and_default_start() -> None:
    by_id = nard_moves("--id", "4HPwATDgc/ABMA", "--dice", "6", "5")
    default = nard_moves("--dice", "6", "5")  # no position given: the start (R4)
    assert by_id.returncode == default.returncode == 0, by_id.stderr + default.stderr
    assert by_id.stdout == default.stdout
    header, plays = listed_positions(by_id.stdout)
    assert "7 legal plays" in header
    assert sorted(b for _, b in plays) == reference_afterstates(START, 6, 5)
    assert "24/13" in [m for m, _ in plays]


def test_no_legal_play_and_rule_sets() -> None:
    res = nard_moves("--board", json.dumps(CLOSED), "--dice", "6", "6")
    assert res.returncode == 0, res.stderr
    assert "0 legal plays" in res.stdout
    assert "no legal play: the roll is forfeited (R16)" in res.stdout
    mars = nard_moves("--board", json.dumps(BEAROFF), "--dice", "6", "2", "--rules", "mars")
    _, plays = listed_positions(mars.stdout)
    assert sorted(b for _, b in plays) == reference_afterstates(BEAROFF, 6, 2, True)
    assert "1 legal play (mars)" in mars.stdout.splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", json.dumps([0, 16, *[0] * 24]), "--dice", "3", "1"], "more than 15"),
        (["--board", "[1, 2,", "--dice", "3", "1"], ""),
        (["--board", json.dumps(START)], "--dice D1 D2 is required"),
        (["--board", json.dumps(START), "--dice", "7", "1"], "dice must be in 1..6"),
        (["--id", "xxxx", "--dice", "3", "1"], "Position ID"),
    ],
)
def test_human_errors_exit_2_with_a_message(args: list[str], message: str) -> None:
    res = nard_moves(*args)
    assert res.returncode == 2
    assert res.stderr.startswith("nard moves: error:")
    assert message in res.stderr
    assert "Traceback" not in res.stderr


# --- JSON lines --------------------------------------------------------------------------------

GOOD = {"board": list(START), "dice": [3, 1]}
REQUESTS: list[tuple[str, str | None]] = [
    # (line, None for a good answer or a fragment of the expected error)
    (json.dumps(GOOD), None),
    (json.dumps({"board": CLOSED, "dice": [6, 6]}), None),  # no play: "plays": []
    (json.dumps({"board": BEAROFF, "dice": [6, 2], "rules": "mars"}), None),
    ('{"board": [0, 1,', "Expecting"),  # malformed JSON
    (json.dumps({"board": [0, 16, *[0] * 24], "dice": [3, 1]}), "more than 15"),
    (json.dumps({"board": [0] * 25, "dice": [3, 1]}), "26 entries"),
    (json.dumps({"board": "start", "dice": [3, 1]}), "board must be a list"),
    (json.dumps({"dice": [3, 1]}), 'needs "board"'),
    (json.dumps({"board": list(START), "dice": [0, 3]}), "two integers in 1..6"),
    (json.dumps({"board": list(START), "dice": [3]}), "two integers in 1..6"),
    (json.dumps({"board": list(START), "dice": "31"}), "two integers in 1..6"),
    (json.dumps({"board": list(START), "dice": [True, 1]}), "two integers in 1..6"),
    (json.dumps({"board": list(START), "dice": [3.0, 1]}), "two integers in 1..6"),
    (json.dumps({"board": list(START)}), "two integers in 1..6"),
    (json.dumps({"board": list(START), "dice": [3, 1], "rules": "nope"}), "unknown rule set"),
    ("[1, 2]", "JSON object"),
    ("", None),  # blank lines are skipped, not answered
    (json.dumps(GOOD), None),  # the stream is still alive after all that
]


@pytest.fixture(scope="module")
def jsonl_answers() -> list[dict]:
    res = nard_moves("--jsonl", stdin="".join(line + "\n" for line, _ in REQUESTS))
    assert res.returncode == 0, res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def test_jsonl_answers_every_line_in_order(jsonl_answers) -> None:
    asked = [(line, err) for line, err in REQUESTS if line.strip()]
    assert len(jsonl_answers) == len(asked)
    for (line, err), answer in zip(asked, jsonl_answers, strict=True):
        if err is None:
            assert set(answer) == {"plays"}, (line, answer)
        else:
            assert set(answer) == {"error"}, (line, answer)
            assert err in answer["error"], (line, answer)


def test_jsonl_plays_are_right(jsonl_answers) -> None:
    start, closed, bearoff = jsonl_answers[0], jsonl_answers[1], jsonl_answers[2]
    assert sorted(tuple(p["board"]) for p in start["plays"]) == reference_afterstates(START, 3, 1)
    assert all(set(p) == {"move", "board"} and p["move"] for p in start["plays"])
    assert closed == {"plays": []}
    assert [tuple(p["board"]) for p in bearoff["plays"]] == reference_afterstates(
        BEAROFF, 6, 2, True
    )
    assert jsonl_answers[-1] == start


def test_jsonl_position_id_requests() -> None:
    lines = [
        json.dumps({"position_id": "4HPwATDgc/ABMA", "dice": [6, 5]}),
        json.dumps({"position_id": "not an id", "dice": [6, 5]}),
    ]
    res = nard_moves("--jsonl", stdin="\n".join(lines) + "\n")
    good, bad = (json.loads(line) for line in res.stdout.splitlines())
    assert sorted(tuple(p["board"]) for p in good["plays"]) == reference_afterstates(START, 6, 5)
    assert "Position ID" in bad["error"]


def test_jsonl_survives_non_finite_numbers() -> None:
    """``json.loads`` reads ``Infinity`` and ``NaN``: such a board is one bad line, not a
    crash of the whole stream."""
    board = json.dumps(list(START)).replace("[0,", "[Infinity,", 1)
    lines = [
        f'{{"board": {board}, "dice": [3, 1]}}',
        f'{{"board": {board.replace("Infinity", "NaN")}, "dice": [3, 1]}}',
        json.dumps(GOOD),
    ]
    res = nard_moves("--jsonl", stdin="\n".join(lines) + "\n")
    answers = [json.loads(line) for line in res.stdout.splitlines()]
    assert [set(a) for a in answers] == [{"error"}, {"error"}, {"plays"}], res.stderr[-500:]


# --- hostile lines: every line gets an answer, whatever it holds ------------------------------

GOOD_LINE = json.dumps({"board": list(START), "dice": [3, 1]}).encode()
HOSTILE = [
    (b"[" * 1000, "nests JSON too deeply"),
    (b'{"board": %s, "dice": [1, %s]}' % (json.dumps(list(START)).encode(), b"7" * 5000), "digits"),
    (b'{"dice": [3, 1], "board": "\xff\xfe"}', "not valid UTF-8"),
    (b'{"dice": [3, 1], "board": [1, 2, "\xc3\x28"]}', "not valid UTF-8"),
    (b'{"dice": [true, 1], "board": %s}' % json.dumps(list(START)).encode(), "dice"),
    (b"[1, 2]", "expected a JSON object"),
    (b'"just a string"', "got a string"),
    (b"x" * ((1 << 20) + 10), "longer than"),
]
"""Request lines that each ended a JSON-lines stream (issue 31), and a word of the error
each must get.  Shared by the tests of every streaming command."""
STRICT_UTF8 = {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8:strict"}


def hostile_stdin() -> bytes:
    """A good line, every hostile line, a good line again."""
    return b"\n".join([GOOD_LINE, *(line for line, _ in HOSTILE), GOOD_LINE]) + b"\n"


def check_hostile_answers(stdout: bytes, good_key: str, reads_dice: bool = True) -> None:
    """One answer per line, in order: the good lines answered, each hostile one an error
    with its word (a command that reads no dice answers the bad-dice line)."""
    answers = [json.loads(line) for line in stdout.decode("ascii").splitlines()]
    assert len(answers) == len(HOSTILE) + 2, answers
    assert good_key in answers[0] and good_key in answers[-1]
    for (line, word), answer in zip(HOSTILE, answers[1:-1], strict=True):
        if word == "dice" and not reads_dice:
            assert good_key in answer, answer
            continue
        assert set(answer) == {"error"} and word in answer["error"], (line[:60], answer)


def test_jsonl_answers_hostile_lines_under_a_strict_utf8_locale() -> None:
    import os

    res = subprocess.run(
        [sys.executable, "-m", "nard_rl", "moves", "--jsonl"],
        input=hostile_stdin(),
        capture_output=True,
        timeout=120,
        env={**os.environ, **STRICT_UTF8},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    check_hostile_answers(res.stdout, "plays")


def test_jsonl_errors_say_what_was_expected() -> None:
    res = nard_moves("--jsonl", stdin="not json\n[]\n")
    first, second = (json.loads(line)["error"] for line in res.stdout.splitlines())
    for message in (first, second):
        assert '"board" (26 integers' in message and '"dice" ([d1, d2])' in message
    assert first.startswith("the line is not valid JSON") and second.endswith("got an array")
