"""Evaluators: the one interface through which players, search, hints and cube decisions
ask "how good is this afterstate?".

An evaluator maps ``(N, 26)`` int8 afterstates (the mover's view, just after its play,
the opponent to roll) to ``(N, 5)`` float32 cumulative outcome probabilities
``[win, win_gammon, win_backgammon, lose_gammon, lose_backgammon]`` from the mover's view.

Whatever does the estimating, finished games (the mover has borne off all 15) are answered
exactly, so no caller ever depends on a net's guess about a position whose result is
already on the board.  ``load_evaluator`` builds the evaluator a player spec names.

``CompositeEvaluator`` (what ``default`` loads) routes each position by its class
(``nard_rl.engine.classify``) in one call: no-contact bear-offs to the exact one-sided
bear-off database (``nard_rl.engine.bearoff``), other no-contact races to the race net
(``checkpoints/nard-race.pt``, ``nard-race-mars.pt`` under mars) when one is shipped,
contact positions to the contact net.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from nard_rl.engine.batch import outcomes, segment_argmax
from nard_rl.engine.bearoff import BearoffDatabase, get_bearoff_database
from nard_rl.engine.classify import BEAROFF, CONTACT, RACE, classify
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules, swap_sides
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.fastnet import FusedNet, supports
from nard_rl.nets.network import EquityNet, NetSpec, load_network
from nard_rl.nets.paths import resolve_checkpoint, shipped_dir
from nard_rl.nets.pruning import Pruner, load_pruner, pruner_path
from nard_rl.nets.race import RaceEvaluator, load_race_net
from nard_rl.players.base import RACE_SUFFIX, parse_player_spec

__all__ = [
    "RACE_CHECKPOINT",
    "CompositeEvaluator",
    "Evaluator",
    "NetEvaluator",
    "check_afterstates",
    "exact_finished",
    "greedy_choice",
    "load_evaluator",
    "pre_roll_probabilities",
]


@runtime_checkable
class Evaluator(Protocol):
    """Outcome probabilities of afterstates (see the module docstring for the views)."""

    rules: RuleSet

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray: ...


def check_afterstates(afterstates: np.ndarray) -> np.ndarray:
    """``afterstates`` as a contiguous ``(N, 26)`` int8 array, or a ValueError saying why not."""
    arr = np.asarray(afterstates)
    if arr.ndim != 2 or arr.shape[1] != 26:
        raise ValueError(f"afterstates must have shape (N, 26), got {arr.shape}")
    if arr.dtype != np.int8:
        if arr.size and (arr.min() < -15 or arr.max() > 15):
            raise ValueError("afterstate entries must lie in -15..15")
        arr = arr.astype(np.int8)
    return np.ascontiguousarray(arr)


def exact_finished(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(done, probs)``: which afterstates end the game (the mover bore off its last
    checker, R21) and their exact outcome rows (a certain win, gammon and backgammon as
    R25 reads the board).  Rows of unfinished games are zero."""
    done, gammon, bg = outcomes(afterstates)
    probs = np.zeros((afterstates.shape[0], 5), dtype=np.float32)
    probs[done, 0] = 1.0
    probs[:, 1] = gammon
    probs[:, 2] = bg
    return done, probs


