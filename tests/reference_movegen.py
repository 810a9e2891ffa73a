"""A deliberately naive legal-play generator, the yardstick for the compiled one.

It shares nothing with ``nard_rl.engine.movegen`` but the board format: no bit masks,
no hashing, no reordering argument.  It plays the dice one at a time in every order the
rules allow (R6: both orders of a non-double; R7: four times a double), keeping every
reachable board after each die, and only then applies the selection rules literally:

* R14: keep the plays that use the most dice;
* R15: if that is one die of a non-double, keep those that use the higher die, if any;
* R29 (mars only): keep those of least total waste;
* R17: one entry per resulting board.

It is slow (pure Python, tuples everywhere) and is meant to be read, not run in a loop.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

Board = tuple[int, ...]

BAR = 25
"""The mover's bar, treated as the point 25 from which entering with ``d`` lands on 25 - d."""


def _highest_point(board: Board) -> int:
    """The mover's rearmost checker on the board proper (0 when none are left)."""
    return max((p for p in range(1, 25) if board[p] > 0), default=0)


def _all_home(board: Board) -> bool:
    """R18: no checker on the bar or outside points 1..6."""
    return board[BAR] == 0 and all(board[p] <= 0 for p in range(7, 25))


def single_steps(board: Board, die: int) -> Iterator[tuple[Board, int, int, int]]:
    """Every way to play one die: ``(new_board, from, to, waste)`` (``to`` 0 means off).

    ``waste`` is what R29 charges for the step: ``die - from`` for a bear-off with a die
    larger than the distance, 0 otherwise.
    """
    # R11: while a checker is on the bar, entering is the only move.
    sources = [BAR] if board[BAR] > 0 else [p for p in range(24, 0, -1) if board[p] > 0]
    for src in sources:
        dst = src - die
        new = list(board)
        new[src] -= 1
        if dst >= 1:
            if board[dst] <= -2:  # R9: blocked point
                continue
            if board[dst] == -1:  # R10: hit, the blot goes to the opponent's bar
                new[dst] = 1
                new[0] -= 1
            else:  # R8: empty or own point
                new[dst] += 1
            yield tuple(new), src, dst, 0
        else:
            if not _all_home(board):  # R18
                continue
            # R19: exact (dst == 0); R20: a larger die only from the highest point.
            if dst < 0 and src != _highest_point(board):
                continue
            yield tuple(new), src, 0, -dst


@dataclass(frozen=True)
class Candidate:
    """One way of playing part or all of a roll."""

    board: Board
    dice_used: tuple[int, ...]
    waste: int
    steps: tuple[tuple[int, int], ...]


def candidate_plays(board: Sequence[int], d1: int, d2: int) -> list[Candidate]:
    """Every sequence of single-die steps (all lengths, all die orders), unfiltered.

    Sequences that reach the same board with the same dice and waste are kept once per
    layer (their continuations are identical), which keeps doubles tractable without
    changing which boards and wastes are reachable.
    """
    start: Board = tuple(int(v) for v in board)
    orders = [(d1,) * 4] if d1 == d2 else [(d1, d2), (d2, d1)]
    found: list[Candidate] = []
    for order in orders:
        layer: dict[tuple[Board, int], tuple[tuple[int, int], ...]] = {(start, 0): ()}
        for k, die in enumerate(order, start=1):
            nxt: dict[tuple[Board, int], tuple[tuple[int, int], ...]] = {}
            for (b, waste), steps in layer.items():
                for nb, src, dst, w in single_steps(b, die):
                    nxt.setdefault((nb, waste + w), (*steps, (src, dst)))
            for (nb, waste), steps in nxt.items():
                found.append(Candidate(nb, order[:k], waste, steps))
            layer = nxt
    return found


def legal_candidates(board: Sequence[int], d1: int, d2: int, mars: bool = False) -> list[Candidate]:
    """The candidates that survive R14, R15 and (under mars) R29; possibly several per board."""
    cands = candidate_plays(board, d1, d2)
    if not cands:
        return []  # R16: nothing can be played
    most = max(len(c.dice_used) for c in cands)
    cands = [c for c in cands if len(c.dice_used) == most]  # R14
    if d1 != d2 and most == 1:
        higher = [c for c in cands if c.dice_used[0] == max(d1, d2)]
        if higher:  # R15
            cands = higher
    if mars:
        least = min(c.waste for c in cands)
        cands = [c for c in cands if c.waste == least]  # R29
    return cands


