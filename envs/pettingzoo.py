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

**The cube**: ``env(cube=True)`` (``raw_cube_env``) plays money games with the doubling
cube through the engine's ``Game`` state machine, as ``NardCube-v0`` does for one agent,
with the same phases and the same action indices (``CUBE_ACTIONS``): in a ``"cube"``
step (the agent on roll may double, R23) action 0 rolls and 1 doubles; in a ``"take"``
step (the opponent of the doubler answers) 0 takes and 1 drops (R24); ``"move"`` steps
are the plays.  ``infos[agent]["phase"]``, ``["cube_value"]`` and ``["cube_owner"]``
(``"centered"``, ``"me"``, ``"opponent"``) describe it; the observation keeps the same
space (a take step encodes the board as it stands from the taker's view, an afterstate,
as ``NardCube-v0`` does).  Rewards are the result times the cube; a drop scores the cube
before the double.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from nard_rl.engine.ascii import render_board
from nard_rl.engine.game import Game, Phase
from nard_rl.engine.position import flip_board
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.envs.core import DICE_FEATURES, MAX_CANDIDATES, GameBatch, dice_one_hot, observe
from nard_rl.envs.cube_env import _frozen_clock
from nard_rl.envs.nard_env import check_reset_position, plays_with_moves
from nard_rl.envs.vector import observation_space
from nard_rl.nets.encoding import get_encoding

__all__ = ["AGENTS", "CUBE_ACTIONS", "env", "raw_cube_env", "raw_env"]

AGENTS = ("player_0", "player_1")
"""The agents, in seat order: ``AGENTS[s]`` plays the engine's seat ``s``."""


CUBE_ACTIONS = {"cube": ("roll", "double"), "take": ("take", "drop")}
"""The two actions of the cube and take steps, by index (as in ``NardCube-v0``)."""


