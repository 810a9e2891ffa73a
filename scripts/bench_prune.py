"""The pruned search against the exact one: what pruning costs in play and in checker error.

Both players search ``--ply`` deep over the same default evaluator; one ranks each roll's
replies with the pruning net (the shipped one, or ``--pruner``) and scores only its best
``--keep`` in full (``nard_rl.nets.pruning``), the other scores every reply.

* Games (the default): duplicate dice, so the games are the same until the two first
  choose differently, and the interval is tight for the games.
* ``--checker N``: the checker error of both on the first N decisions of ``--data`` (our
  own gnubg-judged validation set by default), the bound the project sets itself being
  +0.1 mp for the pruned search.

    python scripts/bench_prune.py --ply 1 --games 4000 --seed 7
    python scripts/bench_prune.py --ply 2 --checker 300 --kind contact
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from pathlib import Path

from nard_rl.util.progress import progress_bar

VALIDATION = Path(__file__).resolve().parent.parent / "validation" / "checker_gnubg_own.jsonl.gz"
BLOCK = 50
"""Pairs a worker plays at a time (``play_pairs`` blocks start on multiples of it)."""


def _players(
    ply: int, keep: int | None, pruner: str | None, rules: str = "standard"
) -> tuple[object, object]:
    """``(pruned, exact)`` search players over the default evaluator."""
    import torch

    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.nets.pruning import load_pruner
    from nard_rl.search.nply import Search, SearchPlayer

    torch.set_num_threads(1)
    ev = load_evaluator("default", rules=rules)
    pruned = Search(ev, pruner=load_pruner(pruner) if pruner else None)
    if pruned.pruner is None:
        raise SystemExit("no pruning net: the default evaluator has none and --pruner is unset")
    if keep is not None:
        pruned.pruner.keep = keep
    a = SearchPlayer(pruned, ply, name=f"pruned:{ply}")
    b = SearchPlayer(Search(ev, pruner=False), ply, name=f"exact:{ply}")
    return a, b


def _block(args: tuple[int, int, int, int, int | None, str | None, str]) -> object:
    ply, seed, pairs_lo, pairs_hi, keep, pruner, rules = args
    from nard_rl.arena.matches import play_pairs

    a, b = _players(ply, keep, pruner, rules)
    return play_pairs(a, b, pairs_lo, pairs_hi, seed=seed, batch_pairs=BLOCK)


def _checker(args: argparse.Namespace) -> int:
    import numpy as np
    from bench_checker import load_decisions, play_errors, summary

    records = [
        r for r in load_decisions(args.data) if args.kind == "all" or r.get("kind") == args.kind
    ][: args.checker]
    a, b = _players(args.ply, args.keep, args.pruner)
    print(f"{len(records)} {args.kind} decisions of {args.data.name}, {args.ply}-ply; mp lost")
    errs = {}
    for player in (a, b):
        errs[player.name], sec = play_errors(player, records, progress=True)
        print(f"{player.name:<10} {summary(errs[player.name])}  {1.0 / sec:.1f} decisions/s")
    diff = 1000.0 * (errs[a.name] - errs[b.name])
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0
    print(f"pruned - exact: {diff.mean():+.3f} mp (+- {1.96 * se:.3f}, 95%), paired")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ply", type=int, default=1)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=int, default=None, help="replies the pruner keeps")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pruner", default=None, help="pruning net (.pt); default: shipped")
    parser.add_argument("--checker", type=int, default=0, help="checker error on N decisions")
    parser.add_argument("--data", type=Path, default=VALIDATION, help="labelled decisions")
    parser.add_argument("--kind", default="all", choices=["all", "contact", "race", "bearoff"])
    parser.add_argument(
        "--rules", default="standard", help="rule set of the games: standard or mars"
    )
    args = parser.parse_args(argv)
    if args.checker > 0:
        if args.rules != "standard":
            parser.error("--checker reads standard-rules decisions; leave --rules out")
        return _checker(args)
    if args.games < 2 or args.workers < 1 or not 1 <= args.ply <= 3:
        parser.error("need --games >= 2, --workers >= 1 and --ply in 1..3")
    import numpy as np

    from nard_rl.arena.matches import match_result

    pairs = (args.games + 1) // 2
    jobs = [
        (args.ply, args.seed, lo, min(lo + BLOCK, pairs), args.keep, args.pruner, args.rules)
        for lo in range(0, pairs, BLOCK)
    ]
    points: list[np.ndarray] = []
    bar = progress_bar(len(jobs), unit="chunk", desc="pruned vs exact")
    ctx = mp.get_context("fork")
    start = time.perf_counter()
    with ctx.Pool(args.workers) as pool:
        for part in pool.imap(_block, jobs):
            points.append(part)
            bar.update(1)
    bar.close()
    result = match_result(
        np.concatenate(points, axis=1),
        name_a=f"pruned:{args.ply}",
        name_b=f"exact:{args.ply}",
        seed=args.seed,
        rules=args.rules,
        elapsed=time.perf_counter() - start,
    )
    print(result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
