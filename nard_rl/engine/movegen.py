"""Compiled legal-play generation (R8-R20, R29) for single positions and batches.

Boards are ``int8[26]`` arrays in the JSON board format (see ``nard_rl.engine.position``):
``b[1..24]`` points from the mover's view (mover positive), ``b[25]`` the mover's bar,
``b[0]`` minus the opponent's bar.  The bar is treated as point 25, so entering with a
die ``d`` is the ordinary step ``25 -> 25 - d`` (R11).

Design, chosen for throughput (the batch kernel is the engine's hot path):

* Non-doubles enumerate both die orders (R6) depth-first and deduplicate the resulting
  positions (R17) through a small open-addressing table of Zobrist hashes that are kept
  up to date incrementally; a hash match is confirmed by comparing the two boards, so
  the deduplication is exact by construction, and the compare runs only on a match.
* Doubles enumerate move multisets with non-increasing source points.  Any legal
  sequence can be reordered that way (a checker only ever lands below where it came
  from, and moving higher checkers first only helps bear-off legality, R18/R20), and two
  different multisets of equal-length steps always give different boards, so doubles
  need no deduplication at all.
* Candidates are ranked by a key (dice used, then the higher single die, then least
  waste under R29); a better key discards everything kept so far, so the maximum-dice
  rules (R14, R15) cost nothing when they do not bite.

All kernels are iterative (no recursion) and compiled with ``cache=True``.
"""

from __future__ import annotations

import mmap

import numpy as np
from numba import njit

BOARD_SIZE = 26
MAX_MOVES = 4
_HUGE_MIN = 8 << 20  # buffers from this size on ask for huge pages
_HASH_SLOTS = 512  # power of two, far above the distinct plays of any non-double roll

_rng = np.random.default_rng(0x6E617264)
ZOBRIST = _rng.integers(1, np.iinfo(np.int64).max, size=(BOARD_SIZE, 31), dtype=np.int64)


_DEBRUIJN_MUL = 0x077CB531
DEBRUIJN = np.zeros(32, dtype=np.int64)
for _i in range(32):
    DEBRUIJN[(((1 << _i) * _DEBRUIJN_MUL) & 0xFFFFFFFF) >> 27] = _i
# LOWMASK[k]: bits 0..k set.  Bit j of a mask stands for point 25 - j (j 0 is the bar).
LOWMASK = np.array([(1 << (k + 1)) - 1 for k in range(26)], dtype=np.int64)
_HOME_FREE = (1 << 19) - 1  # bits of points 25..7: all clear means R18 allows bearing off


@njit(cache=True, inline="always")
def _lowbit(x: int, debruijn: np.ndarray) -> int:
    low = x & -x
    return debruijn[((low * _DEBRUIJN_MUL) & 0xFFFFFFFF) >> 27]


@njit(cache=True, inline="always")
def _sources(b: np.ndarray, occ: int, blocked: int, d: int, debruijn: np.ndarray) -> int:
    """Bit mask of the points from which die ``d`` can be played now.

    R11: with a checker on the bar only the bar moves; R8/R9: the landing point must not
    be blocked; R18-R20: bearing off needs every checker home, exactly or from the
    highest point with a larger die.
    """
    if b[25] > 0:
        if (blocked >> d) & 1:
            return 0
        return 1
    cand = occ & ~(blocked >> d) & LOWMASK[24 - d]
    if occ & _HOME_FREE == 0 and occ != 0:
        if b[d] > 0:
            cand |= 1 << (25 - d)
        else:
            jl = _lowbit(occ, debruijn)
            if 25 - jl < d:
                cand |= 1 << jl
    return cand


