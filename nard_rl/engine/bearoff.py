"""One-sided bear-off database and exact no-contact bear-off probabilities.

A side whose checkers are all on its home points 1..6 (none on the bar or outside) has
one of the C(21, 6) = 54,264 placements of up to 15 checkers there.  For each placement
the database holds two distributions over the number of that side's own rolls:

* ``rolls``: rolls needed to bear off every checker, playing each roll so as to
  **minimise the expected number of rolls still needed** (the mean of this distribution);
* ``first``: rolls needed to bear off the first checker (0 when one is off already), each
  roll played to minimise the expected number of rolls until one is off.  This is what a
  side with 15 checkers left needs to save the gammon (R25, R28).

Why the mean: a one-sided table must pick one play per roll without knowing the
opponent, and the expected number of rolls is the opponent-independent criterion whose
optimum obeys a Bellman recursion (the best play of a roll depends only on the values of
the resulting placements), so the table is exact for the policy "always minimise the
expected rolls left".  Against a particular opponent the play that maximises the chance to
win can differ (a play with a slightly worse mean but less spread); these differences are
known to be tiny in practice, and the evaluator, which scores each candidate afterstate by
combining both sides' distributions exactly, still picks among the current roll's plays
by the two-sided winning chance.

Legal plays come from ``nard_rl.engine.movegen`` itself, so the pip-waste rule (R29) of
the mars rule set changes the plays exactly as in the game; each rule set has its own
table.  The table is built bottom-up in order of pip count (every play lowers the pip
count, so all successors are solved before they are needed): one batched movegen call
per pip count, no recursion.  Building takes a few seconds; the result is cached as a
compressed ``.npz`` (float64, the very numbers built: every process that loads the cache
sees what the building process uses) under the user cache directory
(``$NARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/nard-rl``, else ``~/.cache/nard-rl``).  It is
not shipped as package data: it is cheaper to rebuild than to download, and rebuilding
always matches the installed move generator.

Combining two one-sided tables gives the exact cubeless probabilities of a bear-off with
no contact (see ``bearoff_probabilities``).  Backgammons cannot occur there: a backgammon
needs a loser's checker on the bar or in the winner's home board, and without contact
the loser's checkers are all in its own home board.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import zipfile
from pathlib import Path

import numpy as np
from numba import njit

from nard_rl.engine.batch import ROLL_WEIGHTS, ROLLS
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.util.io import atomic_write

__all__ = [
    "N_POSITIONS",
    "BearoffDatabase",
    "bearoff_index",
    "bearoff_probabilities",
    "get_bearoff_database",
    "race_probabilities",
    "race_probabilities_of_rows",
]

POINTS = 6
MAX_CHECKERS = 15
N_POSITIONS = 54264  # C(21, 6)
MAX_ROLLS = 32
"""Length of the stored distributions; the build checks that no mass is lost beyond."""
FORMAT_VERSION = 2
"""Of the cache file: 2 stores float64 (1 stored float32, so the builder and the processes
loading its cache saw numbers that differed in the eighth digit)."""


def _binomials(n_max: int, k_max: int) -> np.ndarray:
    table = np.zeros((n_max + 1, k_max + 1), dtype=np.int64)
    for n in range(n_max + 1):
        table[n, 0] = 1
        for k in range(1, min(n, k_max) + 1):
            table[n, k] = table[n - 1, k - 1] + (table[n - 1, k] if k <= n - 1 else 0)
    return table


_BINOM = _binomials(MAX_CHECKERS + POINTS, POINTS)


def bearoff_index(counts: np.ndarray) -> np.ndarray:
    """Index of each ``(N, 6)`` placement (checkers on points 1..6, total <= 15).

    Stars and bars: the partial sums ``s_k = c_1 + .. + c_k + k - 1`` are six distinct
    numbers in 0..20, and the combinatorial number system ``sum_k C(s_k, k)`` ranks them,
    a bijection onto 0..54263 with the empty placement at 0.
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.ndim != 2 or c.shape[1] != POINTS:
        raise ValueError(f"placements must have shape (N, 6), got {c.shape}")
    if c.size and (c.min() < 0 or c.sum(axis=1).max() > MAX_CHECKERS):
        raise ValueError("placements need 0..15 checkers in all, none negative")
    s = np.cumsum(c, axis=1) + np.arange(POINTS)
    return _BINOM[s, np.arange(1, POINTS + 1)].sum(axis=1)


def all_placements() -> np.ndarray:
    """Every placement, ``(54264, 6)`` int8, row ``i`` having index ``i``."""
    out = np.zeros((N_POSITIONS, POINTS), dtype=np.int8)
    combos = np.array(list(itertools.combinations(range(MAX_CHECKERS + POINTS), POINTS)))
    counts = np.diff(np.concatenate([np.full((len(combos), 1), -1), combos], axis=1)) - 1
    out[bearoff_index(counts)] = counts
    return out


