"""The TD-Gammon-style equity network and its checkpoints.

The network maps an encoded board (see ``nard_rl.nets.encoding``) to five probabilities from
the view of the side the board is encoded for: win, win gammon, win backgammon, lose
gammon, lose backgammon (a gammon is also a win, a backgammon also a gammon).  They are
built as products of sigmoids so that consistency holds by construction, not by hope:

    win = s0, wg = win*s1, wbg = wg*s2, lg = (1-win)*s3, lbg = lg*s4

Evaluating N afterstates is one forward pass over an ``(N, inputs)`` matrix; the move
choice is a segment argmax over the resulting equities (``nard_rl.batch``).
"""

from __future__ import annotations

import pickle
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nard_rl.engine.rules import PROB_NAMES, cubeless_equity, swap_sides
from nard_rl.util.io import atomic_write

__all__ = [
    "PROB_NAMES",
    "CheckpointError",
    "EquityNet",
    "NetSpec",
    "cubeless_equity",
    "load_state_checked",
    "swap_sides",
]

CHECKPOINT_FORMAT = 1
MAX_WIDTH = 1 << 16
"""Widest layer (and most inputs) a checkpoint may declare: far above any net of this
project (512), far below a size whose allocation alone would take the machine down."""
MAX_LAYERS = 16


class CheckpointError(ValueError):
    """A file that is no usable checkpoint; the message names it and says why (one line,
    so commands print it as it is)."""


HEADS = ("sigmoid5", "softmax6")
"""Output heads. ``sigmoid5`` (gnubg's and TD-Gammon's family): five sigmoids read as
chained conditionals, P(win), P(gammon | win), P(backgammon | gammon), P(lose gammon |
loss), P(lose backgammon | lose gammon).  ``softmax6`` (wildbg's): one softmax over the six
outcome classes (win / gammon / backgammon, each way).  Both give the same five
cumulative probabilities, consistent by construction, so nothing above the net can tell
them apart."""


