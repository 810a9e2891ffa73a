"""``nard moves``: list the legal plays of one position, or serve them as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

from nard_rl.commands.common import (
    add_position_arguments,
    dice_from_request,
    position_from_args,
    position_from_request,
)
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import get_rules
from nard_rl.server.jsonl import serve_lines

NAME = "moves"
HELP = "List the legal plays of a position and roll (or answer JSON lines with --jsonl)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_position_arguments(parser)
    parser.add_argument("--dice", nargs=2, type=int, metavar=("D1", "D2"), help="the roll")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help='read {"board": [...], "dice": [d1, d2], "rules": ...} lines on stdin',
    )


EXPECTED = (
    'a JSON object with "board" (26 integers, the mover\'s view), "position_id" or "xgid", '
    'and "dice" ([d1, d2])'
)
"""What a ``--jsonl`` line must be (said in every error about its shape)."""


def answer_request(request: dict[str, Any]) -> dict[str, Any]:
    """The legal plays of one parsed request (``ValueError`` names what is wrong)."""
    position = position_from_request(request)
    d1, d2 = dice_from_request(request)
    rules = request.get("rules", "standard")
    if not isinstance(rules, str):
        raise PositionError(f'"rules" must be "standard" or "mars", got {rules!r}')
    plays = position.plays(d1, d2, get_rules(rules))
    return {"plays": [{"move": p.move, "board": list(p.board)} for p in plays]}


def serve_jsonl(stdin: IO[Any], stdout: IO[str]) -> None:
    """Answer request lines until stdin closes; every line gets one answer line."""
    serve_lines(stdin, stdout, answer_request, EXPECTED)


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        serve_jsonl(sys.stdin, sys.stdout)
        return 0
    try:
        position = position_from_args(args)
        if args.dice is None:
            raise PositionError("--dice D1 D2 is required")
        plays = position.plays(args.dice[0], args.dice[1], get_rules(args.rules))
    except (ValueError, json.JSONDecodeError) as exc:
        print(f"nard moves: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"Position ID {position.position_id()}, roll {args.dice[0]}-{args.dice[1]}, "
        f"{len(plays)} legal play{'s' if len(plays) != 1 else ''} ({args.rules})"
    )
    if not plays:
        print("  no legal play: the roll is forfeited (R16)")
    width = max((len(p.move) for p in plays), default=0)
    for i, play in enumerate(plays, start=1):
        after = Position(play.board, validate=False).flip()
        print(f"{i:4d}. {play.move:<{width}}  {after.position_id()}")
    return 0
