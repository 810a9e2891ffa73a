"""``nard dataset``: the lasting store of labelled positions
(``nard_rl.training.supervised.dataset``).

* ``nard dataset add SHARDS_DIR --teacher NAME --checkpoint PATH``: keep a labelling job's
  shards (a pipeline generation's ``gen_NNN/shards``) as one source;
* ``nard dataset relabel SOURCE --teacher NAME``: label a source's boards again, retiring
  each old part as its relabel is written;
* ``nard dataset retire [SOURCE]``: delete parts a relabel supersedes;
* ``nard dataset compact``: rewrite parts of older formats in the latest (smaller) one;
* ``nard dataset card``: rewrite ``CARD.md`` from what is stored;
* ``nard dataset info [--json]``: per source counts and provenance.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "dataset"
HELP = "Keep labelled positions between runs: add a run's shards, list them, write the card."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", type=Path, default=Path("datasets"), help="dataset folder (default datasets/)"
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="keep a labelling job's shards as one source")
    add.add_argument("shards", type=Path, help="folder of shard_*.npz files")
    add.add_argument("--teacher", required=True, help="the teacher's readable name, e.g. gen6")
    add.add_argument(
        "--checkpoint", type=Path, required=True, help="the teacher's checkpoint (for its hash)"
    )
    add.add_argument(
        "--budget-mb",
        type=float,
        default=None,
        help="size limit in MB (default: the dataset's budget)",
    )
    rel = sub.add_parser("relabel", help="label a source's boards again with a better teacher")
    rel.add_argument("source", help="the source's name (see nard dataset info)")
    rel.add_argument("--teacher", required=True, help="the new teacher's readable name")
    rel.add_argument(
        "--checkpoint", default="default", help="the teacher: default or a checkpoint path"
    )
    rel.add_argument("--ply", type=int, default=2, help="search depth of the new labels")
    rel.add_argument("--no-prune", action="store_true", help="score every reply in full")
    rel.add_argument(
        "--keep-old",
        action="store_true",
        help="keep the old source's parts (by default each is retired once relabelled)",
    )
    ret = sub.add_parser(
        "retire", help="delete parts a relabel supersedes (they stay in the history)"
    )
    ret.add_argument("source", nargs="?", default=None, help="only this source's parts")
    sub.add_parser("compact", help="rewrite parts of older formats in the latest, smaller one")
    sub.add_parser("card", help="rewrite CARD.md")
    info = sub.add_parser("info", help="per source counts and provenance")
    info.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    from nard_rl.training.supervised import dataset

    try:
        if args.action == "add":
            shards = sorted(args.shards.glob("shard_*.npz"))
            if not shards:
                raise FileNotFoundError(f"no shard_*.npz files in {args.shards}")
            if not args.checkpoint.is_file():
                raise FileNotFoundError(f"teacher checkpoint not found: {args.checkpoint}")
            budget = dataset.BUDGET_MB if args.budget_mb is None else args.budget_mb
            folder = dataset.deposit(
                shards,
                args.root,
                teacher=args.teacher,
                teacher_path=args.checkpoint,
                budget_mb=budget,
            )
            print(f"{len(shards)} shards kept in {folder}")
            print(f"card: {dataset.write_card(args.root, budget)}")
        elif args.action == "relabel":
            from nard_rl.nets.evaluator import load_evaluator
            from nard_rl.nets.paths import resolve_checkpoint

            rules = next(
                (r["rules"] for r in dataset.summary(args.root) if r["name"] == args.source),
                "standard",
            )
            spec = args.checkpoint
            teacher = load_evaluator(spec if spec == "default" else f"{spec}+race", rules=rules)
            path = resolve_checkpoint("default", rules) if spec == "default" else spec
            folder = dataset.relabel(
                args.root,
                args.source,
                teacher,
                teacher=args.teacher,
                teacher_path=path,
                ply=args.ply,
                prune=not args.no_prune,
                progress=True,
                retire_old=not args.keep_old,
            )
            print(f"relabelled into {folder}")
            print(f"card: {dataset.write_card(args.root)}")
        elif args.action == "retire":
            gone = dataset.retire(args.root, args.source)
            print(f"{len(gone)} superseded parts retired")
            print(f"card: {dataset.write_card(args.root)}")
        elif args.action == "compact":
            n, before, after = dataset.compact(args.root, progress=True)
            print(f"{n} parts rewritten in format {dataset.FORMAT}: {before:.1f} -> {after:.1f} MB")
            print(f"card: {dataset.write_card(args.root)}")
        elif args.action == "card":
            print(dataset.write_card(args.root))
        else:
            rows = dataset.summary(args.root)
            if args.json:
                print(json.dumps({"root": str(args.root), "sources": rows}, indent=2))
            else:
                for r in rows:
                    print(
                        f"{r['rules']:<9} {r['name']:<36} {r['decisions']:>9,} decisions "
                        f"{r['rows']:>10,} rows {r['mb']:6.1f} MB"
                    )
                print(f"{dataset.size_mb(args.root):.1f} MB in {args.root}")
    except (OSError, ValueError) as exc:
        print(f"nard dataset: {exc}", file=sys.stderr)
        return 2
    return 0
