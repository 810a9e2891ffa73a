"""The ``nard`` command line: one sub-command per module in ``nard_rl.commands``.

Each command module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them together, so commands stay independent.

Start-up time is part of the interface (``nard --help`` under half a second, ``nard moves``
under one): the CLI imports only the module of the command it runs, and ``nard --help``
imports none of them, reading each module's ``NAME`` and ``HELP`` string literals from its
source instead (a module whose ``NAME``/``HELP`` are not plain literals is imported).
Each command imports torch (or anything heavy) inside ``run``; ``scripts/bench_cli.py``
measures the result.

A reader that stops early (``nard hint --json | head -1``) closes the pipe: the CLI then
exits quietly with status 141 (128 + SIGPIPE, what a shell reports for a tool that dies
of it) instead of a traceback, for every command.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

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
    "nard_rl.commands.dataset",
)

BROKEN_PIPE_STATUS = 141
"""Exit status when stdout's reader went away (128 + SIGPIPE)."""

HYDRA_COMMANDS = ("train", "pipeline")
"""Hydra owns the argument syntax of these (``nard train key=value ...``)."""


def _static_summary(module_name: str) -> tuple[str, str] | None:
    """``(NAME, HELP)`` of a command module read from its source without running it, or
    None when the module does not exist (a command not built yet).  Falls back to
    importing the module when the two are not plain string literals."""
    try:
        spec = importlib.util.find_spec(module_name)
    except ModuleNotFoundError:
        spec = None
    if spec is None or spec.origin is None:
        return None
    values: dict[str, str] = {}
    try:
        with open(spec.origin, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=spec.origin)
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id in ("NAME", "HELP"):
                    value = ast.literal_eval(node.value)
                    if isinstance(value, str):
                        values[target.id] = value
    except (OSError, SyntaxError, ValueError):
        values = {}
    if "NAME" in values and "HELP" in values:
        return values["NAME"], values["HELP"]
    module = importlib.import_module(module_name)
    return module.NAME, module.HELP  # type: ignore[attr-defined]


def command_summaries() -> dict[str, tuple[str, str]]:
    """Every built command: ``NAME -> (module name, HELP)``, in ``COMMAND_MODULES`` order."""
    out: dict[str, tuple[str, str]] = {}
    for module_name in COMMAND_MODULES:
        summary = _static_summary(module_name)
        if summary is not None:
            out[summary[0]] = (module_name, summary[1])
    return out


def _load_commands() -> dict[str, ModuleType]:
    """Import every built command module (``NAME -> module``)."""
    commands: dict[str, ModuleType] = {}
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not built yet
                continue
            raise
        commands[module.NAME] = module  # type: ignore[attr-defined]
    return commands


def build_parser(
    commands: dict[str, ModuleType], summaries: dict[str, tuple[str, str]] | None = None
) -> argparse.ArgumentParser:
    """The ``nard`` parser: a sub-parser with its options for each module in ``commands``,
    and one with only its help line for each other command in ``summaries``."""
    parser = argparse.ArgumentParser(
        prog="nard", description="Nard (backgammon): rules engine, self-play training, serving."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = list(summaries or {}) + [n for n in commands if n not in (summaries or {})]
    for name in names:
        module = commands.get(name)
        text = module.HELP if module is not None else (summaries or {})[name][1]  # type: ignore[attr-defined]
        p = sub.add_parser(name, help=text, description=text)
        if module is not None:
            module.add_arguments(p)  # type: ignore[attr-defined]
    return parser


def _run(argv: list[str]) -> int:
    summaries = command_summaries()
    chosen = argv[0] if argv and argv[0] in summaries else None
    commands: dict[str, ModuleType] = {}
    if chosen is not None:
        commands[chosen] = importlib.import_module(summaries[chosen][0])
        if chosen in HYDRA_COMMANDS:
            return int(commands[chosen].run_hydra(argv[1:]))  # type: ignore[attr-defined]
    parser = build_parser(commands, summaries)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(commands[args.command].run(args))  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        # Nothing more can be written; point stdout at /dev/null so the interpreter's own
        # flush at exit does not raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return BROKEN_PIPE_STATUS


if __name__ == "__main__":
    sys.exit(main())
