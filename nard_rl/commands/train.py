"""``nard train``: the Hydra app of ``scripts/train.py``, reachable from the CLI.

Arguments are Hydra overrides (``nard train trainer.games=100000 model=mlp160
resume=auto``), so the CLI and the script accept exactly the same configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "train"
HELP = "Train a network by batched self-play (Hydra overrides: key=value ...)."
CONFIG_PACKAGE = "nard_rl.conf"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. trainer.games=1000")


def run_hydra(overrides: Sequence[str]) -> int:
    import hydra
    from omegaconf import DictConfig

    from nard_rl.config import register_configs

    register_configs()

    @hydra.main(version_base="1.3", config_path="pkg://" + CONFIG_PACKAGE, config_name="train")
    def _main(cfg: DictConfig) -> None:
        from hydra.core.hydra_config import HydraConfig

        from nard_rl.train import train

        train(cfg, run_dir=HydraConfig.get().runtime.output_dir)

    saved = sys.argv
    sys.argv = ["nard train", *overrides]
    try:
        _main()
    finally:
        sys.argv = saved
    return 0


def run(args: argparse.Namespace) -> int:
    return run_hydra(args.overrides)
