"""Pruning nets: inside a search, rank each roll's replies with a tiny net so that only the
best few are scored by the full evaluator (gnubg's pruning nets, our own weights).

Why: a 2-ply search spends nearly all its time choosing the opponent's reply to each of
the 21 rolls, which takes a full-net evaluation of every legal reply (about 20 a roll,
hundreds for some doubles) although only the best one is used.  A net of 16 hidden units
on the ``extended`` inputs costs a fraction of the 512-unit net and its encoding; it only
has to put the full net's favourite among its ``keep`` best, and the full evaluator then
picks among those exactly as before.  A roll with ``keep`` replies or fewer is not pruned,
except by a ``margin``: a search may also drop the replies the pruning net puts more than
that far below its favourite (``nard_rl.search.nply.DEFAULT_PRUNE_MARGIN``).

The pruner is distilled from the evaluator it serves (``nard_rl.training.supervised.prune_fit``):
noisy self-play positions, every legal play of their roll, the evaluator's five
probabilities as targets.
Nothing outside the project labels it.  ``scripts/train_prune.py`` makes the shipped one
(``checkpoints/nard-prune.pt``) and prints how often the full net's choice survives;
``scripts/bench_search.py`` shows the speed and ``scripts/bench_checker.py`` the cost in
checker error (``default:2`` against ``default:2!``, the spec without pruning).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from nard_rl.engine.batch import outcomes
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.fastnet import BoardNet, FusedNet

PRUNE_CHECKPOINTS = {"standard": "nard-prune.pt", "mars": "nard-prune-mars.pt"}
"""The shipped pruning net of each rule set, beside its contact net."""
DEFAULT_KEEP = 4
"""Replies per roll that reach the full evaluator (gnubg keeps a similar handful)."""


@njit(cache=True)
def _top_kernel(
    values: np.ndarray, offsets: np.ndarray, keep: int, margin: float, out: np.ndarray
) -> None:
    best = np.empty(keep, np.int64)
    for s in range(offsets.shape[0] - 1):
        lo = offsets[s]
        hi = offsets[s + 1]
        if hi - lo <= keep:
            top = values[lo]
            for r in range(lo + 1, hi):
                top = max(top, values[r])
            for r in range(lo, hi):
                out[r] = values[r] >= top - margin
            continue
        filled = 0
        for r in range(lo, hi):
            v = values[r]
            if filled == keep and v <= values[best[keep - 1]]:
                continue  # ties go to the earlier row
            pos = filled if filled < keep else keep - 1
            while pos > 0 and values[best[pos - 1]] < v:
                best[pos] = best[pos - 1]
                pos -= 1
            best[pos] = r
            if filled < keep:
                filled += 1
        top = values[best[0]]
        for k in range(keep):
            if k == 0 or values[best[k]] >= top - margin:
                out[best[k]] = True


def top_per_segment(
    values: np.ndarray, offsets: np.ndarray, keep: int, margin: float = np.inf
) -> np.ndarray:
    """``(N,)`` bool: each segment's ``keep`` highest values (all rows of a short one; of
    equal values, the earlier rows), less those more than ``margin`` below the segment's
    highest (which always stays)."""
    if int(keep) < 1:
        raise ValueError(f"keep must be >= 1, got {keep}")
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    out = np.zeros(values.shape[0], dtype=np.bool_)
    if values.shape[0]:
        _top_kernel(
            np.ascontiguousarray(values, dtype=np.float64),
            np.ascontiguousarray(offsets, dtype=np.int64),
            int(keep),
            float(margin),
            out,
        )
    return out


class Pruner:
    """A frozen pruning net and how many replies per roll it lets through."""

    def __init__(self, net: Any, spec: Any, *, keep: int = DEFAULT_KEEP, name: str = "prune"):
        if int(keep) < 1:
            raise ValueError(f"pruner keep must be >= 1, got {keep}")
        self.spec = spec
        self.enc = get_encoding(spec.encoding)
        self.rules = get_rules(spec.rules)
        # straight from the boards when the encoding allows it: no rows to write and scan
        self.board_net = BoardNet(net, self.enc) if self.enc.point_separable else None
        self.fused = FusedNet(net)
        self.keep = int(keep)
        self.name = name

    def identity(self) -> str:
        """Name, width and a digest of the weights: what labels record of their pruner."""
        f = self.fused
        h = hashlib.sha256()
        for a in (f.w1t, f.b1, f.dense_w, f.dense_b):
            h.update(np.ascontiguousarray(a).tobytes())
        width = f"{self.spec.encoding}x{f.b1.shape[0]}"
        return f"{self.name} {width} keep {self.keep} {h.hexdigest()[:16]}"

    def scores(self, afterstates: np.ndarray) -> np.ndarray:
        """Estimated cubeless money equity of each afterstate (mover's view); a play that
        ends the game outranks every other."""
        done, _, _ = outcomes(afterstates)
        out = np.full(afterstates.shape[0], 10.0)
        live = np.flatnonzero(~done)
        if live.size:
            rows = afterstates[live]
            if self.board_net is not None:
                probs = self.board_net(rows)
            else:
                probs = self.fused(self.enc.encode(rows))
            out[live] = cubeless_equity(probs, self.rules)
        return out

    def select(
        self, afterstates: np.ndarray, offsets: np.ndarray, margin: float = np.inf
    ) -> np.ndarray:
        """``(N,)`` bool: the replies of each segment (one roll) worth a full evaluation:
        its ``keep`` best by the pruning net, less those more than ``margin`` (equity)
        below its best."""
        if margin == np.inf and afterstates.shape[0] <= self.keep * (offsets.shape[0] - 1):
            counts = np.diff(offsets)
            if (counts <= self.keep).all():
                return np.ones(afterstates.shape[0], dtype=bool)
        return top_per_segment(self.scores(afterstates), offsets, self.keep, margin)


def pruner_path(rules: RuleSet | str = "standard") -> Path | None:
    """The shipped pruning net for a rule set, or None (none shipped: no pruning)."""
    from nard_rl.nets.paths import shipped_dir

    name = PRUNE_CHECKPOINTS.get(get_rules(rules).name)
    path = None if name is None else shipped_dir() / name
    return path if path is not None and path.is_file() else None


def load_pruner(path: str | Path, *, keep: int = DEFAULT_KEEP) -> Pruner:
    from nard_rl.nets.network import load_network

    net, spec, _ = load_network(path)
    return Pruner(net, spec, keep=keep, name=Path(path).stem)
