"""Rollouts against an exact answer: small two-sided bear-offs judged by GNU Backgammon.

Makes seeded random no-contact bear-off positions (both sides with all their checkers
on their home points, 1..6 checkers each, so that they lie inside gnubg's two-sided
bear-off database), asks the installed gnubg (``gnubg -t -q -r -p``, its Python
scripting) for each position's exact winning chance of the side on roll, and checks that
it reports the exact two-sided database for every one ("Evaluator: Bearoff2").  gnubg
is the judge only: nothing it answers goes anywhere but into this comparison.

Then rolls every position out with ``nard rollout --jsonl`` (the command itself, one
line per position with its own seed), cubeless and to the end, and prints how many
rollouts agree with gnubg within three of their standard errors, the largest deviation,
and the speed (trials per second of wall time, including the command's start).

    python scripts/bench_rollout.py                       # 100 positions, 1,296 trials
    python scripts/bench_rollout.py --vr on --positions 40
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nard_rl.engine.position import Position

GNUBG = "/usr/games/gnubg"

_GNUBG_SCRIPT = """
import gnubg, json, sys
ids = json.load(open({ids!r}))
gnubg.command("new game")
out = []
for pid in ids:
    gnubg.command("set board " + pid)
    sys.stdout.write("@@POS " + pid + "\\n")
    sys.stdout.flush()
    gnubg.command("eval")
    sys.stdout.flush()
    out.append([pid, gnubg.positionid(), list(gnubg.evaluate())])
json.dump(out, open({out!r}, "w"))
"""


def bearoff_positions(n: int, seed: int, max_checkers: int = 6) -> list[Position]:
    """``n`` distinct random two-sided bear-offs, neither side finished."""
    rng = np.random.default_rng(seed)
    seen: set[tuple[int, ...]] = set()
    out: list[Position] = []
    while len(out) < n:
        b = [0] * 26
        mine, theirs = rng.integers(1, max_checkers + 1, size=2)
        for p in rng.integers(1, 7, size=mine):
            b[int(p)] += 1
        for p in rng.integers(1, 7, size=theirs):
            b[25 - int(p)] -= 1
        if tuple(b) in seen:
            continue
        seen.add(tuple(b))
        out.append(Position(b))
    return out


def gnubg_win_chances(positions: list[Position], gnubg: str = GNUBG) -> list[float]:
    """gnubg's exact winning chance of the side on roll for each position."""
    ids = [p.position_id() for p in positions]
    with tempfile.TemporaryDirectory() as tmp:
        ids_path, out_path = Path(tmp) / "ids.json", Path(tmp) / "out.json"
        ids_path.write_text(json.dumps(ids))
        script = Path(tmp) / "judge.py"
        script.write_text(_GNUBG_SCRIPT.format(ids=str(ids_path), out=str(out_path)))
        proc = subprocess.run(
            [gnubg, "-t", "-q", "-r", "-p", str(script)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if not out_path.exists():
            raise RuntimeError(f"gnubg wrote no answers:\n{proc.stdout[-2000:]}{proc.stderr}")
        answers = json.loads(out_path.read_text())
    # every position must have been judged by the exact two-sided database
    evaluators: dict[str, str] = {}
    current = None
    for line in proc.stdout.splitlines():
        if line.startswith("@@POS "):
            current = line.split()[1]
        elif line.startswith("Evaluator:") and current is not None:
            evaluators[current] = line.split(":", 1)[1].strip()
    wins = []
    for pid, (asked, seen, ev) in zip(ids, answers, strict=True):
        if asked != pid or seen != pid:
            raise RuntimeError(f"gnubg set up {seen} when asked for {pid}")
        if evaluators.get(pid) != "Bearoff2":
            raise RuntimeError(
                f"gnubg judged {pid} with {evaluators.get(pid)!r}, not its exact two-sided "
                "bear-off database (Bearoff2)"
            )
        wins.append(float(ev[0]))
    return wins


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--seed", type=int, default=2026, help="seed of the positions")
    ap.add_argument("--max-checkers", type=int, default=6, help="per side (gnubg's db: 6)")
    ap.add_argument("--vr", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--gnubg", default=GNUBG)
    args = ap.parse_args(argv)
    if shutil.which(args.gnubg) is None:
        print(f"GNU Backgammon not found at {args.gnubg}", file=sys.stderr)
        return 2
    positions = bearoff_positions(args.positions, args.seed, args.max_checkers)
    t0 = time.perf_counter()
    exact = gnubg_win_chances(positions, args.gnubg)
    print(f"gnubg judged {len(exact)} positions (Bearoff2) in {time.perf_counter() - t0:.1f} s")

    vr = {"auto": "auto", "on": True, "off": False}[args.vr]
    lines = "".join(
        json.dumps(
            {
                "board": list(p.board),
                "trials": args.trials,
                "seed": i,
                "truncation": None,
                "variance_reduction": vr,
            }
        )
        + "\n"
        for i, p in enumerate(positions)
    )
    cmd = [sys.executable, "-m", "nard_rl", "rollout", "--jsonl", "--quiet"]
    cmd += ["--workers", str(args.workers)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=lines, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or len(answers) != len(positions):
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"nard rollout failed (exit {proc.returncode}, {len(answers)} answers)")
    bad = [a for a in answers if "error" in a]
    if bad:
        raise SystemExit(f"nard rollout answered errors: {bad[:3]}")
    win = np.array([a["win"] for a in answers])
    se = np.array([a["win_se"] for a in answers])
    truth = np.array(exact)
    diff = win - truth
    agree = np.abs(diff) <= 3.0 * se
    noisy = se > 0  # a rollout with no spread at all (a certain win) has no z
    z = diff[noisy] / se[noisy]
    total = args.trials * len(positions)
    vr_used = sum(bool(a["settings"]["variance_reduction"]) for a in answers)
    print(
        f"nard rollout --jsonl: {len(positions)} bear-offs x {args.trials} trials, cubeless, "
        f"to the end, variance reduction {args.vr} (on in {vr_used})"
    )
    n_agree = int(agree.sum())
    print(f"agree with gnubg's exact two-sided database within 3 SE: {n_agree} / {agree.size}")
    for i in np.flatnonzero(~agree):
        print(
            f"  outside: {answers[i]['position_id']} rollout {win[i]:.5f} +- {se[i]:.5f}, "
            f"gnubg {truth[i]:.5f}"
        )
    print(
        f"mean |diff| {np.abs(diff).mean():.5f}, max |diff| {np.abs(diff).max():.5f}, "
        f"mean SE {se.mean():.5f}; over the {z.size} with SE > 0: mean z {z.mean():+.2f}, "
        f"sd z {z.std():.2f}, max |z| {np.abs(z).max():.2f}"
    )
    print(
        f"speed: {total} trials in {seconds:.1f} s wall ({total / seconds:.0f} trials/s, "
        f"{args.workers} worker(s), command start included)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
