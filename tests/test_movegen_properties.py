"""Properties every legal play must have, over positions hypothesis draws.

Positions come two ways: arbitrary valid boards (any spread of up to 15 checkers a side,
bars included, so closed boards, primes and odd bear-offs turn up) and positions reached
by seeded random play from the start.  Run more examples with
``pytest --hypothesis-profile=ci``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from reference_movegen import candidate_plays, pips, reference_afterstates, single_steps

from nard_rl.engine.movegen import legal_afterstates, legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, Position, flip_boards, validate_board

Board = tuple[int, ...]
dice = st.tuples(st.integers(1, 6), st.integers(1, 6))
rule_sets = st.sampled_from([False, True])


@st.composite
def any_board(draw: st.DrawFn) -> Board:
    """A valid board: mover checkers on points 1-24 or the bar, the opponent's elsewhere."""
    b = [0] * 26
    home_heavy = draw(st.booleans())  # bias half the boards toward the bear-off
    top = 6 if home_heavy else 25
    for p in draw(st.lists(st.integers(1, top), min_size=1, max_size=15)):
        b[p] += 1
    if home_heavy and draw(st.booleans()):
        b[draw(st.integers(7, 25))] += 1
        if sum(v for v in b[1:] if v > 0) > 15:
            b[1 if b[1] > 0 else next(p for p in range(1, 7) if b[p] > 0)] -= 1
    free = [p for p in range(1, 25) if b[p] == 0]
    for p in draw(st.lists(st.sampled_from([0, *free]), min_size=1, max_size=15)):
        b[p] -= 1
    return tuple(b)


