"""N Nard games stepped together with batch arrays in and out (TD self-play at scale).

A TD-Gammon trainer scores every legal afterstate of every game, so what it needs from
an environment is not N padded candidate matrices but one flat list: all candidates of
all games encoded in one ``(M, F)`` matrix, with ``offsets`` saying which rows belong to
which game.  It then runs one forward pass over the M rows, picks each game's best row
with ``segment_argmax`` and steps.  Everything between two agent decisions (scoring,
restarting finished games, passing rolls without a legal play, the opponent's turns)
happens in whole-array calls of ``nard_rl.envs.core.GameBatch``; there is no Python per game.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nard_rl.engine.batch import segment_argmax
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.envs.core import (
    DICE_FEATURES,
    MAX_CANDIDATES,
    GameBatch,
    InvalidAction,
    observe,
)
from nard_rl.nets.encoding import Encoding, get_encoding
from nard_rl.players import Player, make_player

__all__ = ["NardVectorEnv", "observation_space", "resolve_opponent", "segment_argmax"]


def observation_space(encoding: Encoding) -> gym.spaces.Box:
    """The Box of one observation: the encoding (every input of both encodings lies in
    [0, 7.5]: units up to (15 - 3) / 2, the bar count / 2 up to 7.5) and the dice block."""
    return gym.spaces.Box(
        low=0.0, high=7.5, shape=(encoding.size + DICE_FEATURES,), dtype=np.float32
    )


def resolve_opponent(
    opponent: str | Player | None, rules: RuleSet, seed: int | None
) -> Player | None:
    """``None``/``"self"`` mean self-play; a string is a ``make_player`` spec."""
    if opponent is None or opponent == "self":
        return None
    if isinstance(opponent, Player):
        return opponent
    return make_player(str(opponent), rules=rules, seed=seed)


class NardVectorEnv(VectorEnv):
    """N cubeless Nard games in one environment, candidates handed over as a flat batch.

    **Self-play** (``opponent="self"``, the default): the same agent moves for both seats;
    every observation is from the side to move and each reward goes to the player who
    just moved (so a finished game rewards ``+points``; the loser sees nothing, and a
    trainer bootstraps the loser's last afterstate from the winner's result).
    **Against a player** (``opponent="random"``, ``"pubeval"``, ``"gnubg:0"``, a checkpoint
    path, or a ``Player``): the agent holds seat 0, the player seat 1 and moves inside
    ``step``; rewards are the agent's (``+points`` won, ``-points`` lost).

    Spaces follow ``gymnasium.vector``: ``single_observation_space`` is the Box of
    ``Nard-v0`` (the position of the side to move in the pre-roll convention,
    ``Encoding.encode_pre_roll``, then the dice as two one-hot(6), higher die first),
    ``observation_space`` its ``(N, ...)`` batch; ``single_action_space`` is
    ``Discrete(MAX_CANDIDATES)``, ``action_space`` the ``MultiDiscrete`` batch.

    Where afterstate selection needs its own form: candidate counts differ per game, so
    the infos hold one flat candidate list instead of Gymnasium's per-environment
    entries:

    * ``infos["afterstates"]`` ``(M, F)`` float32: every legal afterstate of every game,
      encoded from its mover's view with ``on_roll=False`` (None with
      ``encode_afterstates=False``);
    * ``infos["afterstate_boards"]`` ``(M, 26)`` int8: the same afterstates as boards;
    * ``infos["offsets"]`` ``(N + 1,)`` int64: game i owns rows ``offsets[i]:offsets[i+1]``
      (never empty: rolls without a legal play are passed automatically, R16);
    * ``infos["boards"]`` ``(N, 26)``, ``infos["dice"]`` ``(N, 2)``, ``infos["seat"]``
      ``(N,)``: each game's position (mover's view), roll and seat to move;
    * ``infos["winner"]`` ``(N,)`` int8: seat that won a game in this step, else -1;
      ``infos["points"]`` its value (R25/R26, R28 under ``rules="mars"``);
    * ``infos["passes"]``, ``infos["opponent_plies"]`` ``(N,)``: turns passed (R16) and
      opponent moves during the step; ``infos["action_wrapped"]`` ``(N,)`` bool.

    ``step(actions)`` takes one local index per game (row ``offsets[i] + actions[i]``; a
    global row ``r`` of game i is the local ``r - offsets[i]``).  An index outside the
    game's plays is taken modulo the count and flagged (``invalid_action="wrap"``, the
    default) or raises ``ValueError`` (``"raise"``).

    Autoreset is ``AutoresetMode.SAME_STEP``: a game that ends in ``step`` is restarted
    from the opening (R4, R5) within the same call; its row in the returned observation
    and candidates already belongs to the new game while ``terminations``, ``rewards`` and
    ``winner``/``points`` describe the game that ended (there is no meaningful final
    observation: the last afterstate is the row the agent chose).  Truncation never
    happens.  ``reset(seed=...)`` seeds the dice and a spec-built opponent.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        opponent: str | Player | None = "self",
        rules: str | RuleSet = "standard",
        encoding: str = "tesauro198",
        invalid_action: InvalidAction = "wrap",
        encode_afterstates: bool = True,
        render_mode: str | None = None,
        cube: bool = False,
    ) -> None:
        if cube:
            raise ValueError(
                "the vector environment is cubeless; use NardCube-v0 (one game per env) "
                "for the doubling cube"
            )
        if render_mode is not None:
            raise ValueError("the vector environment does not render")
        self.num_envs = int(num_envs)
        self.rules = get_rules(rules)
        if self.rules.cube:
            # A cubeless environment: the cube is ignored, only the scoring switches count.
            self.rules = self.rules.with_options(cube=False)
        self.encoding = get_encoding(encoding)
        self.encode_afterstates = encode_afterstates
        self._opponent_spec = opponent if isinstance(opponent, str) else None
        self.opponent = resolve_opponent(opponent, self.rules, None)
        self.single_observation_space = observation_space(self.encoding)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = gym.spaces.Discrete(MAX_CANDIDATES)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.games = GameBatch(
            self.num_envs,
            self.rules,
            self.np_random,
            opponent=self.opponent,
            autoreset=True,
            invalid_action=invalid_action,
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start all games from the opening (R4, R5); ``seed`` seeds dice and opponent.

        ``options={"boards": (N, 26), "dice": (N, 2)}`` starts from given positions
        instead (the agent, seat 0, to move; dice drawn when omitted).
        """
        super().reset(seed=seed)
        if seed is not None and self._opponent_spec is not None:
            self._reseed_opponent(int(self.np_random.integers(2**63)))
        self.games.rng = self.np_random
        opts = options or {}
        outcome = self.games.reset(boards=opts.get("boards"), dice=opts.get("dice"))
        return observe(self.games, self.encoding), self._infos(outcome)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        outcome = self.games.step(actions)
        points = outcome.points.astype(np.float32)
        if self.opponent is None:
            rewards = points  # to the player who just moved: the winner, if any
        else:
            rewards = np.where(outcome.winner == 0, points, -points).astype(np.float32)
        terminations = outcome.winner >= 0
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        obs = observe(self.games, self.encoding)
        return obs, rewards, terminations, truncations, self._infos(outcome)

    def close_extras(self, **kwargs: Any) -> None:
        if self.opponent is not None and self._opponent_spec is not None:
            self.opponent.close()

    # -- helpers ------------------------------------------------------------------------
    def _reseed_opponent(self, seed: int) -> None:
        assert self._opponent_spec is not None
        if self.opponent is not None:
            self.opponent.close()
        self.opponent = resolve_opponent(self._opponent_spec, self.rules, seed)
        self.games.opponent = self.opponent

    def _infos(self, outcome: Any) -> dict[str, Any]:
        g = self.games
        encoded = self.encoding.encode(g.afters, on_roll=False) if self.encode_afterstates else None
        return {
            "afterstates": encoded,
            "afterstate_boards": g.afters,
            "offsets": g.offsets,
            "boards": g.boards.copy(),
            "dice": g.dice.copy(),
            "seat": g.seat.copy(),
            "winner": outcome.winner,
            "points": outcome.points,
            "passes": outcome.passes,
            "opponent_plies": outcome.opponent_plies,
            "action_wrapped": outcome.wrapped,
        }
