"""Fit several network shapes on the same labelled shards and judge each one.

    python scripts/compare_students.py runs/sup/gen_001/shards \
        --teacher checkpoints/nard-default.pt \
        --students extended:128 extended:256 contact:128 contact:256 --games 10000 --out cmp

Every student starts from the teacher grown to its shape (``nard_rl.supervised.fit.grow_net``)
and sees the same rows and the same held-out decisions, so their held-out losses compare
directly; each then plays the teacher in a duplicate-dice match (the pipeline's gate).
Prints one line per student and writes ``OUT/<student>.pt`` and ``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

import torch

from nard_rl.encoding import get_encoding
from nard_rl.network import NetSpec, load_network, save_checkpoint
from nard_rl.supervised.fit import FitConfig, fit, grow_net, load_rows
from nard_rl.supervised.gate import GateConfig, gate


def _student(text: str, teacher: NetSpec) -> NetSpec:
    enc_name, _, widths = text.partition(":")
    enc = get_encoding(enc_name)
    hidden = tuple(int(w) for w in widths.split("x")) if widths else teacher.hidden
    return NetSpec(enc.name, enc.version, enc.size, hidden, teacher.activation, teacher.rules)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shards", nargs="+", type=Path, help="folders of label shards")
    ap.add_argument("--teacher", type=Path, required=True)
    ap.add_argument(
        "--students",
        nargs="+",
        required=True,
        help="ENCODING:WIDTHS, e.g. contact:256 or extended:128x64",
    )
    ap.add_argument("--games", type=int, default=10_000, help="games of each gate match")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--max-epochs", type=int, default=30)
    ap.add_argument("--scratch", action="store_true", help="random init instead of the teacher")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    rows = load_rows(args.shards)
    teacher, tspec, tckpt = load_network(args.teacher)
    init = "scratch" if args.scratch else "previous"
    cfg = FitConfig(lr=args.lr, max_epochs=args.max_epochs, init=init)
    for text in args.students:
        key = text + (":scratch" if args.scratch else "")
        if key in results:  # resumable: a finished student is not refitted
            print(key, results[key])
            continue
        spec = _student(text, tspec)
        if args.scratch:
            torch.manual_seed(0)
            net = spec.build()
        else:
            net = grow_net(teacher, tspec, spec)
        net, res = fit(net, spec, rows, cfg, seed=0)
        path = args.out / f"{key.replace(':', '_')}.pt"
        save_checkpoint(
            path,
            net,
            spec,
            games=int(tckpt["games"]),
            step=res.steps,
            config={"student": text, "fit": asdict(cfg)},
            extra={"fit": res.to_dict()},
        )
        verdict = gate(path, args.teacher, GateConfig(games=args.games))
        results[key] = {
            "heldout_loss": res.best_heldout_loss,
            "initial_heldout_loss": res.initial_heldout_loss,
            "equity_rmse": res.heldout_equity_rmse,
            "epochs": res.epochs,
            "fit_seconds": res.seconds,
            "ppg_vs_teacher": verdict["ppg"],
            "ci95": verdict["ci95"],
            "games": verdict["games"],
        }
        print(key, results[key], flush=True)
        results_path.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
