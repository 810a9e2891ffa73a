"""What the single and the vectorised environments add to the engine's ``GameBatch``.

Both environments are thin views of one ``nard_rl.engine.batch.GameBatch`` (the project's
one batch stepper, shared with self-play training and evaluation): the single
environment is a batch of one that does not restart by itself, the vector environment a
batch of N that does.  This module holds what is specific to environments: the action
capacity and the observation (``observe``), each game's position in the project's one
pre-roll convention (``Encoding.encode_pre_roll``: as the opponent's afterstate, the
inputs self-play nets are trained on) followed by its dice.

Capacity of a candidate list, ``MAX_CANDIDATES = 3060``: a proven upper bound on the
distinct legal plays of any position and roll.  Label the mover's 15 checkers; a play
of a double moves checker i by k_i steps of the die (bar entry being one step) with
``sum k_i = m <= 4`` equal for all legal plays (R14); every step touches down on a fixed
point, so the hits and the resulting board depend on ``(k_1..k_15)`` alone, giving at
most ``C(m + 14, 14) <= C(18, 4) = 3060`` afterstates.  A non-double gives at most
15 * 14 + 2 * 15 = 240.  ``scripts/max_plays_search.py`` (simulated annealing with the
batch move generator) found at most 2226 plays (roll 1-1, checkers spread in pairs of
adjacent points, no opponent blocks), so the bound is not attained but the list size
never needs a fallback.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from nard_rl.engine.batch import (  # noqa: F401  (the stepper's names, re-exported)
    GameBatch,
    InvalidAction,
    StepOutcome,
    gather_slices,
)
from nard_rl.nets.encoding import Encoding

MAX_CANDIDATES = comb(18, 4)
"""Capacity of a candidate list: the proven bound on distinct plays (module docstring)."""

DICE_FEATURES = 12
"""Observation tail: two one-hot(6) blocks, the higher die first, then the lower one."""


def dice_one_hot(dice: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``(N, 12)`` float32: one-hot of the higher die, then of the lower (zeros for 0 dice).

    ``out`` (float32, ``(N, 12)``, e.g. the dice columns of an observation buffer)
    receives the result; one compiled pass replaces a handful of numpy calls per step.
    """
    if out is None:
        out = np.empty((dice.shape[0], DICE_FEATURES), dtype=np.float32)
    _dice_one_hot(np.ascontiguousarray(dice), out)
    return out


@njit(cache=True)
def _dice_one_hot(dice: np.ndarray, out: np.ndarray) -> None:
    for i in range(dice.shape[0]):
        for k in range(DICE_FEATURES):
            out[i, k] = 0.0
        hi = max(dice[i, 0], dice[i, 1])
        lo = min(dice[i, 0], dice[i, 1])
        if lo > 0:
            out[i, hi - 1] = 1.0
            out[i, 6 + lo - 1] = 1.0


def observe(games: GameBatch, encoding: Encoding) -> np.ndarray:
    """``(N, size + 12)`` float32: each game's position for the side to move, encoded in
    the pre-roll convention (``Encoding.encode_pre_roll``), followed by its dice
    (``dice_one_hot``; zeros once over)."""
    obs = np.empty((games.n, encoding.size + DICE_FEATURES), dtype=np.float32)
    encoding.encode_pre_roll(games.boards, out=obs[:, : encoding.size])  # no copy
    dice_one_hot(games.dice, out=obs[:, encoding.size :])
    return obs
