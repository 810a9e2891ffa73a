"""Benchmark the input encodings: rows encoded per second, one thread.

The rows are what self-play training encodes: every legal afterstate (``on_roll=False``)
of positions met in seeded, uniformly random games (many games at once from the start
position, R4; a finished game restarts; a roll without a play passes, R16).  The mix is
built with the batch move generator, so it has bar, bear-off and race positions in the
proportions random play meets them.

Each timed run encodes every row with one ``Encoding.encode`` call per chunk of
``--chunk`` rows (a self-play ply encodes a few tens of thousands).  Four runs (two per
encoding: a fresh output array per call, the default ``encode``, and one buffer reused
through ``out=``) take turns for ``--repeat`` rounds after a warm-up round that loads or
compiles the kernels, and each figure is the best of its runs; taking turns means a
spell of load from other processes slows all four alike.  Wall clock and this process's
CPU time are both given (load on shared cores lowers the first more than the second).
The last line is ``rows_per_second_extended: X`` (fresh arrays, wall clock), for scripts
to read.

    python scripts/bench_encoding.py                  # 300,000 rows, best of 7
    python scripts/bench_encoding.py --count 1000000 --repeat 9
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # before numba is imported: one core, comparable figures

import argparse
import time
from collections.abc import Callable

import numpy as np

from nard_rl.engine.classify import race_flags
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, flip_boards
from nard_rl.nets.encoding import ENCODINGS, Encoding


def afterstate_mix(count: int, seed: int, games: int = 512, burn_in: int = 200) -> np.ndarray:
    """``count`` afterstates: all legal plays of the positions met in random games.

    The games first play ``burn_in`` plies unrecorded (restarting as they finish), so the
    recorded plies come from every stage of a game, not just the openings.
    """
    rng = np.random.default_rng(seed)
    start = np.array(START_BOARD, dtype=np.int8)
    boards = np.tile(start, (games, 1))
    chunks: list[np.ndarray] = []
    total = 0
    ply = 0
    while total < count:
        dice = rng.integers(1, 7, size=(games, 2), dtype=np.int8)
        afters, offsets = legal_afterstates_batch(boards, dice, False)
        if ply >= burn_in:
            chunks.append(afters)
            total += afters.shape[0]
        ply += 1
        n = np.diff(offsets)
        moved = n > 0
        pick = offsets[:-1] + (rng.random(games) * n).astype(np.int64)
        nxt = boards.copy()
        nxt[moved] = afters[pick[moved]]
        finished = nxt[:, 1:26].clip(0).sum(axis=1) == 0  # the mover bore off its last
        boards = flip_boards(nxt)
        boards[finished] = start
    return np.ascontiguousarray(np.concatenate(chunks)[:count])


def runners(enc: Encoding, rows: np.ndarray, chunk: int) -> dict[str, Callable[[], None]]:
    """One pass over the rows with fresh outputs, and one writing into a reused buffer."""
    starts = range(0, rows.shape[0], chunk)
    buf = np.empty((chunk, enc.size), dtype=np.float32)

    def fresh() -> None:
        for s in starts:
            enc.encode(rows[s : s + chunk], False)

    def reused() -> None:
        for s in starts:
            part = rows[s : s + chunk]
            enc.encode(part, False, out=buf[: part.shape[0]])

    return {"fresh": fresh, "out": reused}


def best_times(runs: dict[str, Callable[[], None]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall-clock and best CPU seconds of each run over ``repeat`` rounds, after a
    warm-up round.  The runs take turns within a round, so a spell of load from other
    processes slows all of them alike instead of one."""
    for run in runs.values():
        run()
    best = {name: (float("inf"), float("inf")) for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            w, c = time.perf_counter(), time.process_time()
            run()
            w, c = time.perf_counter() - w, time.process_time() - c
            best[name] = (min(best[name][0], w), min(best[name][1], c))
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300_000, help="rows in the mix")
    parser.add_argument("--seed", type=int, default=1, help="seed of the mix")
    parser.add_argument("--chunk", type=int, default=32_768, help="rows per encode call")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs; the best is kept")
    args = parser.parse_args(argv)

    rows = afterstate_mix(args.count, args.seed)
    bar = np.mean((rows[:, 25] > 0) | (rows[:, 0] < 0))
    home = np.mean(rows[:, 7:26].clip(0).sum(axis=1) == 0)
    print(
        f"rows: {rows.shape[0]} afterstates of random play (seed {args.seed}); "
        f"bar {bar:.1%}, mover all home {home:.1%}, race {np.mean(race_flags(rows)):.1%}; "
        f"chunks of {args.chunk}, best of {args.repeat}"
    )
    runs = {
        (name, kind): run
        for name in sorted(ENCODINGS)
        for kind, run in runners(ENCODINGS[name], rows, args.chunk).items()
    }
    best = best_times(runs, args.repeat)
    n = rows.shape[0]
    for name in sorted(ENCODINGS):
        (wall, cpu), (wall_out, cpu_out) = best[name, "fresh"], best[name, "out"]
        print(
            f"{name:>10}: {n / wall:,.0f} rows/s ({n / cpu:,.0f} per CPU second); "
            f"out= buffer: {n / wall_out:,.0f} rows/s ({n / cpu_out:,.0f} per CPU second)"
        )
    print(f"rows_per_second_extended: {int(n / best['extended', 'fresh'][0])}")


if __name__ == "__main__":
    main()
