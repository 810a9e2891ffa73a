"""Position classes: contact / race / bear-off, and agreement with ``Position.is_race``."""

from __future__ import annotations

import numpy as np
import pytest
from boards import board
from reference_movegen import board_of, random_game_positions

from nard_rl.engine.classify import BEAROFF, CONTACT, RACE, classify, crashed_flags
from nard_rl.engine.position import START_BOARD, Position


@pytest.mark.parametrize(
    ("board", "expected"),
    [
        (list(START_BOARD), CONTACT),
        (board_of({1: 5, 6: 10}, {19: 7, 24: 8}), BEAROFF),
        (board_of({1: 5, 8: 10}, {19: 7, 24: 8}), RACE),  # mover not home yet
        (board_of({1: 5, 6: 10}, {18: 7, 24: 8}), RACE),  # opponent not home yet
        (board_of({1: 5, 12: 10}, {13: 7, 24: 8}), RACE),  # adjacent, past each other
        (board_of({1: 5, 13: 10}, {12: 7, 24: 8}), CONTACT),  # still to pass
        (board_of({1: 5, 6: 9}, {19: 7, 24: 8}, bar=1), CONTACT),  # mover on the bar
        (board_of({1: 5, 6: 10}, {19: 7, 24: 7}, opp_bar=1), CONTACT),  # opponent on the bar
        (board_of({3: 1}, {2: 1}), CONTACT),  # a blot still to pass
        (board_of({2: 1}, {3: 1}), RACE),  # already passed
        (board_of({}, {19: 3}), BEAROFF),  # mover finished
        (board_of({3: 2}, {}), BEAROFF),  # opponent finished (not an afterstate)
    ],
)
def test_cases(board: list[int], expected: int) -> None:
    b = np.array([board], dtype=np.int8)
    assert classify(b)[0] == expected
    # symmetric: the same position seen by the other side is in the same class
    assert classify(-b[:, ::-1])[0] == expected


def test_agrees_with_position_is_race() -> None:
    boards = np.array([b for b, _ in random_game_positions(11, 400)], dtype=np.int8)
    cls = classify(boards)
    races = [Position(b.tolist()).is_race() for b in boards]
    assert (cls != CONTACT).tolist() == races
    assert set(cls.tolist()) == {CONTACT, RACE, BEAROFF}


def test_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match="shape"):
        classify(np.zeros(26, dtype=np.int8))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("start", False),
        # the opponent holds the mover's ace point with its last 7 checkers in play
        ("mover: 6:3 5:3 4:3 8:2; opp: 1:2 24:3 23:2", True),
        # the mover's checkers piled on its 1..3 points while it still has a back anchor
        ("mover: 1:3 2:3 3:2 24:2 13:5; opp: 19:5 20:5 18:5", True),
        # the same piles, but the sides have passed: a race is never crashed
        ("mover: 1:3 2:3 3:2 4:7; opp: 19:5 20:5 18:5", False),
        # a normal middle game: 15 in play each, no piles
        ("mover: 6:5 8:3 13:5 24:2; opp: 19:5 17:3 12:5 1:2", False),
        # 8 in play and 6 deep: just outside both limits
        ("mover: 1:2 2:2 3:2 24:2; opp: 19:5 20:5 13:5", False),
    ],
)
def test_crashed_positions(text: str, expected: bool) -> None:
    b = np.array([board(text)], dtype=np.int8)
    assert crashed_flags(b)[0] == expected
    assert crashed_flags(-b[:, ::-1])[0] == expected  # symmetric in the sides
    assert not expected or classify(b)[0] == CONTACT


def test_crashed_is_a_subset_of_contact_in_real_games() -> None:
    boards = np.array([b for b, _ in random_game_positions(12, 400)], dtype=np.int8)
    crashed = crashed_flags(boards)
    assert (classify(boards)[crashed] == CONTACT).all()
    assert 0 < crashed.sum() < (classify(boards) == CONTACT).sum()
