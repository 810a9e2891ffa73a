"""``nard analyze FILE...``: every checker play and cube decision of a match file judged
at a ply, the luck of the rolls and each player's error rates (``nard_rl.analysis``).

Files are GNU Backgammon ``.sgf`` or Jellyfish ``.mat`` (gnubg, XG and ``nard play``
exports).  The text report goes to stdout; ``--json`` prints the analysis object instead
(one line per file when several are given); ``--html OUT`` writes the page with the
winning-chance chart (with several files, ``OUT``'s name gets each file's name added:
``report.html`` -> ``report_match_sgf.html``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

NAME = "analyze"
HELP = "Analyse .sgf/.mat match files: errors, marks, luck and ratings per player."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help=".sgf or .mat match files")
    parser.add_argument(
        "--ply", type=int, default=1, help="lookahead of checker play, 0-3 (default 1)"
    )
    parser.add_argument(
        "--cube-ply",
        type=int,
        default=None,
        help="lookahead of cube decisions, 0-2 (default: --ply, at least 1)",
    )
    parser.add_argument("--net", default="default", help="checkpoint path or 'default'")
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")
    parser.add_argument("--html", metavar="OUT", help="write an HTML report with the chart")
    parser.add_argument(
        "--workers", type=int, default=1, help="processes analysing games in parallel"
    )
    parser.add_argument(
        "--top", type=int, default=20, help="worst decisions listed in the text report"
    )


def _html_path(out: str, source: str, several: bool) -> Path:
    path = Path(out)
    if not several:
        return path
    src = Path(source)
    tag = f"{src.stem}_{src.suffix.lstrip('.')}" if src.suffix else src.stem
    return path.with_name(f"{path.stem}_{tag}{path.suffix or '.html'}")


def run(args: argparse.Namespace) -> int:
    from nard_rl.records import RecordError, load_match

    try:
        if not 0 <= args.ply <= 3:
            raise ValueError(f"--ply must be in 0..3, got {args.ply}")
        if args.cube_ply is not None and not 0 <= args.cube_ply <= 2:
            raise ValueError(f"--cube-ply must be in 0..2, got {args.cube_ply}")
        if args.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {args.workers}")
        matches = [load_match(f) for f in args.files]
    except (RecordError, ValueError) as exc:
        print(f"nard analyze: error: {exc}", file=sys.stderr)
        return 2
    from nard_rl.analysis.parallel import analyse_matches
    from nard_rl.analysis.report import html_report, text_report
    from nard_rl.commands.common import checkpoint_errors

    try:
        with checkpoint_errors(args.net):
            results = analyse_matches(
                matches,
                net=args.net,
                ply=args.ply,
                cube_ply=args.cube_ply,
                workers=args.workers,
            )
    except (ValueError, OSError) as exc:
        print(f"nard analyze: error: {exc}", file=sys.stderr)
        return 2
    several = len(results) > 1
    out: list[dict[str, Any]] = [r.to_dict() for r in results]
    for result in out:
        if args.json:
            print(json.dumps(result, separators=(",", ":") if several else None))
        else:
            print(text_report(result, args.top))
        if args.html:
            path = _html_path(args.html, result["source"], several)
            try:
                path.write_text(html_report(result), encoding="utf-8")
            except OSError as exc:
                print(f"nard analyze: error: cannot write {path}: {exc}", file=sys.stderr)
                return 2
            if not args.json:
                print(f"HTML report written to {path}")
    return 0
