"""The compiled move generator against GNU Backgammon's results and the naive reference.

Three independent yardsticks: gnubg's own legal results (3,000 positions, standard rules),
``reference_movegen`` (a literal reading of R6-R20 and R29, itself checked against gnubg
here) on positions from random play and random bear-offs under both rule sets, and
perft-style counts written by ``scripts/make_perft.py`` from the reference.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from boards import board as board_from
from reference_movegen import (
    ALL_ROLLS,
    flip,
    random_game_positions,
    reference_afterstates,
    single_steps,
)

from nard_rl.engine.movegen import (
    BOARD_SIZE,
    DEBRUIJN,
    MAX_MOVES,
    ZOBRIST,
    _batch_kernel,
    legal_afterstates,
    legal_afterstates_batch,
)

DATA = Path(__file__).parent / "data"
START = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
# One mover checker on each of fifteen points, the opponent all on its bar: nothing is
# blocked, so small doubles have well over a thousand plays (1-1: 1,798).
SPREAD = [-15, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0]


def rows(afters: np.ndarray) -> list[tuple[int, ...]]:
    """Afterstates as a sorted list of tuples, comparable with the reference's output."""
    return sorted(tuple(r) for r in afters.tolist())


def per_position(afters: np.ndarray, offsets: np.ndarray) -> list[list[tuple[int, ...]]]:
    return [rows(afters[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]


def batch(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]], mars: bool = False
) -> list[list[tuple[int, ...]]]:
    boards = np.array([b for b, _ in pairs], dtype=np.int8)
    dice = np.array([d for _, d in pairs], dtype=np.int8)
    return per_position(*legal_afterstates_batch(boards, dice, mars))


def replays(board: Sequence[int], steps: np.ndarray, d1: int, d2: int) -> tuple[int, ...] | None:
    """The board reached by ``steps`` if some die order makes each one a legal single step."""
    n = sum(1 for f, _ in steps.tolist() if f >= 0)
    orders = [(d1,) * 4] if d1 == d2 else [(d1, d2), (d2, d1)]
    for order in orders:
        b = tuple(int(v) for v in board)
        for (f, t), die in zip(steps.tolist()[:n], order[:n], strict=True):
            nxt = [nb for nb, src, dst, _ in single_steps(b, die) if (src, dst) == (f, t)]
            if not nxt:
                break
            b = nxt[0]
        else:
            return b
    return None


# --- the yardsticks -----------------------------------------------------------------------


def test_reference_agrees_with_gnubg(gnubg_records) -> None:
    """The reference must itself reproduce gnubg before it can judge anything else."""
    for r in gnubg_records:
        got = reference_afterstates(r["board"], *r["dice"])
        assert [list(b) for b in got] == sorted(r["afterstates"]), r["id"]
        assert len(got) == r["n"]


def test_batch_matches_gnubg_in_one_call(gnubg_records) -> None:
    boards = np.array([r["board"] for r in gnubg_records], dtype=np.int8)
    dice = np.array([r["dice"] for r in gnubg_records], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice, False)
    assert offsets.shape == (len(gnubg_records) + 1,)
    for i, r in enumerate(gnubg_records):
        got = rows(afters[offsets[i] : offsets[i + 1]])
        assert len(got) == r["n"], r["id"]
        assert [list(b) for b in got] == sorted(r["afterstates"]), r["id"]


def test_single_position_api_matches_gnubg(gnubg_records) -> None:
    for r in gnubg_records[::10]:
        afters, moves = legal_afterstates(np.array(r["board"]), *r["dice"])
        assert afters.dtype == np.int8 and afters.shape == (r["n"], BOARD_SIZE)
        assert moves.dtype == np.int8 and moves.shape == (r["n"], MAX_MOVES, 2)
        assert [list(b) for b in rows(afters)] == sorted(r["afterstates"]), r["id"]