@st.composite
def played_board(draw: st.DrawFn) -> Board:
    """A position reached by uniformly random legal plays from the start (R4)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    board = np.array(START_BOARD, dtype=np.int8)
    for _ in range(draw(st.integers(0, 120))):
        afters, _ = legal_afterstates(board, *rng.integers(1, 7, size=2))
        if len(afters):
            board = afters[rng.integers(len(afters))]
        board = flip_boards(board[None, :])[0]
        if board[1:26].clip(0).sum() == 0 or (-board[0:25]).clip(0).sum() == 0:
            board = np.array(START_BOARD, dtype=np.int8)
    return tuple(int(v) for v in board)


boards = st.one_of(any_board(), played_board())


def step_dice(board: Board, steps: np.ndarray, d1: int, d2: int) -> list[int] | None:
    """The die each recorded step uses: an order in which all are legal single steps.

    A lone bear-off step may fit either die; the higher is tried first, as R15 plays it.
    """
    moves = [(f, t) for f, t in steps.tolist() if f >= 0]
    hi, lo = max(d1, d2), min(d1, d2)
    orders = [(d1,) * 4] if d1 == d2 else [(hi, lo), (lo, hi)]
    for order in orders:
        b, ok = board, True
        for (f, t), die in zip(moves, order, strict=False):
            nxt = [nb for nb, src, dst, _ in single_steps(b, die) if (src, dst) == (f, t)]
            if not nxt:
                ok = False
                break
            b = nxt[0]
        if ok:
            return list(order[: len(moves)])
    return None


def plays(board: Board, roll: tuple[int, int], mars: bool) -> tuple[list[Board], np.ndarray]:
    afters, moves = legal_afterstates(np.array(board), *roll, mars)
    return [tuple(r) for r in afters.tolist()], moves


def mover_total(b: Sequence[int]) -> int:
    return sum(v for v in b[1:26] if v > 0)


def opponent_total(b: Sequence[int]) -> int:
    return sum(-v for v in b[0:25] if v < 0)


@given(boards, dice, rule_sets)
def test_compiled_equals_reference(board: Board, roll, mars: bool) -> None:
    afters, _ = plays(board, roll, mars)
    assert sorted(afters) == reference_afterstates(board, *roll, mars)


@given(boards, dice, rule_sets)
def test_afterstates_are_valid_distinct_and_keep_fifteen_a_side(board, roll, mars) -> None:
    afters, moves = plays(board, roll, mars)
    assert len(set(afters)) == len(afters)  # R17
    for after, steps in zip(afters, moves, strict=True):
        validate_board(after)
        borne_off = sum(1 for f, t in steps.tolist() if f >= 0 and t == 0)
        # with the borne-off ones, the mover still has what it had (15 minus those off)
        assert mover_total(after) + borne_off == mover_total(board)
        assert opponent_total(after) == opponent_total(board)
        assert after[25] >= 0 and after[0] <= 0


@given(boards, dice, rule_sets)
def test_opponent_checkers_only_change_by_being_hit(board, roll, mars) -> None:
    afters, _ = plays(board, roll, mars)
    for after in afters:
        hits = 0
        for p in range(1, 25):
            if board[p] < 0 and after[p] != board[p]:
                # R10: only blots go, hit by a checker that may have moved on since
                assert board[p] == -1 and after[p] >= 0, f"point {p}"
                hits += 1
            if board[p] >= 0:
                assert after[p] >= 0, f"opponent checker appeared on {p}"
        assert after[0] == board[0] - hits  # each hit checker is on the bar


@given(boards, dice, rule_sets)
def test_pip_drop_is_dice_used_minus_waste(board, roll, mars) -> None:
    afters, moves = plays(board, roll, mars)
    wastes = set()
    for after, steps in zip(afters, moves, strict=True):
        used = step_dice(board, steps, *roll)
        assert used is not None, "recorded steps are not legal single steps"
        waste = sum(
            die - f for (f, t), die in zip(steps.tolist(), used, strict=False) if t == 0 and die > f
        )
        wastes.add(waste)
        assert pips(board) - pips(after) == sum(used) - waste
    if mars:
        assert len(wastes) <= 1  # R29: every legal play wastes the same (least) amount


@given(boards, dice, rule_sets)
def test_no_play_when_another_uses_more_dice(board, roll, mars) -> None:
    afters, moves = plays(board, roll, mars)
    cands = candidate_plays(board, *roll)
    most = max((len(c.dice_used) for c in cands), default=0)
    higher = {nb for nb, *_ in single_steps(board, max(roll))}
    for after, steps in zip(afters, moves, strict=True):
        used = step_dice(board, steps, *roll)
        assert used is not None and len(used) == most  # R14
        if most == 1 and roll[0] != roll[1] and higher:
            assert after in higher  # R15: the higher die, since it can be played
    assert (len(afters) == 0) == (most == 0)  # R13, R16


@given(boards, dice)
def test_mars_only_removes_plays(board, roll) -> None:
    """R29 filters the standard plays; without a bear-off it changes nothing."""
    standard, moves = plays(board, roll, False)
    mars, _ = plays(board, roll, True)
    assert set(mars) <= set(standard)
    assert (len(mars) == 0) == (len(standard) == 0)
    if not any(t == 0 for steps in moves for f, t in steps.tolist() if f >= 0):
        assert sorted(mars) == sorted(standard)


@given(st.lists(st.tuples(boards, dice), min_size=1, max_size=12), rule_sets)
def test_batch_equals_per_position(pairs, mars: bool) -> None:
    afters, offsets = legal_afterstates_batch(
        np.array([b for b, _ in pairs], dtype=np.int8),
        np.array([d for _, d in pairs], dtype=np.int8),
        mars,
    )
    for i, (board, roll) in enumerate(pairs):
        single, _ = plays(board, roll, mars)
        assert [tuple(r) for r in afters[offsets[i] : offsets[i + 1]].tolist()] == single


@given(boards)
def test_flip_twice_is_identity(board: Board) -> None:
    pos = Position(board)
    assert pos.flip().flip() == pos
    assert pos.flip().board == tuple(-board[25 - i] for i in range(26))
    arr = np.array([board, board[::-1]], dtype=np.int8)
    np.testing.assert_array_equal(flip_boards(flip_boards(arr)), arr)
    np.testing.assert_array_equal(flip_boards(arr)[0], np.array(pos.flip().board))
    assert pos.flip().pip_counts() == pos.pip_counts()[::-1]
    assert pos.flip().checkers_off() == pos.checkers_off()[::-1]
