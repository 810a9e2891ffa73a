"""Tesauro's pubeval (1993): a linear benchmark evaluator, vectorised over afterstates.

``score = sum_i w[i] * x[i]`` over 122 inputs, accumulated in float32 in index order
like the original C so scores match it to the last bit.  ``x`` (the original setx()):
for each point seen from the mover, listed from point 24 down to point 1 (``j`` = 0..23
for point ``24 - j``), five units at ``5*j``: one opponent blot; exactly one mover
checker; two or more mover checkers; exactly three; ``(n - 3) / 2`` for n >= 4.  Then
``x[120]`` = opponent checkers on the bar / 2 and ``x[121]`` = mover checkers off / 15.
The mover's own bar is not an input.  A play that bears off all 15 scores 99999999.

The race weights are used when the position BEFORE the move is a no-contact race, the
contact weights otherwise (as the original prescribes).
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
from numba import njit

from nard_rl.engine.classify import race_flags
from nard_rl.players.base import Player

_ALL_OFF_SCORE = np.float32(99999999.0)


def _load_weights() -> tuple[np.ndarray, np.ndarray]:
    text = resources.files("nard_rl.data").joinpath("pubeval_weights.json").read_text()
    data = json.loads(text)
    # Parse the published decimal texts straight to float32, as the C's fscanf("%f") did.
    race = np.array([np.float32(t) for t in data["race_text"]], dtype=np.float32)
    contact = np.array([np.float32(t) for t in data["contact_text"]], dtype=np.float32)
    if race.shape != (122,) or contact.shape != (122,):
        raise ValueError("pubeval_weights.json must hold 122 race and 122 contact weights")
    return race, contact


WEIGHTS_RACE, WEIGHTS_CONTACT = _load_weights()


@njit(cache=True)
def _score_row(a: np.ndarray, i: int, w: np.ndarray) -> np.float32:
    """One afterstate's score; zero inputs are skipped (adding w * 0 changes nothing)."""
    score = np.float32(0.0)
    on_board = 0
    for j in range(24):
        n = np.int64(a[i, 24 - j])
        if n == -1:
            score += w[5 * j]
        elif n == 1:
            score += w[5 * j + 1]
        elif n >= 2:
            score += w[5 * j + 2]
            if n == 3:
                score += w[5 * j + 3]
            elif n >= 4:
                score += w[5 * j + 4] * np.float32((n - 3) / 2.0)
        if n > 0:
            on_board += n
    bar_them = -np.int64(a[i, 0])
    if bar_them != 0:
        score += w[120] * np.float32(bar_them / 2.0)
    off = 15 - on_board - np.int64(a[i, 25])
    if off == 15:
        return np.float32(99999999.0)
    if off != 0:
        score += w[121] * np.float32(off / 15.0)
    return score


@njit(cache=True)
def _scores_kernel(
    afters: np.ndarray, race: np.ndarray, w_race: np.ndarray, w_contact: np.ndarray
) -> np.ndarray:
    out = np.empty(afters.shape[0], dtype=np.float32)
    for i in range(afters.shape[0]):
        out[i] = _score_row(afters, i, w_race if race[i] else w_contact)
    return out


@njit(cache=True)
def _choose_kernel(
    afters: np.ndarray,
    offsets: np.ndarray,
    race: np.ndarray,
    w_race: np.ndarray,
    w_contact: np.ndarray,
) -> np.ndarray:
    n = offsets.shape[0] - 1
    picks = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        w = w_race if race[k] else w_contact
        best = np.float32(0.0)
        for i in range(offsets[k], offsets[k + 1]):
            s = _score_row(afters, i, w)
            if picks[k] < 0 or s > best:  # ties keep the first play, like the C's ">"
                best = s
                picks[k] = i - offsets[k]
    return picks


def pubeval_scores(afterstates: np.ndarray, race: bool | np.ndarray) -> np.ndarray:
    """float32 pubeval scores of ``(M, 26)`` afterstates (mover's view); ``race`` picks
    the race weights, for all rows or per row."""
    afters = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 26)
    flags = np.ascontiguousarray(
        np.broadcast_to(np.asarray(race, dtype=np.bool_), (afters.shape[0],))
    )
    return _scores_kernel(afters, flags, WEIGHTS_RACE, WEIGHTS_CONTACT)


class PubevalPlayer(Player):
    """Plays the afterstate with the highest pubeval score (first one on ties)."""

    name = "pubeval"

    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
    ) -> np.ndarray:
        afters = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 26)
        offs = np.ascontiguousarray(offsets, dtype=np.int64)
        race = race_flags(boards)
        return _choose_kernel(afters, offs, race, WEIGHTS_RACE, WEIGHTS_CONTACT)
