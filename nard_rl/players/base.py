"""The player interface shared by every move chooser, and the ``make_player`` registry.

A player only *chooses* among afterstates the engine has already generated: the legal
plays come from ``nard_rl.engine.movegen.legal_afterstates_batch`` for a whole batch of
positions, so benchmark players, networks and outside engines all see exactly the same
candidates and can be compared, batched and swapped freely.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol

import numpy as np

from nard_rl.engine.rules import RuleSet, get_rules


class Player(ABC):
    """Chooses one play per position from precomputed afterstates."""

    name: str = "player"

    @abstractmethod
    def choose_batch(
        self,
        boards: np.ndarray,
        dice: np.ndarray,
        afterstates: np.ndarray,
        offsets: np.ndarray,
    ) -> np.ndarray:
        """Pick one play for each of N positions.

        ``boards`` ``(N, 26)`` are the positions before the move (mover's view), ``dice``
        ``(N, 2)`` the rolls, ``afterstates``/``offsets`` exactly as returned by
        ``legal_afterstates_batch``.  Returns ``(N,)`` int64 indices local to each
        position's slice ``afterstates[offsets[i]:offsets[i + 1]]``; -1 where the slice is
        empty (no legal play, R16).
        """

    def choose(self, board: np.ndarray, dice: np.ndarray, afterstates: np.ndarray) -> int:
        """One position: the index of the chosen row of ``afterstates`` (-1 when empty)."""
        afters = np.asarray(afterstates, dtype=np.int8).reshape(-1, 26)
        boards = np.asarray(board, dtype=np.int8).reshape(1, 26)
        rolls = np.asarray(dice, dtype=np.int8).reshape(1, 2)
        offsets = np.array([0, afters.shape[0]], dtype=np.int64)
        return int(self.choose_batch(boards, rolls, afters, offsets)[0])

    def close(self) -> None:
        """Release outside resources (processes); a no-op for in-process players."""
        return None

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class PlayerFactory(Protocol):
    """Builds a player from its full spec string (e.g. ``runs/x/best.pt``)."""

    def __call__(self, spec: str, *, rules: RuleSet, seed: int | None) -> Player: ...


_FACTORIES: dict[str, PlayerFactory | Callable[..., Player]] = {}
BUILTIN_SPECS = ("random", "pubeval", "gnubg", "gnubg:PLY")
NETWORK_MODULE = "nard_rl.net_player"


def register_player_factory(name: str, factory: PlayerFactory | Callable[..., Player]) -> None:
    """Make ``make_player`` build ``name`` specs with ``factory(spec, rules=, seed=)``.

    The network module registers ``"checkpoint"``, which ``make_player`` uses for specs
    ending in ``.pt`` and for ``default``, so this module never imports torch.  A spec
    ``NAME`` or ``NAME:ARG`` goes to the factory registered under ``NAME``.
    """
    _FACTORIES[name] = factory


def _choices() -> str:
    extra = sorted(set(_FACTORIES) - {"checkpoint"})
    names = [*BUILTIN_SPECS, *extra, "default", "default:PLY", "PATH.pt", "PATH.pt:PLY"]
    return ", ".join(names)


def _load_network_factory() -> PlayerFactory | Callable[..., Player] | None:
    """Import the network player module (it registers "checkpoint") only when asked for,
    so benchmark players never pull in torch."""
    try:
        importlib.import_module(NETWORK_MODULE)
    except ImportError:
        return None
    return _FACTORIES.get("checkpoint")


def split_ply(spec: str) -> tuple[str, int | None]:
    """``NAME:PLY`` -> ``(NAME, PLY)``; a spec without ``:`` -> ``(spec, None)``.

    The one parser of the optional search depth of a spec (``default:1``, ``x.pt:2``);
    the range a player accepts is checked by the player itself.
    """
    name, sep, arg = spec.strip().rpartition(":")
    if not sep:
        return spec.strip(), None
    if not arg.isdigit():
        raise ValueError(f"the ply after ':' must be a whole number >= 0, got {arg!r} in {spec!r}")
    return name, int(arg)


RACE_SUFFIX = "+race"


def split_race(name: str) -> tuple[str, bool]:
    """``PATH.pt+race`` -> ``(PATH.pt, True)``, anything else -> ``(name, False)``.

    The suffix pairs a checkpoint's net (for contact) with the rule set's shipped race
    net, as the default player pairs its own: how a pipeline candidate labelled with the
    race net is meant to play, and the only fair way to judge it.
    """
    text = name.strip()
    if text.endswith(RACE_SUFFIX):
        return text[: -len(RACE_SUFFIX)], True
    return text, False


def is_checkpoint_spec(spec: str) -> bool:
    """A network spec: ``default`` or a path ending in ``.pt``, optionally with ``+race``
    and ``:PLY`` (``runs/x/best.pt+race:1``)."""
    text = spec.strip()
    name, _ = split_race(text.rpartition(":")[0] if ":" in text else text)
    return name == "default" or name.endswith(".pt")


def make_player(spec: str, *, rules: RuleSet | str = "standard", seed: int | None = None) -> Player:
    """Build a player from a spec: ``random``, ``pubeval``, ``gnubg``, ``gnubg:PLY``, a
    checkpoint (``PATH.pt`` or ``default``; ``PATH.pt+race`` pairs it with the shipped race
    net; optionally searching ``:PLY`` deep, e.g. ``default:1``) or any registered factory
    name."""
    ruleset = get_rules(rules)
    text = spec.strip()
    head, _, arg = text.partition(":")
    if text == "random":
        from nard_rl.players.random_player import RandomPlayer

        return RandomPlayer(seed=seed)
    if text == "pubeval":
        from nard_rl.players.pubeval import PubevalPlayer

        return PubevalPlayer()
    if head == "gnubg":
        from nard_rl.players.gnubg_player import GnubgPlayer

        if arg and not arg.isdigit():
            raise ValueError(f"gnubg ply must be a whole number, got {arg!r} in {spec!r}")
        return GnubgPlayer(ply=int(arg) if arg else 0, rules=ruleset, seed=seed)
    if is_checkpoint_spec(text):
        factory = _FACTORIES.get("checkpoint") or _load_network_factory()
        if factory is None:
            raise ValueError(
                f"network players are not available for {spec!r}: no checkpoint player "
                "factory is registered (the network module, which needs torch, is missing)"
            )
        return factory(text, rules=ruleset, seed=seed)
    if head in _FACTORIES:
        return _FACTORIES[head](text, rules=ruleset, seed=seed)
    raise ValueError(f"unknown player {spec!r}; choose one of {_choices()}")
