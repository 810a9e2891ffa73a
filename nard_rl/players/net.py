"""Network players: a trained net choosing the afterstate of highest cubeless equity.

Registered with ``nard_rl.players.make_player`` so that every command accepting a player
spec (``nard agent``, ``nard evaluate``, the environments) takes a checkpoint path or
``default`` (the net shipped in ``checkpoints/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from nard_rl.cube.cubeful import CubeAdvisor
from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import CubeDecision, CubeState
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import (
    CompositeEvaluator,
    Evaluator,
    NetEvaluator,
    greedy_choice,
    load_evaluator,
    pre_roll_probabilities,
)
from nard_rl.nets.network import EquityNet, NetSpec, cubeless_equity, load_network
from nard_rl.nets.paths import resolve_checkpoint
from nard_rl.players.base import RACE_SUFFIX, Player, parse_player_spec, register_player_factory


class NetworkPlayer(Player):
    """Greedy 0-ply player: one forward pass over all candidates of all positions."""

    def __init__(
        self,
        net: EquityNet,
        spec: NetSpec,
        *,
        rules: RuleSet | str | None = None,
        device: torch.device | str = "cpu",
        name: str = "net",
        evaluator: Evaluator | None = None,
    ) -> None:
        self.net = net
        self.spec = spec
        self.rules = get_rules(rules or spec.rules)
        self.device = torch.device(device)
        self.enc = get_encoding(spec.encoding)
        self.name = name
        self.evaluator: Evaluator = evaluator or NetEvaluator(
            net, spec, rules=self.rules, device=self.device, name=name
        )
        """Every evaluation goes through it: the plain net (finished games exact), or with
        ``from_evaluator`` the composite of ``default``, which answers bear-offs from the
        database and races with the race net."""
        self._cube_advisors: dict[RuleSet, CubeAdvisor] = {}

    @classmethod
    def from_evaluator(cls, evaluator: NetEvaluator | CompositeEvaluator) -> NetworkPlayer:
        """A player over an evaluator of ``nard_rl.nets.evaluator``; ``net`` stays the contact
        net (what training and exports mean by "the player's net")."""
        contact = evaluator.contact if isinstance(evaluator, CompositeEvaluator) else evaluator
        return cls(
            contact.net,
            contact.spec,
            rules=evaluator.rules,
            device=contact.device,
            name=contact.name,
            evaluator=evaluator,
        )

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, *, rules: RuleSet | str | None = None, device: str = "cpu"
    ) -> NetworkPlayer:
        net, spec, _ = load_network(path, map_location=device)
        return cls(net.to(device), spec, rules=rules, device=device, name=Path(path).stem)

    def equities(self, afterstates: np.ndarray) -> np.ndarray:
        """Cubeless equity of each afterstate for the side that just moved."""
        if afterstates.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        probs = self.evaluator.probabilities(afterstates)
        return cubeless_equity(probs, self.rules).astype(np.float32)

    def pre_roll_probabilities(self, boards: np.ndarray) -> np.ndarray:
        """Five cubeless probabilities of the player on roll of each ``(N, 26)`` board (its
        view), before rolling: the input cube decisions need (the pre-roll convention of
        ``nard_rl.nets.evaluator.pre_roll_probabilities``)."""
        return pre_roll_probabilities(self.evaluator, boards).astype(np.float64)

    def cube_advisor(self, rules: RuleSet | str | None = None) -> CubeAdvisor:
        """The shared cube advisor over this player's evaluator (``nard_rl.cube.cubeful``: 1-ply
        pre-roll probabilities, close decisions read at 2-ply), one per rule set: what
        ``nard play``, the server, the chouette bots and ``NardCube-v0`` all decide by."""
        r = get_rules(rules or self.rules)
        if r not in self._cube_advisors:
            self._cube_advisors[r] = CubeAdvisor(self.evaluator, rules=r)
        return self._cube_advisors[r]

    def set_cube_advisor(self, advisor: CubeAdvisor) -> None:
        """Decide the cube under ``advisor.rules`` by ``advisor`` (another ply, no
        refinement, rollouts) instead of the default one."""
        self._cube_advisors[advisor.rules] = advisor

    def cube_action(
        self,
        board: Sequence[int] | np.ndarray,
        cube: CubeState,
        match: MatchScore | None = None,
        rules: RuleSet | str | None = None,
    ) -> CubeDecision:
        """The cube decision of the player on roll of ``board`` (its view), before rolling,
        by ``cube_advisor``."""
        return self.cube_advisor(rules).decide(np.asarray(board, dtype=np.int8), cube, match)

    def takes(
        self,
        doubler_board: Sequence[int] | np.ndarray,
        cube: CubeState,
        match: MatchScore | None = None,
        rules: RuleSet | str | None = None,
    ) -> bool:
        """Whether this player takes a double, everything given from the DOUBLER's view
        (its board, the cube before the double, its score), by ``cube_advisor``."""
        arr = np.asarray(doubler_board, dtype=np.int8)
        return self.cube_advisor(rules).takes(arr, cube, match)

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """The five outcome probabilities of each afterstate (side that just moved)."""
        return self.evaluator.probabilities(afterstates)

    def choose_batch(
        self, boards: np.ndarray, dice: np.ndarray, afterstates: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray:
        return greedy_choice(self.evaluator, afterstates, offsets)[0]


def _factory(spec: str, *, rules: RuleSet | str = "standard", seed: int | None = None) -> Player:
    """``default`` / ``PATH.pt``: the net at 0-ply; with ``:PLY`` (``default:1``) a
    ``nard_rl.search.nply.SearchPlayer`` over the spec's evaluator, searching PLY deep."""
    parsed = parse_player_spec(spec)
    if parsed.ply is None:
        return NetworkPlayer.from_evaluator(load_evaluator(parsed.name, rules=rules))
    from nard_rl.search.nply import Search, SearchPlayer, check_ply

    check_ply(parsed.ply)
    resolve_checkpoint(parsed.path, rules)  # a missing checkpoint fails here, naming the spec
    label = parsed.name
    if parsed.path != "default":
        label = Path(parsed.path).stem + (RACE_SUFFIX if parsed.race_net else "")
    search = Search(load_evaluator(parsed.name, rules=rules))
    return SearchPlayer(search, parsed.ply, name=f"{label}:{parsed.ply}")


register_player_factory("checkpoint", _factory)