def greedy_choice(
    evaluator: Evaluator,
    afterstates: np.ndarray,
    offsets: np.ndarray,
    *,
    noise: float = 0.0,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The 0-ply greedy play, the one chooser every 0-ply player, rollout and labelling
    loop uses: per segment of ``offsets``, the local index of the afterstate of highest
    cubeless equity for the mover (-1 for an empty segment, R16), and the probabilities
    of every afterstate (so callers keep the chosen rows' without asking twice).
    ``noise`` adds Gaussian noise of that size to the equities before the choice (the
    labeller's exploration), drawn from ``rng``."""
    probs = np.asarray(evaluator.probabilities(afterstates))
    eq = cubeless_equity(probs, evaluator.rules)
    if noise > 0:
        if rng is None:
            raise ValueError("greedy_choice: noise needs an rng")
        eq = eq + rng.normal(0.0, noise, size=eq.shape)
    return segment_argmax(eq, offsets), probs


def pre_roll_probabilities(
    evaluate: Evaluator | Callable[[np.ndarray], np.ndarray], boards: np.ndarray
) -> np.ndarray:
    """``(N, 5)`` probabilities of positions *before* the roll, seen by the side on roll:
    the one place of the pre-roll convention.  Nets learn afterstates only (the mover
    just played, the other side to roll), so a pre-roll position is asked as the
    opponent's afterstate (the board flipped) and the answer's sides swapped back.
    ``evaluate`` is an evaluator or any afterstate-probability function (a search at
    some ply)."""
    arr = check_afterstates(np.asarray(boards).reshape(-1, 26))
    ask = evaluate.probabilities if isinstance(evaluate, Evaluator) else evaluate
    return swap_sides(np.asarray(ask(flip_boards(arr))))


class NetEvaluator:
    """One network over every position (finished games still exact)."""

    def __init__(
        self,
        net: EquityNet,
        spec: NetSpec,
        *,
        rules: RuleSet | str | None = None,
        device: torch.device | str = "cpu",
        name: str = "net",
        fast: bool = False,
    ) -> None:
        self.net = net.to(device)
        self.spec = spec
        self.rules = get_rules(rules or spec.rules)
        self.device = torch.device(device)
        self.enc = get_encoding(spec.encoding)
        self.name = name
        # the compiled forward pass (nard_rl.nets.fastnet) for frozen nets on the CPU: a copy
        # of the weights, so a net being trained keeps the torch path (fast=False)
        self.fused = FusedNet(net) if fast and self.device.type == "cpu" and supports(net) else None

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, *, rules: RuleSet | str | None = None, device: str = "cpu"
    ) -> NetEvaluator:
        net, spec, _ = load_network(path, map_location=device)
        return cls(net, spec, rules=rules, device=device, name=Path(path).stem, fast=True)

    def net_probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """The raw net output, no exact cases: for callers that have routed already."""
        if afterstates.shape[0] == 0:
            return np.zeros((0, 5), dtype=np.float32)
        if self.fused is not None:
            return self.fused(self.enc.encode(afterstates))
        x = torch.from_numpy(self.enc.encode(afterstates)).to(self.device)
        with torch.no_grad():
            return self.net(x).float().cpu().numpy()

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        arr = check_afterstates(afterstates)
        done, probs = exact_finished(arr)
        live = ~done
        if live.any():
            probs[live] = self.net_probabilities(arr[live])
        return probs


class CompositeEvaluator:
    """Exact finished games, the bear-off database, a race net and a contact net, each
    answering the positions of its class; one batched call per part."""

    def __init__(
        self,
        contact: NetEvaluator,
        *,
        race: RaceEvaluator | NetEvaluator | Evaluator | None = None,
        bearoff: BearoffDatabase | None = None,
        rules: RuleSet | str | None = None,
        pruner: Pruner | None = None,
    ) -> None:
        self.rules = get_rules(rules or contact.rules)
        if bearoff is not None and bearoff.waste_rule != self.rules.waste_rule:
            raise ValueError(
                f"bear-off database built {'with' if bearoff.waste_rule else 'without'} the "
                f"pip-waste rule (R29) does not fit rule set {self.rules.name!r}"
            )
        self.contact = contact
        self.race = race
        self.bearoff = bearoff
        self.name = contact.name
        self.pruner = pruner
        """Ranks replies inside a ``nard_rl.search.nply.Search`` over this evaluator (None: the
        search scores every reply in full)."""

    def route(self, afterstates: np.ndarray) -> np.ndarray:
        """Which part answers each row: -1 finished, else a class of ``classify`` after
        fallbacks (no database: races; no race net: contact)."""
        arr = check_afterstates(afterstates)
        return self._route(arr, exact_finished(arr)[0])

    def _route(self, arr: np.ndarray, done: np.ndarray) -> np.ndarray:
        cls = classify(arr)
        if self.bearoff is None:
            cls[cls == BEAROFF] = RACE
        if self.race is None:
            cls[cls == RACE] = CONTACT
        cls[done] = -1
        return cls

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        arr = check_afterstates(afterstates)
        done, probs = exact_finished(arr)
        if arr.shape[0] == 0:
            return probs
        route = self._route(arr, done)
        parts: list[tuple[int, object]] = [
            (BEAROFF, self.bearoff),
            (RACE, self.race),
            (CONTACT, self.contact),
        ]
        for cls, part in parts:
            rows = np.flatnonzero(route == cls)
            if rows.size == 0 or part is None:
                continue
            sub = arr[rows]
            if isinstance(part, NetEvaluator):
                probs[rows] = part.net_probabilities(sub)
            else:  # the database, a race evaluator: they answer their rows as a whole
                probs[rows] = part.probabilities(sub)
        return probs


RACE_CHECKPOINT = "nard-race.pt"
"""The shipped standard-rules race net, next to the contact net in ``checkpoints/``; a
rule set with its own bear-off (mars, R29) has ``nard-race-<rules>.pt``."""


def race_checkpoint_path(rules: RuleSet | str = "standard") -> Path | None:
    """The shipped race net of a rule set, or None when this install has none."""
    rs = get_rules(rules)
    name = RACE_CHECKPOINT if rs.name == "standard" else f"nard-race-{rs.name}.pt"
    path = shipped_dir() / name
    return path if path.is_file() else None


def _checkpoint_path(spec: str, rules: RuleSet) -> Path:
    """``default`` resolves to the shipped net; anything else is a checkpoint path."""
    return resolve_checkpoint(spec, rules)


def load_evaluator(
    spec: str = "default",
    *,
    rules: RuleSet | str = "standard",
    device: str = "cpu",
    race_net: bool | None = None,
) -> Evaluator:
    """The evaluator a spec names.

    ``default``: the composite of the shipped contact net and race net (each the rule
    set's own; no race net when none is shipped) and the rule set's bear-off database.
    A checkpoint path: that net for contact and races (``PATH.pt+race``: with the shipped
    race net), the bear-off database for no-contact bear-offs (exact knowledge only ever
    replaces a guess).  ``race_net`` overrides whether the
    shipped race net answers no-contact races (None: only for ``default``); a pipeline
    teacher sets it so a new contact net is labelled with the race knowledge the default
    player will pair it with.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"evaluator spec must be a non-empty string, got {spec!r}")
    parsed = parse_player_spec(spec)
    if parsed.ply is not None:
        raise ValueError(
            f"evaluator spec {spec!r} names a search depth: an evaluator is 0-ply "
            "(a player spec 'NET:PLY' searches it, nard_rl.search.nply)"
        )
    spec, with_race = parsed.path, parsed.race_net
    if with_race:
        if race_net is False:
            raise ValueError(f"{spec}{RACE_SUFFIX} asks for the race net but race_net=False")
        race_net = True
    rs = get_rules(rules)
    contact = NetEvaluator.from_checkpoint(_checkpoint_path(spec, rs), rules=rs, device=device)
    db = get_bearoff_database(rs.waste_rule)
    race = None
    if spec == "default" if race_net is None else race_net:
        race_path = race_checkpoint_path(rs)
        if race_path is not None:
            race = load_race_net(race_path, rules=rs, bearoff=db)
    # the shipped pruning net serves the default make-up (contact + race net) it was
    # distilled from; a bare checkpoint's search scores every reply
    pruner = None
    prune_path = pruner_path(rs) if race is not None else None
    if prune_path is not None:
        pruner = load_pruner(prune_path)
    return CompositeEvaluator(contact, race=race, bearoff=db, rules=rs, pruner=pruner)
