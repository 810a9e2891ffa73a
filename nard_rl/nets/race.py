"""The race net: one-sided roll distributions for no-contact positions outside the bear-off
database, combined exactly into the five outcome probabilities.

Without contact the two sides no longer interact: each side's number of rolls to bear
off depends only on its own checkers and dice.  So instead of a two-sided net guessing
five probabilities, the race net answers the same *one-sided* question as the bear-off
database (``nard_rl.engine.bearoff``) for placements anywhere on the 24 points: the
distribution of the number of rolls to bear off all checkers, of rolls to bear off the
first one (for gammons), and of rolls until no checker is left in the other side's home
board, points 19..24 (for backgammons: a race without contact can still leave a straggler
there).  Two such distributions combine exactly
(``nard_rl.engine.bearoff.race_probabilities``), and a side already in its home board
takes its exact distribution from the database, so a race in which one side is home is
half exact, and the database and the net agree by construction at the boundary.

Training lives in ``nard_rl.training.race``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from nard_rl.engine.bearoff import (
    MAX_CHECKERS,
    BearoffDatabase,
    bearoff_index,
    get_bearoff_database,
    race_probabilities_of_rows,
)
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.nets.network import (
    MAX_WIDTH,
    CheckpointError,
    atomic_torch_save,
    load_checkpoint,
    load_state_checked,
)

__all__ = [
    "RaceEvaluator",
    "RaceNet",
    "load_race_net",
    "one_sided_inputs",
    "side_placements",
]

BINS = 80
"""Roll counts 0..79; a side with 15 checkers on its 24 point needs about 45 at most."""
RACE_ENCODING_VERSION = 1
RACE_KIND = "race-one-sided"
INPUTS = 24 * 4 + 5


def side_placements(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mover, opponent)`` placements ``(N, 24)`` int64 of no-contact boards, each on its
    own points 1..24 (column ``p - 1`` is point ``p``)."""
    a = np.asarray(afterstates, dtype=np.int64)
    return np.maximum(a[:, 1:25], 0), np.maximum(-a[:, 24:0:-1], 0)


def one_sided_inputs(placements: np.ndarray) -> np.ndarray:
    """Race encoding v1 of ``(N, 24)`` placements: per point ``n >= 1``, ``n >= 2``,
    ``n >= 3`` and ``(n - 3) / 4`` beyond; then the pip count / 150, checkers on the board
    / 15, checkers outside the home board / 15, pips still to travel to reach the home board
    / 100 and checkers on the ace point / 15 (the points where wastage starts)."""
    pl = np.asarray(placements, dtype=np.float32)
    n = pl.shape[0]
    out = np.empty((n, INPUTS), dtype=np.float32)
    per = out[:, :96].reshape(n, 24, 4)
    per[:, :, 0] = pl >= 1
    per[:, :, 1] = pl >= 2
    per[:, :, 2] = pl >= 3
    per[:, :, 3] = np.maximum(pl - 3.0, 0.0) / 4.0
    points = np.arange(1, 25, dtype=np.float32)
    out[:, 96] = pl @ points / 150.0
    out[:, 97] = pl.sum(axis=1) / 15.0
    out[:, 98] = pl[:, 6:].sum(axis=1) / 15.0
    out[:, 99] = pl[:, 6:] @ (points[6:] - 6.0) / 100.0
    out[:, 100] = pl[:, 0] / 15.0
    return out


HEADS = 3


