"""The tests' board notation (tests/boards.py) means what the engine's layout says."""

from __future__ import annotations

import pytest
from boards import board

from nard_rl.engine.position import START_BOARD, Position, PositionError


def test_text_and_mappings_write_the_same_board() -> None:
    text = board("mover: 13:14 bar:1; opp: 20:1 12:14")
    assert text == board({13: 14}, {20: 1, 12: 14}, mover_bar=1)
    expected = [0] * 26
    expected[13], expected[25], expected[20], expected[12] = 14, 1, -1, -14
    assert text == tuple(expected)
    assert board("opp: bar:2; mover: 6:1")[0] == -2 and board("mover: 6:1")[6] == 1


def test_start_and_validation() -> None:
    assert board("start") == tuple(START_BOARD)
    fifty = board("start; mover: 6:40")
    assert fifty[6] == 40 and fifty[13] == START_BOARD[13]
    with pytest.raises(PositionError):
        board("start; mover: 6:40", validate=True)
    assert (
        board("mover: 6:4; opp: 24:2", validate=True)
        == Position(board("mover: 6:4; opp: 24:2")).board
    )


@pytest.mark.parametrize("bad", ["mover 6:4", "them: 6:4", "mover: 6", "mover: 25:1"])
def test_a_bad_text_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        board(bad)
