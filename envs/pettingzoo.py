"""Nard as a PettingZoo AEC environment: two agents taking turns, with action masks.

Multi-agent libraries (PettingZoo's own tests, RLlib, Tianshou, CleanRL's self-play
scripts) expect a two-player board game in the form of ``pettingzoo.classic`` (chess,
go, connect four): ``env()`` returning the wrapped environment, ``raw_env`` the class,
each observation a dict of ``"observation"`` and ``"action_mask"``.  This module is that
view of the same game ``Nard-v0`` plays: one ``GameBatch`` of one game without an
opponent (the agents move for both seats), the same observation (``observe``: the
position of the side to move in the project's pre-roll convention, then its dice) and
the same ``Discrete(3060)`` plays, so a policy trained here plays ``Nard-v0`` unchanged
and the other way round.

* **Agents** ``player_0`` and ``player_1`` (the engine's seats 0 and 1).  The opening
  roll (R5) decides who moves first, so ``agent_selection`` after ``reset`` is either.
  A roll without a legal play is passed by the engine (R16), so the same agent may move
  twice in a row and every turn it is offered has at least one legal play.
* **Observation** of an agent: ``"observation"``, ``Box(0, 7.5, (F + 12,))``: the board
  from that agent's own view, encoded as ``Nard-v0`` encodes the side to move
  (``Encoding.encode_pre_roll``), then the dice (two one-hot(6), higher die first) for
  the agent to move and zeros for the one waiting; ``"action_mask"`` (int8, 3060) marks
  the legal plays ``0..n-1`` of the agent to move (all zero for the other, and for both
  once the game is over).
* **Action** ``a``: the a-th legal afterstate of the roll, in the engine's order, listed
  in ``infos[agent]["afterstate_boards"]`` (the mover's view) with their step lists in
  ``infos[agent]["moves"]``.
* **Rewards**: zero until the game ends, then the game's points (R25: 1, 2 gammon,
  3 backgammon; R26 ``backgammon_value``, R32 Jacoby; R28 under ``rules="mars"``: 1 or 2
  mars) to the winner and their negation to the loser, so they always sum to zero;
  ``infos[agent]["points"]`` and ``["winner"]`` repeat them.
* **Infos** of the agent to move also hold ``"board"`` (26 int8, its own view) and
  ``"dice"``; the waiting agent's candidates are empty.
* **Illegal actions**: ``raw_env`` raises ``ValueError``; ``env()`` wraps it in
  PettingZoo's ``TerminateIllegalWrapper`` (the illegal mover gets -1 and the game
  ends), as the classic games do.
* **Seeding**: ``reset(seed=s)`` seeds the dice; the same seed and the same actions replay
  the same game.

The doubling cube is not offered here (``NardCube-v0`` has it for one agent).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from nard_rl.encoding import get_encoding
from nard_rl.engine.ascii import render_board
from nard_rl.engine.position import flip_board
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.envs.core import DICE_FEATURES, MAX_CANDIDATES, GameBatch, observe
from nard_rl.envs.nard_env import plays_with_moves
from nard_rl.envs.vector import observation_space

__all__ = ["AGENTS", "env", "raw_env"]

AGENTS = ("player_0", "player_1")
"""The agents, in seat order: ``AGENTS[s]`` plays the engine's seat ``s``."""


