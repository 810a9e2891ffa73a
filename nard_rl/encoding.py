"""Network input encodings of positions (numpy + numba; no torch).

A network estimates the winning chances of "us": the side whose checkers are positive in
the JSON board (see ``nard_rl.engine.position``).  Training and play evaluate
*afterstates* (the board just after our move, so the opponent is on roll:
``on_roll=False``); cube decisions evaluate pre-roll positions with us on roll
(``on_roll=True``).  Every encoding turns a whole ``(N, 26)`` batch into ``(N, size)``
float32 inputs in one compiled call, because encoding sits on the hot path of self-play.

Both encodings describe the two sides symmetrically (each side's block is computed from
that side's own view, R3), so ``encode(flip(b), on_roll)`` is ``encode(b, not on_roll)``
with the two side blocks swapped.  ``version`` changes whenever the meaning of any input
changes, so a checkpoint trained on one definition is never fed another.

``tesauro198`` (version 1, 198 inputs), Tesauro's TD-Gammon inputs:

==========  ==============================================================================
index       meaning
==========  ==============================================================================
0..95       our checkers on our points 1..24 (R3), 4 units per point, point p at
            ``4*(p-1)``: 1 checker -> 1,0,0,0; 2 -> 1,1,0,0; 3 -> 1,1,1,0;
            n > 3 -> 1,1,1,(n-3)/2
96          our checkers on the bar / 2
97          our checkers borne off / 15
98..193     the opponent's checkers on ITS points 1..24 (its own numbering, R3: our
            point p is its point 25-p), same 4 units, its point q at ``98 + 4*(q-1)``
194         the opponent's checkers on the bar / 2
195         the opponent's checkers borne off / 15
196         1 if we are on roll, else 0
197         1 if the opponent is on roll, else 0
==========  ==============================================================================

``extended`` (version 1, 225 inputs): gnubg-style raw units plus hand-made features.

==========  ==============================================================================
index       meaning
==========  ==============================================================================
0..99       our raw units: slot s = p-1 for our point p (1..24), slot 24 = our bar;
            4 units at ``4*s``: 1 checker -> 1,0,0,0; 2 -> 0,1,0,0; n >= 3 ->
            0,0,1,(n-3)/2
100..199    the opponent's raw units, from its own view (its point q = our 25-q, slot
            24 its bar), at ``100 + 4*s``
200..210    our feature block (below)
211..221    the opponent's feature block, computed from its own view
222         1 if the position is a race (no contact: every one of our checkers is past
            every opponent checker, nobody on the bar), else 0
223         1 if we are on roll, else 0
224         1 if the opponent is on roll, else 0
==========  ==============================================================================

Feature block of a side S (offset k from the block start; "other" is S's opponent; all
points in S's own numbering):

==  ========================================================================================
k   meaning
==  ========================================================================================
0   S's checkers borne off / 15
1   S's pip count / 167 (the bar counts 25 pips; 167 is the opening pip count)
2   S's blots (points 1..24 holding exactly one S checker) / 15
3   shots: ordered rolls (of 36) with which the other side can hit at least one S blot,
    / 36.  A roll hits a blot at distance d from an other-side checker (the other
    side's bar counts as S's point 0) along one of its die paths: one die equal to d;
    two different dice summing to d, in either order, with the first landing open;
    a double a with d = k*a (k = 1..4) and the k-1 intermediate landings open.  A
    landing is open unless S holds it with two or more checkers (R9).  With the
    other side on the bar only its bar checkers are sources (R11); bear-off
    restrictions are ignored (blots are never in the other side's reach beyond 24).
4   escape: rolls (of 36) that let S's rearmost checker (the bar, else S's highest
    occupied point) escape, / 36 (see "escape" below); 1 when S has no checker left
5   containment: 1 - (fewest escape rolls of an other-side checker on any of the other
    side's points 15..24 or its bar) / 36, i.e. how well S's points hold back the
    other side's back checkers
6   prime: longest run of consecutive points 1..24 each held by >= 2 S checkers, / 6
7   anchors: S's points held by >= 2 S checkers in the other side's home board (S's
    points 19..24) / 6
8   home points: S's points 1..6 held by >= 2 S checkers / 6
9   entry: rolls (of 36) that let an S checker on the bar enter (R11), i.e.
    ``36 - c*c`` with c the blocked points among S's points 19..24, / 36
10  back checkers: S checkers on the bar or on S's points 19..24, / 15
==  ========================================================================================

Escape of a checker of S on point p (p = 25 for the bar): only the 12 points in front of
it (p-1 .. p-12) are looked at; a point there is blocked when the other side holds it
with two or more checkers; points beyond the window and below point 1 count as open.
An ordered roll escapes when some die path (one die; both dice in either order; for a
double 1..4 steps) lands every step on an open point and ends beyond (lower than) the
lowest blocked point of the window.  With no blocked point in the window all 36 rolls
escape.  The counts come from a 4096-entry table built once at import.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

BOARD_SIZE = 26

# ---------------------------------------------------------------------------------------
# tesauro198


@njit(cache=True)
def _tesauro_units(out: np.ndarray, row: int, base: int, n: int) -> None:
    """Write all four units of a point (zeros included): the kernel fills every input of
    a row exactly once, so ``encode`` can allocate with ``np.empty`` and large batches
    cost one pass over memory instead of a clearing pass plus a scattered second pass."""
    out[row, base] = 1.0 if n >= 1 else 0.0
    out[row, base + 1] = 1.0 if n >= 2 else 0.0
    out[row, base + 2] = 1.0 if n >= 3 else 0.0
    out[row, base + 3] = (n - 3) / 2.0 if n > 3 else 0.0


@njit(cache=True)
def _tesauro_kernel(boards: np.ndarray, on_roll: np.ndarray, out: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        ours = 0
        theirs = 0
        for p in range(1, 25):
            v = np.int64(boards[i, p])
            _tesauro_units(out, i, 4 * (p - 1), max(v, 0))
            _tesauro_units(out, i, 98 + 4 * (24 - p), max(-v, 0))
            if v > 0:
                ours += v
            else:
                theirs -= v
        bar_us = np.int64(boards[i, 25])
        bar_them = -np.int64(boards[i, 0])
        out[i, 96] = bar_us / 2.0
        out[i, 97] = (15 - ours - bar_us) / 15.0
        out[i, 194] = bar_them / 2.0
        out[i, 195] = (15 - theirs - bar_them) / 15.0
        out[i, 196] = 1.0 if on_roll[i] else 0.0
        out[i, 197] = 0.0 if on_roll[i] else 1.0


# ---------------------------------------------------------------------------------------
# extended: precomputed tables


def _roll_bit(a: int, b: int) -> int:
    return 1 << ((a - 1) * 6 + (b - 1))


def _die_paths(a: int, b: int) -> list[list[int]]:
    """Cumulative landing distances of every die path of one ordered roll (prefixes too)."""
    if a == b:
        return [[a * (k + 1) for k in range(m)] for m in range(1, 5)]
    return [[a], [b], [a, a + b], [b, a + b]]


def _build_hit_paths() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hit paths by distance: the rolls of each path and its intermediate landings.

    Paths with the same distance and intermediate landings are merged (their roll masks
    OR-ed), so a single die ``a`` is one path covering the 11 rolls that contain it.
    """
    merged: dict[tuple[int, tuple[int, ...]], int] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            for path in _die_paths(a, b):
                key = (path[-1], tuple(path[:-1]))
                merged[key] = merged.get(key, 0) | _roll_bit(a, b)
    keys = sorted(merged)
    start = np.zeros(26, dtype=np.int64)
    masks = np.zeros(len(keys), dtype=np.int64)
    nint = np.zeros(len(keys), dtype=np.int64)
    inter = np.zeros((len(keys), 3), dtype=np.int64)
    for j, (dist, mids) in enumerate(keys):
        start[dist + 1 :] = j + 1
        masks[j] = merged[(dist, mids)]
        nint[j] = len(mids)
        inter[j, : len(mids)] = mids
    return start, masks, nint, inter


