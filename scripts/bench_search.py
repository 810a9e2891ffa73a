"""Decisions per second of the lookahead search at 0, 1 and 2 ply, next to GNU Backgammon's
at the same plies, on the same positions, in the same run.

The positions are the decisions of ``tests/data/checker_gnubg_public.jsonl.gz`` (games
of gnubg against itself: realistic contact, race and bear-off play) that leave a real
choice (at least two legal plays, none of them bearing off the last checker, which both
engines play without evaluating).  For each ply both engines choose a play for the same
positions:

* ``nard``: ``nard_rl.search.nply.SearchPlayer`` over ``load_evaluator(--net)`` with the
  default move filter, one torch thread, the cache emptied before each timed run (so
  only what one run finds again is reused);
* ``gnubg``: ``GnubgPlayer`` at the same ply (gnubg's own numbering is the same: 0-ply is
  the static evaluation, 1-ply averages the 21 replies), one evaluation thread, the
  g_usleep shim preloaded; gnubg uses its own default move filters.

Each engine is timed in two modes: ``batch`` (all positions in one ``choose_batch``
call, as evaluation matches use it) and ``single`` (one decision per call, as
``nard agent`` serves it).  The figures are decisions per second, by wall clock and by
the CPU time of the process that did the work (this process for nard, the gnubg process
for gnubg, read from /proc), since other load on shared cores slows the wall clock of
whichever engine runs at that moment.  ``ratio`` is nard's rate over gnubg's (above 1:
nard is faster).  2-ply runs on the first ``--deep`` positions only (it is ~20 times
slower than 1-ply for both engines).

    python scripts/bench_search.py                      # 200 positions, 40 at 2-ply
    python scripts/bench_search.py --no-prune           # the exact search (every reply)
    python scripts/bench_search.py --positions 400 --deep 100 --plies 0 1 2
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba loads: comparable figures

import argparse
import gzip
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from nard_rl.engine.batch import outcomes
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD
from nard_rl.players.base import Player

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "checker_gnubg_public.jsonl.gz"


def load_positions(path: Path, count: int, kind: str = "all") -> tuple[np.ndarray, np.ndarray]:
    """The first ``count`` decisions of the file (of ``kind``) that leave a real choice."""
    boards: list[list[int]] = []
    dice: list[list[int]] = []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            rec = json.loads(line)
            if kind != "all" and rec.get("kind") != kind:
                continue
            b = np.array([rec["board"]], dtype=np.int8)
            afters, _ = legal_afterstates_batch(b, np.array([rec["dice"]], dtype=np.int8))
            if afters.shape[0] < 2 or outcomes(afters)[0].any():
                continue
            boards.append(rec["board"])
            dice.append(rec["dice"])
            if len(boards) == count:
                break
    if not boards:
        raise ValueError(f"{path} has no decision with a real choice")
    return np.array(boards, dtype=np.int8), np.array(dice, dtype=np.int8)


def proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), None where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(
    player: Player,
    boards: np.ndarray,
    dice: np.ndarray,
    single: bool,
    cpu: Callable[[], float | None],
) -> tuple[float, float | None, np.ndarray]:
    """(wall seconds, CPU seconds, picks) of choosing a play for every position."""
    afters, offsets = legal_afterstates_batch(boards, dice)
    c0, t0 = cpu(), time.perf_counter()
    if single:
        picks = np.array(
            [
                player.choose(boards[i], dice[i], afters[offsets[i] : offsets[i + 1]])
                for i in range(boards.shape[0])
            ]
        )
    else:
        picks = player.choose_batch(boards, dice, afters, offsets)
    wall = time.perf_counter() - t0
    c1 = cpu()
    return wall, (c1 - c0 if c0 is not None and c1 is not None else None), picks


def rate(n: int, seconds: float | None) -> float | None:
    return n / seconds if seconds else None


def fmt(x: float | None) -> str:
    return f"{x:10.1f}" if x is not None else f"{'-':>10}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:7.2f}" if a and b else f"{'-':>7}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", default="default", help="evaluator spec (default or a .pt)")
    parser.add_argument("--positions", type=int, default=200, help="positions at 0 and 1 ply")
    parser.add_argument("--deep", type=int, default=40, help="positions at 2 ply and deeper")
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2], help="plies to time")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-gnubg", action="store_true", help="time nard only")
    parser.add_argument(
        "--kind",
        default="contact",
        choices=("all", "contact", "race", "bearoff"),
        help="decisions of this kind only (default contact, where search costs most)",
    )
    parser.add_argument(
        "--no-prune", action="store_true", help="score every reply in full (the exact search)"
    )
    parser.add_argument("--keep", type=int, default=None, help="pruner: replies kept per roll")
    parser.add_argument("--pruner", type=Path, default=None, help="pruning net (a .pt) to use")
    parser.add_argument(
        "--prune-margin",
        type=float,
        default=None,
        help="pruner margin inside 1-ply choices (default: the search's; inf: none)",
    )
    args = parser.parse_args(argv)
    if args.positions < 1 or args.deep < 1:
        parser.error("--positions and --deep must be >= 1")
    if any(not 0 <= p <= 3 for p in args.plies):
        parser.error("--plies must be in 0..3")

    import torch

    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.nets.pruning import load_pruner
    from nard_rl.players.gnubg_player import GnubgPlayer, gnubg_available
    from nard_rl.search.nply import Search, SearchPlayer

    torch.set_num_threads(1)
    boards, dice = load_positions(args.data, max(args.positions, args.deep), args.kind)
    pruner = load_pruner(args.pruner) if args.pruner is not None else None
    margin = {} if args.prune_margin is None else {"prune_margin": args.prune_margin}
    search = Search(load_evaluator(args.net), pruner=False if args.no_prune else pruner, **margin)
    if args.keep is not None and search.pruner is not None:
        search.pruner.keep = args.keep
    use_gnubg = not args.no_gnubg and gnubg_available()
    how = "exact"
    if search.pruner is not None:
        how = f"pruned, keep {search.pruner.keep}, margin {search.prune_margin:g} at 1-ply"
    print(
        f"{boards.shape[0]} {args.kind} positions with a real choice from {args.data.name} "
        f"(search {how}) "
        f"({min(args.deep, boards.shape[0])} at ply >= 2); decisions per second, "
        f"wall clock / CPU time; ratio = nard / gnubg"
    )
    print(
        f"{'ply':>3} {'mode':<6} {'n':>4} | {'nard wall':>10} {'nard cpu':>10} | "
        f"{'gnubg wall':>10} {'gnubg cpu':>10} | {'ratio w':>7} {'ratio c':>7} | same play"
    )
    nard = SearchPlayer(search, 0)
    # warm-up: numba kernels and torch, so no timed run pays for compiling or loading
    # them; every position once at 0-ply reaches each part (contact, race, bear-off)
    nard.choose_batch(boards, dice, *legal_afterstates_batch(boards, dice))
    warm_b = np.array([START_BOARD], dtype=np.int8)
    warm_d = np.array([[2, 1]], dtype=np.int8)
    for ply in args.plies:
        n = min(args.deep, boards.shape[0]) if ply >= 2 else min(args.positions, boards.shape[0])
        b, d = boards[:n], dice[:n]
        nard.ply = ply
        for mode in ("batch", "single"):
            search.clear_cache()
            wall, cpu, ours = timed(nard, b, d, mode == "single", time.process_time)
            nw, nc = rate(n, wall), rate(n, cpu)
            gw = gc = None
            agree = "-"
            if use_gnubg:
                # a fresh process per run: gnubg's evaluation cache must not carry over
                with GnubgPlayer(ply) as gnubg:
                    gnubg.choose_batch(warm_b, warm_d, *legal_afterstates_batch(warm_b, warm_d))
                    pid = gnubg._proc.pid if gnubg._proc is not None else -1
                    g_wall, g_cpu, theirs = timed(
                        gnubg, b, d, mode == "single", partial(proc_cpu_seconds, pid)
                    )
                gw, gc = rate(n, g_wall), rate(n, g_cpu)
                agree = f"{np.mean(ours == theirs):.0%}"
            print(
                f"{ply:>3} {mode:<6} {n:>4} | {fmt(nw)} {fmt(nc)} | {fmt(gw)} {fmt(gc)} | "
                f"{ratio(nw, gw)} {ratio(nc, gc)} | {agree}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