@njit(cache=True)
def _generate_one(
    b: np.ndarray,
    d1: int,
    d2: int,
    mars: bool,
    zob: np.ndarray,
    debruijn: np.ndarray,
    out: np.ndarray,
    start: int,
    record: bool,
    moves: np.ndarray,
    table: np.ndarray,
    slot_row: np.ndarray,
    used: np.ndarray,
    stack: np.ndarray,
) -> int:
    """Write the legal afterstates of ``b`` (mutated, then restored) from ``out[start]`` on.

    Returns the new fill level, or ``-1`` when ``out`` is too small.  ``table`` (hashes),
    ``slot_row`` (the row of ``out`` each used slot holds, -1 when free) and ``used`` are
    scratch for deduplication, ``stack`` for the doubles' undo stack.
    """
    cap = out.shape[0]
    occ = 0
    blocked = 0
    h = np.int64(0)
    for p in range(1, 26):
        v = b[p]
        occ |= np.int64(v > 0) << (25 - p)
        blocked |= np.int64(v < -1) << (25 - p)
    n = start
    best = -1
    nused = 0

    if d1 != d2:
        for p in range(BOARD_SIZE):
            h ^= zob[p, b[p] + 15]
        # Sources of d1 on the untouched board.  In the second order (d2 first, then d1)
        # a d1 step from one of them by another checker repeats a play of the first order
        # (the d2 step stays legal after it: own steps never block, never add a checker
        # above another, never take bear-off rights away), so it is skipped unhashed.
        first_d1 = _sources(b, occ, blocked, d1, debruijn)
        for order in range(2):
            da = d1 if order == 0 else d2
            db = d2 if order == 0 else d1
            c1 = first_d1 if order == 0 else _sources(b, occ, blocked, da, debruijn)
            while c1:
                j = _lowbit(c1, debruijn)
                c1 &= c1 - 1
                p = 25 - j
                t = p - da
                # apply first step
                h1 = h ^ zob[p, b[p] + 15] ^ zob[p, b[p] + 14]
                b[p] -= 1
                occ1 = occ
                if b[p] == 0:
                    occ1 &= ~(1 << j)
                hit1 = False
                w1 = 0
                if t >= 1:
                    occ1 |= 1 << (25 - t)
                    if b[t] == -1:
                        hit1 = True
                        h1 ^= zob[t, 14] ^ zob[t, 16] ^ zob[0, b[0] + 15] ^ zob[0, b[0] + 14]
                        b[t] = 1
                        b[0] -= 1
                    else:
                        h1 ^= zob[t, b[t] + 15] ^ zob[t, b[t] + 16]
                        b[t] += 1
                else:
                    w1 = -t
                c2 = _sources(b, occ1, blocked, db, debruijn)
                found2 = c2 != 0
                if order == 1:
                    c2 &= ~first_d1
                while c2:
                    j2 = _lowbit(c2, debruijn)
                    c2 &= c2 - 1
                    q = 25 - j2
                    u = q - db
                    w = w1
                    if u < 1:
                        w -= u
                    key = 2 * 8 * 32 + (31 - w if mars else 0)
                    if key < best:
                        continue
                    if key > best:
                        best = key
                        n = start
                        for i in range(nused):
                            slot_row[used[i]] = -1
                        nused = 0
                    if n >= cap:
                        return -1
                    for i in range(BOARD_SIZE):
                        out[n, i] = b[i]
                    out[n, q] -= 1
                    if u >= 1:
                        if b[u] == -1:
                            out[n, u] = 1
                            out[n, 0] -= 1
                        else:
                            out[n, u] += 1
                    # Only a checker continuing from where it just landed, one refilling
                    # the point just left (both really one checker's two steps), or two
                    # checkers both borne off can repeat another play (R17); any other pair
                    # of steps is unique, so it skips the table.
                    if q == t or u == p or (t < 1 and u < 1):
                        h2 = h1 ^ zob[q, b[q] + 15] ^ zob[q, b[q] + 14]
                        if u >= 1:
                            if b[u] == -1:
                                h2 ^= (
                                    zob[u, 14] ^ zob[u, 16] ^ zob[0, b[0] + 15] ^ zob[0, b[0] + 14]
                                )
                            else:
                                h2 ^= zob[u, b[u] + 15] ^ zob[u, b[u] + 16]
                        slot = h2 & (_HASH_SLOTS - 1)
                        dup = False
                        while slot_row[slot] >= 0:
                            if table[slot] == h2:
                                # equal hashes: the boards decide (exact, R17)
                                r = slot_row[slot]
                                same = True
                                for i in range(BOARD_SIZE):
                                    if out[r, i] != out[n, i]:
                                        same = False
                                        break
                                if same:
                                    dup = True
                                    break
                            slot = (slot + 1) & (_HASH_SLOTS - 1)
                        if dup:
                            continue
                        table[slot] = h2
                        slot_row[slot] = n
                        used[nused] = slot
                        nused += 1
                    if record:
                        moves[n, 0, 0] = p
                        moves[n, 0, 1] = max(t, 0)
                        moves[n, 1, 0] = q
                        moves[n, 1, 1] = max(u, 0)
                        moves[n, 2, 0] = -1
                        moves[n, 2, 1] = -1
                        moves[n, 3, 0] = -1
                        moves[n, 3, 1] = -1
                    n += 1
                if not found2:
                    # A one-die play competes only with plays of the same die (R15), and
                    # first steps of one die from distinct points never coincide.
                    key = 1 * 8 * 32 + da * 32 + (31 - w1 if mars else 0)
                    if key >= best:
                        if key > best:
                            best = key
                            n = start
                            for i in range(nused):
                                slot_row[used[i]] = -1
                            nused = 0
                        if n >= cap:
                            return -1
                        for i in range(BOARD_SIZE):
                            out[n, i] = b[i]
                        if record:
                            moves[n, 0, 0] = p
                            moves[n, 0, 1] = max(t, 0)
                            moves[n, 1, 0] = -1
                            moves[n, 1, 1] = -1
                            moves[n, 2, 0] = -1
                            moves[n, 2, 1] = -1
                            moves[n, 3, 0] = -1
                            moves[n, 3, 1] = -1
                        n += 1
                # undo first step
                b[p] += 1
                if t >= 1:
                    if hit1:
                        b[t] = -1
                        b[0] += 1
                    else:
                        b[t] -= 1
        for i in range(nused):
            slot_row[used[i]] = -1
        return n

    # Doubles (R7, R14): depth-first over sources with non-increasing points, i.e.
    # non-decreasing bit index.  stack rows per depth: remaining sources, occupancy,
    # waste so far, source point, hit flag, had-a-child flag.
    d = d1
    depth = 0
    stack[0, 0] = _sources(b, occ, blocked, d, debruijn)
    stack[0, 1] = occ
    stack[0, 2] = 0
    stack[0, 5] = 0
    while True:
        cand = stack[depth, 0]
        if cand:
            j = _lowbit(cand, debruijn)
            stack[depth, 0] = cand & (cand - 1)
            stack[depth, 5] = 1
            p = 25 - j
            t = p - d
            o = stack[depth, 1]
            w = stack[depth, 2]
            b[p] -= 1
            if b[p] == 0:
                o &= ~(1 << j)
            hit = 0
            if t >= 1:
                o |= 1 << (25 - t)
                if b[t] == -1:
                    hit = 1
                    b[t] = 1
                    b[0] -= 1
                else:
                    b[t] += 1
            else:
                w -= t
            stack[depth, 3] = p
            stack[depth, 4] = hit
            depth += 1
            c = _sources(b, o, blocked, d, debruijn) & ~((1 << j) - 1)
            if depth < 3 or c == 0:
                stack[depth, 0] = c
                stack[depth, 1] = o
                stack[depth, 2] = w
                stack[depth, 5] = 0
                continue
            # the last step is played inline: each leaf is the board plus one step
            while c:
                j4 = _lowbit(c, debruijn)
                c &= c - 1
                q = 25 - j4
                u = q - d
                key = 4 * 8 * 32 + (31 - (w - u if u < 1 else w) if mars else 0)
                if key < best:
                    continue
                if key > best:
                    best = key
                    n = start
                if n >= cap:
                    return -1
                # Written out rather than shared with the non-doubles' copy: a helper
                # function here (even numba-inlined) cost a third of the throughput.
                for i in range(BOARD_SIZE):
                    out[n, i] = b[i]
                out[n, q] -= 1
                if u >= 1:
                    if b[u] == -1:
                        out[n, u] = 1
                        out[n, 0] -= 1
                    else:
                        out[n, u] += 1
                if record:
                    for k in range(3):
                        moves[n, k, 0] = stack[k, 3]
                        moves[n, k, 1] = max(stack[k, 3] - d, 0)
                    moves[n, 3, 0] = q
                    moves[n, 3, 1] = max(u, 0)
                n += 1
            depth -= 1
            _undo_step(b, stack[depth, 3], d, stack[depth, 4])
            continue
        # this node is exhausted; a node without any child is a play of ``depth`` steps
        if depth > 0 and stack[depth, 5] == 0:
            key = depth * 8 * 32 + (31 - stack[depth, 2] if mars else 0)
            if key >= best:
                if key > best:
                    best = key
                    n = start
                if n >= cap:
                    return -1
                for i in range(BOARD_SIZE):
                    out[n, i] = b[i]
                if record:
                    for k in range(4):
                        if k < depth:
                            moves[n, k, 0] = stack[k, 3]
                            moves[n, k, 1] = max(stack[k, 3] - d, 0)
                        else:
                            moves[n, k, 0] = -1
                            moves[n, k, 1] = -1
                n += 1
        if depth == 0:
            break
        depth -= 1
        _undo_step(b, stack[depth, 3], d, stack[depth, 4])
    return n


