"""Typed training configuration: the schema behind the Hydra configs in ``configs/``.

Every field carries one line of documentation; Hydra validates the YAML groups
(``model``, ``encoding``, ``rules``, ``trainer``) against these dataclasses, so a typo in a
key fails at start-up instead of silently training something else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf


@dataclass
class ModelConfig:
    hidden: list[int] = field(default_factory=lambda: [128])
    """Hidden layer widths of the MLP (TD-Gammon: one layer of 40-160 units)."""
    activation: str = "sigmoid"
    """Hidden activation: sigmoid (Tesauro), tanh, relu or silu."""


@dataclass
class EncodingConfig:
    name: str = "extended"
    """Input encoding: tesauro198 (Tesauro's 198 inputs) or extended (raw + features)."""


@dataclass
class RulesConfig:
    name: str = "standard"
    """Rule set preset the net learns equities for: standard or mars."""


@dataclass
class TrainerConfig:
    games: int = 30_000
    """Self-play games to play in total (a resumed run continues up to this number)."""
    parallel_games: int = 512
    """Games in flight at once; each ply is one batched forward pass over all of them."""
    optimizer: str = "adam"
    """adam or sgd (Tesauro used plain SGD)."""
    lr: float = 1e-2
    """Learning rate at the start."""
    lr_final: float = 1e-3
    """Learning rate reached (linearly) at the last game; equal to lr for a constant rate."""
    td_lambda: float = 0.0
    """TD(lambda) trace decay.  0: online one-step TD, every game learns each ply (the
    shipped net); > 0: each finished game's afterstates learn their lambda-returns."""
    loss: str = "mse"
    """mse (TD-Gammon's squared error) or bce (cross-entropy on the five probabilities)."""
    explore: float = 0.0
    """Probability of a uniformly random play instead of the greedy one (0: pure greedy,
    as TD-Gammon; the dice already explore)."""
    checkpoint_every: int = 5_000
    """Write a checkpoint (atomically) every this many finished games."""
    keep_checkpoints: bool = True
    """Also keep a numbered copy of each periodic checkpoint (for round-robin evaluation)."""
    eval_every: int = 10_000
    """Play a pubeval match every this many games (0 disables)."""
    eval_games: int = 1_000
    """Games of each periodic pubeval match (half with sides swapped on the same dice)."""
    final_eval_games: int = 2_000
    """Games of the pubeval match at the end of training (0 disables)."""
    log_every: int = 200
    """Log losses and throughput to TensorBoard every this many plies."""
    threads: int = 0
    """torch CPU threads (0: leave torch's default)."""


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    """Network shape."""
    encoding: EncodingConfig = field(default_factory=EncodingConfig)
    """Input encoding of boards."""
    rules: RulesConfig = field(default_factory=RulesConfig)
    """Rule set of the games."""
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    """Self-play and optimisation settings."""
    name: str = "default"
    """Run name: checkpoints and TensorBoard logs go to runs/<name>/."""
    out_dir: str = "runs"
    """Folder holding the runs."""
    seed: int = 0
    """Seed of dice, initial weights and exploration: the same seed repeats a run."""
    device: str = "auto"
    """auto (cuda when present, else cpu), cpu, cuda or cuda:N."""
    resume: str | None = None
    """Checkpoint to continue from, or 'auto' for the run's own last checkpoint."""
    init: str | None = None
    """Weights to start from instead of random ones: 'default' (the shipped standard net)
    or a checkpoint of the same encoding and layers, whose rule set may differ (a net
    carried over to mars).  Only the weights: optimiser, game count and schedule start
    afresh.  A checkpoint loaded by ``resume`` wins, so a stopped run continues."""


def to_train_config(cfg: Any) -> TrainConfig:
    """The typed config of a run from a ``TrainConfig``, an OmegaConf node or a plain dict.

    Merging into the structured schema checks every key and type (an unknown key or a
    string for ``trainer.lr`` raises, naming it), so the training loop reads attributes
    of dataclasses, never untyped dicts; ``check_train_config`` then checks the values.
    """
    if isinstance(cfg, TrainConfig):
        out = cfg
    else:
        node = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(cfg)
        merged = OmegaConf.merge(OmegaConf.structured(TrainConfig), node)
        out = OmegaConf.to_object(merged)  # type: ignore[assignment]
        if isinstance(out.model.hidden, tuple):  # pragma: no cover - omegaconf gives lists
            out.model.hidden = list(out.model.hidden)
    check_train_config(out)
    return out  # type: ignore[return-value]


def check_train_config(cfg: TrainConfig) -> None:
    """Refuse values the loop cannot run with, naming the field."""
    tr = cfg.trainer
    if tr.games < 1 or tr.parallel_games < 1:
        raise ValueError("trainer.games and trainer.parallel_games must be >= 1")
    if tr.optimizer not in ("adam", "sgd"):
        raise ValueError(f"unknown optimizer {tr.optimizer!r}: adam or sgd")
    if tr.loss not in ("mse", "bce"):
        raise ValueError(f"unknown loss {tr.loss!r}: mse or bce")
    if not (tr.lr > 0 and tr.lr_final > 0):
        raise ValueError("trainer.lr and trainer.lr_final must be > 0")
    if not 0.0 <= tr.td_lambda <= 1.0:
        raise ValueError(f"trainer.td_lambda must be in [0, 1], got {tr.td_lambda}")
    if not 0.0 <= tr.explore <= 1.0:
        raise ValueError(f"trainer.explore must be in [0, 1], got {tr.explore}")
    if tr.checkpoint_every < 1 or tr.log_every < 1 or tr.eval_every < 0:
        raise ValueError("trainer.checkpoint_every/log_every must be >= 1, eval_every >= 0")
    if not cfg.model.hidden or min(cfg.model.hidden) < 1:
        raise ValueError(f"model.hidden must list layer widths >= 1, got {cfg.model.hidden}")


def register_configs() -> None:
    """Make the schema known to Hydra under the name the YAML defaults list uses."""
    cs = ConfigStore.instance()
    cs.store(name="train_schema", node=TrainConfig)
