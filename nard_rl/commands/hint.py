"""``nard hint``: the network's ranking of every legal play of a position and roll."""

from __future__ import annotations

import argparse
import json
import sys

from nard_rl.commands.common import (
    add_cube_arguments,
    add_position_arguments,
    match_from_args,
    position_from_args,
)
from nard_rl.cube.model import Utility
from nard_rl.engine.position import PositionError
from nard_rl.engine.rules import PROB_NAMES, get_rules

NAME = "hint"
HELP = "Rank the legal plays of a position with a network (best first, with probabilities)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_position_arguments(parser)
    parser.add_argument("--dice", nargs=2, type=int, metavar=("D1", "D2"), help="the roll")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--net", default="default", help="checkpoint path or 'default'")
    parser.add_argument("--top", type=int, default=10, help="how many plays to list")
    parser.add_argument(
        "--ply", type=int, default=0, help="lookahead depth 0-3 (default: %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_cube_arguments(parser)  # plays are ranked for this cube and score (score_utility)
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="answer JSON lines on stdin (position, dice, cube, match, rules, ply, top), "
        "one line each: the ranked plays, or without dice the cube analysis",
    )
    parser.add_argument(
        "--home",
        choices=("right", "left"),
        default=None,
        help="draw the board first, the home board on this side (display only, R30)",
    )


def rank_plays(
    board: list[int],
    d1: int,
    d2: int,
    net: str = "default",
    rules: str = "standard",
    ply: int = 0,
    utility: Utility | None = None,
) -> list[dict[str, object]]:
    """Every legal play with its outcome probabilities and equity at ``ply`` (the
    evaluator of ``net`` through ``nard_rl.search.nply``), best first; ``ply`` per play says
    how deep it was looked at (the move filter stops clearly worse plays earlier)."""
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.search.nply import Search, check_ply

    check_ply(ply)
    ruleset = get_rules(rules)
    search = Search(load_evaluator(net, rules=ruleset))
    return [
        {
            "move": p.move,
            "equity": round(p.equity, 4),
            "probs": {k: round(v, 4) for k, v in zip(PROB_NAMES, p.probs, strict=True)},
            "board": list(p.board),
            "ply": p.ply,
        }
        for p in search.rank(board, (d1, d2), ply, utility=utility)
    ]


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        from nard_rl.server.analysis import Analyzer
        from nard_rl.server.lines import serve_hint_lines

        try:
            analyzer = Analyzer(args.net, ply=args.ply)
            analyzer.evaluator(args.rules)
        except (ValueError, OSError) as exc:
            print(f"nard hint: error: {exc}", file=sys.stderr)
            return 2
        serve_hint_lines(sys.stdin, sys.stdout, analyzer, args.rules)
        return 0
    try:
        if args.dice is None:
            raise PositionError("--dice D1 D2 is required (or --jsonl)")
        position = position_from_args(args)
        for d in args.dice:
            if not 1 <= d <= 6:
                raise PositionError(f"dice must be in 1..6, got {d}")
        from nard_rl.cube.model import CubeState, score_utility

        ruleset = get_rules(args.rules).with_options(jacoby=args.jacoby)
        cube = CubeState(args.cube, args.owner)
        utility = score_utility(ruleset, cube, match_from_args(args))
        plays = rank_plays(
            list(position.board),
            *args.dice,
            net=args.net,
            rules=args.rules,
            ply=args.ply,
            utility=utility,
        )
    except (ValueError, FileNotFoundError, json.JSONDecodeError) as exc:
        print(f"nard hint: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"plays": plays[: args.top]}))
        return 0
    if args.home is not None:
        from nard_rl.engine.ascii import render_board

        print(render_board(position, home=args.home))
    print(f"Position ID {position.position_id()}, roll {args.dice[0]}-{args.dice[1]}")
    if not plays:
        print("  no legal play: the roll is forfeited (R16)")
        return 0
    best = plays[0]["equity"]
    print(f"{'#':>3}  {'move':<24} {'equity':>8} {'diff':>7}   win    gam    bg  | lgam   lbg  ply")
    for i, p in enumerate(plays[: args.top], start=1):
        pr = p["probs"]
        assert isinstance(pr, dict)
        print(
            f"{i:3d}. {p['move']:<24} {p['equity']:+8.3f} {float(p['equity']) - float(best):+7.3f}"
            f"  {pr['win']:.3f}  {pr['win_gammon']:.3f}  {pr['win_backgammon']:.3f}"
            f" | {pr['lose_gammon']:.3f}  {pr['lose_backgammon']:.3f}  {p['ply']}"
        )
    return 0
