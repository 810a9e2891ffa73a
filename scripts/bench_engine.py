"""Benchmark the compiled move generator: legal plays of many positions, one thread.

Without ``--positions`` the positions are a seeded mix from random play: many games at
once from the start position (R4), each side choosing uniformly among its legal plays,
a finished game restarting from the start; the mix is built with the batch API itself.
With ``--positions FILE`` they are read from JSON lines with ``board``, ``dice`` and an
optional ``rules`` (``standard``/``mars``; default ``--rules``).

Each timed run generates every position's plays with one ``legal_afterstates_batch``
call per rule set; the figure is the best of ``--repeat`` runs after one warm-up run
(which also loads or compiles the kernels).  The last line is
``positions_per_second: X``, for scripts to read.

    python scripts/bench_engine.py                     # 300,000 random-play positions
    python scripts/bench_engine.py --count 1000000 --repeat 5 --rules mars
    python scripts/bench_engine.py --positions my_positions.jsonl
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # before numba is imported: one core, comparable figures

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, flip_boards
from nard_rl.engine.rules import get_rules

PROGRESS_EVERY_S = 2.0


def random_play_mix(
    count: int, seed: int, mars: bool, games: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (board, roll) pairs met in uniformly random games, ``games`` at a time."""
    rng = np.random.default_rng(seed)
    start = np.array(START_BOARD, dtype=np.int8)
    boards = np.tile(start, (games, 1))
    out_boards = np.empty((count, 26), dtype=np.int8)
    out_dice = np.empty((count, 2), dtype=np.int8)
    filled = 0
    t0 = last = time.perf_counter()
    while filled < count:
        dice = rng.integers(1, 7, size=(games, 2), dtype=np.int8)
        take = min(games, count - filled)
        out_boards[filled : filled + take] = boards[:take]
        out_dice[filled : filled + take] = dice[:take]
        filled += take
        afters, offsets = legal_afterstates_batch(boards, dice, mars)
        n = np.diff(offsets)
        moved = n > 0  # R16: no play, the board is handed over unchanged
        pick = offsets[:-1] + (rng.random(games) * n).astype(np.int64)
        nxt = boards.copy()
        nxt[moved] = afters[pick[moved]]
        finished = nxt[:, 1:26].clip(0).sum(axis=1) == 0  # the mover bore off its last
        boards = flip_boards(nxt)
        boards[finished] = start
        now = time.perf_counter()
        if now - last > PROGRESS_EVERY_S:
            last = now
            print(f"  building the mix: {filled:,}/{count:,} positions", file=sys.stderr)
    if time.perf_counter() - t0 > PROGRESS_EVERY_S:
        print(f"  built the mix in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out_boards, out_dice


def read_positions(path: Path, default_mars: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    boards, dice, mars = [], [], []
    with open(path) as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if len(rec["board"]) != 26 or len(rec["dice"]) != 2:
                raise SystemExit(f"{path}:{i}: need a 26-int board and two dice")
            boards.append(rec["board"])
            dice.append(rec["dice"])
            mars.append(get_rules(rec["rules"]).waste_rule if "rules" in rec else default_mars)
    return (
        np.array(boards, dtype=np.int8),
        np.array(dice, dtype=np.int8),
        np.array(mars, dtype=bool),
    )


def run_once(groups: list[tuple[np.ndarray, np.ndarray, bool]]) -> tuple[float, list[np.ndarray]]:
    """Seconds for one pass over all positions, and each group's offsets."""
    offsets = []
    t0 = time.perf_counter()
    for boards, dice, mars in groups:
        offsets.append(legal_afterstates_batch(boards, dice, mars)[1])
    return time.perf_counter() - t0, offsets


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=Path, help="JSON lines: board, dice[, rules]")
    parser.add_argument("--count", type=int, default=300_000, help="size of the built-in mix")
    parser.add_argument("--seed", type=int, default=1, help="seed of the built-in mix")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--rules", default="standard", help="standard or mars")
    args = parser.parse_args(argv)
    default_mars = get_rules(args.rules).waste_rule

    if args.positions:
        boards, dice, mars = read_positions(args.positions, default_mars)
        source = str(args.positions)
    else:
        boards, dice = random_play_mix(args.count, args.seed, default_mars)
        mars = np.full(len(boards), default_mars)
        source = f"random play, seed {args.seed}"
    groups = [(boards[mars == m], dice[mars == m], bool(m)) for m in (False, True)]
    groups = [g for g in groups if len(g[0])]
    n = len(boards)
    if n == 0:
        raise SystemExit("no positions")

    run_once(groups)  # warm-up: loads (or compiles) the kernels, touches the allocator
    times = []
    for _ in range(max(1, args.repeat)):
        seconds, offsets = run_once(groups)
        times.append(seconds)
    best = min(times)
    plays = np.concatenate([np.diff(o) for o in offsets])
    total = int(plays.sum())

    order = np.concatenate([np.flatnonzero(mars == g[2]) for g in groups])
    b, d = boards[order], dice[order]
    movers = b[:, 1:26].clip(0)
    bearoff = (b[:, 25] == 0) & (movers[:, 6:24].sum(axis=1) == 0) & (movers.sum(axis=1) > 0)
    rule_names = "+".join(("mars" if g[2] else "standard") for g in groups)
    print(f"positions: {n} ({source}; rules {rule_names})")
    print(
        f"mix: doubles {np.mean(d[:, 0] == d[:, 1]):.1%}, bar {np.mean(b[:, 25] > 0):.1%}, "
        f"bear-off {np.mean(bearoff):.1%}, no-move {np.mean(plays == 0):.1%}"
    )
    print(f"afterstates per position: {total / n:.2f} (total {total})")
    print(f"runs (s): {' '.join(f'{t:.3f}' for t in times)}; best {best:.3f} s")
    print(f"afterstates per second: {int(total / best)}")
    print(f"positions_per_second: {int(n / best)}")


if __name__ == "__main__":
    main()
