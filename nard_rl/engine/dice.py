"""Counter-based dice: each roll a pure function of (seed, stream, ply).

Duplicate-dice matches, cubeful sessions and rollouts all draw their dice here, so a
stream's rolls do not depend on how games are batched or split between workers, and two
games that share a stream (a duplicate pair, a rollout trial of two candidate plays) see
the same rolls ply by ply.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_dice"]

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def pair_dice(seed: int, pairs: np.ndarray, ply: int | np.ndarray) -> np.ndarray:
    """The roll of each dice stream at one ply, a pure function of (seed, pair, ply).

    Counter-based rather than drawn from one generator, so a match's dice do not depend on
    how its pairs are split into batches: the same seed gives the same games whatever the
    batch size.  Ply 0 is the opening roll (R5: never a double).  ``ply`` is one number
    or one per pair (games at different turns, as the batch stepper asks).
    """
    pairs = np.asarray(pairs, dtype=np.uint64)
    plies = np.broadcast_to(np.asarray(ply, dtype=np.int64), pairs.shape)
    with np.errstate(over="ignore"):
        key = _splitmix64(np.full(pairs.shape, seed, dtype=np.uint64) & _MASK64)
        h = _splitmix64(
            key ^ _splitmix64(pairs * np.uint64(0x100000001B3) + plies.astype(np.uint64))
        )
    dice = np.empty((pairs.shape[0], 2), dtype=np.int8)
    opening = plies == 0
    r = (h % np.uint64(36)).astype(np.int64)
    dice[:, 0] = r // 6 + 1
    dice[:, 1] = r % 6 + 1
    if opening.any():
        r = (h[opening] % np.uint64(30)).astype(np.int64)  # the 30 non-double ordered rolls
        d1 = r // 5
        d2 = r % 5
        d2 = d2 + (d2 >= d1)
        dice[opening, 0] = d1 + 1
        dice[opening, 1] = d2 + 1
    return dice
