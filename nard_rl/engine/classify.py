"""Position classes that decide which evaluator answers (contact net, race net, bear-off
database).

* ``BEAROFF``: no contact and both sides entirely in their home boards (mover on points
  1..6, opponent on 19..24 in the mover's numbering): exact by the bear-off database.
* ``RACE``: no contact otherwise (every mover checker is below every opponent checker,
  nobody on the bar): no checker can ever be hit again, so only pips and shape matter.
* ``CONTACT``: everything else.

``crashed_flags`` marks a subset of contact: positions where a side's game has collapsed
(gnubg gives them a net of their own; this project measures them with it first, see
``docs/history.md``).

A side with no checkers left counts as in its home board, so a finished game is a
bear-off too (callers answer finished games exactly before asking this).

The one implementation of the contact test: ``Position.is_race``, ``race_flags`` and
``classify`` all read ``_backs`` (compiled, so batches of afterstates stay cheap).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "BEAROFF",
    "CLASS_NAMES",
    "CONTACT",
    "CRASHED_DEEP",
    "CRASHED_LEFT",
    "RACE",
    "classify",
    "crashed_flags",
    "no_contact",
    "race_flags",
]

CONTACT = 0
RACE = 1
BEAROFF = 2
CLASS_NAMES = ("contact", "race", "bearoff")


@njit(cache=True)
def _backs(boards: np.ndarray, i: int) -> tuple[int, int]:
    """The mover's rearmost checker (its bar is point 25, 0 when it has none left) and the
    opponent's rearmost one in the mover's numbering (its bar is point 0, 25 when none)."""
    rear = 25 if boards[i, 25] > 0 else 0
    front = 0 if boards[i, 0] < 0 else 25
    for p in range(1, 25):
        if boards[i, p] > 0 and p > rear:
            rear = p
        elif boards[i, p] < 0 and p < front:
            front = p
    return rear, front


@njit(cache=True)
def no_contact(boards: np.ndarray, i: int) -> bool:
    """Whether row ``i`` is a race: nobody on the bar and every one of the mover's
    checkers past every opponent checker."""
    rear, front = _backs(boards, i)
    return rear < front


@njit(cache=True)
def _classify_kernel(boards: np.ndarray, out: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        rear, front = _backs(boards, i)
        if rear >= front:
            out[i] = CONTACT
        elif rear <= 6 and front >= 19:
            out[i] = BEAROFF
        else:
            out[i] = RACE


def _as_boards(boards: np.ndarray) -> np.ndarray:
    b = np.asarray(boards)
    if b.ndim != 2 or b.shape[1] != 26:
        raise ValueError(f"boards must have shape (N, 26), got {b.shape}")
    return np.ascontiguousarray(b, dtype=np.int8)


def classify(boards: np.ndarray) -> np.ndarray:
    """Class of each ``(N, 26)`` board (any side on roll; the test is symmetric), int8."""
    b = _as_boards(boards)
    out = np.empty(b.shape[0], dtype=np.int8)
    _classify_kernel(b, out)
    return out


def race_flags(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: which of the ``(N, 26)`` boards are no-contact races (``RACE`` or
    ``BEAROFF`` for ``classify``)."""
    return classify(boards) != CONTACT


CRASHED_LEFT = 7
"""A side with at most this many checkers still in play (not borne off) is crashed."""
CRASHED_DEEP = 7
"""A side with at least this many checkers on its own 1, 2 and 3 points is crashed."""


@njit(cache=True)
def _crashed_kernel(boards: np.ndarray, out: np.ndarray) -> None:
    for i in range(boards.shape[0]):
        rear, front = _backs(boards, i)
        if rear < front:
            out[i] = False  # a race is never crashed: nothing can be hit any more
            continue
        mine = boards[i, 25]
        theirs = -boards[i, 0]
        mine_deep = 0
        theirs_deep = 0
        for p in range(1, 25):
            v = boards[i, p]
            if v > 0:
                mine += v
                if p <= 3:
                    mine_deep += v
            elif v < 0:
                theirs -= v
                if p >= 22:
                    theirs_deep -= v
        out[i] = (
            mine <= CRASHED_LEFT
            or theirs <= CRASHED_LEFT
            or mine_deep >= CRASHED_DEEP
            or theirs_deep >= CRASHED_DEEP
        )


def crashed_flags(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: contact positions where either side is crashed (this project's own
    rule, symmetric in the sides): it has at most ``CRASHED_LEFT`` checkers in play, or at
    least ``CRASHED_DEEP`` piled on its own three deepest points.  Such a side has little
    left to build with while contact lasts, which is where a general contact net is
    thought weakest."""
    b = _as_boards(boards)
    out = np.empty(b.shape[0], dtype=np.bool_)
    _crashed_kernel(b, out)
    return out
