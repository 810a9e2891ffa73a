"""Batch helpers shared by self-play training, vectorised environments and evaluation.

They work on whole arrays of games at once (no Python per game), so the layers above
can step thousands of games with a handful of compiled calls per ply.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nard_rl.engine.position import START_BOARD

START = np.array(START_BOARD, dtype=np.int8)


@njit(cache=True)
def _segment_argmax(values: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> None:
    for i in range(offsets.shape[0] - 1):
        lo = offsets[i]
        hi = offsets[i + 1]
        if hi <= lo:
            out[i] = -1
            continue
        best = lo
        bv = values[lo]
        for k in range(lo + 1, hi):
            if values[k] > bv:
                bv = values[k]
                best = k
        out[i] = best - lo


def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per position, the local index of the best of its candidates (-1 if it has none)."""
    out = np.empty(offsets.shape[0] - 1, dtype=np.int64)
    _segment_argmax(np.ascontiguousarray(values), np.ascontiguousarray(offsets), out)
    return out


@njit(cache=True)
def _outcomes(boards: np.ndarray, done: np.ndarray, gammon: np.ndarray, bg: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        mover_left = 0
        opp_left = 0
        opp_back = False
        for p in range(1, 25):
            v = boards[i, p]
            if v > 0:
                mover_left += v
            elif v < 0:
                opp_left -= v
                if p <= 6:
                    opp_back = True
        mover_left += boards[i, 25]
        opp_left -= boards[i, 0]
        if boards[i, 0] < 0:
            opp_back = True
        d = mover_left == 0
        done[i] = d
        gammon[i] = d and opp_left == 15
        bg[i] = d and opp_left == 15 and opp_back


def outcomes(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For boards just after the mover's play: (game over, gammon, backgammon) flags.

    R21: the mover wins by bearing off all 15; R25: a gammon when the loser has borne off
    none, a backgammon when the loser also still has a checker on the bar or in the
    winner's home board (points 1-6 from the winner's view).
    """
    n = afterstates.shape[0]
    done = np.empty(n, dtype=np.bool_)
    gammon = np.empty(n, dtype=np.bool_)
    bg = np.empty(n, dtype=np.bool_)
    _outcomes(np.ascontiguousarray(afterstates, dtype=np.int8), done, gammon, bg)
    return done, gammon, bg


def roll_dice(rng: np.random.Generator, n: int, opening: np.ndarray | None = None) -> np.ndarray:
    """``(n, 2)`` int8 rolls; rows flagged ``opening`` get no doubles (R5: the opening
    roll is one die per player, ties rolled again, so its distribution is the 30
    non-double rolls)."""
    dice = rng.integers(1, 7, size=(n, 2), dtype=np.int8)
    if opening is not None and opening.any():
        idx = np.flatnonzero(opening)
        d1 = rng.integers(1, 7, size=idx.size)
        d2 = (d1 - 1 + rng.integers(1, 6, size=idx.size)) % 6 + 1
        dice[idx, 0] = d1
        dice[idx, 1] = d2
    return dice


def start_boards(n: int) -> np.ndarray:
    return np.tile(START, (n, 1))
