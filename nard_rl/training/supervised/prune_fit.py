"""Distil the search's pruning net (``nard_rl.nets.pruning``) from the evaluator it serves.

Training code, so it lives with the other fitting (``nard_rl.training.supervised``): noisy
self-play positions from the pipeline's collection, every legal play of their roll, the
evaluator's five probabilities as targets; ``scripts/train_prune.py`` runs it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from nard_rl.engine.rules import cubeless_equity
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.pruning import Pruner, top_per_segment


def distill_rows(
    evaluator: Any, positions: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(afterstates, probs, offsets)``: every legal play of ``positions`` noisy self-play
    decisions with the evaluator's probabilities (the pruner's training targets)."""
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.training.supervised.label import LabelConfig, collect_decisions

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

    from nard_rl.nets.network import NetSpec
    from nard_rl.util.progress import progress_bar

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
