"""Position classes that decide which evaluator answers (contact net, race net, bear-off
database).

* ``BEAROFF``: no contact and both sides entirely in their home boards (mover on points
  1..6, opponent on 19..24 in the mover's numbering): exact by the bear-off database.
* ``RACE``: no contact otherwise (every mover checker is below every opponent checker,
  nobody on the bar): no checker can ever be hit again, so only pips and shape matter.
* ``CONTACT``: everything else.

A side with no checkers left counts as in its home board, so a finished game is a
bear-off too (callers answer finished games exactly before asking this).

The one implementation of the contact test: ``Position.is_race``, ``race_flags`` and
``classify`` all read ``_backs`` (compiled, so batches of afterstates stay cheap).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["BEAROFF", "CLASS_NAMES", "CONTACT", "RACE", "classify", "no_contact", "race_flags"]

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