@pytest.mark.parametrize("mars", [False, True], ids=["standard", "mars"])
def test_compiled_equals_reference_on_random_play(random_play_positions, mars: bool) -> None:
    got = batch(random_play_positions, mars)
    for (board, roll), plays in zip(random_play_positions, got, strict=True):
        assert plays == reference_afterstates(board, *roll, mars), (board, roll)


@pytest.mark.parametrize("mars", [False, True], ids=["standard", "mars"])
def test_compiled_equals_reference_in_the_bearoff(bearoff_positions, mars: bool) -> None:
    got = batch(bearoff_positions, mars)
    differs = 0
    for (board, roll), plays in zip(bearoff_positions, got, strict=True):
        assert plays == reference_afterstates(board, *roll, mars), (board, roll)
        differs += plays != reference_afterstates(board, *roll, not mars)
    # The sample must contain positions where R29 changes the answer, or it proves little.
    assert differs > 20


@pytest.mark.slow
@pytest.mark.parametrize("mars", [False, True], ids=["standard", "mars"])
def test_compiled_equals_reference_many_games(mars: bool) -> None:
    pairs = random_game_positions(seed=99, count=40_000, mars=mars)
    for (board, roll), plays in zip(pairs, batch(pairs, mars), strict=True):
        assert plays == reference_afterstates(board, *roll, mars), (board, roll)


# --- the step sequences -------------------------------------------------------------------


def test_recorded_steps_replay_to_their_afterstate(gnubg_records, bearoff_positions) -> None:
    """Each play's ``(from, to)`` steps are legal single steps, in a die order, reaching it."""
    cases = [(r["board"], r["dice"], False) for r in gnubg_records[::3]]
    cases += [(b, d, True) for b, d in bearoff_positions[::3]]
    for board, (d1, d2), mars in cases:
        afters, moves = legal_afterstates(np.array(board), d1, d2, mars)
        for after, steps in zip(afters.tolist(), moves, strict=True):
            assert replays(board, steps, d1, d2) == tuple(after), (board, d1, d2, steps)
            n = sum(1 for f, _ in steps.tolist() if f >= 0)
            assert all(s == [-1, -1] for s in steps.tolist()[n:]), "unused steps are (-1, -1)"


def test_with_moves_does_not_change_the_afterstates(gnubg_records) -> None:
    boards = np.array([r["board"] for r in gnubg_records], dtype=np.int8)
    dice = np.array([r["dice"] for r in gnubg_records], dtype=np.int8)
    plain, off_plain = legal_afterstates_batch(boards, dice)
    full, off_full, moves = legal_afterstates_batch(boards, dice, with_moves=True)
    np.testing.assert_array_equal(plain, full)
    np.testing.assert_array_equal(off_plain, off_full)
    assert moves.shape == (len(full), MAX_MOVES, 2)


# --- the batch API contract ---------------------------------------------------------------


def test_offsets_contract(gnubg_records) -> None:
    recs = gnubg_records[:500]
    boards = np.array([r["board"] for r in recs], dtype=np.int8)
    dice = np.array([r["dice"] for r in recs], dtype=np.int8)
    before = boards.copy()
    afters, offsets = legal_afterstates_batch(boards, dice)
    assert afters.dtype == np.int8 and afters.ndim == 2 and afters.shape[1] == BOARD_SIZE
    assert offsets.dtype == np.int64 and offsets.shape == (len(recs) + 1,)
    assert offsets[0] == 0 and offsets[-1] == len(afters)
    assert np.all(np.diff(offsets) >= 0)
    assert [int(n) for n in np.diff(offsets)] == [r["n"] for r in recs]
    np.testing.assert_array_equal(boards, before)  # the inputs are left alone


