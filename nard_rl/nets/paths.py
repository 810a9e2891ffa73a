"""Where nets come from: the one resolution of a net spec (``default`` or a path) to a file.

Below the evaluator and torch-free, so every layer that names a net (the evaluator, the
race and pruning nets, training's ``init``, the pipeline, the commands) resolves it the
same way, with the rule set's own shipped net for ``default`` (``nard-mars.pt`` under
mars), without importing the network player.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from nard_rl.engine.rules import RuleSet, get_rules

__all__ = [
    "DEFAULT_CHECKPOINT",
    "RULE_SET_DEFAULTS",
    "default_checkpoint_path",
    "resolve_checkpoint",
    "shipped_dir",
]

DEFAULT_CHECKPOINT = "nard-default.pt"
RULE_SET_DEFAULTS = {"mars": "nard-mars.pt"}
"""Shipped nets trained for one rule set, used by ``default`` under it when present."""


def shipped_dir() -> Path:
    """The folder of the shipped nets (``checkpoints/``, packaged as ``nard_rl.checkpoints``):
    the contact nets, the race nets and the pruning net sit side by side in it."""
    return Path(str(resources.files("nard_rl.checkpoints")))


def default_checkpoint_path(rules: RuleSet | str | None = None) -> Path:
    """The shipped net for a rule set: ``checkpoints/nard-<rules>.pt`` when one is shipped
    (e.g. ``nard-mars.pt``), else ``checkpoints/nard-default.pt``."""
    root = shipped_dir()
    name = RULE_SET_DEFAULTS.get(get_rules(rules).name)
    if name is not None and (root / name).is_file():
        return root / name
    path = root / DEFAULT_CHECKPOINT
    if not path.is_file():
        raise FileNotFoundError(f"the shipped network {path} is missing from this install")
    return path


def resolve_checkpoint(spec: str | Path, rules: RuleSet | str | None = None) -> Path:
    """The one resolution of a net spec to a file: ``default`` is the shipped net of the
    rule set (``default_checkpoint_path``), anything else a checkpoint path that must
    exist.  Every command, player and evaluator goes through here."""
    if isinstance(spec, str) and spec == "default":
        return default_checkpoint_path(rules)
    if not isinstance(spec, (str, Path)) or not str(spec):
        raise ValueError(f"a net is 'default' or a checkpoint path, got {spec!r}")
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(
            f"checkpoint not found: no checkpoint at {path} (a net is 'default' or a .pt path)"
        )
    return path
