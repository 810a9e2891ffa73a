"""Which net shape learns a teacher best: students distilled from the same rows, compared.

Every student starts from scratch and fits the same contact rows, labelled by the
teacher's 0-ply net (cheap, so many rows), with the same number of passes.  What differs
is the shape: hidden layers, the head (five chained sigmoids or a softmax over the six
outcome classes) and the loss (MSE on the five probabilities or the classes'
cross-entropy).  The printed figures compare across losses: the equity RMSE against the
teacher on held-out rows (whole decisions held out) and the checker error at 0-ply of
each student, paired with the shipped race net, on the project's validation set (judged
by GNU Backgammon 2-ply; the teacher's own line is the ceiling a student tries to reach).

    python scripts/bench_students.py --rows 1000000 --epochs 6 \
        --student 512:sigmoid5:mse --student 512:softmax6:ce --student 256,256:sigmoid5:mse

A student is ``HIDDEN:HEAD:LOSS`` with HIDDEN a comma-separated list of widths.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import load_evaluator
from nard_rl.nets.network import HEADS, NetSpec, save_checkpoint
from nard_rl.training.supervised.fit import LOSSES, FitConfig, fit
from nard_rl.training.supervised.label import LabelConfig, anchor_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_checker import load_decisions, play_errors, summary

VALIDATION = Path(__file__).resolve().parents[1] / "validation" / "checker_gnubg_own.jsonl.gz"


def parse_student(text: str) -> tuple[tuple[int, ...], str, str]:
    """``HIDDEN:HEAD:LOSS`` as (widths, head, loss), or ValueError saying what is wrong."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"a student is HIDDEN:HEAD:LOSS, got {text!r}")
    try:
        hidden = tuple(int(h) for h in parts[0].split(","))
    except ValueError:
        raise ValueError(f"hidden widths must be integers, got {parts[0]!r}") from None
    if not hidden or min(hidden) < 1:
        raise ValueError(f"hidden widths must be positive, got {parts[0]!r}")
    if parts[1] not in HEADS:
        raise ValueError(f"head must be one of {', '.join(HEADS)}, got {parts[1]!r}")
    if parts[2] not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {parts[2]!r}")
    return hidden, parts[1], parts[2]


def teacher_rows(teacher: str, rows: int, per_decision: int, seed: int) -> dict[str, np.ndarray]:
    """About ``rows`` contact afterstates of self-play decisions (up to ``per_decision``
    of each decision's plays, drawn at random) with the teacher's 0-ply probabilities."""
    cfg = LabelConfig(sample=0.5, parallel_games=256, race_net=True)
    ev = load_evaluator(teacher)
    rng = np.random.default_rng(seed)
    out = anchor_rows(ev, rows, rng, cfg, per_decision=per_decision, ply=0, chunk=65536)
    out["generation"] = np.zeros(out["boards"].shape[0], dtype=np.int64)
    out["rank0"] = np.zeros(out["boards"].shape[0], dtype=np.int8)  # held out as labels
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default="default", help="player spec of the teacher")
    parser.add_argument("--student", action="append", help="HIDDEN:HEAD:LOSS (repeatable)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="contact rows to fit")
    parser.add_argument("--per-decision", type=int, default=6, help="plays kept per decision")
    parser.add_argument("--epochs", type=int, default=6, help="passes over the rows")
    parser.add_argument("--batch", type=int, default=512, help="rows per gradient step")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    parser.add_argument("--seed", type=int, default=0, help="collection and fit seed")
    parser.add_argument("--data", type=Path, default=VALIDATION, help="validation decisions")
    parser.add_argument("--limit", type=int, default=None, help="first N validation decisions")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--save", type=Path, default=None, help="folder to keep the students")
    args = parser.parse_args(argv)
    try:
        students = [parse_student(s) for s in args.student or ["512:sigmoid5:mse"]]
    except ValueError as exc:
        parser.error(str(exc))
    if args.rows < 100 or args.epochs < 1 or args.per_decision < 1:
        parser.error("--rows must be >= 100, --epochs and --per-decision >= 1")
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    rows = teacher_rows(args.teacher, args.rows, args.per_decision, args.seed)
    print(
        f"{len(rows['boards']):,} contact rows of {len(np.unique(rows['decision'])):,} decisions "
        f"labelled by {args.teacher} at 0-ply in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    records = load_decisions(args.data, args.limit)
    kinds = np.array([r["kind"] for r in records])
    errors, _ = play_errors(f"{args.teacher}:0", records)
    header = f"{'student':<26} {'params':>8} {'rmse':>7} {'fit s':>6}  val all / contact"
    print(header)
    print(
        f"{'teacher ' + args.teacher:<26} {'':>8} {'':>7} {'':>6}  {summary(errors)} / "
        f"{summary(errors[kinds == 'contact'])}",
        flush=True,
    )
    enc = get_encoding("contact")
    folder = args.save or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    for hidden, head, loss in students:
        spec = NetSpec(enc.name, enc.version, enc.size, hidden, "sigmoid", "standard", head)
        torch.manual_seed(args.seed)
        net = spec.build()
        cfg = FitConfig(
            init="scratch",
            lr=args.lr,
            lr_final=args.lr / 30,
            batch=args.batch,
            max_epochs=args.epochs,
            patience=args.epochs * 2,
            holdout=0.05,
            loss=loss,
        )
        net, res = fit(net, spec, rows, cfg, seed=args.seed, progress=sys.stderr.isatty())
        name = f"{','.join(map(str, hidden))}:{head}:{loss}"
        path = folder / f"student-{name.replace(':', '-').replace(',', 'x')}.pt"
        save_checkpoint(path, net, spec, games=0, step=res.steps, config={"student": name})
        errors, _ = play_errors(f"{path}+race", records)
        params = sum(p.numel() for p in net.parameters())
        print(
            f"{name:<26} {params:>8,} {res.heldout_equity_rmse:7.4f} {res.seconds:6.0f}  "
            f"{summary(errors)} / {summary(errors[kinds == 'contact'])}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