@njit(cache=True, inline="always")
def _undo_step(b: np.ndarray, p: int, d: int, hit: int) -> None:
    t = p - d
    b[p] += 1
    if t >= 1:
        if hit:
            b[t] = -1
            b[0] += 1
        else:
            b[t] -= 1


@njit(cache=True)
def _batch_kernel(
    boards: np.ndarray,
    dice: np.ndarray,
    mars: bool,
    zob: np.ndarray,
    debruijn: np.ndarray,
    first: int,
    out: np.ndarray,
    fill: int,
    offsets: np.ndarray,
    record: bool,
    moves: np.ndarray,
) -> int:
    """Generate positions ``first..N-1``; returns the first position that did not fit,
    or ``-1 - i`` when board ``i`` is not a position (the caller names the problem)."""
    table = np.zeros(_HASH_SLOTS, dtype=np.int64)
    slot_row = np.full(_HASH_SLOTS, -1, dtype=np.int64)
    used = np.zeros(_HASH_SLOTS, dtype=np.int64)
    stack = np.zeros((5, 6), dtype=np.int64)
    work = np.empty(BOARD_SIZE, dtype=np.int8)
    n_pos = boards.shape[0]
    for i in range(first, n_pos):
        # The tables are sized for real positions (at most 15 checkers a side): a board
        # beyond that would index past them, so it stops the batch here.
        mover = 0
        opp = 0
        for k in range(BOARD_SIZE):
            v = boards[i, k]
            work[k] = v
            if v > 0:
                mover += v
            else:
                opp -= v
        if mover > 15 or opp > 15 or boards[i, 0] > 0 or boards[i, 25] < 0:
            return -1 - i
        res = _generate_one(
            work,
            dice[i, 0],
            dice[i, 1],
            mars,
            zob,
            debruijn,
            out,
            fill,
            record,
            moves,
            table,
            slot_row,
            used,
            stack,
        )
        if res < 0:
            return i
        fill = res
        offsets[i + 1] = fill
    return n_pos