def reference_afterstates(
    board: Sequence[int], d1: int, d2: int, mars: bool = False
) -> list[Board]:
    """Sorted distinct legal afterstates (R17), still from the mover's view."""
    return sorted({c.board for c in legal_candidates(board, d1, d2, mars)})


def flip(board: Sequence[int]) -> Board:
    """The same position seen by the other player."""
    return tuple(-board[25 - i] for i in range(26))


def pips(board: Sequence[int]) -> int:
    """The mover's pip count (a checker on the bar is 25 away from off)."""
    return sum(p * board[p] for p in range(1, 26) if board[p] > 0)


ALL_ROLLS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(1, 7) for b in range(a, 7))
"""The 21 distinct rolls, higher-or-equal die second."""


def board_of(
    mover: dict[int, int], opp: dict[int, int] | None = None, bar: int = 0, opp_bar: int = 0
) -> list[int]:
    """A board from point -> count maps (both counts positive); the rest is borne off."""
    b = [0] * 26
    for p, n in mover.items():
        b[p] = n
    for p, n in (opp or {}).items():
        b[p] = -n
    b[25], b[0] = bar, -opp_bar
    return b


START: Board = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)
"""R4, written out here rather than imported so the reference stands on its own."""


def game_over(board: Sequence[int]) -> bool:
    """One side has no checker left on the board or the bar (R21)."""
    mover = sum(v for v in board[1:26] if v > 0)
    opponent = sum(-v for v in board[0:25] if v < 0)
    return mover == 0 or opponent == 0


def random_game_positions(
    seed: int, count: int, mars: bool = False
) -> list[tuple[Board, tuple[int, int]]]:
    """``count`` (board, roll) pairs met while playing uniformly random legal plays.

    Games start from R4 and restart when one ends; a roll without a play passes (R16).
    """
    rng = random.Random(seed)
    board = START
    out: list[tuple[Board, tuple[int, int]]] = []
    while len(out) < count:
        roll = (rng.randint(1, 6), rng.randint(1, 6))
        out.append((board, roll))
        plays = reference_afterstates(board, *roll, mars)
        after = rng.choice(plays) if plays else board
        board = START if game_over(after) else flip(after)
    return out


def random_bearoff_positions(seed: int, count: int) -> list[tuple[Board, tuple[int, int]]]:
    """``count`` seeded (board, roll) pairs in or near the mover's bear-off.

    The mover has 1..15 checkers, mostly all home, sometimes one or two still on 7..9
    (so a first die can bring them home, R18) or on the bar; the opponent sometimes keeps
    checkers (blots or points) in the mover's home board, or on its bar.
    """
    rng = random.Random(seed)
    out: list[tuple[Board, tuple[int, int]]] = []
    while len(out) < count:
        b = [0] * 26
        for _ in range(rng.randint(1, 15)):
            b[rng.randint(1, 6)] += 1
        r = rng.random()
        room = sum(b) < 15  # at most 15 checkers a side
        if r < 0.15 and room:
            b[rng.randint(7, 9)] += 1
        elif r < 0.2 and room:
            b[BAR] += 1
        opp_total = rng.randint(1, 15)
        placed = 0
        if rng.random() < 0.3:  # contact: opponent checkers left in the mover's home
            for _ in range(rng.randint(1, 4)):
                p = rng.randint(1, 6)
                if b[p] <= 0:
                    b[p] -= 1
                    placed += 1
        if rng.random() < 0.1:
            b[0] -= 1
            placed += 1
        free = [p for p in range(13, 25) if b[p] <= 0]
        while placed < opp_total:
            b[rng.choice(free)] -= 1
            placed += 1
        out.append((tuple(b), (rng.randint(1, 6), rng.randint(1, 6))))
    return out
