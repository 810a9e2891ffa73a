"""``nard agent`` driven as a subprocess over its JSON-lines protocol."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from nard_rl.commands.agent import BackendFailed, serve
from nard_rl.engine.position import START_BOARD, Position
from nard_rl.engine.rules import get_rules
from nard_rl.players.base import Player
from nard_rl.players.gnubg_player import gnubg_available

START = list(START_BOARD)
# The mover on the bar against a closed home board: no legal play (R12, R16).
CLOSED_OUT = [-3, 0, 0, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, -2, -2, -2, -2, 1]


def _agent(*args: str) -> list[str]:
    return [sys.executable, "-m", "nard_rl", "agent", *args]


def _ask_all(lines: list[str], *args: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        _agent(*args),
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


def _legal(board: list[int], dice: list[int], rules: str = "standard") -> dict[str, tuple]:
    return {p.move: p.board for p in Position(board).plays(dice[0], dice[1], rules)}


def test_answers_errors_and_passes() -> None:
    requests = [
        {"board": START, "dice": [3, 1]},
        "this is not json",
        {"board": START[:20], "dice": [3, 1]},
        {"board": START, "dice": [0, 7]},
        [1, 2, 3],
        {"board": CLOSED_OUT, "dice": [6, 6]},
        {"position_id": Position(START).position_id(), "dice": [6, 5]},
        {"board": START, "dice": [2, 2], "rules": "mars"},
        {"board": START, "dice": [2, 2], "rules": "go"},
    ]
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    answers = _ask_all(lines, "--player", "pubeval")
    assert len(answers) == len(requests)
    for request, answer in zip(requests, answers, strict=True):
        if not isinstance(request, dict) or len(request.get("board", START)) != 26:
            assert set(answer) == {"error"}
    assert answers[0]["move"] == "8/5 6/5"  # pubeval's well-known choice
    assert tuple(answers[0]["board"]) == _legal(START, [3, 1])["8/5 6/5"]
    assert "dice" in answers[3]["error"]
    assert answers[5] == {"move": "", "board": CLOSED_OUT}
    assert tuple(answers[6]["board"]) == _legal(START, [6, 5])[answers[6]["move"]]
    assert tuple(answers[7]["board"]) == _legal(START, [2, 2], "mars")[answers[7]["move"]]
    assert "rule set" in answers[8]["error"]


def test_unknown_player_fails_cleanly() -> None:
    result = subprocess.run(
        _agent("--player", "nobody"), input="", capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "unknown player" in result.stderr


def test_a_whole_game_through_the_agent() -> None:
    """Both sides played by one agent process, the board flipped between turns."""
    rng = np.random.default_rng(2024)
    proc = subprocess.Popen(
        _agent("--player", "random", "--seed", "5"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    board = START
    turns = passes = 0
    try:
        while True:
            dice = [int(d) for d in rng.integers(1, 7, size=2)]
            proc.stdin.write(json.dumps({"board": board, "dice": dice}) + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            legal = _legal(board, dice)
            if not legal:
                assert answer == {"move": "", "board": board}
                passes += 1
            else:
                assert answer["move"] in legal
                assert tuple(answer["board"]) == legal[answer["move"]]
            after = Position(answer["board"])
            turns += 1
            if after.winner() is not None:
                assert after.winner() == 0  # only the mover can finish on their own turn
                break
            board = list(after.flip().board)
            assert turns < 2000
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0
    assert turns > 20


@pytest.mark.gnubg
@pytest.mark.skipif(not gnubg_available(), reason="GNU Backgammon not installed")
def test_gnubg_agent() -> None:
    answers = _ask_all([json.dumps({"board": START, "dice": [3, 1]})], "--player", "gnubg:0")
    assert answers == [{"move": "8/5 6/5", "board": list(_legal(START, [3, 1])["8/5 6/5"])}]


# -- a failing player: restarted once, then a clear exit ------------------------------------


class _Dying(Player):
    """Answers ``lives`` requests, then fails like a backend process that died."""

    def __init__(self, lives: int) -> None:
        self.lives = lives
        self.name = "dying"
        self.closed = False

    def choose_batch(self, boards, dice, afterstates, offsets):  # type: ignore[no-untyped-def]
        if self.lives <= 0:
            raise RuntimeError("backend died")
        self.lives -= 1
        return np.zeros(len(offsets) - 1, dtype=np.int64)

    def close(self) -> None:
        self.closed = True


def _lines(n: int) -> io.StringIO:
    return io.StringIO(
        "".join(json.dumps({"board": START, "dice": [3, 1]}) + "\n" for _ in range(n))
    )


def test_a_failed_player_is_restarted_and_the_line_answered() -> None:
    first = _Dying(lives=1)
    made: list[_Dying] = []

    def restart() -> _Dying:
        made.append(_Dying(lives=10))
        return made[-1]

    out = io.StringIO()
    final = serve(_lines(4), out, first, get_rules("standard"), restart)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == 4 and all("move" in a and "error" not in a for a in answers)
    assert first.closed and final is made[0] and len(made) == 1


def test_a_player_failing_again_after_a_restart_stops_the_agent() -> None:
    out = io.StringIO()
    with pytest.raises(BackendFailed, match="backend died"):
        serve(_lines(3), out, _Dying(lives=1), get_rules("standard"), lambda: _Dying(lives=0))
    assert len(out.getvalue().splitlines()) == 1  # the answer before the failure only
    with pytest.raises(BackendFailed, match="the player failed"):
        serve(_lines(1), io.StringIO(), _Dying(lives=0), get_rules("standard"))


def test_a_bad_line_is_still_an_error_line_not_a_restart() -> None:
    out = io.StringIO()
    serve(io.StringIO('{"board": [1, 2]}\n'), out, _Dying(lives=0), get_rules("standard"))
    assert "error" in json.loads(out.getvalue())


def test_hostile_lines_get_error_lines_and_never_restart_the_player() -> None:
    """1,000 nested brackets raised a RecursionError, which the agent took for a player
    failure: it restarted the player and then exited."""
    from test_cli_moves import HOSTILE, check_hostile_answers, hostile_stdin

    def restart() -> Player:
        raise AssertionError("a request line must never restart the player")

    out = io.StringIO()
    serve(io.BytesIO(hostile_stdin()), out, _Dying(lives=2), get_rules("standard"), restart)
    check_hostile_answers(out.getvalue().encode(), "move")
    assert len(HOSTILE) > 5


def test_the_agent_command_survives_hostile_lines_under_a_strict_locale() -> None:
    import os

    from test_cli_moves import STRICT_UTF8, check_hostile_answers, hostile_stdin

    result = subprocess.run(
        _agent("--player", "random", "--seed", "3"),
        input=hostile_stdin(),
        capture_output=True,
        timeout=120,
        env={**os.environ, **STRICT_UTF8},
    )
    assert result.returncode == 0 and b"restarting" not in result.stderr, result.stderr
    check_hostile_answers(result.stdout, "move")
