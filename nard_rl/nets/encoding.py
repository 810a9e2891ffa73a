"""Network input encodings of positions (numpy + numba; no torch).

A network estimates the winning chances of "us": the side whose checkers are positive in
the JSON board (see ``nard_rl.engine.position``).  Training and play evaluate
*afterstates* (the board just after our move, so the opponent is on roll:
``on_roll=False``).  A pre-roll position (us on roll, before the roll) is presented in
one convention everywhere, ``Encoding.encode_pre_roll``: as the opponent's afterstate
(the flipped board, ``on_roll=False``), the only kind of input self-play nets are trained
on; the environments' observations, cube decisions and pre-roll probabilities all use it.
``on_roll=True`` stays available for nets trained on such inputs.  Every encoding turns
a whole ``(N, 26)`` batch into ``(N, size)`` float32 inputs in one compiled call, because
encoding sits on the hot path of self-play.

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
5   containment: 1 - (fewest escape rolls an other-side checker would have on any of
    the other side's points 15..24 or its bar, whether or not one stands there) / 36,
    i.e. how well S's points hold back the other side's back checkers
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

``contact`` (version 1, 241 inputs) is ``extended`` (inputs 0..224 unchanged, so a net
grows from an extended one with zero weights on the rest) plus a contact block per side:
225..232 ours, 233..240 the opponent's, each computed from that side's own view (S, the
other side O, points in S's numbering, O's bar as S's point 0 and, while O is on the bar,
its only source, R11).  "Reach" of a roll: the points O's checkers touch down on with
one die, both dice in either order, or 1..4 steps of a double, intermediate landings on
points S does not hold (as for shots above).

==  ========================================================================================
k   meaning
==  ========================================================================================
0   pip loss: mean over the 36 rolls of the pips S loses to O's best hit (25 - p for the
    most advanced S blot on point p in the roll's reach; 0 without a hit), / 24
1   double shots: rolls (of 36) whose reach holds two or more S blots, / 36
2   break contact: pips S must move until every S checker is past O's rearmost checker
    (sum over S checkers on p >= O's rearmost point r of p - r + 1), / 167
3   timing: pips S can play without breaking its home points (checkers on 7..25 count
    p - 6; checkers beyond the second on home points 2..6 count p - 1), / 100
4   mobility: (checker, die) pairs whose move lands on a point (>= 1) that O does not
    hold, / 90
5   stacking: S checkers beyond the third on any point, / 12
6   forward anchor: 25 - p for S's most advanced point p in 19..24 held by >= 2 S
    checkers (0 without one), / 6
7   outfield: S's points 7..18 held by >= 2 S checkers, / 12
==  ========================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from nard_rl.engine.position import BOARD_SIZE, flip_boards

# ---------------------------------------------------------------------------------------
# units of a point: table lookups shared by both encodings


def _unit_table(units_of: Callable[[int], list[float]]) -> np.ndarray:
    """``(257, 4)`` float32: the four units of ``n`` checkers of one side at row
    ``n + 128`` for every int8 board value (rows for n <= 0 are zeros).

    A board value ``v`` gives our units at ``v + 128`` and the opponent's at ``128 - v``,
    so a kernel copies four floats per point instead of branching on the count.  The
    units are computed in float64 and rounded once to float32, as direct arithmetic in a
    kernel would store them, so the table changes no input's bits.
    """
    table = np.zeros((257, 4), dtype=np.float32)
    for n in range(1, 129):
        table[n + 128] = units_of(n)
    return table


@njit(error_model="numpy", cache=True)
def _write_units(out: np.ndarray, row: int, col: int, table: np.ndarray, k: int) -> None:
    out[row, col] = table[k, 0]
    out[row, col + 1] = table[k, 1]
    out[row, col + 2] = table[k, 2]
    out[row, col + 3] = table[k, 3]


# ---------------------------------------------------------------------------------------
# tesauro198


def _tesauro_units(n: int) -> list[float]:
    return [1.0, float(n >= 2), float(n >= 3), (n - 3) / 2.0 if n > 3 else 0.0]


_TESAURO_UNITS = _unit_table(_tesauro_units)


@njit(error_model="numpy", cache=True)
def _tesauro_kernel(
    boards: np.ndarray, on_roll: np.ndarray, out: np.ndarray, units: np.ndarray
) -> None:
    """Fill every input of every row once (``encode`` allocates with ``np.empty``, so a
    large batch costs one pass over memory, not a clearing pass plus scattered writes)."""
    for i in range(boards.shape[0]):
        ours = 0
        theirs = 0
        for p in range(1, 25):
            v = np.int64(boards[i, p])
            _write_units(out, i, 4 * (p - 1), units, v + 128)
            _write_units(out, i, 98 + 4 * (24 - p), units, 128 - v)
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


def _die_paths(a: int, b: int) -> list[list[int]]:
    """Cumulative landing distances of every die path of one ordered roll (prefixes too)."""
    if a == b:
        return [[a * (k + 1) for k in range(m)] for m in range(1, 5)]
    return [[a], [b], [a, a + b], [b, a + b]]


def _build_escape_table() -> np.ndarray:
    """Escape rolls for each 12-bit mask of blocked points (bit i: distance i+1 ahead).

    int8 (counts are at most 36): 4 KiB stays in the first-level cache next to the rows
    being written, where int64 took 32 KiB.
    """
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
    return counts.astype(np.int8)


def _raw_units(n: int) -> list[float]:
    if n == 1:
        return [1.0, 0.0, 0.0, 0.0]
    if n == 2:
        return [0.0, 1.0, 0.0, 0.0]
    return [0.0, 0.0, 1.0, (n - 3) / 2.0]


_ESCAPE = _build_escape_table()
_RAW_UNITS = _unit_table(_raw_units)


# ---------------------------------------------------------------------------------------
# extended: kernel


@njit(error_model="numpy", cache=True)
def _shot_rolls(sources: int, blots: int, open_: int) -> int:
    """Ordered rolls (of 36) with which checkers on the bits of ``sources`` hit a bit of
    ``blots``, moving towards higher bits and touching down only on bits of ``open_``.

    Bit masks replace a walk over blots, sources and die paths: one shift moves every
    source by a die at once, so a roll costs a few integer operations however many blots
    and sources there are.  The dice that hit directly are found first (the h of them
    hit with every roll containing one: ``h * (12 - h)`` ordered rolls); only the doubles
    and the pairs made of the other dice need their two- to four-step paths.  ``blots``
    must be among ``open_`` (a blot does not block, R9; landing on it is a hit anyway).
    """
    lowest = sources & -sources
    if blots & -(lowest << 1) == 0:
        return 0  # no blot ahead of the rearmost source (none at all, or no source)
    direct = 0
    h = 0
    for a in range(1, 7):
        if (sources << a) & blots:
            direct |= 1 << a
            h += 1
    count = h * (12 - h)
    for a in range(1, 7):
        if direct & (1 << a):
            continue
        first_a = (sources << a) & open_
        step = first_a
        for _ in range(3):  # the double a: landings 2a, 3a, 4a
            step = (step << a) & open_
            if step & blots:
                count += 1
                break
        for b in range(a + 1, 7):
            if direct & (1 << b):
                continue
            if ((first_a << b) | (((sources << b) & open_) << a)) & blots:
                count += 2
    return count


@njit(error_model="numpy", cache=True)
def _write_side(
    out: np.ndarray,
    row: int,
    base: int,
    on_board: int,
    bar: int,
    pips: int,
    blots: int,
    shots: int,
    escape: int,
    prime: int,
    anchors: int,
    home: int,
    closed: int,
    back: int,
) -> None:
    """Write a side's feature block but containment (k = 5), exactly as ``version`` 1
    defines it: every value is computed in float64 and rounded once to float32."""
    out[row, base + 0] = (15 - on_board - bar) / 15.0
    out[row, base + 1] = pips / 167.0
    out[row, base + 2] = blots / 15.0
    out[row, base + 3] = shots / 36.0
    out[row, base + 4] = escape / 36.0
    out[row, base + 6] = prime / 6.0
    out[row, base + 7] = anchors / 6.0
    out[row, base + 8] = home / 6.0
    out[row, base + 9] = (36 - closed * closed) / 36.0
    out[row, base + 10] = back / 15.0


@njit(error_model="numpy", cache=True)
def _fewest_escapes(bits: int, table: np.ndarray) -> int:
    """Fewest escape rolls of a checker on its points 15..25, with ``bits`` holding bit
    ``25 - q`` for each blocked point q (its numbering): the window of a checker on
    point p is then ``(bits >> (26 - p)) & 4095``, bit i blocked at distance i + 1."""
    fewest = 36
    for p in range(15, 26):
        e = table[(bits >> (26 - p)) & 4095]
        if e < fewest:
            fewest = e
    return fewest


@njit(error_model="numpy", cache=True)
def _extended_kernel(
    boards: np.ndarray, on_roll: np.ndarray, out: np.ndarray, units: np.ndarray, table: np.ndarray
) -> None:
    """Fill every input of every row once (``encode`` allocates with ``np.empty``).

    One pass over the 24 points gathers both sides' counts and bit masks; each mask is
    kept in the numbering of the side that needs it (ours: bit p for our point p; theirs:
    bit 25 - p), so shots and escapes of both sides are the same shift-and-mask code.
    Both sides share the pass because a point's value tells both at once: a point we hold
    blocks their escapes and their shots, a point they hold blocks ours.
    """
    for i in range(boards.shape[0]):
        bar_us = np.int64(boards[i, 25])
        bar_them = -np.int64(boards[i, 0])
        on_us = 0
        on_them = 0
        pips_us = 25 * bar_us
        pips_them = 25 * bar_them
        blots_us = 0
        blots_them = 0
        back_us = bar_us
        back_them = bar_them
        home_us = 0
        home_them = 0
        anchors_us = 0
        anchors_them = 0
        run_us = 0
        run_them = 0
        prime_us = 0
        prime_them = 0
        rear_us = 0  # our highest occupied point
        front_them = 25  # our lowest point holding one of theirs
        # our numbering (bit p): our blots, our held points, their checkers
        blot_us = 0
        held_us = 0
        occ_them = 0
        # their numbering (bit 25 - p): their blots, their held points, our checkers
        blot_them = 0
        held_them = 0
        occ_us = 0
        for p in range(1, 25):
            n = np.int64(boards[i, p])
            _write_units(out, i, 4 * (p - 1), units, n + 128)
            _write_units(out, i, 100 + 4 * (24 - p), units, 128 - n)
            if n > 0:
                on_us += n
                pips_us += p * n
                rear_us = p
                occ_us |= 1 << (25 - p)
                if p >= 19:
                    back_us += n
                if n == 1:
                    blots_us += 1
                    blot_us |= 1 << p
                    run_us = 0
                else:
                    held_us |= 1 << p
                    run_us += 1
                    if run_us > prime_us:
                        prime_us = run_us
                    if p <= 6:
                        home_us += 1
                    elif p >= 19:
                        anchors_us += 1
                run_them = 0
            elif n < 0:
                m = -n
                on_them += m
                pips_them += (25 - p) * m
                if front_them == 25:
                    front_them = p
                occ_them |= 1 << p
                if p <= 6:
                    back_them += m
                if m == 1:
                    blots_them += 1
                    blot_them |= 1 << (25 - p)
                    run_them = 0
                else:
                    held_them |= 1 << (25 - p)
                    run_them += 1
                    if run_them > prime_them:
                        prime_them = run_them
                    if p >= 19:
                        home_them += 1
                    elif p <= 6:
                        anchors_them += 1
                run_us = 0
            else:
                run_us = 0
                run_them = 0
        _write_units(out, i, 96, units, bar_us + 128)
        _write_units(out, i, 196, units, bar_them + 128)

        # shots: they hit our blots moving up our numbering (their bar is our point 0,
        # and while on it their bar checkers are the only sources, R11); we hit theirs
        # moving up their numbering (our bar being their point 0)
        shots_us = _shot_rolls(1 if bar_them > 0 else occ_them, blot_us, ~held_us)
        shots_them = _shot_rolls(1 if bar_us > 0 else occ_us, blot_them, ~held_them)

        # escapes (bit 25 - q for a blocked point q, see _fewest_escapes): their held
        # points in their numbering block ours; our held points, bit p = 25 - (their q),
        # block theirs
        rear = 25 if bar_us > 0 else rear_us
        escape_us = 36 if rear == 0 else table[(held_them >> (26 - rear)) & 4095]
        rear = 25 if bar_them > 0 else (0 if front_them == 25 else 25 - front_them)
        escape_them = 36 if rear == 0 else table[(held_us >> (26 - rear)) & 4095]

        # S's entry is closed by the other side's home points (its points 1..6)
        _write_side(
            out,
            i,
            200,
            on_us,
            bar_us,
            pips_us,
            blots_us,
            shots_us,
            escape_us,
            prime_us,
            anchors_us,
            home_us,
            home_them,
            back_us,
        )
        _write_side(
            out,
            i,
            211,
            on_them,
            bar_them,
            pips_them,
            blots_them,
            shots_them,
            escape_them,
            prime_them,
            anchors_them,
            home_them,
            home_us,
            back_them,
        )
        out[i, 205] = 1.0 - _fewest_escapes(held_us, table) / 36.0
        out[i, 216] = 1.0 - _fewest_escapes(held_them, table) / 36.0
        race = bar_us == 0 and bar_them == 0 and rear_us < front_them
        out[i, 222] = 1.0 if race else 0.0
        out[i, 223] = 1.0 if on_roll[i] else 0.0
        out[i, 224] = 0.0 if on_roll[i] else 1.0


# ---------------------------------------------------------------------------------------
# contact: the extended inputs plus a block of contact features per side

CONTACT_FEATURES = 8
"""Inputs per side in the contact block (``contact`` encoding, module docstring)."""


@njit(error_model="numpy", cache=True)
def _roll_reach(sources: int, open_: int, a: int, b: int) -> int:
    """Bit mask of the points checkers on ``sources`` can touch down on with the roll
    (a, b), moving towards higher bits, intermediate landings only on ``open_``."""
    if a == b:
        reach = 0
        step = sources
        for _ in range(4):
            step = step << a
            reach |= step
            step &= open_
        return reach
    first_a = sources << a
    first_b = sources << b
    return first_a | first_b | ((first_a & open_) << b) | ((first_b & open_) << a)


@njit(error_model="numpy", cache=True)
def _contact_side(
    mine: np.ndarray, theirs: np.ndarray, out: np.ndarray, row: int, base: int
) -> None:
    """Contact features of a side S from its own numbering: ``mine[p]`` S's checkers on
    its point p (``mine[25]`` its bar), ``theirs[p]`` the other side's checkers on S's
    point p (``theirs[0]`` the other side's bar)."""
    blots = 0
    held = 0
    sources = 0
    rear_them = 25  # S's lowest point holding an other-side checker (their rearmost)
    for p in range(1, 25):
        if mine[p] == 1:
            blots |= 1 << p
        elif mine[p] >= 2:
            held |= 1 << p
        if theirs[p] > 0:
            sources |= 1 << p
            if p < rear_them:
                rear_them = p
    if theirs[0] > 0:
        sources = 1  # while on the bar they can only enter (R11)
        rear_them = 0
    open_ = ~held
    # pip loss and double shots: per roll, the blots the other side can hit
    pip_loss = 0.0
    double_shots = 0.0
    if blots != 0 and sources != 0:
        for a in range(1, 7):
            for b in range(a, 7):
                w = 1.0 if a == b else 2.0
                hits = _roll_reach(sources, open_, a, b) & blots
                if hits != 0:
                    low = 1
                    while not (hits >> low) & 1:
                        low += 1
                    pip_loss += w * (25 - low)
                    if hits & (hits - 1):
                        double_shots += w
    # break contact: pips S must move until all its checkers are past their rearmost
    brk = 0
    for p in range(rear_them, 26):
        if p >= 1:
            brk += mine[p] * (p - rear_them + 1)
    # timing: pips S can play outside its home board plus spare checkers' pips at home
    timing = 0
    for p in range(7, 26):
        timing += mine[p] * (p - 6)
    for p in range(2, 7):
        if mine[p] > 2:
            timing += (mine[p] - 2) * (p - 1)
    # mobility: (checker, die) pairs landing on a point the other side does not hold
    mobility = 0
    stack = 0
    for p in range(1, 26):
        n = mine[p]
        if n == 0:
            continue
        if n > 3:
            stack += n - 3
        for d in range(1, 7):
            q = p - d
            if q >= 1 and theirs[q] < 2:
                mobility += n
    # forward anchor: S's most advanced point held in the other side's home (S's 19..24)
    anchor = 0
    for p in range(24, 18, -1):
        if mine[p] >= 2:
            anchor = 25 - p
    # outfield control: S's points held on 7..18 (blocks, landing spots, a backbone)
    outfield = 0
    for p in range(7, 19):
        if mine[p] >= 2:
            outfield += 1
    out[row, base + 0] = pip_loss / (36.0 * 24.0)
    out[row, base + 1] = double_shots / 36.0
    out[row, base + 2] = brk / 167.0
    out[row, base + 3] = timing / 100.0
    out[row, base + 4] = mobility / 90.0
    out[row, base + 5] = stack / 12.0
    out[row, base + 6] = anchor / 6.0
    out[row, base + 7] = outfield / 12.0


@njit(error_model="numpy", cache=True)
def _contact_kernel(boards: np.ndarray, out: np.ndarray, col: int) -> None:
    """Both sides' contact blocks at ``col`` (ours) and ``col + CONTACT_FEATURES``."""
    mine = np.zeros(26, dtype=np.int64)
    theirs = np.zeros(26, dtype=np.int64)
    for i in range(boards.shape[0]):
        # ours: the board's own numbering
        for p in range(1, 25):
            v = np.int64(boards[i, p])
            mine[p] = v if v > 0 else 0
            theirs[p] = -v if v < 0 else 0
        mine[25] = boards[i, 25]
        mine[0] = 0
        theirs[0] = -np.int64(boards[i, 0])
        theirs[25] = 0
        _contact_side(mine, theirs, out, i, col)
        # theirs: their point q is our point 25 - q
        for q in range(1, 25):
            v = np.int64(boards[i, 25 - q])
            mine[q] = -v if v < 0 else 0
            theirs[q] = v if v > 0 else 0
        mine[25] = -np.int64(boards[i, 0])
        theirs[0] = boards[i, 25]
        _contact_side(mine, theirs, out, i, col + 8)


# ---------------------------------------------------------------------------------------
# public interface


@dataclass(frozen=True)
class Encoding:
    """One named, versioned input definition (the tables are in the module docstring)."""

    name: str
    version: int
    size: int
    extends: str | None = None
    """An encoding whose inputs are this one's first inputs, unchanged (nets grow from it)."""
    point_separable: bool = False
    """Every input depends on one point's count or is linear in the bar and borne-off
    counts, so a first layer is a sum of per-point terms (``nard_rl.nets.fastnet.BoardNet``)."""

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
        flags = np.asarray(on_roll, dtype=np.bool_)
        if flags.ndim == 0:  # the usual case; np.full costs a fraction of broadcast_to
            flags = np.full(n, bool(flags))
        elif flags.shape != (n,):
            flags = np.ascontiguousarray(np.broadcast_to(flags, (n,)))  # or raise
        else:
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
        # the kernels write every input of every row, so ``dest`` needs no clearing
        if self.name == "tesauro198":
            _tesauro_kernel(arr, flags, dest, _TESAURO_UNITS)
        else:
            _extended_kernel(arr, flags, dest, _RAW_UNITS, _ESCAPE)
            if self.name == "contact":
                _contact_kernel(arr, dest, 225)
        if out is not None:
            return out
        return dest[0] if single else dest

    def encode_pre_roll(self, boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Encode pre-roll positions ``(N, 26)`` (the side on roll's view) in the project's
        one pre-roll convention: as the opponent's afterstate (module docstring).  A net's
        output for these rows is from the opponent's view; ``rules.swap_sides`` turns it
        back."""
        arr = np.asarray(boards, dtype=np.int8)
        flipped = flip_boards(arr.reshape(-1, BOARD_SIZE))
        return self.encode(flipped[0] if arr.ndim == 1 else flipped, on_roll=False, out=out)


ENCODINGS: dict[str, Encoding] = {
    "tesauro198": Encoding("tesauro198", version=1, size=198, point_separable=True),
    "extended": Encoding("extended", version=1, size=225),
    "contact": Encoding("contact", version=1, size=225 + 2 * CONTACT_FEATURES, extends="extended"),
}


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name``; unknown names raise ``ValueError`` listing the choices."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown encoding {name!r}; choose one of {', '.join(sorted(ENCODINGS))}"
        ) from None
