"""The TD-Gammon-style equity network and its checkpoints.

The network maps an encoded board (see ``nard_rl.encoding``) to five probabilities from
the view of the side the board is encoded for: win, win gammon, win backgammon, lose
gammon, lose backgammon (a gammon is also a win, a backgammon also a gammon).  They are
built as products of sigmoids so that consistency holds by construction, not by hope:

    win = s0, wg = win*s1, wbg = wg*s2, lg = (1-win)*s3, lbg = lg*s4

Evaluating N afterstates is one forward pass over an ``(N, inputs)`` matrix; the move
choice is a segment argmax over the resulting equities (``nard_rl.batch``).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nard_rl.engine.rules import PROB_NAMES, cubeless_equity, swap_sides
from nard_rl.io import atomic_write

__all__ = ["PROB_NAMES", "EquityNet", "NetSpec", "cubeless_equity", "swap_sides"]

CHECKPOINT_FORMAT = 1


class EquityNet(nn.Module):
    """MLP over an encoding with five consistent outcome probabilities."""

    def __init__(
        self, inputs: int, hidden: Sequence[int] = (80,), activation: str = "sigmoid"
    ) -> None:
        super().__init__()
        acts = {"sigmoid": nn.Sigmoid, "relu": nn.ReLU, "tanh": nn.Tanh, "silu": nn.SiLU}
        if activation not in acts:
            raise ValueError(f"unknown activation {activation!r}; choose from {sorted(acts)}")
        layers: list[nn.Module] = []
        width = inputs
        for h in hidden:
            layers += [nn.Linear(width, h), acts[activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 5)
        self.inputs = inputs
        self.hidden = tuple(int(h) for h in hidden)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(self.head(self.body(x)))
        win = s[:, 0]
        wg = win * s[:, 1]
        wbg = wg * s[:, 2]
        lg = (1.0 - win) * s[:, 3]
        lbg = lg * s[:, 4]
        return torch.stack((win, wg, wbg, lg, lbg), dim=1)


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when present, so the same command trains on GPU or CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device=cuda requested but no CUDA device is available")
    return dev


@dataclass(frozen=True)
class NetSpec:
    """What is needed to rebuild a network: recorded in every checkpoint."""

    encoding: str
    encoding_version: int
    inputs: int
    hidden: tuple[int, ...]
    activation: str
    rules: str

    def build(self) -> EquityNet:
        return EquityNet(self.inputs, self.hidden, self.activation)

    def to_dict(self) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "encoding_version": self.encoding_version,
            "inputs": self.inputs,
            "hidden": list(self.hidden),
            "activation": self.activation,
            "rules": self.rules,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NetSpec:
        return cls(
            encoding=str(d["encoding"]),
            encoding_version=int(d["encoding_version"]),
            inputs=int(d["inputs"]),
            hidden=tuple(int(h) for h in d["hidden"]),
            activation=str(d["activation"]),
            rules=str(d["rules"]),
        )


def atomic_torch_save(obj: dict[str, Any], path: str | Path) -> None:
    """``torch.save`` through ``nard_rl.io.atomic_write``: a crash mid-write leaves the
    previous checkpoint intact."""
    atomic_write(path, lambda fh: torch.save(obj, fh))


def save_checkpoint(
    path: str | Path,
    net: EquityNet,
    spec: NetSpec,
    *,
    games: int,
    step: int,
    config: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Weights plus everything needed to rebuild, resume and audit the run."""
    obj: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "spec": spec.to_dict(),
        "model": {k: v.detach().cpu() for k, v in net.state_dict().items()},
        "games": int(games),
        "step": int(step),
        "config": config or {},
    }
    if optimizer is not None:
        obj["optimizer"] = optimizer.state_dict()
    if extra:
        obj["extra"] = extra
    atomic_torch_save(obj, path)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint without executing code (``weights_only=True``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError:
        raise  # code in the file: refused, and said so by torch
    except Exception as exc:  # torch raises many types for a corrupt file
        raise ValueError(f"{path} is not a readable checkpoint: {exc}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a nard-rl checkpoint (format {CHECKPOINT_FORMAT})")
    return ckpt


def load_network(
    path: str | Path, map_location: str | torch.device = "cpu"
) -> tuple[EquityNet, NetSpec, dict[str, Any]]:
    """Rebuild the network of a checkpoint, checking its encoding version still matches."""
    from nard_rl.encoding import get_encoding

    ckpt = load_checkpoint(path, map_location)
    spec = NetSpec.from_dict(ckpt["spec"])
    enc = get_encoding(spec.encoding)
    if enc.version != spec.encoding_version:
        raise ValueError(
            f"{path} was trained with {spec.encoding} v{spec.encoding_version}, "
            f"this nard-rl has v{enc.version}: retrain or use a matching release"
        )
    net = spec.build()
    net.load_state_dict(ckpt["model"])
    net.eval()
    return net, spec, ckpt
