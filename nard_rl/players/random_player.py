"""The uniformly random player: the weakest benchmark, and a source of varied games."""

from __future__ import annotations

import numpy as np

from nard_rl.players.base import Player


class RandomPlayer(Player):
    """Picks each position's play uniformly at random from a seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
    ) -> np.ndarray:
        counts = np.diff(np.asarray(offsets, dtype=np.int64))
        picks = np.floor(self.rng.random(counts.shape[0]) * counts).astype(np.int64)
        picks[counts == 0] = -1
        return picks