def _build_escape_table() -> np.ndarray:
    """Escape rolls for each 12-bit mask of blocked points (bit i: distance i+1 ahead)."""
    masks = np.arange(4096, dtype=np.int64)
    highest = np.zeros(4096, dtype=np.int64)  # distance of the farthest blocked point
    for i in range(12):
        highest[(masks >> i) & 1 == 1] = i + 1
    counts = np.zeros(4096, dtype=np.int64)
    for a in range(1, 7):
        for b in range(1, 7):
            escapes = np.zeros(4096, dtype=bool)
            for path in _die_paths(a, b):
                ok = path[-1] > highest
                for dist in path:
                    if dist <= 12:
                        ok &= (masks >> (dist - 1)) & 1 == 0
                escapes |= ok
            counts += escapes
    return counts


_HIT_START, _HIT_MASK, _HIT_NINT, _HIT_INTER = _build_hit_paths()
_ESCAPE = _build_escape_table()


# ---------------------------------------------------------------------------------------
# extended: kernel


@njit(cache=True)
def no_contact(boards: np.ndarray, i: int) -> bool:
    """Whether row ``i`` is a race: nobody on the bar and every one of the mover's
    checkers past every opponent checker (``Position.is_race``, compiled for batches)."""
    if boards[i, 25] != 0 or boards[i, 0] != 0:
        return False
    rear = 0
    front = 25
    for p in range(1, 25):
        if boards[i, p] > 0:
            rear = p
        elif boards[i, p] < 0 and p < front:
            front = p
    return rear < front


