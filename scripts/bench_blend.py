"""Checker error of n-ply choices with the ply below blended in, per weight.

``nard_rl.search.nply.Search`` ranks a candidate that reached ply n by ``(1 - w) *
n-ply + w * (n-1)-ply`` (``Search.blend``).  This bench measures the error of the
choice for a list of weights at one level, every other level held at the given blend,
on gnubg-judged decisions (by default our own validation set; the public file is a test
looked at last), paired against plain n-ply (``w = 0``) on the same decisions.  One
search and one cache serve every weight (the cache holds plain n-ply values), so each
weight after the first costs little more than the levels it changes.

    python scripts/bench_blend.py --ply 1 --weights 0,0.2,0.3,0.4,0.5
    python scripts/bench_blend.py --ply 2 --blend 0.4 --weights 0,0.1,0.2,0.3
    python scripts/bench_blend.py --ply 1 --skip 4000 --limit 8000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_checker import load_decisions, play_errors

from nard_rl.nets.evaluator import load_evaluator
from nard_rl.search.nply import Search, SearchPlayer

OWN = Path(__file__).resolve().parent.parent / "validation" / "checker_gnubg_own.jsonl.gz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=OWN, help="labelled decisions (.jsonl.gz)")
    parser.add_argument("--net", default="default", help="evaluator spec (default: default)")
    parser.add_argument("--ply", type=int, default=1, choices=(1, 2, 3), help="search depth")
    parser.add_argument(
        "--weights", default="0,0.2,0.3,0.4,0.5", help="comma-separated weights at --ply"
    )
    parser.add_argument(
        "--blend",
        default="",
        help="comma-separated weights of the levels above --ply (default: none blended)",
    )
    parser.add_argument("--skip", type=int, default=0, help="skip the first N decisions")
    parser.add_argument("--limit", type=int, default=None, help="then take N decisions")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args(argv)
    try:
        weights = [float(w) for w in args.weights.split(",") if w.strip()]
        above = [float(w) for w in args.blend.split(",") if w.strip()]
    except ValueError as exc:
        parser.error(f"weights must be numbers: {exc}")
    if not weights:
        parser.error("--weights needs at least one weight")
    if len(above) != args.ply - 1:
        parser.error(f"--blend needs {args.ply - 1} weight(s) for the levels above --ply")
    if args.skip < 0 or (args.limit is not None and args.limit < 1):
        parser.error("--skip must be >= 0 and --limit >= 1")
    import torch

    torch.set_num_threads(max(1, args.threads))
    records = load_decisions(args.data)[args.skip :]
    records = records[: args.limit] if args.limit else records
    if not records:
        parser.error("no decisions left after --skip")
    # a cache big enough for every node of the tree, so later weights reuse the values
    search = Search(load_evaluator(args.net), cache_size=4_000_000)
    print(
        f"{len(records)} decisions of {args.data.name} (from {args.skip}); {args.net} at "
        f"{args.ply}-ply, levels above blended {tuple(above)}; mean millipoints lost"
    )
    base: np.ndarray | None = None
    for w in [0.0, *[w for w in weights if w != 0.0]]:
        search.blend = (*above, w)
        start = time.perf_counter()
        errors, _ = play_errors(SearchPlayer(search, args.ply), records)
        seconds = time.perf_counter() - start
        base = errors if base is None else base
        d = errors - base
        se = d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else 0.0
        print(
            f"  w = {w:4.2f}: {1000 * errors.mean():6.3f} mp   paired against w = 0: "
            f"{1000 * d.mean():+6.3f} +- {1000 * se:5.3f}   ({seconds:6.1f} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
