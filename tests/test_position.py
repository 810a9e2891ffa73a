"""``Position``: validation messages, flipping, pip counts, race and winner, plays.

Expected values are worked out by hand from the board format (R3, R4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_movegen import board_of

from nard_rl.engine.position import (
    START_BOARD,
    Play,
    Position,
    PositionError,
    flip_boards,
    validate_board,
)
from nard_rl.engine.rules import MARS, STANDARD


def test_start_board_is_R4() -> None:
    """2 on 24, 5 on 13, 3 on 8, 5 on 6 for each side, each from its own view."""
    mover = {24: 2, 13: 5, 8: 3, 6: 5}
    opp = {25 - p: n for p, n in mover.items()}  # the opponent's p is the mover's 25 - p
    assert list(START_BOARD) == board_of(mover, opp)
    assert Position.start().board == START_BOARD


# --- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "message"),
    [
        (board_of({6: 16}), "mover has 16 checkers"),
        (board_of({6: 10}, bar=6), "mover has 16 checkers"),
        (board_of({6: 15}, {1: 10}, opp_bar=6), "opponent has 16 checkers"),
        (board_of({6: 1}, {1: 16}), "opponent has 16"),
        (board_of({6: 1}, {1: 1}, bar=-1), "board\\[25\\] is the mover's bar"),
        (board_of({6: 1}, {1: 1}, opp_bar=-1), "board\\[0\\] is minus the opponent's bar"),
        ([0] * 26, "both sides have already borne off"),
        ([0] * 25, "must have 26 entries, got 25"),
        ([0] * 27, "must have 26 entries, got 27"),
        ([], "must have 26 entries, got 0"),
        (["a", *START_BOARD[1:]], "board entries must be integers, got 'a'"),
        (["0", *START_BOARD[1:]], "board entries must be integers, got '0'"),
        ([None, *START_BOARD[1:]], "board entries must be integers, got None"),
        ([True, *START_BOARD[1:]], "board entries must be integers, got True"),
        ([[0], *START_BOARD[1:]], "board entries must be integers, got \\[0\\]"),
        (None, "board must be a list of 26 integers"),
        ([0.5, *START_BOARD[1:]], "whole numbers, got 0.5"),
        ([math.nan, *START_BOARD[1:]], "whole numbers, got nan"),
        ([-math.inf, *START_BOARD[1:]], "whole numbers, got -inf"),
    ],
)
def test_invalid_boards_are_refused_with_the_reason(board, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        validate_board(board)
    if board is not None:  # Position() takes any iterable; None is a plain TypeError there
        with pytest.raises(ValueError, match=message):  # PositionError is a ValueError
            Position(board)


def test_infinite_entries_are_refused_as_a_position_error() -> None:
    """``json.loads`` accepts ``Infinity``, so this reaches ``validate_board`` from the CLI;
    it must be refused like any other non-integer (an OverflowError escaped once)."""
    with pytest.raises(PositionError):
        validate_board([math.inf, *START_BOARD[1:]])


def test_valid_boards_come_back_as_python_ints() -> None:
    values = validate_board(np.array(START_BOARD, dtype=np.int64))
    assert values == START_BOARD and all(type(v) is int for v in values)
    assert validate_board([float(v) for v in START_BOARD]) == START_BOARD  # 3.0 is whole
    # fifteen a side exactly, and one side already finished, are both fine
    validate_board(board_of({1: 15}, {24: 14}, opp_bar=1))
    validate_board(board_of({}, {24: 1}))


def test_validate_false_skips_the_checks() -> None:
    assert Position([0] * 26, validate=False).board == (0,) * 26


# --- flipping, counts ------------------------------------------------------------------------


def test_flip_by_hand() -> None:
    b = board_of({24: 1, 6: 2}, {20: 3, 1: 1}, bar=1, opp_bar=2)
    # the opponent's view: its checkers on 25 - p positive, ours negative, bars swapped
    expected = board_of({5: 3, 24: 1}, {1: 1, 19: 2}, bar=2, opp_bar=1)
    assert list(Position(b).flip().board) == expected
    assert flip_boards(np.array([b], dtype=np.int8)).tolist() == [expected]
    assert Position.start().flip() == Position.start()  # R4 is symmetric


def test_pip_counts_by_hand() -> None:
    assert Position.start().pip_counts() == (167, 167)  # 2*24 + 5*13 + 3*8 + 5*6
    b = board_of({6: 2}, {1: 1}, bar=1, opp_bar=2)
    # mover: 2*6 + 25 (bar) = 37; opponent: its 24 point (our 1) + 2 on its bar = 24 + 50
    assert Position(b).pip_counts() == (37, 74)


def test_checkers_off() -> None:
    assert Position.start().checkers_off() == (0, 0)
    assert Position(board_of({6: 2}, {1: 1}, bar=1, opp_bar=2)).checkers_off() == (12, 12)


@pytest.mark.parametrize(
    ("board", "race"),
    [
        (list(START_BOARD), False),
        (board_of({6: 5, 5: 5}, {19: 5, 20: 5}), True),
        (board_of({12: 1, 6: 5}, {13: 2}), True),  # passed each other, adjacent
        (board_of({13: 1, 6: 5}, {12: 2}), False),  # 13 still has to pass 12
        (board_of({6: 5}, {1: 1, 19: 5}), False),  # an opponent checker in our home
        (board_of({6: 5}, {19: 5}, opp_bar=1), False),  # it will enter in our home
        (board_of({6: 5}, {19: 5}, bar=1), False),
    ],
)
def test_is_race(board: list[int], race: bool) -> None:
    assert Position(board).is_race() is race


def test_winner() -> None:
    assert Position.start().winner() is None
    assert Position(board_of({}, {24: 3})).winner() == 0  # the mover has borne all off
    assert Position(board_of({6: 1}, {})).winner() == 1
    assert Position(board_of({6: 1}, {}, bar=0, opp_bar=1)).winner() is None


# --- value semantics --------------------------------------------------------------------------


def test_equality_hash_and_conversions() -> None:
    a, b = Position(START_BOARD), Position(list(START_BOARD))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.flip().flip().flip() or a == a.flip()  # start is its own flip
    assert a != Position(board_of({6: 15}, {19: 15}))
    assert a != START_BOARD  # a Position never equals a bare tuple
    assert Position.from_array(a.array()) == a
    assert a.array().dtype == np.int8 and a.to_list() == list(START_BOARD)
    assert repr(a) == f"Position({list(START_BOARD)})"


# --- plays ---------------------------------------------------------------------------------------


def test_plays_returns_named_plays() -> None:
    plays = Position.start().plays(6, 5)
    assert all(isinstance(p, Play) and isinstance(p.board, tuple) for p in plays)
    assert "24/13" in [p.move for p in plays]  # the classic "lover's leap"
    lovers_leap = next(p for p in plays if p.move == "24/13")
    assert lovers_leap.board == tuple(
        board_of({24: 1, 13: 6, 8: 3, 6: 5}, {1: 2, 12: 5, 17: 3, 19: 5})
    )


@pytest.mark.parametrize("dice", [(0, 3), (3, 7), (-1, 2)])
def test_plays_refuses_impossible_dice(dice: tuple[int, int]) -> None:
    with pytest.raises(PositionError, match=r"dice must be in 1\.\.6"):
        Position.start().plays(*dice)


def test_plays_rules_by_name_or_object() -> None:
    bearoff = Position(board_of({6: 1, 3: 1}, {20: 3}))  # R29 bites on 6-2
    assert len(bearoff.plays(6, 2)) == len(bearoff.plays(6, 2, STANDARD)) == 2
    assert len(bearoff.plays(6, 2, "mars")) == len(bearoff.plays(6, 2, MARS)) == 1
    with pytest.raises(ValueError, match="unknown rule set"):
        bearoff.plays(6, 2, "nope")


def test_position_id_round_trip() -> None:
    start = Position.start()
    assert start.position_id() == "4HPwATDgc/ABMA"  # as GNU Backgammon shows the start
    assert Position.from_id("4HPwATDgc/ABMA") == start
    b = Position(board_of({24: 1, 6: 2}, {20: 3, 1: 1}, bar=1, opp_bar=2))
    assert Position.from_id(b.position_id()) == b
