"""The pruned search against the exact one, head to head: what pruning costs in play.

Both players search ``--ply`` deep over the same default evaluator; one ranks each roll's
replies with the shipped pruning net and scores only its best ``--keep`` in full
(``nard_rl.nets.pruning``), the other scores every reply.  Duplicate dice, so the games are the
same until the two first choose differently, and the interval is tight for the games.

    python scripts/bench_prune.py --ply 1 --games 4000 --seed 7
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

from nard_rl.util.progress import progress_bar

BLOCK = 50
"""Pairs a worker plays at a time (``play_pairs`` blocks start on multiples of it)."""


def _block(args: tuple[int, int, int, int, int | None]) -> object:
    ply, seed, pairs_lo, pairs_hi, keep = args
    import torch

    from nard_rl.arena.matches import play_pairs
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.search.nply import Search, SearchPlayer

    torch.set_num_threads(1)
    ev = load_evaluator("default")
    pruned = Search(ev)
    if keep is not None and pruned.pruner is not None:
        pruned.pruner.keep = keep
    a = SearchPlayer(pruned, ply, name=f"pruned:{ply}")
    b = SearchPlayer(Search(ev, pruner=False), ply, name=f"exact:{ply}")
    return play_pairs(a, b, pairs_lo, pairs_hi, seed=seed, batch_pairs=BLOCK)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ply", type=int, default=1)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=int, default=None, help="replies the pruner keeps")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.games < 2 or args.workers < 1 or not 1 <= args.ply <= 3:
        parser.error("need --games >= 2, --workers >= 1 and --ply in 1..3")
    import numpy as np

    from nard_rl.arena.matches import match_result

    pairs = (args.games + 1) // 2
    jobs = [
        (args.ply, args.seed, lo, min(lo + BLOCK, pairs), args.keep)
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
        rules="standard",
        elapsed=time.perf_counter() - start,
    )
    print(result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