def env(**kwargs: Any) -> AECEnv:
    """The environment as PettingZoo's classic games ship it: ``raw_env`` behind the
    illegal-move, bounds and call-order wrappers.  Keyword arguments go to ``raw_env``."""
    wrapped: AECEnv = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv):
    """One cubeless game of Nard between ``player_0`` and ``player_1`` (module docstring).

    Arguments: ``rules`` (``"standard"``, ``"mars"`` or a ``RuleSet``; the cube is never
    turned), ``encoding`` (``"tesauro198"``, F = 198, or ``"extended"``, F = 225) and
    ``render_mode`` (None or ``"ansi"``: the board diagram from the view of the agent to
    move, with its dice).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "nard_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        rules: str | RuleSet = "standard",
        encoding: str = "tesauro198",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.rules = get_rules(rules).with_options(cube=False)
        self.encoding = get_encoding(encoding)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        box = observation_space(self.encoding)
        mask = gymnasium.spaces.Box(0, 1, shape=(MAX_CANDIDATES,), dtype=np.int8)
        self.observation_spaces = {
            a: gymnasium.spaces.Dict({"observation": box, "action_mask": mask}) for a in AGENTS
        }
        self.action_spaces = {a: gymnasium.spaces.Discrete(MAX_CANDIDATES) for a in AGENTS}
        self.np_random, _ = seeding.np_random(None)
        self.game = GameBatch(
            1, self.rules, self.np_random, opponent=None, autoreset=False, invalid_action="raise"
        )
        self.reset()  # a usable state before the caller's own (seeded) reset

    # -- PettingZoo API -------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a game from the opening (R4, R5); ``seed`` seeds the dice.

        ``options={"board": [...26], "dice": [d1, d2], "agent": "player_1"}`` starts from
        a given position instead: the board from the view of ``agent`` (default
        ``player_0``), who is to move with those dice (drawn when omitted).
        """
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.game.rng = self.np_random
        opts = options or {}
        if "board" in opts:
            agent = opts.get("agent", AGENTS[0])
            if agent not in AGENTS:
                raise ValueError(f"options['agent'] must be one of {AGENTS}, got {agent!r}")
            dice = opts.get("dice")
            self.game.reset(
                boards=np.asarray(opts["board"], dtype=np.int8).reshape(1, 26),
                dice=None if dice is None else np.asarray(dice, dtype=np.int8).reshape(1, 2),
                seat=np.array([AGENTS.index(agent)], dtype=np.int8),
            )
        else:
            self.game.reset()
        if self.game.over[0]:
            raise ValueError("the game ended before its first move; pick another board")
        self._set_episode_state()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        outcome = self.game.step(np.array([int(action)], dtype=np.int64))
        winner = int(outcome.winner[0])
        if winner >= 0:
            points = float(outcome.points[0])
            for seat, name in enumerate(AGENTS):
                self.rewards[name] = points if seat == winner else -points
            self.terminations = dict.fromkeys(self.agents, True)
            self._result = (AGENTS[winner], int(outcome.points[0]))
        self.agent_selection = AGENTS[int(self.game.seat[0])]
        self._refresh_infos()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        g = self.game
        to_move = not g.over[0] and agent == self.agent_selection
        if to_move:
            obs = observe(g, self.encoding)[0]
        else:
            # The waiting agent (or anyone once the game is over) sees the board from its
            # own view in the same convention, without dice.
            board = g.boards[0]
            if AGENTS[int(g.seat[0])] != agent:
                board = np.asarray(flip_board(board), dtype=np.int8)
            obs = np.zeros(self.encoding.size + DICE_FEATURES, dtype=np.float32)
            self.encoding.encode_pre_roll(board[None, :], out=obs[None, : self.encoding.size])
        mask = np.zeros(MAX_CANDIDATES, dtype=np.int8)
        if to_move:
            mask[: int(g.offsets[1])] = 1
        return {"observation": obs, "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        g = self.game
        text = render_board(g.boards[0].tolist(), names=self._names())
        if g.over[0]:
            winner, points = self._result
            return text + f"\nGame over: {winner} wins {points} point(s)\n"
        return text + f"\n{self.agent_selection} to move, dice {g.dice[0, 0]}-{g.dice[0, 1]}\n"

    def close(self) -> None:
        pass

    # -- helpers --------------------------------------------------------------------------
    def _set_episode_state(self) -> None:
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._result: tuple[str, int] = ("", 0)
        self.agent_selection = AGENTS[int(self.game.seat[0])]
        self._refresh_infos()

    def _names(self) -> tuple[str, str]:
        me = AGENTS[int(self.game.seat[0])]
        return me, AGENTS[1 - AGENTS.index(me)]

    def _refresh_infos(self) -> None:
        """Per agent: the candidates of the agent to move (empty for the other) and the
        result once the game is over."""
        g = self.game
        empty = {
            "afterstate_boards": np.zeros((0, 26), dtype=np.int8),
            "moves": np.zeros((0, 4, 2), dtype=np.int8),
        }
        winner, points = self._result
        self.infos = {}
        for agent in self.agents:
            info: dict[str, Any] = dict(empty)
            if not g.over[0] and agent == self.agent_selection:
                afters, moves = plays_with_moves(g.boards[0], g.dice[0], self.rules)
                n = int(g.offsets[1])
                if afters.shape[0] != n:  # pragma: no cover - movegen is deterministic
                    raise RuntimeError("move generator returned a different candidate count")
                info = {
                    "afterstate_boards": afters,
                    "moves": moves,
                    "board": g.boards[0].copy(),
                    "dice": g.dice[0].copy(),
                }
            info["winner"] = winner if winner else None
            info["points"] = points
            self.infos[agent] = info
