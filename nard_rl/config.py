"""Typed training configuration: the schema behind the Hydra configs in ``configs/``.

Every field carries one line of documentation; Hydra validates the YAML groups
(``model``, ``encoding``, ``rules``, ``trainer``) against these dataclasses, so a typo in a
key fails at start-up instead of silently training something else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hydra.core.config_store import ConfigStore


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


def register_configs() -> None:
    """Make the schema known to Hydra under the name the YAML defaults list uses."""
    cs = ConfigStore.instance()
    cs.store(name="train_schema", node=TrainConfig)
