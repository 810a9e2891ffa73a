"""Checker-play error of any player on decisions labelled by GNU Backgammon 2-ply.

Reads ``tests/data/checker_gnubg_public.jsonl.gz`` (1,000 decisions from realistic play,
every legal play labelled by gnubg 1.07: 0-ply for all, 2-ply for the plays a move
filter kept) and asks each player (any ``make_player`` spec: ``default``,
``default:1``, ``runs/x/last.pt:2``, ``pubeval``, ``gnubg:0``, ...) for its play,
all decisions in a few batched ``choose_batch`` calls.  The error of a choice is the
label file's ``err`` (``best_equity - eq2(choice)``, or ``best_eq0 - eq0(choice)`` for a
play without a 2-ply label); figures are the mean in millipoints (equity x 1000) per
decision, overall and split by the decision's kind (``contact``, ``race``,
``bearoff``), with a standard error, and the seconds per decision.  With several
players, each after the first is also compared with the first on the same decisions
(the paired difference and its standard error, far tighter than the two figures' own).

Reference figures on the same file: gnubg 0-ply 2.2 (contact 3.0, race 0.4, bear-off
0.1), pubeval 31.9, uniformly random plays 233.

    python scripts/bench_checker.py --player default --player default:1
    python scripts/bench_checker.py --player gnubg:0 --limit 200
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.engine.classify import crashed_flags
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.players import Player, make_player
from nard_rl.util.progress import progress_bar

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "checker_gnubg_public.jsonl.gz"
KINDS = ("contact", "race", "bearoff")


def load_decisions(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The labelled decisions (all of them, or the first ``limit``)."""
    with gzip.open(path, "rt") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    if not records:
        raise ValueError(f"{path} holds no decisions")
    return records[:limit] if limit else records


def play_errors(
    spec: str | Player,
    records: list[dict[str, Any]],
    *,
    chunk: int = 100,
    progress: bool = False,
) -> tuple[np.ndarray, float]:
    """Error (equity) of the player's choice in each decision, and seconds per decision
    (``spec``: a player spec, or a player built by the caller, closed here too).

    Our own move generator lists the plays the player chooses from; a chosen afterstate
    that the label file does not list means the two engines disagree, which raises.
    """
    boards = np.array([r["board"] for r in records], dtype=np.int8)
    dice = np.array([r["dice"] for r in records], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice)
    errors = np.zeros(len(records))
    seconds = 0.0
    player = make_player(spec) if isinstance(spec, str) else spec
    try:
        bar = progress_bar(len(records), unit="pos", desc=player.name, disable=not progress)
        for lo in range(0, len(records), chunk):
            hi = min(lo + chunk, len(records))
            a, b = int(offsets[lo]), int(offsets[hi])
            start = time.perf_counter()
            picks = player.choose_batch(
                boards[lo:hi], dice[lo:hi], afters[a:b], offsets[lo : hi + 1] - a
            )
            seconds += time.perf_counter() - start
            for i, pick in zip(range(lo, hi), picks, strict=True):
                if pick < 0:
                    continue  # no legal play: nothing to choose, nothing lost
                chosen = afters[int(offsets[i]) + int(pick)].tolist()
                err = next(
                    (c["err"] for c in records[i]["candidates"] if c["board"] == chosen), None
                )
                if err is None:
                    raise RuntimeError(
                        f"decision {records[i]['id']}: play {chosen} is not among the labelled ones"
                    )
                errors[i] = err
            bar.update(hi - lo)
        bar.close()
    finally:
        player.close()
    return errors, seconds / len(records)


def summary(errors: np.ndarray) -> str:
    """Mean millipoints lost with its standard error, and the count."""
    if errors.size == 0:
        return "      -          "
    mean = 1000.0 * errors.mean()
    se = 1000.0 * errors.std(ddof=1) / math.sqrt(errors.size) if errors.size > 1 else 0.0
    return f"{mean:6.2f} +- {se:4.2f} ({errors.size})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--player", action="append", help="player spec (repeatable)")
    parser.add_argument("--data", type=Path, default=DATA, help="labelled decisions (.jsonl.gz)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N decisions")
    parser.add_argument("--chunk", type=int, default=100, help="decisions per choose_batch call")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    if args.chunk < 1:
        parser.error("--chunk must be >= 1")
    specs = args.player or ["default"]
    import torch

    torch.set_num_threads(max(1, args.threads))
    records = load_decisions(args.data, args.limit)
    kinds = np.array([r["kind"] for r in records])
    crashed = crashed_flags(np.array([r["board"] for r in records], dtype=np.int8))
    print(f"{len(records)} decisions from {args.data.name}; mean millipoints lost per decision")
    print(
        f"{'player':<24} {'all':<21} "
        + " ".join(f"{k:<21}" for k in KINDS)
        + f" {'crashed (of contact)':<21} s/decision"
    )
    first: np.ndarray | None = None
    for spec in specs:
        errors, per = play_errors(spec, records, chunk=args.chunk, progress=sys.stderr.isatty())
        if first is None:
            first = errors
        cells = " ".join(f"{summary(errors[kinds == k]):<21}" for k in KINDS)
        cells += f" {summary(errors[crashed]):<21}"
        print(f"{spec:<24} {summary(errors):<21} {cells} {per:.4f}", flush=True)
        if errors is not first:
            print(f"{'  minus ' + specs[0]:<24} {summary(errors - first)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