@njit(cache=True)
def _combine(
    dist: np.ndarray,
    mean: np.ndarray,
    pos_idx: np.ndarray,
    roll_weights: np.ndarray,
    succ: np.ndarray,
    offsets: np.ndarray,
) -> None:
    """Solve the placements ``pos_idx``: for each of its 21 rolls pick the successor of
    least expected rolls left, then mix the chosen successors' distributions, one roll
    later.  Row ``r`` of the candidate segments is roll ``r % 21`` of position ``r // 21``."""
    n_rolls = roll_weights.shape[0]
    length = dist.shape[1]
    for i in range(pos_idx.shape[0]):
        p = pos_idx[i]
        for k in range(length):
            dist[p, k] = 0.0
        for r in range(n_rolls):
            seg = i * n_rolls + r
            best = -1
            best_mean = 1e300
            for j in range(offsets[seg], offsets[seg + 1]):
                m = mean[succ[j]]
                if m < best_mean:
                    best_mean = m
                    best = succ[j]
            w = roll_weights[r]
            for k in range(length - 1):
                dist[p, k + 1] += w * dist[best, k]
            dist[p, length - 1] += w * dist[best, length - 1]  # never used: checked below
        total = 0.0
        for k in range(length):
            total += k * dist[p, k]
        mean[p] = total


def _board_rows(placements: np.ndarray) -> np.ndarray:
    boards = np.zeros((placements.shape[0], 26), dtype=np.int8)
    boards[:, 1:7] = placements
    return boards


