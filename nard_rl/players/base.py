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
from dataclasses import dataclass
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
NETWORK_MODULE = "nard_rl.players.net"


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


RACE_SUFFIX = "+race"
"""Pairs a checkpoint's net (for contact) with the rule set's shipped race net, as the
default player pairs its own: how a pipeline candidate labelled with the race net is meant
to play, and the only fair way to judge it."""


@dataclass(frozen=True)
class PlayerSpec:
    """A player spec parsed once: ``NAME[+race][:PLY]`` (``default``, ``runs/x/best.pt+race:1``,
    ``gnubg:2``, ``pubeval``).  Every reader of a spec (``make_player``, the network
    factory, ``load_evaluator``, the cube bots, the commands) asks this instead of cutting
    the string itself, so ``+race`` and ``:PLY`` mean the same everywhere."""

    text: str
    """The spec as given, stripped."""
    name: str
    """The spec without its ``:PLY`` (``runs/x/best.pt+race``): what ``load_evaluator``
    takes for a network."""
    path: str
    """``name`` without ``+race``: ``default`` or a checkpoint path for a network."""
    race_net: bool
    """``+race``: pair the checkpoint with the shipped race net."""
    ply: int | None
    """The search depth after ``:`` (the player checks its range), None without one."""

    @property
    def is_network(self) -> bool:
        """A network spec: ``default`` or a path ending in ``.pt``."""
        return _is_network(self.path)

    @property
    def head(self) -> str:
        """What a registered factory is looked up by: the text before the first ``:``."""
        return self.text.partition(":")[0]


def parse_player_spec(spec: str) -> PlayerSpec:
    """The one parser of player specs.  A ``:`` followed by digits is the ply; after a
    network or ``gnubg`` anything else there is an error (``default:x``); after other
    names the ``:`` stays part of the name (a registered factory's own argument)."""
    if not isinstance(spec, str):
        raise ValueError(f"a player spec is a string, got {type(spec).__name__}")
    text = spec.strip()
    name, ply = text, None
    before, sep, arg = text.rpartition(":")
    if sep:
        if arg.isascii() and arg.isdigit():
            name, ply = before, int(arg)
        elif _is_network(_strip_race(before)[0]) or before == "gnubg":
            raise ValueError(
                f"the ply after ':' must be a whole number >= 0, got {arg!r} in {spec!r}"
            )
    path, race = _strip_race(name)
    return PlayerSpec(text=text, name=name, path=path, race_net=race, ply=ply)


def _strip_race(name: str) -> tuple[str, bool]:
    if name.endswith(RACE_SUFFIX):
        return name[: -len(RACE_SUFFIX)], True
    return name, False


def _is_network(path: str) -> bool:
    return path == "default" or path.endswith(".pt")


def make_player(spec: str, *, rules: RuleSet | str = "standard", seed: int | None = None) -> Player:
    """Build a player from a spec: ``random``, ``pubeval``, ``gnubg``, ``gnubg:PLY``, a
    checkpoint (``PATH.pt`` or ``default``; ``PATH.pt+race`` pairs it with the shipped race
    net; optionally searching ``:PLY`` deep, e.g. ``default:1``) or any registered factory
    name."""
    ruleset = get_rules(rules)
    parsed = parse_player_spec(spec)
    text = parsed.text
    if text == "random":
        from nard_rl.players.random_player import RandomPlayer

        return RandomPlayer(seed=seed)
    if text == "pubeval":
        from nard_rl.players.pubeval import PubevalPlayer

        return PubevalPlayer()
    if parsed.name == "gnubg":
        from nard_rl.players.gnubg_player import GnubgPlayer

        return GnubgPlayer(ply=parsed.ply or 0, rules=ruleset, seed=seed)
    if parsed.is_network:
        factory = _FACTORIES.get("checkpoint") or _load_network_factory()
        if factory is None:
            raise ValueError(
                f"network players are not available for {spec!r}: no checkpoint player "
                "factory is registered (the network module, which needs torch, is missing)"
            )
        return factory(text, rules=ruleset, seed=seed)
    if parsed.head in _FACTORIES:
        return _FACTORIES[parsed.head](text, rules=ruleset, seed=seed)
    raise ValueError(f"unknown player {spec!r}; choose one of {_choices()}")