def _alloc_rows(rows: int, shape_tail: tuple[int, ...]) -> np.ndarray:
    """``np.empty`` whose large buffers ask the kernel for transparent huge pages.

    The output of a large batch is fresh memory touched once; with 4 KiB pages the page
    faults alone cost a quarter of the generation time.  Huge pages (where the kernel
    allows ``madvise``) remove most of them; elsewhere this is a plain allocation.
    """
    itemsize = int(np.prod(shape_tail))
    nbytes = rows * itemsize
    if nbytes >= _HUGE_MIN and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            buf.madvise(mmap.MADV_HUGEPAGE)
            return np.frombuffer(buf, dtype=np.int8).reshape((rows, *shape_tail))
        except (OSError, ValueError):
            pass
    return np.empty((rows, *shape_tail), dtype=np.int8)


def _reject(boards: np.ndarray, i: int) -> None:
    """Raise ``PositionError`` for board ``i``, which the kernel refused."""
    from nard_rl.engine.position import PositionError, validate_board

    try:
        validate_board(boards[i].tolist())
    except PositionError as exc:
        raise PositionError(f"board {i}: {exc}") from None
    raise PositionError(f"board {i} has more than 15 checkers of one side")


def legal_afterstates_batch(
    boards: np.ndarray,
    dice: np.ndarray,
    mars: bool = False,
    *,
    with_moves: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All legal afterstates for N positions and rolls in one compiled call.

    ``boards`` is ``(N, 26)`` and ``dice`` ``(N, 2)``.  Returns ``(afterstates, offsets)``:
    the plays of position ``i`` are ``afterstates[offsets[i]:offsets[i + 1]]``, each still
    seen from the mover (flip it to hand the turn over).  A position with no legal play
    has an empty slice (R16).  With ``with_moves`` a third array ``(M, 4, 2)`` holds one
    step sequence ``(from, to)`` per afterstate (``to`` 0 is off; unused steps are ``(-1, -1)``).
    The output buffer grows geometrically, so there is no Python work per position.
    A board that is no position (more than 15 checkers a side, a bar of the wrong sign)
    raises ``PositionError`` (a ``ValueError``) naming it; the check is part of the
    kernel's first pass over each board, so it costs nothing measurable.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int8)
    if boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
        raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
    if dice.shape != (boards.shape[0], 2):
        raise ValueError(f"dice must have shape (N, 2), got {dice.shape}")
    if dice.size and (dice.min() < 1 or dice.max() > 6):
        raise ValueError("dice values must be in 1..6")
    n_pos = boards.shape[0]
    cap = max(64, n_pos * 24)
    out = _alloc_rows(cap, (BOARD_SIZE,))
    moves = _alloc_rows(cap if with_moves else 1, (MAX_MOVES, 2))
    offsets = np.zeros(n_pos + 1, dtype=np.int64)
    first = 0
    fill = 0
    while True:
        stop = _batch_kernel(
            boards,
            dice,
            bool(mars),
            ZOBRIST,
            DEBRUIJN,
            first,
            out,
            fill,
            offsets,
            with_moves,
            moves,
        )
        if stop < 0:
            _reject(boards, -1 - stop)
        if stop >= n_pos:
            break
        first = stop
        fill = int(offsets[stop])
        remaining = n_pos - stop
        cap = max(cap * 2, fill + remaining * 32 + 4096)
        grown = _alloc_rows(cap, (BOARD_SIZE,))
        grown[:fill] = out[:fill]
        out = grown
        if with_moves:
            grown_m = _alloc_rows(cap, (MAX_MOVES, 2))
            grown_m[:fill] = moves[:fill]
            moves = grown_m
    total = int(offsets[n_pos])
    if with_moves:
        return out[:total], offsets, moves[:total]
    return out[:total], offsets


def legal_afterstates(
    board: np.ndarray, d1: int, d2: int, mars: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """One position's afterstates ``(M, 26)`` and step sequences ``(M, 4, 2)``."""
    arr = np.asarray(board, dtype=np.int8).reshape(1, BOARD_SIZE)
    afters, _, moves = legal_afterstates_batch(
        arr, np.array([[d1, d2]], dtype=np.int8), mars, with_moves=True
    )
    return afters, moves