def test_no_move_rolls_give_empty_slices(gnubg_records) -> None:
    stuck = [r for r in gnubg_records if r["n"] == 0][:20]
    moving = [r for r in gnubg_records if r["n"] > 0][:20]
    assert len(stuck) == 20
    mixed = [
        rec for pair in zip(stuck, moving, strict=True) for rec in pair
    ]  # alternate: 0, n, 0, n...
    got = batch([(r["board"], r["dice"]) for r in mixed])
    assert [len(g) for g in got] == [r["n"] for r in mixed]
    assert all(got[i] == [] for i in range(0, len(mixed), 2))


def test_empty_batch() -> None:
    afters, offsets = legal_afterstates_batch(
        np.zeros((0, BOARD_SIZE), dtype=np.int8), np.zeros((0, 2), dtype=np.int8)
    )
    assert afters.shape == (0, BOARD_SIZE)
    assert offsets.tolist() == [0]


def test_inputs_of_other_integer_types_are_accepted() -> None:
    afters, _ = legal_afterstates_batch([START], [[3, 1]])
    assert rows(afters) == reference_afterstates(START, 3, 1)
    afters, _ = legal_afterstates_batch(
        np.array([START], dtype=np.int64), np.array([[3, 1]], dtype=np.int64)
    )
    assert rows(afters) == reference_afterstates(START, 3, 1)


