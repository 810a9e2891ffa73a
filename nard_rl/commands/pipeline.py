"""``nard pipeline``: supervised generations on search-labelled positions (Hydra app).

Arguments are Hydra overrides, like ``nard train``: ``nard pipeline supervised=tiny``,
``nard pipeline name=gen generations=3 label.shards=100``, or one stage of the current
generation, ``nard pipeline stage=label shard=2 num_shards=4`` (then ``stage=fit``,
``stage=gate``).  Running the same command again with ``resume=auto`` resumes where it
stopped; without it a name that already holds a run is refused, and so is a second process
on a run in use.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nard_rl.commands.common import run_hydra_app

if TYPE_CHECKING:
    from omegaconf import DictConfig

NAME = "pipeline"
HELP = "Label positions by search, fit, gate and repeat (Hydra overrides: key=value ...)."
SCHEMA = "pipeline_schema"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. generations=2")


def _main(cfg: DictConfig) -> None:
    from nard_rl.nets.network import CheckpointError
    from nard_rl.training.distributed import torchrun_env
    from nard_rl.training.supervised.pipeline import run_pipeline
    from nard_rl.util.runlock import RunExistsError, RunLockedError

    try:
        accepted = run_pipeline(cfg)
    except (CheckpointError, RunExistsError, RunLockedError) as exc:
        # a bad init checkpoint or a refused run: one line, not Hydra's report of a crash
        raise SystemExit(f"nard pipeline: error: {exc}") from None
    if torchrun_env()[0] == 0:  # under torchrun every rank returns it: one line, not N
        print(f"accepted net: {accepted}")


def run_hydra(overrides: Sequence[str]) -> int:
    from hydra.core.config_store import ConfigStore

    from nard_rl.training.supervised.pipeline import PipelineConfig
    from nard_rl.util.runlock import hydra_guard_overrides

    ConfigStore.instance().store(name=SCHEMA, node=PipelineConfig)
    # the run is claimed (refusal, lock) before Hydra writes into it, as in ``nard train``
    guard = hydra_guard_overrides("nard_rl.training.supervised.pipeline:claim_run")
    return run_hydra_app("nard pipeline", "pipeline", _main, [*overrides, *guard])


def run(args: argparse.Namespace) -> int:
    return run_hydra(args.overrides)