@njit(cache=True)
def _race_kernel(boards: np.ndarray, out: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        out[i] = no_contact(boards, i)


def race_flags(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: which of the ``(N, 26)`` boards are no-contact races."""
    arr = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, BOARD_SIZE)
    out = np.zeros(arr.shape[0], dtype=np.bool_)
    _race_kernel(arr, out)
    return out


@njit(cache=True)
def _popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def _blocked_bits(v: np.ndarray) -> int:
    """Bit ``25 - q`` set when point q is blocked for S (the other side holds >= 2)."""
    bits = 0
    for q in range(1, 25):
        if v[q] <= -2:
            bits |= 1 << (25 - q)
    return bits


@njit(cache=True)
def _escape_rolls(bits: int, p: int, table: np.ndarray) -> int:
    return table[(bits >> (26 - p)) & 4095]


@njit(cache=True)
def _raw_units(v: np.ndarray, out: np.ndarray, row: int, base: int) -> None:
    for s in range(25):
        n = v[s + 1]
        if n == 1:
            out[row, base + 4 * s] = 1.0
        elif n == 2:
            out[row, base + 4 * s + 1] = 1.0
        elif n >= 3:
            out[row, base + 4 * s + 2] = 1.0
            out[row, base + 4 * s + 3] = (n - 3) / 2.0


@njit(cache=True)
def _side_features(
    v: np.ndarray,
    out: np.ndarray,
    row: int,
    base: int,
    hit_start: np.ndarray,
    hit_mask: np.ndarray,
    hit_nint: np.ndarray,
    hit_inter: np.ndarray,
    table: np.ndarray,
) -> int:
    """Write S's feature block (S = positive side of ``v``) except containment (k = 5).

    Returns the fewest escape rolls of an S checker on S's points 15..25, from which the
    caller derives the other side's containment.
    """
    on_board = 0
    pips = 25 * v[25]
    blots = 0
    back = v[25]
    home = 0
    anchors = 0
    prime = 0
    run = 0
    rear = 25 if v[25] > 0 else 0
    for p in range(1, 25):
        n = v[p]
        if n > 0:
            on_board += n
            pips += p * n
            if rear == 0 or p > rear:
                rear = p
            if n == 1:
                blots += 1
            if p >= 19:
                back += n
        if n >= 2:
            run += 1
            if run > prime:
                prime = run
            if p <= 6:
                home += 1
            elif p >= 19:
                anchors += 1
        else:
            run = 0
    off = 15 - on_board - v[25]

    # shots against S's blots (other side moves upward in S's numbering, its bar at 0)
    hits = 0
    if blots > 0:
        for t in range(1, 25):
            if v[t] != 1:
                continue
            for src in range(0, t):
                if src == 0:
                    if v[0] >= 0:
                        continue
                elif v[src] >= 0 or v[0] < 0:
                    continue
                d = t - src
                for j in range(hit_start[d], hit_start[d + 1]):
                    ok = True
                    for k in range(hit_nint[j]):
                        if v[src + hit_inter[j, k]] >= 2:
                            ok = False
                            break
                    if ok:
                        hits |= hit_mask[j]

    bits = _blocked_bits(v)
    escape = 36 if rear == 0 else _escape_rolls(bits, rear, table)
    fewest = 36
    for p in range(15, 26):
        e = _escape_rolls(bits, p, table)
        if e < fewest:
            fewest = e
    closed = 0
    for q in range(19, 25):
        if v[q] <= -2:
            closed += 1

    out[row, base + 0] = off / 15.0
    out[row, base + 1] = pips / 167.0
    out[row, base + 2] = blots / 15.0
    out[row, base + 3] = _popcount(hits) / 36.0
    out[row, base + 4] = escape / 36.0
    out[row, base + 6] = prime / 6.0
    out[row, base + 7] = anchors / 6.0
    out[row, base + 8] = home / 6.0
    out[row, base + 9] = (36 - closed * closed) / 36.0
    out[row, base + 10] = back / 15.0
    return fewest


@njit(cache=True)
def _extended_kernel(
    boards: np.ndarray,
    on_roll: np.ndarray,
    out: np.ndarray,
    hit_start: np.ndarray,
    hit_mask: np.ndarray,
    hit_nint: np.ndarray,
    hit_inter: np.ndarray,
    table: np.ndarray,
) -> None:
    v = np.empty(BOARD_SIZE, dtype=np.int64)
    w = np.empty(BOARD_SIZE, dtype=np.int64)
    for i in range(boards.shape[0]):
        for k in range(BOARD_SIZE):
            v[k] = boards[i, k]
            w[BOARD_SIZE - 1 - k] = -boards[i, k]
        _raw_units(v, out, i, 0)
        _raw_units(w, out, i, 100)
        few_us = _side_features(v, out, i, 200, hit_start, hit_mask, hit_nint, hit_inter, table)
        few_them = _side_features(w, out, i, 211, hit_start, hit_mask, hit_nint, hit_inter, table)
        out[i, 205] = 1.0 - few_them / 36.0
        out[i, 216] = 1.0 - few_us / 36.0
        if no_contact(boards, i):
            out[i, 222] = 1.0
        if on_roll[i]:
            out[i, 223] = 1.0
        else:
            out[i, 224] = 1.0


# ---------------------------------------------------------------------------------------
# public interface


@dataclass(frozen=True)
class Encoding:
    """One named, versioned input definition (the tables are in the module docstring)."""

    name: str
    version: int
    size: int

    def encode(
        self,
        boards: np.ndarray,
        on_roll: bool | np.ndarray = False,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Encode ``(N, 26)`` boards (a single ``(26,)`` board gives ``(size,)``).

        ``on_roll`` is whether "us" (the positive side) is on roll: False for afterstates,
        True for pre-roll positions; a bool for the batch or one per row.  ``out``, a
        float32 array of the result's shape (it may be a column slice of a wider buffer),
        receives the inputs and is returned, so hot loops need not allocate per call.
        """
        arr = np.asarray(boards)
        single = arr.ndim == 1
        arr = np.ascontiguousarray(arr.reshape(1, -1) if single else arr, dtype=np.int8)
        if arr.ndim != 2 or arr.shape[1] != BOARD_SIZE:
            raise ValueError(f"boards must have shape (N, 26), got {np.shape(boards)}")
        n = arr.shape[0]
        flags = np.broadcast_to(np.asarray(on_roll, dtype=np.bool_), (n,))
        flags = np.ascontiguousarray(flags)
        if out is None:
            dest = np.empty((n, self.size), dtype=np.float32)
        else:
            shape = (self.size,) if single else (n, self.size)
            if out.dtype != np.float32 or out.shape != shape:
                raise ValueError(
                    f"out must be a float32 array of shape {shape}, got {out.dtype} {out.shape}"
                )
            dest = out.reshape(1, self.size) if single else out
        if self.name == "tesauro198":
            _tesauro_kernel(arr, flags, dest)
        else:
            dest[:] = 0.0
            _extended_kernel(arr, flags, dest, _HIT_START, _HIT_MASK, _HIT_NINT, _HIT_INTER, _ESCAPE)
        if out is not None:
            return out
        return dest[0] if single else dest


ENCODINGS: dict[str, Encoding] = {
    "tesauro198": Encoding("tesauro198", version=1, size=198),
    "extended": Encoding("extended", version=1, size=225),
}


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name``; unknown names raise ``ValueError`` listing the choices."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown encoding {name!r}; choose one of {', '.join(sorted(ENCODINGS))}"
        ) from None
