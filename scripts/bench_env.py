"""Throughput of the Nard environments under random play, encoding included.

Measures plies per second (agent decisions; in self-play every ply is one) for the single
environment (``NardSelfPlay-v0``) and for ``NardVectorEnv`` at N = 1, 64 and 1024, and
the encoded afterstates per second that come with them.  Every step encodes the
observation and all candidate afterstates, exactly what a TD trainer consumes, while the
actions are drawn uniformly from the legal ones (so the figures measure the environment,
not a network).  The last line is ``plies_per_second: X`` for N = 1024 (wall clock).

Each figure is also given per second of this process's CPU time, which is what the
environment costs where other jobs share the cores (the wall-clock rate then drops with
the load while the CPU-time rate does not).

Run: ``python scripts/bench_env.py [--encoding extended] [--seconds 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nard_rl.envs.nard_env import NardEnv
from nard_rl.envs.vector import NardVectorEnv


def bench_single(encoding: str, seconds: float, seed: int) -> tuple[float, float, float]:
    """(plies/s, encoded afterstates/s, plies per CPU second) of one self-play game stepped
    by a random agent."""
    env = NardEnv(opponent="self", encoding=encoding)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    plies = rows = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        n = int(info["action_mask"].sum())
        rows += n
        _, _, terminated, _, info = env.step(int(rng.integers(n)))
        plies += 1
        if terminated:
            _, info = env.reset()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    env.close()
    return plies / elapsed, rows / elapsed, plies / cpu


def bench_vector(
    n: int, encoding: str, seconds: float, seed: int
) -> tuple[float, float, float, int]:
    """(plies/s, encoded afterstates/s, plies per CPU second, games finished) of N random
    self-play games."""
    env = NardVectorEnv(n, opponent="self", encoding=encoding)
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    for _ in range(3):  # warm up (compilation is cached, but first calls allocate)
        counts = np.diff(infos["offsets"])
        _, _, _, _, infos = env.step((rng.random(n) * counts).astype(np.int64))
    steps = rows = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        counts = np.diff(infos["offsets"])
        rows += int(infos["afterstates"].shape[0])
        _, _, terminated, _, infos = env.step((rng.random(n) * counts).astype(np.int64))
        steps += 1
        games += int(terminated.sum())
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    env.close()
    return steps * n / elapsed, rows / elapsed, steps * n / cpu, games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoding", default="tesauro198", choices=("tesauro198", "extended"))
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    # compile / load cached kernels outside the timings
    bench_vector(4, args.encoding, 0.05, args.seed)
    bench_single(args.encoding, 0.05, args.seed)

    plies, rows, per_cpu = bench_single(args.encoding, args.seconds, args.seed)
    print(
        f"single env ({args.encoding}): {plies:,.0f} plies/s, {rows:,.0f} encoded "
        f"afterstates/s ({per_cpu:,.0f} plies per CPU second)"
    )
    last = 0.0
    for n in (1, 64, 1024):
        plies, rows, per_cpu, games = bench_vector(n, args.encoding, args.seconds, args.seed)
        print(
            f"vector env N={n:>4} ({args.encoding}): {plies:,.0f} plies/s, "
            f"{rows:,.0f} encoded afterstates/s ({per_cpu:,.0f} plies per CPU second), "
            f"{games} games finished"
        )
        last = plies
    print(f"plies_per_second: {int(last)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
