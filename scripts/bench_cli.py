"""Start-up time of the ``nard`` command line: wall time of a whole process, median of N.

A user feels the CLI's start-up on every call, so it is measured as the user sees it: a
fresh interpreter, the command run to its end, its output thrown away.  The CPU seconds
of the process (user + system) are printed beside the wall time: on a shared machine the
wall time grows with the load, the CPU time much less, so it tells a slow start from a
busy machine (the load average is printed too).  Targets on the
2-core development machine: ``nard --help`` under 0.5 s (no command module is imported),
``nard moves --dice 3 1`` under 1 s (the engine and numba's cached kernels, no torch);
``nard hint`` loads torch and the shipped net, so it is listed for comparison only.

    python scripts/bench_cli.py            # median of 5 runs each
    python scripts/bench_cli.py --runs 9
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = (
    (("--help",), 0.5),
    (("moves", "--dice", "3", "1"), 1.0),
    (("hint", "--dice", "3", "1"), None),
)


def wall_time(args: tuple[str, ...]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``python -m nard_rl ARGS`` process, start to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nard_rl", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):  # --help of argparse exits 0; bare `nard` 2
        raise SystemExit(f"nard {' '.join(args)} failed: {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (default 5)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    for command, _ in COMMANDS:  # warm the file cache and numba's kernel cache first
        wall_time(command)
    load = os.getloadavg()[0]
    print(
        f"nard start-up, median of {args.runs} runs (a fresh process each; "
        f"{os.cpu_count()} CPUs, load average {load:.1f})"
    )
    failed = False
    for command, target in COMMANDS:
        runs = [wall_time(command) for _ in range(args.runs)]
        median = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        verdict = ""
        if target is not None:
            ok = median < target
            failed |= not ok
            verdict = f"  target < {target:.1f} s: {'met' if ok else 'MISSED'}"
        print(f"  nard {' '.join(command):<22} {median:6.2f} s wall, {cpu:5.2f} s CPU{verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
