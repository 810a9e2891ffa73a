"""``nard ubgi``: the engine behind the Universal Backgammon Interface on stdin/stdout.

A host (GUI, tournament manager, bridge) starts ``nard ubgi`` and talks to it line by
line; the protocol is ``nard_rl.server.ubgi`` (documented in docs/integrations/ubgi.md).
Nothing heavy is imported or loaded until the host sends ``ubgi``, so the process starts
at once and ``nard --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

NAME = "ubgi"
HELP = "Speak the Universal Backgammon Interface (UBGI) on stdin/stdout, as an engine for hosts."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", default="default", help="evaluator: 'default' or a checkpoint")
    parser.add_argument("--ply", type=int, help="initial Ply option: lookahead of plays (0..3)")
    parser.add_argument("--cube-ply", type=int, help="initial CubePly option (0..2)")
    parser.add_argument(
        "--rules", choices=("standard", "mars"), help="initial Rules option (default standard)"
    )


def run(args: argparse.Namespace) -> int:
    from nard_rl.server.ubgi import UbgiError, serve

    options = {
        name: value
        for name, value in (("Ply", args.ply), ("CubePly", args.cube_ply), ("Rules", args.rules))
        if value is not None
    }
    try:
        serve(sys.stdin, sys.stdout, net=args.net, options=options)
    except UbgiError as exc:  # a bad initial option: nothing has been said yet
        print(f"nard ubgi: error: {exc}", file=sys.stderr)
        return 2
    except (BrokenPipeError, KeyboardInterrupt):  # the host went away
        return 0
    return 0
