"""The evaluator interface: shapes, validation, exact finished games, net agreement."""

from __future__ import annotations

import numpy as np
import pytest

from nard_rl.engine.position import START_BOARD
from nard_rl.evaluator import Evaluator, NetEvaluator, load_evaluator
from nard_rl.net_player import NetworkPlayer, default_checkpoint_path


@pytest.fixture(scope="module")
def plain() -> Evaluator:
    return NetEvaluator.from_checkpoint(default_checkpoint_path())


def _finished(opp_home: bool, opp_off: int) -> np.ndarray:
    """The mover has borne off all 15; the opponent keeps 15 - opp_off checkers."""
    b = np.zeros(26, dtype=np.int8)
    left = 15 - opp_off
    if opp_home:
        b[3] = -1  # in the winner's home board: a backgammon if nothing is off
        b[20] = -(left - 1)
    else:
        b[20] = -left
    return b


def test_plain_net_matches_network_player(plain: Evaluator) -> None:
    player = NetworkPlayer.from_checkpoint(default_checkpoint_path())
    boards = np.array([START_BOARD, np.negative(START_BOARD[::-1])], dtype=np.int8)
    np.testing.assert_allclose(plain.probabilities(boards), player.probabilities(boards), rtol=1e-6)
    assert isinstance(plain, Evaluator)


@pytest.mark.parametrize(
    ("opp_home", "opp_off", "expected"),
    [
        (False, 3, [1, 0, 0, 0, 0]),
        (False, 0, [1, 1, 0, 0, 0]),
        (True, 0, [1, 1, 1, 0, 0]),
        (True, 2, [1, 0, 0, 0, 0]),
    ],
)
def test_finished_games_are_exact(
    plain: Evaluator, opp_home: bool, opp_off: int, expected: list[int]
) -> None:
    p = plain.probabilities(_finished(opp_home, opp_off)[None, :])
    np.testing.assert_array_equal(p[0], np.array(expected, dtype=np.float32))


def test_load_evaluator_default_and_path(plain: Evaluator) -> None:
    b = np.array([START_BOARD], dtype=np.int8)
    by_path = load_evaluator(str(default_checkpoint_path()), rules="standard")
    np.testing.assert_allclose(by_path.probabilities(b), plain.probabilities(b), atol=1e-6)
    assert load_evaluator("default").probabilities(b).shape == (1, 5)
    assert load_evaluator(rules="mars").rules.name == "mars"


def test_input_validation(plain: Evaluator) -> None:
    with pytest.raises(ValueError, match="shape"):
        plain.probabilities(np.zeros((3, 25), dtype=np.int8))
    with pytest.raises(ValueError, match=r"-15\.\.15"):
        plain.probabilities(np.full((1, 26), 40, dtype=np.int64))
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_evaluator("no/such/file.pt")
    with pytest.raises(ValueError, match="unknown rule set"):
        load_evaluator(rules="tavla")
    assert plain.probabilities(np.zeros((0, 26), dtype=np.int8)).shape == (0, 5)