@pytest.mark.parametrize(
    ("boards", "dice", "message"),
    [
        (np.zeros((2, 25)), np.ones((2, 2)), "boards must have shape"),
        (np.zeros(26), np.ones((1, 2)), "boards must have shape"),
        (np.zeros((2, 26)), np.ones((3, 2)), "dice must have shape"),
        (np.zeros((2, 26)), np.ones((2, 3)), "dice must have shape"),
        (np.zeros((2, 26)), np.ones(2), "dice must have shape"),
        (np.array([START, START]), [[1, 2], [0, 3]], "dice values must be in 1..6"),
        (np.array([START, START]), [[1, 2], [7, 3]], "dice values must be in 1..6"),
        (np.array([START]), [[-1, 3]], "dice values must be in 1..6"),
    ],
)
def test_invalid_batch_inputs_are_refused(boards, dice, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        legal_afterstates_batch(boards, dice)


@pytest.mark.parametrize(
    ("board", "message"),
    [
        # past the hash tables
        (board_from("start; mover: 6:40"), "board 1: the mover has 50 checkers"),
        (board_from("start; opp: 19:15"), "board 1: the opponent has 25 checkers"),
        (board_from("start; mover: bar:-1"), r"board 1: board\[25\] is the mover's bar"),
        (board_from("start; opp: bar:-2"), r"board 1: board\[0\] is minus the opponent's bar"),
    ],
)
def test_boards_that_are_no_position_are_refused_by_name(board: list[int], message: str) -> None:
    """Checked in the kernel's first pass: such boards would index past its tables."""
    boards = np.array([START, board], dtype=np.int8)
    with pytest.raises(ValueError, match=message):
        legal_afterstates_batch(boards, np.array([[3, 1], [3, 1]], dtype=np.int8))


def test_deduplication_is_exact_even_when_every_hash_collides(
    random_play_positions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a Zobrist table of one repeated value nearly all boards share a hash; the
    board compare behind each hash match must keep every distinct play (R17)."""
    import nard_rl.engine.movegen as movegen

    pairs = [p for p in random_play_positions[:400] if p[1][0] != p[1][1]]
    expected = batch(pairs, False)
    monkeypatch.setattr(movegen, "ZOBRIST", np.full_like(ZOBRIST, 0x5BD1E995))
    assert batch(pairs, False) == expected
    assert sum(len(p) for p in expected) > 2000


# --- output buffer growth -----------------------------------------------------------------


def test_kernel_stops_at_the_first_position_that_does_not_fit() -> None:
    """The regrow protocol: the kernel returns the first position it could not write."""
    boards = np.array([START] * 4, dtype=np.int8)
    dice = np.array([[5, 5], [5, 5], [3, 1], [5, 5]], dtype=np.int8)  # 5-5: 4 plays, 3-1: 16
    out = np.zeros((10, BOARD_SIZE), dtype=np.int8)
    offsets = np.zeros(5, dtype=np.int64)
    moves = np.zeros((1, MAX_MOVES, 2), dtype=np.int8)
    args = (ZOBRIST, DEBRUIJN)
    stop = _batch_kernel(boards, dice, False, *args, 0, out, 0, offsets, False, moves)
    assert stop == 2  # the 3-1 (16 plays) does not fit after 4 + 4 rows
    assert offsets[:3].tolist() == [0, 4, 8]
    assert rows(out[0:4]) == reference_afterstates(START, 5, 5)
    assert rows(out[4:8]) == reference_afterstates(START, 5, 5)
    # resuming from the reported position into a larger buffer finishes the batch
    big = np.zeros((64, BOARD_SIZE), dtype=np.int8)
    big[:8] = out[:8]
    stop = _batch_kernel(boards, dice, False, *args, 2, big, 8, offsets, False, moves)
    assert stop == 4
    assert offsets.tolist() == [0, 4, 8, 24, 28]
    assert rows(big[8:24]) == reference_afterstates(START, 3, 1)


@pytest.mark.parametrize("with_moves", [False, True])
def test_batch_grows_its_buffer_for_high_branching_positions(with_moves: bool) -> None:
    """Far more than the initial 24 rows a position: the output must regrow, intact."""
    rolls = [(1, 1), (2, 2), (3, 3), (2, 1)]
    pairs = [(SPREAD, rolls[i % 4]) for i in range(120)]
    boards = np.array([b for b, _ in pairs], dtype=np.int8)
    dice = np.array([d for _, d in pairs], dtype=np.int8)
    res = legal_afterstates_batch(boards, dice, with_moves=with_moves)
    afters, offsets = res[0], res[1]
    expected = {r: reference_afterstates(SPREAD, *r) for r in rolls}
    assert len(afters) > 24 * len(pairs) * 10
    for i, (_, roll) in enumerate(pairs):
        assert rows(afters[offsets[i] : offsets[i + 1]]) == expected[roll]
    if with_moves:
        moves = res[2]
        for i in (0, 1, 119):
            for k in range(offsets[i], offsets[i + 1], 97):
                assert replays(SPREAD, moves[k], *pairs[i][1]) == tuple(afters[k])


def test_single_position_beyond_the_initial_capacity() -> None:
    afters, moves = legal_afterstates(np.array(SPREAD), 1, 1)
    assert rows(afters) == reference_afterstates(SPREAD, 1, 1)
    assert len(afters) == 1798 and moves.shape == (1798, MAX_MOVES, 2)


# --- perft --------------------------------------------------------------------------------


def _perft_counts(board: Sequence[int], mars: bool, depth: int) -> dict[str, int]:
    """Per first roll, the number of leaf afterstates ``depth`` plies down (compiled engine)."""
    counts: dict[str, int] = {}
    for d1, d2 in ALL_ROLLS:
        frontier = [tuple(board)]
        frontier = [a for b in frontier for a in batch([(b, (d1, d2))], mars)[0]]
        for _ in range(depth - 1):
            flipped = [flip(a) for a in frontier]
            pairs = [(b, roll) for b in flipped for roll in ALL_ROLLS]
            frontier = [a for plays in batch(pairs, mars) for a in plays]
        counts[f"{d1}-{d2}"] = len(frontier)
    return counts


def _perft_records() -> list[dict]:
    with open(DATA / "perft.jsonl") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.parametrize(
    "record", _perft_records(), ids=lambda r: f"{r['name']}-d{r['depth']}-{r['rules']}"
)
def test_perft_counts_from_the_reference(record: dict) -> None:
    counts = _perft_counts(record["board"], record["rules"] == "mars", record["depth"])
    assert counts == record["per_roll"]
    assert sum(counts.values()) == record["total"]
