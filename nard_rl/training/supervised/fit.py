"""Fit a network to labelled positions: Adam, a held-out set, early stopping.

The rows come from label shards (``nard_rl.training.supervised.label``).  Held-out rows are
whole decisions (chosen by a hash of the decision id), so candidates of one decision
never sit on both sides of the split.  Rows of decisions where the labels overturned the
0-ply choice weigh ``oversample`` times as much: they are where the net is wrong about
what matters, the ranking of close candidates.

A student can start from the previous generation even when its shape differs
(``grow_net``): wider hidden layers get new units whose outgoing weights are zero, and an
encoding that extends the teacher's (its first inputs are the teacher's) gets zero
weights on the new inputs, so the student starts as exactly the teacher's function and
training only has to learn what the new capacity adds.

Under ``torchrun`` the fit is data-parallel (``DistContext``): every rank draws the same
epoch permutation from the shared seed and takes its contiguous part of each mini-batch
(``shard_bounds``), so ``batch`` stays the global batch and N ranks make the updates one
process would make, up to float rounding; the gradients are averaged with the trainer's
weighted all-reduce.  Each rank scores its part of the held-out rows and the sums are
all-reduced, so every rank sees the same held-out loss and stops at the same step.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nard_rl.engine.rules import cubeless_equity
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import EquityNet, NetSpec, probs_to_classes
from nard_rl.training.distributed import DistContext
from nard_rl.training.supervised.label import SHARD_FIELDS, read_shard
from nard_rl.util.progress import progress_bar
from nard_rl.util.shards import shard_bounds


@dataclass
class FitConfig:
    """Supervised fitting settings."""

    init: str = "previous"
    """previous (start from the teacher, grown to the student's shape), scratch, or a
    checkpoint file to start from instead (grown likewise): refitting a net of another
    run against this run's teacher and labels."""
    lr: float = 3e-4
    """Adam learning rate (at the first step)."""
    lr_final: float | None = None
    """Learning rate reached at the last step of ``max_epochs`` by cosine decay; None
    keeps ``lr`` throughout. Decay lets a long fit settle into a lower held-out loss."""
    batch: int = 256
    """Rows per gradient step."""
    max_epochs: int = 30
    """Upper bound on passes over the training rows."""
    patience: int = 3
    """Stop after this many evaluations without a better held-out loss."""
    evals_per_epoch: int = 2
    """Held-out evaluations per epoch (early stopping checks at each)."""
    holdout: float = 0.05
    """Fraction of decisions held out."""
    oversample: float = 2.0
    """Loss weight of rows whose decision the labels decided differently from 0-ply."""
    loss: str = "mse"
    """mse (gnubg's choice) or bce on the five probabilities, or ce: cross-entropy over
    the six outcome classes (wildbg's choice; for either head)."""
    weight_decay: float = 0.0
    """Adam weight decay."""
    data_generations: int = 1
    """Use the shards of this many most recent generations (older labels are weaker)."""
    select: str = "best"
    """best: the weights of the lowest held-out loss (early stopping by ``patience``);
    last: every epoch, then the last weights, for a refit that must learn rows the
    held-out labels do not hold (anchors) from a start already at their best loss."""

    def __post_init__(self) -> None:
        if self.select not in ("best", "last"):
            raise ValueError(f"fit.select must be best or last, got {self.select!r}")
        # checked when the run starts, not hours later when its first fit does
        if self.init not in ("previous", "scratch") and not Path(self.init).is_file():
            raise ValueError(
                f"fit.init must be previous, scratch or a checkpoint file, got {self.init!r}"
            )


@dataclass
class FitResult:
    """What a fit did: recorded in the checkpoint's history."""

    train_rows: int
    heldout_rows: int
    epochs: float
    steps: int
    initial_heldout_loss: float
    best_heldout_loss: float
    heldout_equity_rmse: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_rows(folders: Sequence[str | Path], rules: str | None = None) -> dict[str, np.ndarray]:
    """Every shard of the given folders, concatenated; ``generation`` tells them apart.

    With ``rules``, a shard labelled under another rule set is refused: its equities
    (mars wins worth 2, no backgammons) would teach the wrong values.  Shards written
    before the rule set was recorded are taken as they are."""
    parts: list[dict[str, np.ndarray]] = []
    for g, folder in enumerate(folders):
        for path in sorted(Path(folder).glob("shard_*.npz")):
            data, meta = read_shard(path)
            if rules is not None and meta.get("rules", rules) != rules:
                raise ValueError(f"{path} was labelled under {meta['rules']} rules, not {rules}")
            data["generation"] = np.full(data["boards"].shape[0], g, dtype=np.int64)
            parts.append(data)
    if not parts:
        raise FileNotFoundError(f"no label shards in {[str(f) for f in folders]}")
    keys = (*SHARD_FIELDS, "generation")
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def heldout_mask(decision: np.ndarray, generation: np.ndarray, fraction: float) -> np.ndarray:
    """Deterministic split of whole decisions (a multiplicative hash of the ids)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"holdout fraction must be in (0, 1), got {fraction}")
    key = (decision.astype(np.uint64) * np.uint64(2654435761) + generation.astype(np.uint64)) % (
        np.uint64(1 << 20)
    )
    return key < np.uint64(int(fraction * (1 << 20)))


def grow_net(net: EquityNet, spec: NetSpec, target: NetSpec, seed: int = 0) -> EquityNet:
    """A ``target``-shaped net computing exactly ``net``'s function (see the module doc).

    Possible when the head, activation and depth match, every layer is at least as wide, and
    the target's encoding is the source's or extends it; otherwise ValueError.
    """
    enc = get_encoding(target.encoding)
    same_inputs = target.encoding == spec.encoding
    if not same_inputs and getattr(enc, "extends", None) != spec.encoding:
        raise ValueError(
            f"cannot grow a {spec.encoding} net into {target.encoding}: the encoding does "
            f"not extend {spec.encoding}; use fit.init=scratch"
        )
    if target.head != spec.head:
        raise ValueError(
            f"cannot grow a {spec.head} head into {target.head}: no {target.head} head "
            f"computes the same function; use fit.init=scratch"
        )
    if target.activation != spec.activation or len(target.hidden) != len(spec.hidden):
        raise ValueError(
            f"cannot grow {spec.hidden}/{spec.activation} into {target.hidden}/"
            f"{target.activation}: depth and activation must match; use fit.init=scratch"
        )
    if any(t < s for t, s in zip(target.hidden, spec.hidden, strict=True)):
        raise ValueError(f"cannot shrink hidden layers {spec.hidden} to {target.hidden}")
    torch.manual_seed(seed)
    big = target.build()
    src = [m for m in net.body if isinstance(m, torch.nn.Linear)] + [net.head]
    dst = [m for m in big.body if isinstance(m, torch.nn.Linear)] + [big.head]
    with torch.no_grad():
        for layer, (a, b) in enumerate(zip(src, dst, strict=True)):
            out_a, in_a = a.weight.shape
            # new inputs of this layer (new encoding inputs, or new units of the layer
            # below) get zero weight: the old units compute exactly what they did
            b.weight[:, in_a:] = 0.0
            b.weight[:out_a, :in_a] = a.weight
            b.bias[:out_a] = a.bias
            if layer == len(src) - 1:
                continue
            # new units of this layer keep their random input weights but feed nothing yet
            nxt = dst[layer + 1]
            nxt.weight[:, out_a:] = 0.0
    return big


LOSSES = ("mse", "bce", "ce")


def _loss(pred: torch.Tensor, target: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "mse":
        return ((pred - target) ** 2).sum(dim=1)
    if kind == "bce":
        p = pred.clamp(1e-6, 1 - 1e-6)
        return -(target * p.log() + (1 - target) * (1 - p).log()).sum(dim=1)
    if kind == "ce":
        # soft-target cross-entropy minus the target's entropy (the KL divergence), so a
        # perfect fit scores 0 whatever the labels' own uncertainty
        t = probs_to_classes(target)
        c = probs_to_classes(pred).clamp_min(1e-7)
        return (t * ((t.clamp_min(1e-12)).log() - c.log())).sum(dim=1)
    raise ValueError(f"unknown loss {kind!r}; choose from {', '.join(LOSSES)}")


def fit(
    net: EquityNet,
    spec: NetSpec,
    rows: dict[str, np.ndarray],
    cfg: FitConfig,
    *,
    device: str | torch.device = "cpu",
    seed: int = 0,
    progress: bool = False,
    ctx: DistContext | None = None,
) -> tuple[EquityNet, FitResult]:
    """Train ``net`` (in place, returned at its best held-out state) on ``rows``.

    With ``ctx`` of several ranks every rank calls this with the same rows, config and
    seed (see the module doc); the returned net and result are the same on all ranks.
    ``ctx``'s device then replaces ``device``.
    """
    if cfg.lr <= 0 or cfg.batch < 1 or cfg.max_epochs < 1 or cfg.patience < 1:
        raise ValueError(f"bad fit settings: {cfg}")
    if cfg.lr_final is not None and not 0 < cfg.lr_final <= cfg.lr:
        raise ValueError(f"fit.lr_final must be in (0, lr], got {cfg.lr_final}")
    if cfg.loss not in LOSSES:
        raise ValueError(f"unknown fit.loss {cfg.loss!r}; choose from {', '.join(LOSSES)}")
    t0 = time.perf_counter()
    ctx = ctx if ctx is not None else DistContext()
    dev = ctx.device if ctx.enabled else torch.device(device)
    enc = get_encoding(spec.encoding)
    # anchors (rank0 -1, ``label.anchor_rows``) only train: the teacher fits its own
    # anchors perfectly, so scoring them would stop a fit before the labels move it
    trained_only = np.asarray(rows.get("rank0", 0)) < 0
    held = heldout_mask(rows["decision"], rows["generation"], cfg.holdout) & ~trained_only
    x = torch.from_numpy(enc.encode(rows["boards"]))
    y = torch.from_numpy(rows["probs"].astype(np.float32))
    w = torch.from_numpy(np.where(rows["disagree"], cfg.oversample, 1.0).astype(np.float32))
    tr = torch.from_numpy(np.flatnonzero(~held))
    ho = torch.from_numpy(np.flatnonzero(held))
    if tr.numel() == 0 or ho.numel() == 0:
        raise ValueError(f"need rows on both sides of the split: {tr.numel()} / {ho.numel()}")
    if ctx.enabled:  # this rank scores its part of the held-out rows
        a, b = shard_bounds(ho.numel(), ctx.world_size)[ctx.rank]
        ho_mine = ho[a:b]
    else:
        ho_mine = ho
    x_ho, y_ho, w_ho = x[ho_mine].to(dev), y[ho_mine].to(dev), w[ho_mine].to(dev)
    net = net.to(dev)
    ctx.broadcast_module(net)  # every rank starts from rank 0's weights
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(seed)

    def heldout() -> tuple[float, float]:
        net.eval()
        with torch.no_grad():
            n_ho = max(1, x_ho.shape[0])  # a rank may hold no held-out rows
            p = torch.cat([net(x_ho[i : i + 65536]) for i in range(0, n_ho, 65536)])
            lw = _loss(p, y_ho, cfg.loss) * w_ho
            se = (cubeless_equity(p, spec.rules) - cubeless_equity(y_ho, spec.rules)) ** 2
        net.train()
        if not ctx.enabled:
            return float(lw.sum() / w_ho.sum()), float(se.mean().sqrt())
        # the same sums on every rank (float64), hence the same stop decision
        ls, ws, ss, n = ctx.all_sum(
            [float(lw.sum()), float(w_ho.sum()), float(se.sum()), se.numel()]
        )
        return ls / ws, math.sqrt(ss / n)

    first, best_rmse = heldout()
    best = first
    best_state = copy.deepcopy(net.state_dict())
    steps_per_epoch = math.ceil(tr.numel() / cfg.batch)
    eval_every = max(1, steps_per_epoch // max(1, cfg.evals_per_epoch))
    total_steps = cfg.max_epochs * steps_per_epoch
    bad = 0
    step = 0
    bar = progress_bar(
        cfg.max_epochs * steps_per_epoch,
        unit="step",
        desc="fit",
        disable=not (progress and ctx.is_main),
    )
    stop = False
    for _ in range(cfg.max_epochs):
        perm = tr[torch.randperm(tr.numel(), generator=gen)]
        for lo in range(0, perm.numel(), cfg.batch):
            idx = perm[lo : lo + cfg.batch]
            if cfg.lr_final is not None:
                for group in opt.param_groups:
                    group["lr"] = cosine_lr(cfg.lr, cfg.lr_final, step, total_steps)
            if ctx.enabled:
                _distributed_backward(net, x, y, w, idx, cfg.loss, dev, ctx)
            else:
                xb, yb, wb = x[idx].to(dev), y[idx].to(dev), w[idx].to(dev)
                loss = (_loss(net(xb), yb, cfg.loss) * wb).sum() / wb.sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
            opt.step()
            step += 1
            bar.update(1)
            if step % eval_every == 0:
                cur, rmse = heldout()
                bar.set_postfix(heldout=f"{cur:.5f}", best=f"{best:.5f}")
                if cfg.select == "last":
                    best, best_rmse = cur, rmse
                elif cur < best:
                    best, best_rmse, bad = cur, rmse, 0
                    best_state = copy.deepcopy(net.state_dict())
                else:
                    bad += 1
                    if bad >= cfg.patience:
                        stop = True
                        break
        if stop:
            break
    bar.close()
    if cfg.select == "best":
        net.load_state_dict(best_state)
    net.eval()
    return net, FitResult(
        train_rows=int(tr.numel()),
        heldout_rows=int(ho.numel()),
        epochs=step / steps_per_epoch,
        steps=step,
        initial_heldout_loss=first,
        best_heldout_loss=best,
        heldout_equity_rmse=best_rmse,
        seconds=time.perf_counter() - t0,
    )


def cosine_lr(lr: float, lr_final: float, step: int, total: int) -> float:
    """The learning rate at ``step`` of ``total``: half a cosine from ``lr`` to ``lr_final``."""
    frac = min(1.0, step / max(1, total - 1))
    return lr_final + 0.5 * (lr - lr_final) * (1.0 + math.cos(math.pi * frac))


def _distributed_backward(
    net: EquityNet,
    x: torch.Tensor,
    y: torch.Tensor,
    w: torch.Tensor,
    idx: torch.Tensor,
    kind: str,
    dev: torch.device,
    ctx: DistContext,
) -> None:
    """Leave on every rank the gradient of the whole mini-batch ``idx``'s weighted loss.

    This rank backpropagates its part's share of that loss, scaled by ``n / n_r`` (batch
    rows over its rows) because ``sync_gradients`` averages with the row counts as
    weights: ``sum_r n_r * (n / n_r) * g_r / n`` is the sum of the parts' gradients.  A
    rank with no rows in this batch still joins the all-reduce, with weight 0.
    """
    lo, hi = shard_bounds(idx.numel(), ctx.world_size)[ctx.rank]
    mine = idx[lo:hi]
    net.zero_grad(set_to_none=True)
    if mine.numel():
        xb, yb, wb = x[mine].to(dev), y[mine].to(dev), w[mine].to(dev)
        scale = idx.numel() / (mine.numel() * float(w[idx].sum()))
        ((_loss(net(xb), yb, kind) * wb).sum() * scale).backward()
    ctx.sync_gradients(net, int(mine.numel()))
