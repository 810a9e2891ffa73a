"""Distil the search's pruning net from the default evaluator (``nard_rl.nets.pruning``).

Trains on every legal play of ``--positions`` noisy self-play decisions, checks on another
``--check`` decisions how often the full evaluator's best play is among the pruner's
``keep`` best (and what is lost when it is not), and writes the checkpoint.

    python scripts/train_prune.py                  # the shipped pruner (defaults: 60,000
                                                   # decisions, 64 units on tesauro198)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from nard_rl.nets.evaluator import load_evaluator
from nard_rl.nets.network import save_checkpoint
from nard_rl.nets.pruning import Pruner
from nard_rl.training.supervised.prune_fit import distill_rows, survival, train_pruner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", default="default", help="the evaluator distilled")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--positions", type=int, default=60000, help="training decisions")
    parser.add_argument("--check", type=int, default=3000, help="held-out decisions")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--encoding", default="tesauro198")
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("checkpoints/nard-prune.pt"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    evaluator = load_evaluator(args.net, rules=args.rules)
    start = time.perf_counter()
    afters, probs, _ = distill_rows(evaluator, args.positions, seed=args.seed)
    check = distill_rows(evaluator, args.check, seed=args.seed + 1)
    print(f"{afters.shape[0]:,} training rows in {time.perf_counter() - start:.0f} s")
    net, spec, stats = train_pruner(
        afters,
        probs,
        hidden=args.hidden,
        encoding=args.encoding,
        rules=evaluator.rules.name,
        epochs=args.epochs,
        batch=args.batch,
        lr=args.lr,
        seed=args.seed,
        progress=True,
    )
    print(f"fit: {stats}")
    pruner = Pruner(net, spec)
    figures = {}
    for keep in (2, 3, 4, 6, 8):
        hit, lost = survival(pruner, *check, keep)
        figures[keep] = {"survives": hit, "equity_lost": lost}
        print(
            f"keep {keep}: the full net's best survives {hit:.2%}, mean loss {lost * 1000:.2f} mp"
        )
    save_checkpoint(
        args.out,
        net,
        spec,
        games=0,
        step=stats["rows"],
        config=vars(args) | {"out": str(args.out)},
        extra={"pruner": {"teacher": args.net, "fit": stats, "survival": figures}},
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
