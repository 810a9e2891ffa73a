"""``GameBatch``'s caller controls: ending chosen games, restarting chosen games from the
opening or from given positions, playing an afterstate by its board, spotting passes."""

from __future__ import annotations

import numpy as np
import pytest

from nard_rl.engine.batch import START, GameBatch
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards

# the opening position after 31 (8/5 6/5), mover's view; flipped it is the other side on roll
AFTER_31 = np.array(
    [0, 0, 0, 0, 0, 2, 4, 0, 2, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0],
    dtype=np.int8,
)
# the side on roll has one checker on the bar against a closed board: it must pass
CLOSED_OUT = np.zeros(26, dtype=np.int8)
CLOSED_OUT[25] = 1  # its checker on the bar
CLOSED_OUT[19:25] = -2  # the opponent holds every point of the entry board
CLOSED_OUT[1] = 14
CLOSED_OUT[18] = -3


def _play_random(games: GameBatch, rng: np.random.Generator, plies: int) -> None:
    for _ in range(plies):
        if games.over.all():
            return
        games.step((rng.random(games.n) * np.maximum(games.counts, 1)).astype(np.int64))


def _slices(games: GameBatch) -> list[np.ndarray]:
    return [games.afters[games.offsets[i] : games.offsets[i + 1]].copy() for i in range(games.n)]


def test_end_without_autoreset_stops_only_the_chosen_games() -> None:
    rng = np.random.default_rng(1)
    games = GameBatch(6, "standard", rng, autoreset=False)
    games.reset()
    _play_random(games, rng, 5)
    before = _slices(games)
    boards, seat, turn = games.boards.copy(), games.seat.copy(), games.turn.copy()
    out = games.end(np.array([1, 4]))
    assert not out.finished.any()
    assert games.over.tolist() == [False, True, False, False, True, False]
    assert games.counts[[1, 4]].tolist() == [0, 0]
    after = _slices(games)
    for i in (0, 2, 3, 5):  # the others keep their candidates, row for row
        np.testing.assert_array_equal(after[i], before[i])
    np.testing.assert_array_equal(games.boards, boards)
    np.testing.assert_array_equal(games.seat, seat)
    np.testing.assert_array_equal(games.turn, turn)
    # stepping skips them: their boards stay, the others move on
    games.step(np.zeros(6, dtype=np.int64))
    np.testing.assert_array_equal(games.boards[[1, 4]], boards[[1, 4]])
    assert (games.turn[[0, 2, 3, 5]] > turn[[0, 2, 3, 5]]).all()
    with pytest.raises(ValueError, match="over already"):
        games.end(np.array([4]))


def test_end_with_autoreset_restarts_at_the_opening() -> None:
    rng = np.random.default_rng(2)
    games = GameBatch(4, "standard", rng, autoreset=True)
    games.reset()
    _play_random(games, rng, 6)
    kept = _slices(games)[0]
    games.end(np.array([2, 3]))
    np.testing.assert_array_equal(games.boards[2], START)
    np.testing.assert_array_equal(games.boards[3], START)
    assert games.turn[[2, 3]].tolist() == [0, 0]
    assert (games.dice[[2, 3], 0] != games.dice[[2, 3], 1]).all()  # R5: no opening double
    np.testing.assert_array_equal(_slices(games)[0], kept)
    want, _ = legal_afterstates_batch(games.boards[2:3], games.dice[2:3], False)
    np.testing.assert_array_equal(_slices(games)[2], want)


def test_restart_from_given_positions_leaves_the_rest_alone() -> None:
    rng = np.random.default_rng(3)
    games = GameBatch(5, "standard", rng, autoreset=False)
    games.reset()
    _play_random(games, rng, 4)
    before = _slices(games)
    pos = flip_boards(AFTER_31[None])
    games.restart(np.array([3]), boards=pos, dice=np.array([[6, 5]]), seat=1)
    np.testing.assert_array_equal(games.boards[3], pos[0])
    assert games.dice[3].tolist() == [6, 5] and games.seat[3] == 1 and games.turn[3] == 0
    want, _ = legal_afterstates_batch(pos, np.array([[6, 5]], dtype=np.int8), False)
    after = _slices(games)
    np.testing.assert_array_equal(after[3], want)
    for i in (0, 1, 2, 4):
        np.testing.assert_array_equal(after[i], before[i])
    # a game that is over comes back when restarted (from the opening here)
    games.end(np.array([0]))
    games.restart(np.array([0]), seat=np.array([1], dtype=np.int8))
    assert not games.over[0] and games.seat[0] == 1 and games.turn[0] == 0
    np.testing.assert_array_equal(games.boards[0], START)


def test_restart_with_counter_dice_rolls_the_stream_of_the_lane() -> None:
    calls: list[tuple[list[int], list[int]]] = []

    def dice_fn(lanes: np.ndarray, turns: np.ndarray) -> np.ndarray:
        calls.append((lanes.tolist(), turns.tolist()))
        return np.tile(np.array([[4, 2]], dtype=np.int8), (lanes.shape[0], 1))

    games = GameBatch(3, "standard", dice_fn=dice_fn, autoreset=False)
    games.reset()
    calls.clear()
    games.restart(np.array([2]), boards=flip_boards(AFTER_31[None]))
    assert calls == [([2], [1])]  # a position in play: an ordinary roll, turn 1
    assert games.turn.tolist() == [0, 0, 1]


def test_index_of_finds_each_chosen_candidate() -> None:
    rng = np.random.default_rng(4)
    games = GameBatch(8, "standard", rng)
    games.reset()
    _play_random(games, rng, 3)
    pick = (rng.random(8) * games.counts).astype(np.int64)
    chosen = games.afters[games.offsets[:-1] + pick]
    np.testing.assert_array_equal(games.index_of(chosen), pick)
    np.testing.assert_array_equal(games.index_of(chosen[[5, 2]], np.array([5, 2])), pick[[5, 2]])
    # a board that is no play of the game: -1
    assert games.index_of(games.boards[:1], np.array([0])).tolist() == [-1]
    with pytest.raises(ValueError, match="expected 2 afterstates"):
        games.index_of(chosen[:3], np.array([0, 1]))


def test_must_pass_marks_the_null_play_only() -> None:
    games = GameBatch(2, "standard", np.random.default_rng(5), pass_as_play=True)
    games.reset(boards=np.stack([CLOSED_OUT, flip_boards(AFTER_31[None])[0]]))
    assert games.must_pass.tolist() == [True, False]
    np.testing.assert_array_equal(games.afters[games.offsets[0]], CLOSED_OUT)
    # without pass_as_play the stepper passes by itself and nobody waits on a pass
    auto = GameBatch(2, "standard", np.random.default_rng(5))
    out = auto.reset(boards=np.stack([CLOSED_OUT, flip_boards(AFTER_31[None])[0]]))
    assert out.passes.tolist()[0] >= 1 and not auto.must_pass.any()


def test_bad_lanes_are_refused() -> None:
    games = GameBatch(3, "standard", np.random.default_rng(6))
    games.reset()
    with pytest.raises(ValueError, match=r"0\.\.2"):
        games.end(np.array([3]))
    with pytest.raises(ValueError, match="once"):
        games.restart(np.array([1, 1]))
    with pytest.raises(ValueError, match="1-D"):
        games.end(np.array([[0]]))