def env(*, cube: bool = False, **kwargs: Any) -> AECEnv:
    """The environment as PettingZoo's classic games ship it: ``raw_env`` (``raw_cube_env``
    with ``cube=True``) behind the illegal-move, bounds and call-order wrappers.  Other
    keyword arguments go to the class."""
    wrapped: AECEnv = raw_cube_env(**kwargs) if cube else raw_env(**kwargs)
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
            # validated entry by entry before any cast (no silent truncation of floats)
            boards, dice = check_reset_position(opts["board"], opts.get("dice"))
            self.game.reset(
                boards=boards, dice=dice, seat=np.array([AGENTS.index(agent)], dtype=np.int8)
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
        self.agent_selection = self._to_act()
        self._refresh_infos()

    def _to_act(self) -> str:
        return AGENTS[int(self.game.seat[0])]

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


class raw_cube_env(raw_env):
    """Money games with the doubling cube between ``player_0`` and ``player_1`` (module
    docstring): the engine's ``Game`` enforces R22-R24 and R31-R32; this class only says
    who acts in each phase and presents it.  Arguments as ``raw_env`` (standard rules:
    mars has no cube, R28)."""

    metadata: ClassVar[dict[str, Any]] = raw_env.metadata | {"name": "nard_cube_v0"}

    def __init__(
        self,
        rules: str | RuleSet = "standard",
        encoding: str = "tesauro198",
        render_mode: str | None = None,
    ) -> None:
        ruleset = get_rules(rules)
        if not ruleset.cube:
            raise ValueError(f"the {ruleset.name} rule set has no doubling cube (R28)")
        self.cube_rules = ruleset
        self.match: Game | None = None
        super().__init__(rules, encoding, render_mode)  # its reset() starts the first game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a money game from the opening (R4, R5; the cube centered at 1).  There
        are no start options here (PettingZoo's API test passes unknown ones, so they are
        ignored rather than refused)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.match = Game(self.cube_rules, rng=self.np_random, clock=_frozen_clock)
        while self.match.phase is Phase.OPENING:
            self.match.roll()  # R5: ties roll again (and may double the cube, R31)
        self._advance()
        self._set_episode_state()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game()
        self._cumulative_rewards[agent] = 0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        a = int(action)
        legal = self._legal_count()
        if not 0 <= a < legal:
            raise ValueError(
                f"action {a} is not a legal play: {legal} legal actions, indices 0..{legal - 1} "
                "(see the action mask)"
            )
        phase = self._phase()
        if phase == "cube":
            game.double() if a == 1 else game.roll()
        elif phase == "take":
            game.take() if a == 0 else game.drop()
        else:
            afters, _ = self._plays()
            game.play(afters[a].tolist())
        self._advance()
        if game.result is not None:
            points = float(game.result.points)
            for seat, name in enumerate(AGENTS):
                self.rewards[name] = points if seat == game.result.winner else -points
            self.terminations = dict.fromkeys(self.agents, True)
            self._result = (AGENTS[game.result.winner], int(game.result.points))
        self.agent_selection = AGENTS[game.player_to_act]
        self._refresh_infos()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._game()
        seat = AGENTS.index(agent)
        acting = game.result is None and agent == self.agent_selection
        board = np.asarray(game.position_for(seat).board, dtype=np.int8)
        obs = np.zeros(self.encoding.size + DICE_FEATURES, dtype=np.float32)
        head = obs[None, : self.encoding.size]
        if acting and self._phase() == "take":
            # the doubler is on roll: the board as it stands is the taker's afterstate
            self.encoding.encode(board[None, :], on_roll=False, out=head)
        else:
            self.encoding.encode_pre_roll(board[None, :], out=head)
        if acting and self._phase() == "move":
            dice = np.asarray(game.dice, dtype=np.int8).reshape(1, 2)
            dice_one_hot(dice, out=obs[None, self.encoding.size :])
        mask = np.zeros(MAX_CANDIDATES, dtype=np.int8)
        if acting:
            mask[: self._legal_count()] = 1
        return {"observation": obs, "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None:
            return super().render()
        game = self._game()
        me = game.player_to_act
        text = render_board(list(game.position_for(me).board), names=(AGENTS[me], AGENTS[1 - me]))
        owner = "centered" if game.cube_owner is None else AGENTS[game.cube_owner]
        cube = f"cube {game.cube_value} ({owner})"
        if game.result is not None:
            winner, points = self._result
            return text + f"\nGame over: {winner} wins {points} point(s); {cube}\n"
        return text + f"\n{AGENTS[me]} to act ({self._phase()}); {cube}\n"

    # -- helpers --------------------------------------------------------------------------
    def _game(self) -> Game:
        assert self.match is not None, "reset() first"
        return self.match

    def _advance(self) -> None:
        """Roll for every turn that offers no decision (a player who may not double
        rolls at once; a roll without a legal play passes, R16)."""
        game = self._game()
        while game.phase is Phase.ROLL_OR_DOUBLE and not game.can_double():
            game.roll()

    def _phase(self) -> str:
        phase = self._game().phase
        if phase is Phase.ROLL_OR_DOUBLE:
            return "cube"
        if phase is Phase.TAKE_OR_DROP:
            return "take"
        if phase is Phase.MOVE:
            return "move"
        return "over"

    def _plays(self) -> tuple[np.ndarray, np.ndarray]:
        game = self._game()
        board = game.position_for(game.player_on_roll).board
        return plays_with_moves(np.asarray(board, dtype=np.int8), game.dice, self.cube_rules)

    def _legal_count(self) -> int:
        phase = self._phase()
        if phase in CUBE_ACTIONS:
            return len(CUBE_ACTIONS[phase])
        return self._plays()[0].shape[0] if phase == "move" else 0

    def _to_act(self) -> str:
        return AGENTS[self._game().player_to_act]

    def _refresh_infos(self) -> None:
        """Per agent: the phase (``"wait"`` for the one not acting), the cube seen from
        that agent, the candidates in a move step and the result once over."""
        game = self._game()
        phase = self._phase()
        winner, points = self._result
        self.infos = {}
        for seat, agent in enumerate(self.agents):
            acting = agent == self.agent_selection and phase != "over"
            owner = game.cube_owner
            info: dict[str, Any] = {
                "phase": phase if acting or phase == "over" else "wait",
                "cube_value": game.cube_value,
                "cube_owner": "centered"
                if owner is None
                else "me"
                if owner == seat
                else "opponent",
                "afterstate_boards": np.zeros((0, 26), dtype=np.int8),
                "moves": np.zeros((0, 4, 2), dtype=np.int8),
                "winner": winner if winner else None,
                "points": points,
            }
            if acting and phase == "move":
                afters, moves = self._plays()
                info |= {
                    "afterstate_boards": afters,
                    "moves": moves,
                    "board": np.asarray(game.position_for(seat).board, dtype=np.int8),
                    "dice": np.asarray(game.dice, dtype=np.int8),
                }
            self.infos[agent] = info
