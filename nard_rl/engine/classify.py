"""Position classes that decide which evaluator answers (contact net, race net, bear-off
database).

* ``BEAROFF``: no contact and both sides entirely in their home boards (mover on points
  1..6, opponent on 19..24 in the mover's numbering): exact by the bear-off database.
* ``RACE``: no contact otherwise (every mover checker is below every opponent checker,
  nobody on the bar): no checker can ever be hit again, so only pips and shape matter.
* ``CONTACT``: everything else.

A side with no checkers left counts as in its home board, so a finished game is a
bear-off too (callers answer finished games exactly before asking this).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BEAROFF", "CLASS_NAMES", "CONTACT", "RACE", "classify"]

CONTACT = 0
RACE = 1
BEAROFF = 2
CLASS_NAMES = ("contact", "race", "bearoff")

_POINTS = np.arange(26)


def classify(boards: np.ndarray) -> np.ndarray:
    """Class of each ``(N, 26)`` board (any side on roll; the test is symmetric), int8."""
    b = np.asarray(boards)
    if b.ndim != 2 or b.shape[1] != 26:
        raise ValueError(f"boards must have shape (N, 26), got {b.shape}")
    # the mover's rearmost checker (the bar is point 25) and the opponent's (its bar is 0)
    mover_back = np.where(b > 0, _POINTS, 0).max(axis=1)
    opp_back = np.where(b < 0, _POINTS, 25).min(axis=1)
    out = np.full(b.shape[0], CONTACT, dtype=np.int8)
    race = mover_back < opp_back
    out[race] = RACE
    out[race & (mover_back <= 6) & (opp_back >= 19)] = BEAROFF
    return out