class RaceNet(nn.Module):
    """Placement inputs -> log-probabilities of the three roll distributions
    ``(N, 3, BINS)``: rolls to bear off all, to bear off the first, to leave 19..24."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.hidden = int(hidden)
        self.body = nn.Sequential(
            nn.Linear(INPUTS, self.hidden),
            nn.SiLU(),
            nn.Linear(self.hidden, self.hidden),
            nn.SiLU(),
        )
        self.head = nn.Linear(self.hidden, HEADS * BINS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.head(self.body(x)).view(-1, HEADS, BINS)
        # a side with checkers left needs at least one roll to bear off (all or the first):
        # no mass at 0, by construction (finite, so that zero targets there give zero loss)
        zero = torch.zeros_like(logits)
        zero[:, :2, 0] = -1e4
        return F.log_softmax(logits + zero, dim=2)


def _pad(dist: np.ndarray) -> np.ndarray:
    out = np.zeros((dist.shape[0], BINS))
    out[:, : dist.shape[1]] = dist
    return out


class RaceEvaluator:
    """One-sided distributions (database at home, race net elsewhere) combined exactly."""

    def __init__(
        self,
        net: RaceNet,
        bearoff: BearoffDatabase,
        *,
        rules: RuleSet | str | None = None,
        name: str = "race",
        step: int = 0,
    ) -> None:
        self.net = net.eval()
        self.bearoff = bearoff
        self.rules = get_rules(rules)
        self.name = name
        self.step = step

    def distributions(self, placements: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rolls, first, escape)`` ``(N, BINS)`` of ``(N, 24)`` placements."""
        pl = np.asarray(placements, dtype=np.int64)
        rolls = np.zeros((pl.shape[0], BINS))
        first = np.zeros((pl.shape[0], BINS))
        escape = np.zeros((pl.shape[0], BINS))
        home = pl[:, 6:].sum(axis=1) == 0
        if home.any():
            idx = bearoff_index(pl[home, :6])
            rolls[home] = _pad(self.bearoff.rolls[idx])
            first[home] = _pad(self.bearoff.first[idx])
        away = np.flatnonzero(~home)
        if away.size:
            with torch.no_grad():
                logp = self.net(torch.from_numpy(one_sided_inputs(pl[away])))
            p = logp.exp().double().numpy()
            rolls[away] = p[:, 0]
            first[away] = p[:, 1]
            escape[away] = p[:, 2]
        some_off = pl.sum(axis=1) < MAX_CHECKERS
        first[some_off] = 0.0
        first[some_off, 0] = 1.0
        clear = pl[:, 18:].sum(axis=1) == 0
        escape[clear] = 0.0
        escape[clear, 0] = 1.0
        return rolls, first, escape

    def mean_rolls(self, placements: np.ndarray, head: int = 0) -> np.ndarray:
        """Mean of one distribution: rolls to bear off all (``head=0``), the first
        (``head=1``) or to leave the other side's home board (``head=2``)."""
        return self.distributions(placements)[head] @ np.arange(BINS)

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """``(N, 5)`` probabilities of no-contact afterstates (mover's view, opponent to
        roll); exact where both sides are home."""
        mine, theirs = side_placements(afterstates)
        n = mine.shape[0]
        # one side's placement recurs across a batch (the side not moving is the same in
        # every candidate of a roll, in every reply of a search level): each distinct
        # placement goes through the net once
        both = np.ascontiguousarray(np.concatenate([mine, theirs]).astype(np.int8))
        keys = both.view(np.dtype((np.void, both.shape[1]))).ravel()
        _, first_row, inverse = np.unique(keys, return_index=True, return_inverse=True)
        rolls, first, escape = self.distributions(both[first_row])
        inverse = inverse.ravel()
        full = MAX_CHECKERS
        return race_probabilities_of_rows(
            rolls,
            first,
            escape,
            inverse[:n],
            inverse[n:],
            mine.sum(1) == full,
            theirs.sum(1) == full,
        )


def save_race_net(
    path: str | Path, net: RaceNet, *, step: int, config: dict[str, Any], history: list[Any]
) -> None:
    atomic_torch_save(
        {
            "format": 1,
            "kind": RACE_KIND,
            "spec": {
                "hidden": net.hidden,
                "bins": BINS,
                "heads": HEADS,
                "encoding_version": RACE_ENCODING_VERSION,
            },
            "model": {k: v.detach().cpu() for k, v in net.state_dict().items()},
            "step": int(step),
            "games": int(config.get("games", 0)),
            "config": config,
            "extra": {"history": history},
        },
        path,
    )


def is_race_checkpoint(path: str | Path) -> bool:
    return load_checkpoint(path).get("kind") == RACE_KIND


def load_race_net(
    path: str | Path, *, rules: RuleSet | str | None = None, bearoff: BearoffDatabase | None = None
) -> RaceEvaluator:
    """A race checkpoint (``weights_only`` load) as an evaluator of the rule set."""
    ckpt = load_checkpoint(path)
    if ckpt.get("kind") != RACE_KIND:
        raise ValueError(f"{path} is not a race-net checkpoint (kind {ckpt.get('kind')!r})")
    spec = ckpt["spec"]
    have = (int(spec["encoding_version"]), int(spec["bins"]), int(spec.get("heads", 2)))
    if have != (RACE_ENCODING_VERSION, BINS, HEADS):
        raise ValueError(
            f"{path} is a race net of (encoding, bins, heads) = {have}; this nard-rl needs "
            f"{(RACE_ENCODING_VERSION, BINS, HEADS)}: retrain it"
        )
    rs = get_rules(rules)
    trained = get_rules(ckpt.get("config", {}).get("rules", "standard"))
    if trained.waste_rule != rs.waste_rule:
        raise ValueError(
            f"{path} was trained under the {trained.name!r} rule set, whose bear-off "
            f"{'follows' if trained.waste_rule else 'ignores'} the pip-waste rule (R29); "
            f"it cannot answer races under {rs.name!r}"
        )
    hidden = spec.get("hidden")
    if isinstance(hidden, bool) or not isinstance(hidden, int) or not 1 <= hidden <= MAX_WIDTH:
        raise CheckpointError(
            f"{path}: race net hidden width must be 1..{MAX_WIDTH}, got {hidden!r}"
        )
    # the weights' shapes are checked on the meta device before anything is allocated
    net = load_state_checked(path, lambda: RaceNet(hidden), ckpt["model"])
    db = bearoff or get_bearoff_database(rs.waste_rule)
    return RaceEvaluator(net, db, rules=rs, name=Path(path).stem, step=int(ckpt["step"]))
