"""``nard train``: the Hydra app of ``scripts/train.py``, reachable from the CLI.

Arguments are Hydra overrides (``nard train trainer.games=100000 model=mlp160
resume=auto``), so the CLI and the script accept exactly the same configuration.  A run
name that already holds a checkpoint is continued only with ``resume=auto``; without it,
and while another process trains under the name, the command refuses and changes nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nard_rl.commands.common import run_hydra_app

if TYPE_CHECKING:
    from omegaconf import DictConfig

NAME = "train"
HELP = "Train a network by batched self-play (Hydra overrides: key=value ...)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. trainer.games=1000")


def _main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig

    from nard_rl.nets.network import CheckpointError
    from nard_rl.training.td import train
    from nard_rl.util.runlock import RunExistsError, RunLockedError

    try:
        train(cfg, run_dir=HydraConfig.get().runtime.output_dir)
    except (CheckpointError, RunExistsError, RunLockedError) as exc:
        # a bad input file or a refused run: one line, not Hydra's report of a crash
        raise SystemExit(f"nard train: error: {exc}") from None


def run_hydra(overrides: Sequence[str]) -> int:
    from nard_rl.training.config import register_configs
    from nard_rl.util.runlock import hydra_guard_overrides

    register_configs()
    # claim the run directory (refuse a fresh start over a run, lock it) before Hydra
    # saves its config there, so a refused start leaves the run's files as they were
    guard = hydra_guard_overrides("nard_rl.training.td:claim_run")
    return run_hydra_app("nard train", "train", _main, [*overrides, *guard])


def run(args: argparse.Namespace) -> int:
    return run_hydra(args.overrides)
