"""Pruning nets: inside a search, rank each roll's replies with a tiny net so that only the
best few are scored by the full evaluator (gnubg's pruning nets, our own weights).

Why: a 2-ply search spends nearly all its time choosing the opponent's reply to each of
the 21 rolls, which takes a full-net evaluation of every legal reply (about 20 a roll,
hundreds for some doubles) although only the best one is used.  A net of 16 hidden units
on the ``extended`` inputs costs a fraction of the 512-unit net and its encoding; it only
has to put the full net's favourite among its ``keep`` best, and the full evaluator then
picks among those exactly as before.  A roll with ``keep`` replies or fewer is not pruned.

The pruner is distilled from the evaluator it serves (``train_pruner``): noisy self-play
positions, every legal play of their roll, the evaluator's five probabilities as targets.
Nothing outside the project labels it.  ``scripts/train_prune.py`` makes the shipped one
(``checkpoints/nard-prune.pt``) and prints how often the full net's choice survives;
``scripts/bench_search.py`` shows the speed and ``scripts/bench_checker.py`` the cost in
checker error (``default:2`` against ``default:2!``, the spec without pruning).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.encoding import get_encoding
from nard_rl.engine.batch import outcomes
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules
from nard_rl.fastnet import FusedNet

PRUNE_CHECKPOINT = "nard-prune.pt"
"""The shipped pruning net of the standard rules, beside the contact net."""
DEFAULT_KEEP = 6
"""Replies per roll that reach the full evaluator (gnubg keeps a similar handful)."""


def _segments(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))


def top_per_segment(values: np.ndarray, offsets: np.ndarray, keep: int) -> np.ndarray:
    """``(N,)`` bool: each segment's ``keep`` highest values (all rows of a short one)."""
    n = values.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    seg = _segments(offsets)
    order = np.lexsort((-values, seg))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - offsets[seg[order]]
    return rank < keep


class Pruner:
    """A frozen pruning net and how many replies per roll it lets through."""

    def __init__(self, net: Any, spec: Any, *, keep: int = DEFAULT_KEEP, name: str = "prune"):
        if int(keep) < 1:
            raise ValueError(f"pruner keep must be >= 1, got {keep}")
        self.spec = spec
        self.enc = get_encoding(spec.encoding)
        self.rules = get_rules(spec.rules)
        self.fused = FusedNet(net)
        self.keep = int(keep)
        self.name = name

    def scores(self, afterstates: np.ndarray) -> np.ndarray:
        """Estimated cubeless money equity of each afterstate (mover's view); a play that
        ends the game outranks every other."""
        done, _, _ = outcomes(afterstates)
        out = np.full(afterstates.shape[0], 10.0)
        live = np.flatnonzero(~done)
        if live.size:
            probs = self.fused(self.enc.encode(afterstates[live]))
            out[live] = cubeless_equity(probs, self.rules)
        return out

    def select(self, afterstates: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """``(N,)`` bool: the replies of each segment (one roll) worth a full evaluation."""
        if afterstates.shape[0] <= self.keep * (offsets.shape[0] - 1):
            counts = np.diff(offsets)
            if (counts <= self.keep).all():
                return np.ones(afterstates.shape[0], dtype=bool)
        return top_per_segment(self.scores(afterstates), offsets, self.keep)


def pruner_path(rules: RuleSet | str = "standard") -> Path | None:
    """The shipped pruning net for a rule set, or None (mars has none: no pruning)."""
    from nard_rl.checkpoint_paths import shipped_dir

    if get_rules(rules).name != "standard":
        return None
    path = shipped_dir() / PRUNE_CHECKPOINT
    return path if path.is_file() else None


def load_pruner(path: str | Path, *, keep: int = DEFAULT_KEEP) -> Pruner:
    from nard_rl.network import load_network

    net, spec, _ = load_network(path)
    return Pruner(net, spec, keep=keep, name=Path(path).stem)


# ---------------------------------------------------------------------------------------
# distillation


def distill_rows(
    evaluator: Any, positions: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(afterstates, probs, offsets)``: every legal play of ``positions`` noisy self-play
    decisions with the evaluator's probabilities (the pruner's training targets)."""
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.supervised.label import LabelConfig, collect_decisions

    rng = np.random.default_rng([seed, 7177])
    cfg = LabelConfig(sample=0.25, min_plays=1, parallel_games=128)
    boards, dice = collect_decisions(evaluator, positions, rng, cfg)
    afters, offsets = legal_afterstates_batch(boards, dice, evaluator.rules.waste_rule)
    return afters, np.asarray(evaluator.probabilities(afters), dtype=np.float32), offsets


def survival(
    pruner: Pruner, afters: np.ndarray, probs: np.ndarray, offsets: np.ndarray, keep: int
) -> tuple[float, float]:
    """How often the evaluator's best play is among the pruner's ``keep`` best (over the
    segments with more than ``keep`` plays), and the mean equity lost when it is not
    (over all those segments)."""
    from nard_rl.engine.batch import segment_argmax

    eq = cubeless_equity(probs, pruner.rules)
    kept = top_per_segment(pruner.scores(afters), offsets, keep)
    counts = np.diff(offsets)
    big = np.flatnonzero(counts > keep)
    if big.size == 0:
        return 1.0, 0.0
    best = offsets[:-1] + segment_argmax(eq, offsets)
    masked = np.where(kept, eq, -np.inf)
    best_kept = offsets[:-1] + segment_argmax(masked, offsets)
    hit = kept[best[big]]
    lost = eq[best[big]] - eq[best_kept[big]]
    return float(hit.mean()), float(lost.mean())


def train_pruner(
    afters: np.ndarray,
    probs: np.ndarray,
    *,
    hidden: int = 16,
    encoding: str = "extended",
    rules: str = "standard",
    epochs: int = 6,
    lr: float = 3e-3,
    batch: int = 2048,
    seed: int = 0,
    progress: bool = False,
) -> tuple[Any, Any, dict[str, Any]]:
    """Fit a ``hidden``-unit sigmoid net on ``encoding`` to the probabilities (MSE, Adam,
    the rate falling by cosine to a tenth); returns ``(net, spec, stats)``."""
    import torch

    from nard_rl.network import NetSpec
    from nard_rl.progress import progress_bar

    enc = get_encoding(encoding)
    spec = NetSpec(enc.name, enc.version, enc.size, (int(hidden),), "sigmoid", rules)
    torch.manual_seed(seed)
    net = spec.build()
    x = torch.from_numpy(enc.encode(afters))
    y = torch.from_numpy(np.ascontiguousarray(probs, dtype=np.float32))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * max(1, x.shape[0] // batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr / 10)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    bar = progress_bar(steps, unit="step", desc="pruner", disable=not progress)
    loss = torch.tensor(0.0)
    for _ in range(epochs):
        perm = torch.randperm(x.shape[0], generator=gen)
        for lo in range(0, x.shape[0] - batch + 1, batch):
            idx = perm[lo : lo + batch]
            loss = torch.mean((net(x[idx]) - y[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            bar.update(1)
    bar.close()
    net.eval()
    stats = {
        "rows": int(x.shape[0]),
        "final_loss": float(loss.detach()),
        "seconds": time.perf_counter() - start,
    }
    return net, spec, stats
