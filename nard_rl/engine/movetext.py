"""Move notation in GNU Backgammon's style: ``24/18 13/11``, ``bar/22*``, ``6/off``,
``8/2(2)``, ``24/20*/16``.

The generator hands back raw steps ``(from, to)``; the notation is derived from them and
the board, so the hot path never builds strings.  A compiled kernel plays each step list
on the board (highest source first, ``apply_steps``' canonical order), joins one
checker's steps into a part and counts identical parts, and writes each part as an
integer; the text of a part is built once per distinct integer (a few thousand exist),
so naming every play of a hint costs about a microsecond a play.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from nard_rl.engine.position import BOARD_SIZE, PositionError

MAX_STEPS = 4
_NAMES = ("off", *(str(p) for p in range(1, 25)), "bar")


# A part's integer: start (bits 0-4), end (5-9; 0 for off), end hits (10), hit landings
# on the way (11-12: how many; then 5 bits each from 13), how many identical parts (28-30).
_END, _END_HIT, _N_HITS, _HIT0, _COUNT = 5, 10, 11, 13, 28


@njit(cache=True)
def _part_keys(board: np.ndarray, steps: np.ndarray, out: np.ndarray) -> int:
    """Fill ``out[i, :]`` with the part integers of play ``i`` (0 = no part), in notation
    order; return -1, or the index ``i * 4 + j`` of the first step ``j`` of play ``i``
    that does not move a checker of the mover."""
    b = np.empty(26, np.int64)
    src = np.empty(MAX_STEPS, np.int64)
    dst = np.empty(MAX_STEPS, np.int64)
    where = np.empty(MAX_STEPS, np.int64)
    starts = np.empty(MAX_STEPS, np.int64)
    ends = np.empty(MAX_STEPS, np.int64)
    end_hit = np.empty(MAX_STEPS, np.int64)
    hits = np.empty(MAX_STEPS, np.int64)  # landings that hit on the way, as key bits
    n_hits = np.empty(MAX_STEPS, np.int64)
    keys = np.empty(MAX_STEPS, np.int64)
    for i in range(steps.shape[0]):
        for p in range(26):
            b[p] = board[p]
        m = 0
        for j in range(MAX_STEPS):
            if steps[i, j, 0] >= 0:
                # insertion, keeping (from, to) in decreasing order
                f = steps[i, j, 0]
                t = steps[i, j, 1]
                k = m
                while k > 0 and (src[k - 1] < f or (src[k - 1] == f and dst[k - 1] < t)):
                    src[k] = src[k - 1]
                    dst[k] = dst[k - 1]
                    where[k] = where[k - 1]
                    k -= 1
                src[k] = f
                dst[k] = t
                where[k] = j
                m += 1
        n = 0  # chains (parts)
        for s in range(m):
            f = src[s]
            t = dst[s]
            if f < 1 or f > 25 or t > 24 or t >= f or b[f] <= 0:
                return i * MAX_STEPS + where[s]
            # ``apply_steps``, compiled: the same checks and hits (R10)
            hit = 1 if (t >= 1 and b[t] == -1) else 0
            b[f] -= 1
            if hit:
                b[t] = 0
                b[0] -= 1
            if t >= 1:
                b[t] += 1
            k = 0
            while k < n and ends[k] != f:
                k += 1
            if k < n:  # the same checker moves on
                if end_hit[k]:
                    hits[k] |= f << (_HIT0 + 5 * n_hits[k])
                    n_hits[k] += 1
                ends[k] = t
                end_hit[k] = hit
            else:
                starts[n] = f
                ends[n] = t
                end_hit[n] = hit
                hits[n] = 0
                n_hits[n] = 0
                n += 1
        # order: highest start, then highest end; stable
        order = np.empty(n, np.int64)
        for k in range(n):
            q = k
            while q > 0 and (
                starts[order[q - 1]] < starts[k]
                or (starts[order[q - 1]] == starts[k] and ends[order[q - 1]] < ends[k])
            ):
                order[q] = order[q - 1]
                q -= 1
            order[q] = k
        for k in range(n):
            c = order[k]
            e = ends[c] if ends[c] > 0 else 0
            keys[k] = (
                starts[c] | e << _END | end_hit[c] << _END_HIT | n_hits[c] << _N_HITS | hits[c]
            )
        # identical neighbours (the same text) count as one part
        w = 0
        k = 0
        while k < n:
            q = k
            while q + 1 < n and keys[q + 1] == keys[k]:
                q += 1
            out[i, w] = keys[k] | (q - k + 1) << _COUNT
            w += 1
            k = q + 1
        for q in range(w, MAX_STEPS):
            out[i, q] = 0
    return -1


_PART_TEXT: dict[int, str] = {}


def _part_text(key: int) -> str:
    text = _PART_TEXT.get(key)
    if text is None:
        body = _NAMES[key & 31]
        for h in range((key >> _N_HITS) & 3):
            body += "/" + _NAMES[(key >> (_HIT0 + 5 * h)) & 31] + "*"
        body += "/" + _NAMES[(key >> _END) & 31] + ("*" if key >> _END_HIT & 1 else "")
        count = key >> _COUNT
        text = _PART_TEXT[key] = body + (f"({count})" if count > 1 else "")
    return text


def format_steps(board: Sequence[int], steps: np.ndarray | Sequence[Sequence[int]]) -> str:
    """Format one play given as up to four ``(from, to)`` steps (``from`` -1 pads).

    One checker's consecutive steps are joined (``13/5``), and a landing point is kept
    only where it hits (``13/10*/5``); identical parts are counted (``8/2(2)``).
    """
    try:
        arr = np.asarray(steps, dtype=np.int64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise PositionError("steps must be (from, to) pairs of integers") from None
    if arr.shape[0] > MAX_STEPS:
        raise PositionError(f"a play has at most {MAX_STEPS} steps, got {arr.shape[0]}")
    padded = np.full((1, MAX_STEPS, 2), -1, dtype=np.int64)
    padded[0, : arr.shape[0]] = arr
    return format_plays(board, padded)[0]


def format_plays(board: Sequence[int], plays: np.ndarray) -> list[str]:
    """``format_steps`` for every play of one board: ``plays`` is the generator's
    ``(N, 4, 2)`` array of steps (``from`` -1 pads)."""
    b = np.asarray(board, dtype=np.int64).reshape(-1)
    if b.shape[0] != BOARD_SIZE:
        raise PositionError(f"board must have 26 entries, got {b.shape[0]}")
    steps = np.asarray(plays, dtype=np.int64)
    if steps.ndim != 3 or steps.shape[1:] != (MAX_STEPS, 2):
        raise PositionError(f"plays must have shape (N, 4, 2), got {steps.shape}")
    keys = np.empty((steps.shape[0], MAX_STEPS), dtype=np.int64)
    bad = _part_keys(b, steps, keys)
    if bad >= 0:
        f, t = steps[bad // MAX_STEPS, bad % MAX_STEPS]
        raise PositionError(f"step {f}/{t} does not move a checker of the mover")
    get = _PART_TEXT.get
    return [" ".join([get(k) or _part_text(k) for k in row if k]) for row in keys.tolist()]
