"""The ``nard`` command line: one sub-command per module in ``nard_rl.commands``.

Each command module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them together, so commands stay independent
and importing the CLI does not pull in torch unless the chosen command needs it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES = (
    "nard_rl.commands.moves",
    "nard_rl.commands.demo",
    "nard_rl.commands.agent",
    "nard_rl.commands.train",
    "nard_rl.commands.evaluate",
    "nard_rl.commands.hint",
    "nard_rl.commands.cube",
    "nard_rl.commands.play",
    "nard_rl.commands.serve",
    "nard_rl.commands.chouette",
    "nard_rl.commands.pipeline",
    "nard_rl.commands.analyze",
    "nard_rl.commands.rollout",
    "nard_rl.commands.ubgi",
)


def _load_commands() -> dict[str, object]:
    commands: dict[str, object] = {}
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not built yet
                continue
            raise
        commands[module.NAME] = module
    return commands


def build_parser(commands: dict[str, object]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nard", description="Nard (backgammon): rules engine, self-play training, serving."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in commands.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)  # type: ignore[attr-defined]
        module.add_arguments(p)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = _load_commands()
    # Hydra owns the argument syntax of `nard train key=value ...` (and `nard pipeline`).
    if argv and argv[0] in ("train", "pipeline") and argv[0] in commands:
        return int(commands[argv[0]].run_hydra(argv[1:]))  # type: ignore[attr-defined]
    parser = build_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(commands[args.command].run(args))  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