def build_tables(waste_rule: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(rolls, first)``: both ``(54264, MAX_ROLLS)`` float64 distributions."""
    place = all_placements()
    pips = (place.astype(np.int64) * np.arange(1, POINTS + 1)).sum(axis=1)
    checkers = place.sum(axis=1)
    rolls = np.zeros((N_POSITIONS, MAX_ROLLS))
    first = np.zeros((N_POSITIONS, MAX_ROLLS))
    rolls[0, 0] = 1.0
    first[checkers < MAX_CHECKERS, 0] = 1.0  # a checker is off already
    mean_r = np.zeros(N_POSITIONS)
    mean_f = np.zeros(N_POSITIONS)
    n_rolls = ROLLS.shape[0]
    for pip in range(1, int(pips.max()) + 1):
        group = np.flatnonzero(pips == pip)
        if group.size == 0:
            continue
        boards = np.repeat(_board_rows(place[group]), n_rolls, axis=0)
        dice = np.tile(ROLLS, (group.size, 1))
        afters, offsets = legal_afterstates_batch(boards, dice, waste_rule)
        if np.any(np.diff(offsets) == 0):
            raise AssertionError("a home-board position without a legal play")
        succ = bearoff_index(afters[:, 1:7])
        _combine(rolls, mean_r, group, ROLL_WEIGHTS, succ, offsets)
        keep = checkers[group] == MAX_CHECKERS
        if keep.any():
            full = group[keep]
            seg_keep = np.repeat(keep, n_rolls)
            counts = np.diff(offsets)[seg_keep]
            rows = np.repeat(seg_keep, np.diff(offsets))
            sub_off = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=sub_off[1:])
            _combine(first, mean_f, full, ROLL_WEIGHTS, succ[rows], sub_off)
    for name, table in (("rolls", rolls), ("first", first)):
        if table[:, -1].max() > 0:
            raise AssertionError(f"{name}: some placement needs {MAX_ROLLS - 1}+ rolls")
    return rolls, first


def cache_dir() -> Path:
    """Where built tables are kept between runs (see the module docstring)."""
    env = os.environ.get("NARD_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nard-rl"


def _plausible(db: BearoffDatabase) -> bool:
    """A loaded table is distributions (rows of non-negative numbers summing to 1, nothing
    in the last column) or it is rebuilt: a damaged cache must not answer positions."""
    for table in (db.rolls, db.first):
        if not np.isfinite(table).all() or table.min() < 0 or table[:, -1].max() > 0:
            return False
        if np.abs(table.sum(axis=1) - 1.0).max() > 1e-9:
            return False
    return True


class BearoffDatabase:
    """The two one-sided tables of one rule set (``waste_rule``: R29 on or off)."""

    def __init__(self, rolls: np.ndarray, first: np.ndarray, waste_rule: bool) -> None:
        if rolls.shape != (N_POSITIONS, MAX_ROLLS) or first.shape != rolls.shape:
            raise ValueError(f"bear-off tables must be {(N_POSITIONS, MAX_ROLLS)}")
        self.rolls = rolls.astype(np.float64)
        self.first = first.astype(np.float64)
        self.waste_rule = bool(waste_rule)
        k = np.arange(MAX_ROLLS)
        self.mean_rolls = self.rolls @ k
        self.mean_first = self.first @ k

    @classmethod
    def build(cls, waste_rule: bool) -> BearoffDatabase:
        return cls(*build_tables(waste_rule), waste_rule=waste_rule)

    @classmethod
    def load(cls, waste_rule: bool, *, directory: Path | None = None) -> BearoffDatabase:
        """From the cache when there, else built and cached (atomic write)."""
        folder = directory or cache_dir()
        name = f"bearoff-v{FORMAT_VERSION}-{'waste' if waste_rule else 'standard'}.npz"
        path = folder / name
        if path.is_file():
            try:
                with np.load(path) as data:
                    rolls, first = data["rolls"], data["first"]
                if rolls.dtype == np.float64 and first.dtype == np.float64:
                    db = cls(rolls, first, waste_rule)
                    if _plausible(db):
                        return db
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                pass  # unreadable or damaged cache: rebuild below
        db = cls.build(waste_rule)
        with contextlib.suppress(OSError):  # a read-only home still gets the (rebuilt) table
            atomic_write(path, lambda fh: np.savez_compressed(fh, rolls=db.rolls, first=db.first))
        return db  # float64 as stored: the numbers every later load reads back

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """Exact cubeless ``(N, 5)`` probabilities of no-contact bear-off afterstates.

        ``afterstates`` (mover's view, opponent to roll) must all have the mover's
        checkers on points 1..6 only (at least one) and the opponent's on 19..24 only;
        ``classify`` finds such rows.  The opponent rolls first, so with ``A`` the mover's
        rolls and ``B`` the opponent's: the mover wins when ``A < B``; wins a gammon when
        the opponent has 15 checkers and its first checker needs more than ``A`` rolls;
        loses a gammon when it has 15 and its first checker needs at least ``B`` rolls.
        """
        a = np.asarray(afterstates)
        mine = a[:, 1:7].astype(np.int64)
        theirs = -a[:, 24:18:-1].astype(np.int64)  # their points 1..6 = our 24..19
        return race_probabilities_of_rows(
            self.rolls,
            self.first,
            None,
            bearoff_index(mine),
            bearoff_index(theirs),
            mine.sum(axis=1) == MAX_CHECKERS,
            theirs.sum(axis=1) == MAX_CHECKERS,
        )


def race_probabilities(
    rolls_a: np.ndarray,
    first_a: np.ndarray,
    rolls_b: np.ndarray,
    first_b: np.ndarray,
    full_a: np.ndarray,
    full_b: np.ndarray,
    escape_a: np.ndarray | None = None,
    escape_b: np.ndarray | None = None,
) -> np.ndarray:
    """Cubeless ``(N, 5)`` probabilities of a race without contact from independent
    one-sided roll distributions (``(N, L)`` each, index = rolls): side A just moved,
    side B is to roll; ``full_*`` says a side still has all 15 checkers (gammon chances).

    B rolls first, so the mover wins when ``A < B``; wins a gammon when B has 15 checkers
    and B's first checker needs more than ``A`` rolls; loses a gammon when A has 15 and
    its first checker needs at least ``B`` rolls.  ``escape_*`` (rolls until no checker is
    left in the other side's home board) give backgammons the same way (R25); without
    them, as in a bear-off, none is possible.
    """
    n = np.shape(rolls_a)[0] if np.ndim(rolls_a) == 2 else -1
    shapes = {np.shape(x) for x in (rolls_a, first_a, rolls_b, first_b)}
    shapes |= {np.shape(x) for x in (escape_a, escape_b) if x is not None}
    if len(shapes) != 1 or n < 0:
        raise ValueError(f"roll distributions must share one (N, L) shape, got {sorted(shapes)}")
    if np.shape(full_a) != (n,) or np.shape(full_b) != (n,):
        raise ValueError(f"full_a and full_b must have shape ({n},)")
    zero = np.zeros_like(rolls_a, dtype=np.float64)
    escape = None
    if escape_a is not None or escape_b is not None:
        escape = np.concatenate([zero if e is None else e for e in (escape_a, escape_b)])
    rows = np.arange(n, dtype=np.int64)
    return race_probabilities_of_rows(
        np.concatenate([rolls_a, rolls_b]),
        np.concatenate([first_a, first_b]),
        escape,
        rows,
        rows + n,
        full_a,
        full_b,
        escape_a=escape_a is not None,
        escape_b=escape_b is not None,
    )


def race_probabilities_of_rows(
    rolls: np.ndarray,
    first: np.ndarray,
    escape: np.ndarray | None,
    rows_a: np.ndarray,
    rows_b: np.ndarray,
    full_a: np.ndarray,
    full_b: np.ndarray,
    *,
    escape_a: bool = True,
    escape_b: bool = True,
) -> np.ndarray:
    """``race_probabilities`` with each side's distributions given as row numbers into
    shared ``(M, L)`` tables (the database's, or the distinct placements a race net
    answered), so no ``(N, L)`` copy is gathered per side; ``escape`` None (or
    ``escape_a``/``escape_b`` false) rules out that side's backgammons."""
    tables = [np.ascontiguousarray(t, dtype=np.float64) for t in (rolls, first)]
    if tables[0].ndim != 2 or tables[0].shape != tables[1].shape:
        raise ValueError("rolls and first must be (M, L) tables of one shape")
    esc = np.zeros((0, 0)) if escape is None else np.ascontiguousarray(escape, dtype=np.float64)
    if escape is not None and esc.shape != tables[0].shape:
        raise ValueError("escape must have the shape of rolls")
    ia = np.ascontiguousarray(rows_a, dtype=np.int64)
    ib = np.ascontiguousarray(rows_b, dtype=np.int64)
    n = ia.shape[0]
    if ib.shape != (n,) or np.shape(full_a) != (n,) or np.shape(full_b) != (n,):
        raise ValueError(f"rows_b, full_a and full_b must have shape ({n},)")
    if n and (min(ia.min(), ib.min()) < 0 or max(ia.max(), ib.max()) >= tables[0].shape[0]):
        raise ValueError("row numbers outside the tables")
    out = np.empty((n, 5), dtype=np.float32)
    _race_kernel(
        *tables,
        esc,
        ia,
        ib,
        np.ascontiguousarray(full_a, dtype=np.bool_),
        np.ascontiguousarray(full_b, dtype=np.bool_),
        escape is not None and escape_a,
        escape is not None and escape_b,
        out,
    )
    return out


@njit(cache=True)
def _race_kernel(
    rolls: np.ndarray,
    first: np.ndarray,
    escape: np.ndarray,
    rows_a: np.ndarray,
    rows_b: np.ndarray,
    full_a: np.ndarray,
    full_b: np.ndarray,
    has_ea: bool,
    has_eb: bool,
    out: np.ndarray,
) -> None:
    """The combination one afterstate at a time, in a single pass over the rolls with
    running sums for the cumulative distributions: no ``(N, L)`` temporaries, which cost
    more than the arithmetic in a search full of races."""
    length = rolls.shape[1]
    for i in range(rows_a.shape[0]):
        a = rows_a[i]
        b = rows_b[i]
        win = gam_w = bg_w = gam_l = bg_l = 0.0
        cb = cfb = ceb = cfa = cea = 0.0
        for k in range(length):
            ra = rolls[a, k]
            rb = rolls[b, k]
            cb += rb
            win += ra * (1.0 - cb)  # B needs more than k rolls
            if full_b[i]:
                cfb += first[b, k]
                gam_w += ra * (1.0 - cfb)  # B's first checker needs more than k
                if has_eb:
                    ceb += escape[b, k]
                    bg_w += ra * (1.0 - ceb)
            if full_a[i]:
                gam_l += rb * (1.0 - cfa)  # A's first checker needs at least k
                cfa += first[a, k]
                if has_ea:
                    bg_l += rb * (1.0 - cea)
                    cea += escape[a, k]
        win = min(max(win, 0.0), 1.0)
        gam_w = min(max(gam_w, 0.0), 1.0)
        gam_l = min(max(gam_l, 0.0), 1.0)
        out[i, 0] = win
        out[i, 1] = gam_w
        out[i, 2] = min(min(max(bg_w, 0.0), 1.0), gam_w)  # a backgammon is also a gammon
        out[i, 3] = gam_l
        out[i, 4] = min(min(max(bg_l, 0.0), 1.0), gam_l)


_LOADED: dict[bool, BearoffDatabase] = {}


def get_bearoff_database(waste_rule: bool = False) -> BearoffDatabase:
    """The process-wide table of a rule set, loaded (or built) on first use."""
    key = bool(waste_rule)
    if key not in _LOADED:
        _LOADED[key] = BearoffDatabase.load(key)
    return _LOADED[key]


def bearoff_probabilities(afterstates: np.ndarray, waste_rule: bool = False) -> np.ndarray:
    """``get_bearoff_database(waste_rule).probabilities(afterstates)``."""
    return get_bearoff_database(waste_rule).probabilities(afterstates)