class EquityNet(nn.Module):
    """MLP over an encoding with five consistent outcome probabilities."""

    def __init__(
        self,
        inputs: int,
        hidden: Sequence[int] = (80,),
        activation: str = "sigmoid",
        head: str = "sigmoid5",
    ) -> None:
        super().__init__()
        acts = {"sigmoid": nn.Sigmoid, "relu": nn.ReLU, "tanh": nn.Tanh, "silu": nn.SiLU}
        if activation not in acts:
            raise ValueError(f"unknown activation {activation!r}; choose from {sorted(acts)}")
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; choose from {', '.join(HEADS)}")
        layers: list[nn.Module] = []
        width = inputs
        for h in hidden:
            layers += [nn.Linear(width, h), acts[activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 6 if head == "softmax6" else 5)
        self.inputs = inputs
        self.hidden = tuple(int(h) for h in hidden)
        self.activation = activation
        self.head_kind = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.head_kind == "softmax6":
            return classes_to_probs(torch.softmax(self.head(self.body(x)), dim=1))
        s = torch.sigmoid(self.head(self.body(x)))
        win = s[:, 0]
        wg = win * s[:, 1]
        wbg = wg * s[:, 2]
        lg = (1.0 - win) * s[:, 3]
        lbg = lg * s[:, 4]
        return torch.stack((win, wg, wbg, lg, lbg), dim=1)


def classes_to_probs(c: torch.Tensor) -> torch.Tensor:
    """Six outcome-class probabilities ``(N, 6)`` (win single, gammon, backgammon; lose
    single, gammon, backgammon) as the five cumulative ones every caller reads."""
    wbg = c[:, 2]
    wg = c[:, 1] + wbg
    lbg = c[:, 5]
    lg = c[:, 4] + lbg
    return torch.stack((c[:, 0] + wg, wg, wbg, lg, lbg), dim=1)


def probs_to_classes(p: torch.Tensor) -> torch.Tensor:
    """The inverse of ``classes_to_probs``: six class probabilities of five cumulative
    ones, each clipped at zero and renormalised (averaged search labels may be
    inconsistent by a rounding error)."""
    win, wg, wbg, lg, lbg = p.unbind(dim=1)
    c = torch.stack((win - wg, wg - wbg, wbg, 1.0 - win - lg, lg - lbg, lbg), dim=1)
    c = c.clamp_min(0.0)
    return c / c.sum(dim=1, keepdim=True).clamp_min(1e-12)


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
    head: str = "sigmoid5"
    """Output head (``HEADS``); checkpoints written before heads existed are sigmoid5."""

    def build(self) -> EquityNet:
        return EquityNet(self.inputs, self.hidden, self.activation, self.head)

    def to_dict(self) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "encoding_version": self.encoding_version,
            "inputs": self.inputs,
            "hidden": list(self.hidden),
            "activation": self.activation,
            "rules": self.rules,
            "head": self.head,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NetSpec:
        """The spec a checkpoint records, checked field by field (a ``ValueError`` naming
        the field): sizes are bounded before anything is built from them."""
        if not isinstance(d, Mapping):
            raise ValueError(f"a network spec is a mapping, got {type(d).__name__}")
        missing = [k for k in _SPEC_FIELDS if k not in d]
        if missing:
            raise ValueError(f"network spec lacks {', '.join(missing)}")
        hidden = d["hidden"]
        if not isinstance(hidden, (list, tuple)) or len(hidden) > MAX_LAYERS:
            raise ValueError(f"hidden must be a list of at most {MAX_LAYERS} widths")
        return cls(
            encoding=_spec_str(d, "encoding"),
            encoding_version=_spec_int(d["encoding_version"], "encoding_version", 0, 10**6),
            inputs=_spec_int(d["inputs"], "inputs", 1, MAX_WIDTH),
            hidden=tuple(_spec_int(h, "hidden", 1, MAX_WIDTH) for h in hidden),
            activation=_spec_str(d, "activation"),
            rules=_spec_str(d, "rules"),
            head=_spec_head(d.get("head", "sigmoid5")),
        )


_SPEC_FIELDS = ("encoding", "encoding_version", "inputs", "hidden", "activation", "rules")


def _spec_head(v: object) -> str:
    if v not in HEADS:
        raise ValueError(f"head must be one of {', '.join(HEADS)}, got {v!r}")
    return str(v)


def _spec_int(v: object, name: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi:,}, got {v!r}")
    return v


def _spec_str(d: Mapping[str, Any], name: str) -> str:
    v = d[name]
    if not isinstance(v, str) or not v:
        raise ValueError(f"{name} must be a non-empty string, got {v!r}")
    return v


def atomic_torch_save(obj: dict[str, Any], path: str | Path) -> None:
    """``torch.save`` through ``nard_rl.util.io.atomic_write``: a crash mid-write leaves the
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint without executing code (``weights_only=True``) and check its
    frame: a dict of the current format with a ``model`` of named tensors and a ``spec``.

    Anything else (random bytes, a pickle with code or foreign objects in it, another
    program's file, a truncated save) raises ``CheckpointError`` naming the file, never
    torch's own error types."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        with warnings.catch_warnings():  # torch warns about protocols of foreign pickles
            warnings.simplefilter("ignore")
            ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        # torch's safe unpickler refused it: objects other than tensors and plain data
        # (code), or bytes that are no pickle at all; its advice to load unsafely is not
        # repeated
        found = re.search(r"WeightsUnpickler error:\s*(.+)", str(exc))
        detail = (found.group(1) if found else _first_line(exc)).split(". Please")[0].strip()
        raise CheckpointError(
            f"{path} is not a nard-rl checkpoint: the safe loader (tensors and plain data "
            f"only, no code is ever run) refused it ({detail})"
        ) from None
    except Exception as exc:  # torch raises many types for a corrupt file
        raise CheckpointError(f"{path} is not a readable checkpoint: {_first_line(exc)}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{path} is not a nard-rl checkpoint (a dict of format {CHECKPOINT_FORMAT})"
        )
    model = ckpt.get("model")
    if (
        not isinstance(model, dict)
        or not model
        or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in model.items())
    ):
        raise CheckpointError(f"{path} has no model weights (a 'model' dict of named tensors)")
    if not isinstance(ckpt.get("spec"), dict):
        raise CheckpointError(f"{path} has no network spec (a 'spec' dict)")
    for key in ("games", "step"):
        v = ckpt.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise CheckpointError(f"{path}: {key!r} must be a non-negative integer, got {v!r}")
    return ckpt


def check_state_dict(
    path: str | Path, build: Callable[[], nn.Module], state: Mapping[str, torch.Tensor]
) -> None:
    """Raise ``CheckpointError`` unless ``state`` has exactly the tensor names and shapes of
    the module ``build`` makes.  The module is built on the ``meta`` device (shapes, no
    memory), so a checkpoint whose spec and weights disagree is refused before anything
    of its declared size is allocated."""
    with torch.device("meta"):
        skeleton = build()
    want = {k: tuple(v.shape) for k, v in skeleton.state_dict().items()}
    have = {k: tuple(v.shape) for k, v in state.items()}
    if want == have:
        return
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    wrong = [f"{k} {have[k]} (spec: {want[k]})" for k in want if k in have and have[k] != want[k]]
    parts = [
        f"missing {', '.join(missing)}" if missing else "",
        f"unexpected {', '.join(extra)}" if extra else "",
        f"shapes {', '.join(wrong)}" if wrong else "",
    ]
    raise CheckpointError(
        f"{path}: the weights do not fit the network its spec declares: "
        + "; ".join(p for p in parts if p)
    )


def load_state_checked(
    path: str | Path, build: Callable[[], nn.Module], state: Mapping[str, torch.Tensor]
) -> nn.Module:
    """``build()`` with ``state`` loaded, after ``check_state_dict``: the one way a
    checkpoint's weights become a module (the equity net here; the race net may use it)."""
    check_state_dict(path, build, state)
    module = build()
    module.load_state_dict(state)
    return module


def checkpoint_spec(path: str | Path, ckpt: Mapping[str, Any]) -> NetSpec:
    """The ``NetSpec`` of a loaded checkpoint, or ``CheckpointError`` naming the bad field."""
    try:
        return NetSpec.from_dict(ckpt["spec"])
    except ValueError as exc:
        raise CheckpointError(f"{path}: bad network spec: {exc}") from None


def load_network(
    path: str | Path, map_location: str | torch.device = "cpu"
) -> tuple[EquityNet, NetSpec, dict[str, Any]]:
    """Rebuild the network of a checkpoint, checking its encoding version still matches.

    The order protects the machine: the file is unpickled safely, the spec bounded and
    matched with its encoding (whose size fixes the inputs), the weights' shapes compared
    with the spec, and only then is a network allocated."""
    from nard_rl.nets.encoding import get_encoding

    ckpt = load_checkpoint(path, map_location)
    spec = checkpoint_spec(path, ckpt)
    try:
        enc = get_encoding(spec.encoding)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    if enc.version != spec.encoding_version:
        raise CheckpointError(
            f"{path} was trained with {spec.encoding} v{spec.encoding_version}, "
            f"this nard-rl has v{enc.version}: retrain or use a matching release"
        )
    if spec.inputs != enc.size:
        raise CheckpointError(
            f"{path}: spec declares {spec.inputs} inputs, the {enc.name} encoding has {enc.size}"
        )
    try:
        net = load_state_checked(path, spec.build, ckpt["model"])
    except CheckpointError:
        raise
    except ValueError as exc:  # an unknown activation
        raise CheckpointError(f"{path}: bad network spec: {exc}") from None
    assert isinstance(net, EquityNet)
    net.eval()
    return net, spec, ckpt
