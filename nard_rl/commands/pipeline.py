"""``nard pipeline``: supervised generations on search-labelled positions (Hydra app).

Arguments are Hydra overrides, like ``nard train``: ``nard pipeline supervised=tiny``,
``nard pipeline name=gen generations=3 label.shards=100``, or one stage of the current
generation, ``nard pipeline stage=label shard=2 num_shards=4`` (then ``stage=fit``,
``stage=gate``).  Running the same command again resumes where it stopped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "pipeline"
HELP = "Label positions by search, fit, gate and repeat (Hydra overrides: key=value ...)."
CONFIG_PACKAGE = "nard_rl.conf"
SCHEMA = "pipeline_schema"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. generations=2")


def run_hydra(overrides: Sequence[str]) -> int:
    import hydra
    from hydra.core.config_store import ConfigStore
    from omegaconf import DictConfig

    from nard_rl.supervised.pipeline import PipelineConfig

    ConfigStore.instance().store(name=SCHEMA, node=PipelineConfig)

    @hydra.main(version_base="1.3", config_path="pkg://" + CONFIG_PACKAGE, config_name="pipeline")
    def _main(cfg: DictConfig) -> None:
        from nard_rl.supervised.pipeline import run_pipeline

        print(f"accepted net: {run_pipeline(cfg)}")

    saved = sys.argv
    sys.argv = ["nard pipeline", *overrides]
    try:
        _main()
    finally:
        sys.argv = saved
    return 0


def run(args: argparse.Namespace) -> int:
    return run_hydra(args.overrides)
