"""Which label source buys the most checker error per CPU-hour.

The dataset's labels are 2-ply searches of self-play decisions, and most of them agree with
the net's own 0-ply choice: those rows teach the net what it already does.  gnubg's net
builders kept the positions where a shallow and a deep look disagree.  This benchmark
measures both halves of that trade on our own net and data:

1. **The cost of finding disagreements** (``--positions`` fresh noisy self-play decisions,
   the pipeline's collection): the CPU seconds per decision of the 0-, 1- and 2-ply
   choices, how often 2-ply disagrees with 0-ply, and how many of those a 1-ply filter
   (1-ply disagrees with 0-ply) finds, and at what share of the decisions.
2. **What the rows are worth** (``--fit``): the shipped net fitted on the dataset's rows
   of (a) every decision, (b) only the decisions where 2-ply disagreed with 0-ply, (c)
   as many decisions as (b), drawn at random; each candidate's checker error on the own
   validation set at 0-ply.

From the two it prints millipoints of validation error gained per CPU-hour of labelling
for each source: (a) and (b) cost a 2-ply search of every decision; (b) found by the 1-ply
filter costs a 1-ply search of every decision and a 2-ply search of the flagged ones, and
keeps the share of (b) the filter finds.

    python scripts/bench_label_sources.py --positions 1000
    python scripts/bench_label_sources.py --positions 1000 --fit --epochs 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VALIDATION = ROOT / "validation" / "checker_gnubg_own.jsonl.gz"


def choice_costs(positions: int, seed: int) -> dict[str, float]:
    """Choices at 0, 1 and 2 ply on fresh decisions: CPU seconds a decision and the
    disagreement figures of part 1 (module docstring)."""
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.search.nply import Search
    from nard_rl.training.supervised.label import LabelConfig, collect_decisions

    ev = load_evaluator("default")
    cfg = LabelConfig(race_net=True)
    boards, dice = collect_decisions(ev, positions, np.random.default_rng([seed, 31]), cfg)
    afters, offsets = legal_afterstates_batch(boards, dice, ev.rules.waste_rule)
    picks: dict[int, np.ndarray] = {}
    seconds: dict[int, float] = {}
    for ply in (0, 1, 2):
        search = Search(ev)
        search.choose_batch(boards[:4], dice[:4], *legal_afterstates_batch(boards[:4], dice[:4]))
        search.clear_cache()
        start = time.process_time()
        picks[ply] = search.choose_batch(boards, dice, afters, offsets, ply)
        seconds[ply] = (time.process_time() - start) / positions
    d02 = picks[0] != picks[2]
    d01 = picks[0] != picks[1]
    return {
        "positions": float(positions),
        "cpu0": seconds[0],
        "cpu1": seconds[1],
        "cpu2": seconds[2],
        "disagree02": float(d02.mean()),
        "flagged01": float(d01.mean()),
        "recall01": float((d02 & d01).sum() / max(1, d02.sum())),
        "precision01": float((d02 & d01).sum() / max(1, d01.sum())),
    }


def _decision_groups(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's decision group and whether that decision's labels disagreed with 0-ply."""
    _, group = np.unique(rows["decision"], return_inverse=True)
    disagree = np.zeros(group.max() + 1, dtype=bool)
    np.logical_or.at(disagree, group, rows["disagree"])
    return group, disagree


def fit_sources(epochs: int, seed: int) -> dict[str, tuple[int, float]]:
    """``{source: (decisions, validation mp at 0-ply)}`` for the fits of part 2."""
    import torch
    from bench_checker import load_decisions, play_errors

    from nard_rl.nets.network import load_network, save_checkpoint
    from nard_rl.nets.paths import default_checkpoint_path
    from nard_rl.training.supervised.dataset import load_dataset
    from nard_rl.training.supervised.fit import FitConfig, fit

    torch.set_num_threads(1)
    rows = load_dataset(ROOT / "datasets", "standard")
    group, disagree = _decision_groups(rows)
    rng = np.random.default_rng(seed)
    chosen = {
        "all": np.arange(disagree.size),
        "disagreements": np.flatnonzero(disagree),
        "random": rng.choice(disagree.size, size=int(disagree.sum()), replace=False),
    }
    records = load_decisions(VALIDATION)
    out: dict[str, tuple[int, float]] = {}
    base, _ = play_errors("default", records)
    out["shipped"] = (0, 1000.0 * float(base.mean()))
    for name, decisions in chosen.items():
        keep = np.isin(group, decisions)
        subset = {k: v[keep] for k, v in rows.items()}
        net, spec, ck = load_network(default_checkpoint_path())
        cfg = FitConfig(lr=1e-3, lr_final=1e-4, max_epochs=epochs, patience=8)
        net, _ = fit(net, spec, subset, cfg, seed=seed)
        path = ROOT / "runs" / "label_sources" / f"{name}.pt"
        path.parent.mkdir(parents=True, exist_ok=True)
        save_checkpoint(path, net, spec, games=int(ck["games"]), step=int(ck["step"]))
        errors, _ = play_errors(f"{path}+race", records)
        out[name] = (int(decisions.size), 1000.0 * float(errors.mean()))
        print(f"fit on {name}: {decisions.size} decisions -> {out[name][1]:.2f} mp", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1000, help="fresh decisions (part 1)")
    parser.add_argument("--seed", type=int, default=4400)
    parser.add_argument("--fit", action="store_true", help="also the fits of part 2")
    parser.add_argument("--epochs", type=int, default=20, help="fit epochs (part 2)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch

    torch.set_num_threads(1)
    c = choice_costs(args.positions, args.seed)
    print(
        f"{int(c['positions'])} decisions; CPU s a decision: 0-ply {c['cpu0']:.5f}, 1-ply "
        f"{c['cpu1']:.4f}, 2-ply {c['cpu2']:.4f}\n"
        f"2-ply disagrees with 0-ply on {c['disagree02']:.1%}; 1-ply with 0-ply on "
        f"{c['flagged01']:.1%}, which finds {c['recall01']:.1%} of the 2-ply disagreements "
        f"(precision {c['precision01']:.1%})"
    )
    if not args.fit:
        return 0
    res = fit_sources(args.epochs, args.seed)
    shipped = res["shipped"][1]
    flagged = c["flagged01"]
    costs = {  # CPU hours of labelling the rows each source uses
        "all": res["all"][0] * c["cpu2"] / 3600,
        "disagreements": res["all"][0] * c["cpu2"] / 3600,
        "random": res["random"][0] * c["cpu2"] / 3600,
    }
    print(f"validation error at 0-ply, shipped net: {shipped:.2f} mp")
    for name in ("all", "disagreements", "random"):
        n, err = res[name]
        gain = shipped - err
        print(
            f"{name:<14} {n:>7} decisions  {err:.2f} mp  gain {gain:+.2f} mp  labelling "
            f"{costs[name]:.2f} CPU-h  {gain / costs[name]:+.2f} mp per CPU-h"
        )
    # the disagreements found by the 1-ply filter instead of a 2-ply search of everything
    n_all = res["all"][0]
    filter_cost = n_all * (c["cpu1"] + flagged * c["cpu2"]) / 3600
    gain = (shipped - res["disagreements"][1]) * c["recall01"]
    print(
        f"{'1-ply filter':<14} {int(n_all * flagged):>7} decisions  (gain of the "
        f"disagreements x recall {c['recall01']:.0%}: {gain:+.2f} mp)  labelling "
        f"{filter_cost:.2f} CPU-h  {gain / filter_cost:+.2f} mp per CPU-h"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
