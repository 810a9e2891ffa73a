"""``NardCube-v0`` (``Nard-v0`` with ``cube=True``): one game of Nard played with the cube.

The cubeless environments run on the batch arrays of ``nard_rl.envs.core``; a game with the cube
has decisions those arrays do not know (double, take, drop), a stake, cube ownership and
the Crawford rule, all of which the engine's ``Game`` state machine already enforces.  So
this environment drives one ``Game``: the rules of R22-R24 and R31-R34 live there alone,
and the environment only decides who answers each phase (the agent, or the opponent and
its cube policy) and how that is presented to a Gymnasium agent.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import (
    DOUBLE_PASS,
    DOUBLE_TAKE,
    CubeDecision,
    CubeState,
    score_utility,
)
from nard_rl.engine.game import Game, Phase
from nard_rl.engine.position import BOARD_SIZE
from nard_rl.engine.rules import RuleSet
from nard_rl.envs.core import InvalidAction, dice_one_hot
from nard_rl.envs.nard_env import (
    RESET_OPTIONS,
    NardEnv,
    candidates_info,
    check_reset_options,
    check_reset_position,
    check_score,
    plays_with_moves,
)
from nard_rl.envs.vector import resolve_opponent
from nard_rl.players import Player, make_player

if TYPE_CHECKING:
    from nard_rl.players.net import NetworkPlayer

CubePhase = Literal["cube", "take", "move", "over"]

CUBE_ACTIONS = {"cube": ("roll", "double"), "take": ("take", "drop")}
"""The two actions of the cube and take steps, by index."""

_OWNER_NAMES = ("agent", "opponent")
_MAX_TURNS = 10_000
"""Turns in one step beyond which the position is taken as a deadlock (both sides closed
out with checkers on the bar, which no game from the start reaches)."""


CUBE_RESET_OPTIONS = RESET_OPTIONS | {"cube_value", "cube_owner", "crawford"}
"""The keys ``NardCubeEnv.reset(options=...)`` reads."""


def _frozen_clock() -> float:
    """The environment is untimed: a clock that never moves keeps R30 out of the episode
    (and wall time out of the dice), whatever the rule set's clock settings."""
    return 0.0


class NardCubeEnv(NardEnv):
    """One game of Nard (standard rules) with the doubling cube, money or match play.

    ## Description

    The cubeless ``Nard-v0`` with the cube (R22-R24) added: besides playing its rolls, the
    agent decides when to double and whether to take the opponent's doubles.  Made by
    ``gymnasium.make("NardCube-v0")``, ``gymnasium.make("Nard-v0", cube=True)`` or
    ``NardEnv(cube=True)``.  Each step asks for one of three kinds of decision, named by
    ``info["phase"]``:

    * ``"cube"``: the start of the agent's turn when it may double (R23: cube centered or
      its own, below 64, not the Crawford game; ``Game.can_double``).  Action 0 rolls,
      1 doubles.  When the agent may not double, its turn starts with the roll instead.
    * ``"take"``: the opponent has doubled.  Action 0 takes (the stake doubles and the
      agent owns the cube), 1 drops (the game ends, R24).
    * ``"move"``: the dice are rolled; the action indexes the legal afterstates, exactly as
      in ``Nard-v0``.  Rolls without a legal play pass automatically (R16).

    The opening roll (R5) is never preceded by a cube decision.  The opponent's turns,
    doubles and answers happen inside ``step``.

    ## Observation Space

    The same ``Box(0, 7.5, (F + 12,), float32)`` as ``Nard-v0``: the position from the
    view of the side to decide, then the dice block.  In a move step the dice are rolled
    and the position is encoded in the pre-roll convention (``Encoding.encode_pre_roll``,
    as the opponent's afterstate, like ``Nard-v0``); in a cube step the dice block is
    zero (not rolled yet) and the position is encoded the same way (the pre-roll
    position the cube decision is about); in a take step the dice block is zero and the
    position is encoded as it stands with ``on_roll=False``, because the doubler is on
    roll: it is an afterstate from the taker's view, the input a TD network evaluates.
    The cube state is not in the observation but in ``info`` (below), so the spaces are
    those of ``Nard-v0``.

    ## Action Space

    ``Discrete(MAX_CANDIDATES)``.  ``info["action_mask"]`` marks the legal indices: 0 and 1
    in cube and take steps (``CUBE_ACTIONS``), ``0..n-1`` in a move step.  Other indices are
    taken modulo the legal count (``invalid_action="wrap"``, flagged by
    ``info["action_wrapped"]``) or raise ``ValueError`` (``"raise"``).

    Info keys of every step: those of ``Nard-v0`` (``action_mask``, ``afterstates``,
    ``afterstate_boards``, ``moves``: empty outside move steps; ``board``: the observed
    board, ``dice``: zeros outside move steps, ``seat``, ``winner``, ``points``,
    ``passes``, ``opponent_plies``, ``action_wrapped``) and:

    * ``phase``: ``"cube"``, ``"take"``, ``"move"``, or ``"over"`` once the game ended;
    * ``cube_value``: the stake (before the pending double in a take step; taking makes
      it twice this);
    * ``cube_owner``: ``"centered"``, ``"agent"`` or ``"opponent"``, seen from the side to
      decide (in self-play "agent" is that side);
    * ``end_reason``: ``"bear_off"`` or ``"drop"`` in the step that ended the game, else None;
    * in match play ``match_score`` (agent, opponent; by seat in self-play) and
      ``crawford``.

    ## Rewards

    Zero until the game ends; then the points of the game from the agent's side (+ won,
    - lost): the result (1, 2 gammon, 3 backgammon, R25; R26 through the rule set) times
    the cube; a dropped double scores the cube before the double (R24).  Money play with
    ``rules=RuleSet.with_options(jacoby=True)`` counts gammons single while the cube is
    centered (R32), and ``automatic_doubles`` doubles the centered cube on opening ties
    (R31).  In match play (``match_length > 0``) there is no Jacoby rule and no automatic
    double, the points are capped at what the winner needs (R33), and no one may double in
    the Crawford game (R34).  ``info["points"]`` is the uncapped value.  In self-play the
    reward is from the view of the side that acted in the step (a winning move: +points; a
    drop: minus the cube).

    ## Starting State

    The opening (R4, R5), the cube centered at 1.  ``reset(options=...)`` accepts those of
    ``Nard-v0`` (``board``, ``dice``: the agent to act at that position; without ``dice``
    it is the agent's pre-roll position, a cube step when it may double; ``score``), and
    ``cube_value`` (power of two, default 1), ``cube_owner`` (``"centered"``,
    ``"agent"``, ``"opponent"``) and ``crawford`` (see Arguments).

    ## Episode End

    Terminates when a side bears off its 15th checker (R21) or a double is dropped (R24).
    There is no vector form: the cube decisions are per game, and Gymnasium's generic
    vector wrappers cannot stack the variable-length candidate entries of ``info``.

    ## Arguments

    As ``Nard-v0`` (``opponent``, ``rules``, ``encoding``, ``match_length``, ``score``,
    ``invalid_action``, ``render_mode``), and:

    * ``rules``: a rule set with the cube (``"standard"`` or a ``RuleSet`` with
      ``cube=True``); ``"mars"`` has no cube (R28) and raises ``ValueError``.
    * ``cube_opponent``: who makes the opponent's cube decisions.  None (default): a
      network opponent (checkpoint path, ``"default"`` or a ``NetworkPlayer``) uses its own
      probabilities; any other opponent (random, pubeval, gnubg) follows the fixed policy
      *never double, always take*.  A checkpoint path, ``"default"`` or a
      ``NetworkPlayer`` names a network for the cube decisions of any opponent.  A network
      decides with the shared cube advisor (``NetworkPlayer.cube_advisor``, the
      ``nard_rl.cube.cubeful.CubeAdvisor`` of ``nard play`` and the server: 1-ply pre-roll
      probabilities, close decisions at 2-ply, through ``nard_rl.cube.model.cube_decision``,
      Janowski's model with the position's cube efficiency and the match equity table in
      match play): it doubles on "double/take" and "double/pass", plays on when "too
      good" or "no double", and takes when ``nard_rl.cube.model.take_decision`` says the take
      is right (judged from the doubler's side).  A network opponent also plays its
      rolls for the score (``nard_rl.cube.model.score_utility``: money equity, or
      match-winning chances).  Not
      allowed in self-play, where the agent makes every cube decision.
    * ``crawford``: in match play, whether the game is the Crawford game (R34).  None
      (default): it is when exactly one side needs one point (the first game at that score
      is the Crawford game); False: post-Crawford; True requires a side at N-1.

    ## Version History

    * v0: first version.
    """

    def __init__(
        self,
        opponent: str | Player = "random",
        rules: str | RuleSet = "standard",
        encoding: str = "tesauro198",
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        *,
        cube: bool = True,
        invalid_action: InvalidAction = "wrap",
        render_mode: str | None = None,
        cube_opponent: str | Player | None = None,
        crawford: bool | None = None,
    ) -> None:
        if not cube:
            raise ValueError("NardCubeEnv always plays with the cube; use NardEnv for cube=False")
        if invalid_action not in ("wrap", "raise"):
            raise ValueError(f"invalid_action must be 'wrap' or 'raise', got {invalid_action!r}")
        self._configure(opponent, rules, encoding, match_length, score, render_mode)
        if not self.rules.cube:
            raise ValueError(
                f"the {self.rules.name} rule set has no doubling cube (R28): use cube=False"
            )
        self.invalid_action: InvalidAction = invalid_action
        self.initial_crawford = crawford
        self.crawford = False
        self.opponent = resolve_opponent(opponent, self.rules, None)
        if self.self_play and cube_opponent is not None:
            raise ValueError("cube_opponent needs an opponent: in self-play the agent decides")
        self._cube_net_spec = cube_opponent if isinstance(cube_opponent, str) else None
        self._cube_net = self._resolve_cube_net(cube_opponent)
        self._seats = (0, 1) if self.self_play else (0,)
        self.game = self._new_game({})
        self._actor = 0
        self._candidates = np.zeros((0, BOARD_SIZE), dtype=np.int8)
        self._candidate_moves = np.zeros((0, 4, 2), dtype=np.int8)
        self._passes = 0
        self._opponent_plies = 0

    # -- Gymnasium API ------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super(NardEnv, self).reset(seed=seed)
        self._reseed_opponent(seed)
        opts = check_reset_options(options, CUBE_RESET_OPTIONS)
        self.game = self._new_game(opts)
        self._passes = self._opponent_plies = 0
        _, dice = check_reset_position(opts.get("board"), opts.get("dice"))
        if dice is not None:
            self._roll(dice[0].tolist())
        self._advance()
        if self.game.is_over:
            raise ValueError("the game ended before the agent's first decision; pick another board")
        return self._observe(), self._info(False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        g = self.game
        if g.is_over:
            raise RuntimeError("the game is over: call reset() before stepping")
        phase = self._phase()
        legal = self._legal_count(phase)
        a = int(action)
        wrapped = not 0 <= a < legal
        if wrapped:
            if self.invalid_action == "raise":
                raise ValueError(
                    f"action {a} is not legal in this {phase} step: legal actions are "
                    f"0..{legal - 1} (see the action mask)"
                )
            a %= legal
        actor = self._actor
        self._passes = self._opponent_plies = 0
        if phase == "cube":
            if a == 1:
                g.double()
            else:
                self._roll()
        elif phase == "take":
            if a == 0:
                g.take()
            else:
                g.drop()
        else:
            g.play(self._candidates[a].tolist())
        self._advance()
        reward = self._reward(actor)
        return self._observe(), reward, g.is_over, False, self._info(wrapped)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        from nard_rl.engine.ascii import render_board

        text = render_board(self._board().tolist())
        g = self.game
        cube = f"Cube: {g.cube_value} ({self._owner_name()})"
        phase = self._phase()
        if phase == "over":
            return f"{text}\n{cube}\nGame over\n"
        if phase == "move":
            assert g.dice is not None
            return f"{text}\n{cube}\nDice: {g.dice[0]}-{g.dice[1]}\n"
        ask = "roll or double"
        if phase == "take":
            ask = f"take or drop a double to {2 * g.cube_value}"
        return f"{text}\n{cube}\nDice: not rolled ({ask})\n"

    def close(self) -> None:
        if self._cube_net is not None and self._cube_net_spec is not None:
            self._cube_net.close()
        super().close()

    # -- game flow ------------------------------------------------------------------------
    def _new_game(self, opts: dict[str, Any]) -> Game:
        """A fresh ``Game`` from the reset options (see the class docstring)."""
        n = self.match_length
        self.score = check_score(opts["score"]) if "score" in opts else self.initial_score
        crawford = opts.get("crawford", self.initial_crawford)
        if crawford is not None and not isinstance(crawford, (bool, np.bool_)):
            raise ValueError(f"crawford must be True, False or None, got {crawford!r}")
        self.crawford = self._crawford(crawford)
        value = CubeState(opts.get("cube_value", 1)).value  # refuses 3, 2.0, True, 128 (R1)
        owner_name = opts.get("cube_owner", "centered")
        owners = {"centered": None, "agent": 0, "opponent": 1}
        if owner_name not in owners:
            raise ValueError(f"cube_owner must be one of {', '.join(owners)}, got {owner_name!r}")
        owner = owners[owner_name]
        if owner is not None and value < 2:
            raise ValueError("an owned cube has been doubled at least once: cube_value >= 2")
        if n and owner is None and value > 1:
            raise ValueError("a centered cube above 1 comes from automatic doubles: not in matches")
        board, _ = check_reset_position(opts.get("board"), None)
        return Game(
            self.rules,
            rng=self.np_random,
            match_length=n,
            crawford=self.crawford,
            clock=_frozen_clock,
            start=None if board is None else board[0].tolist(),
            player_on_roll=0,
            cube_value=value,
            cube_owner=owner,
        )

    def _crawford(self, crawford: bool | None) -> bool:
        """Whether this game is the Crawford game (R34), validating the match score."""
        n = self.match_length
        if not n:
            if any(self.score) or crawford:
                raise ValueError("score and crawford are for match play (match_length > 0)")
            return False
        if not all(0 <= s < n for s in self.score):
            raise ValueError(f"match scores must be in 0..{n - 1}, got {self.score}")
        at_one = sum(s == n - 1 for s in self.score)
        if crawford is None:
            return at_one == 1
        if crawford and at_one != 1:
            raise ValueError("the Crawford game needs exactly one side at N-1 points (R34)")
        return bool(crawford)

    def _roll(self, dice: Any = None) -> None:
        """Roll for the player on roll; a roll without a legal play passes (R16)."""
        g = self.game
        g.roll(None if dice is None else [int(d) for d in dice])
        if g.phase is Phase.ROLL_OR_DOUBLE:
            self._passes += 1

    def _advance(self) -> None:
        """Play on until the agent has a decision or the game is over."""
        g = self.game
        for _ in range(_MAX_TURNS):
            if g.is_over:
                return
            if g.phase is Phase.OPENING:
                g.roll()  # R5: a tie throws again
                continue
            actor = g.player_to_act
            if actor in self._seats:
                if g.phase is Phase.ROLL_OR_DOUBLE and not g.can_double():
                    self._roll()
                    continue
                self._actor = actor
                if g.phase is Phase.MOVE:
                    assert g.dice is not None
                    self._candidates, self._candidate_moves = plays_with_moves(
                        g.position.array(), g.dice, self.rules
                    )
                return
            self._opponent_acts()
        raise RuntimeError(
            "no game progress after many passes: both sides closed out with checkers "
            "on the bar (a position no game from the start reaches)"
        )

    def _opponent_acts(self) -> None:
        g = self.game
        if g.phase is Phase.ROLL_OR_DOUBLE:
            if g.can_double() and self._opponent_doubles():
                g.double()
            else:
                self._roll()
        elif g.phase is Phase.TAKE_OR_DROP:
            if self._opponent_takes():
                g.take()
            else:
                g.drop()
        elif g.phase is Phase.MOVE:
            assert self.opponent is not None and g.dice is not None
            board = g.position.array()
            afters, _ = plays_with_moves(board, g.dice, self.rules)
            net = _as_network(self.opponent)
            if net is not None and afters.shape[0] > 0:
                # a network opponent plays for the score: money equity at the stake, or
                # match-winning chances (R33, R34) at the match score
                me = g.player_on_roll
                utility = score_utility(self.rules, self._cube_for(me), self._match_for(me))
                pick = int(np.argmax(utility(net.probabilities(afters))))
            else:
                pick = self.opponent.choose(board, np.asarray(g.dice, dtype=np.int8), afters)
            if not 0 <= pick < afters.shape[0]:
                raise RuntimeError(f"opponent {self.opponent!r} chose an illegal play index")
            g.play(afters[pick].tolist())
            self._opponent_plies += 1
        else:  # pragma: no cover - nobody resigns in this environment
            raise RuntimeError(f"unexpected phase {g.phase.value} on the opponent's turn")

    # -- the opponent's cube policy -----------------------------------------------------------
    @property
    def cube_net(self) -> NetworkPlayer | None:
        """The network behind the opponent's cube decisions, or None for the fixed policy
        (looked up each time: a seeded reset rebuilds an opponent made from a spec)."""
        if self._cube_net is not None:
            return self._cube_net
        return _as_network(self.opponent)

    def _resolve_cube_net(self, spec: str | Player | None) -> NetworkPlayer | None:
        """The network named by ``cube_opponent`` (None: the opponent's own, if any)."""
        if spec is None:
            return None
        player = make_player(spec, rules=self.rules) if isinstance(spec, str) else spec
        net = _as_network(player)
        if net is None:
            raise ValueError(
                f"cube_opponent must be a network (checkpoint path, 'default' or a "
                f"NetworkPlayer), got {spec!r}"
            )
        return net

    def _opponent_doubles(self) -> bool:
        """The fixed policy never doubles; a network doubles when doubling is right."""
        if self.cube_net is None:
            return False
        return self._cube_decision().decision in (DOUBLE_TAKE, DOUBLE_PASS)

    def _opponent_takes(self) -> bool:
        """The fixed policy always takes; a network answers with the shared
        ``take_decision``, judged from the doubler's (the agent's) side."""
        net = self.cube_net
        if net is None:
            return True
        doubler = self.game.player_on_roll
        board = self.game.position.array()
        return net.takes(board, self._cube_for(doubler), self._match_for(doubler), self.rules)

    def _cube_for(self, seat: int) -> CubeState:
        g = self.game
        return CubeState.from_seats(g.cube_value, g.cube_owner, seat)

    def _match_for(self, seat: int) -> MatchScore | None:
        if not self.match_length:
            return None
        return MatchScore(self.match_length, self.score[seat], self.score[1 - seat], self.crawford)

    def _cube_decision(self) -> CubeDecision:
        """The cube decision of the player on roll (the doubler), before any double."""
        net = self.cube_net
        assert net is not None
        me = self.game.player_on_roll
        board = self.game.position.board
        return net.cube_action(board, self._cube_for(me), self._match_for(me), self.rules)

    # -- observations, rewards, info ----------------------------------------------------------
    def _phase(self) -> CubePhase:
        phase = self.game.phase
        if phase is Phase.GAME_OVER:
            return "over"
        if phase is Phase.TAKE_OR_DROP:
            return "take"
        if phase is Phase.ROLL_OR_DOUBLE:
            return "cube"
        return "move"

    def _legal_count(self, phase: CubePhase) -> int:
        if phase == "move":
            return int(self._candidates.shape[0])
        return 0 if phase == "over" else len(CUBE_ACTIONS[phase])

    def _viewer(self) -> int:
        """The seat whose view is observed: the side to act, or once over the agent
        (against an opponent) or the loser (self-play), as in ``Nard-v0``."""
        g = self.game
        if g.result is None:
            return self._actor
        return 1 - g.result.winner if self.self_play else 0

    def _board(self) -> np.ndarray:
        return self.game.position_for(self._viewer()).array()

    def _observe(self) -> np.ndarray:
        g = self.game
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        size = self.encoding.size
        # the taker sees the doubler on roll: an afterstate from its view (class docstring)
        if g.phase is Phase.TAKE_OR_DROP:
            self.encoding.encode(self._board(), on_roll=False, out=obs[:size])
        else:
            self.encoding.encode_pre_roll(self._board(), out=obs[:size])
        if g.phase is Phase.MOVE and g.dice is not None:
            dice_one_hot(np.asarray([g.dice], dtype=np.int8), out=obs[None, size:])
        return obs

    def _reward(self, actor: int) -> float:
        """The game's points from the agent's (self-play: the actor's) side, R24-R25, R33."""
        result = self.game.result
        if result is None:
            return 0.0
        points = result.points
        if self.match_length:
            winner = result.winner
            points = min(points, self.match_length - self.score[winner])
            a, b = self.score
            self.score = (a + points, b) if winner == 0 else (a, b + points)
        side = actor if self.self_play else 0
        return float(points if result.winner == side else -points)

    def _owner_name(self) -> str:
        owner = self.game.cube_owner
        if owner is None:
            return "centered"
        return _OWNER_NAMES[int(owner != self._viewer())]

    def _info(self, wrapped: bool) -> dict[str, Any]:
        g = self.game
        phase = self._phase()
        result = g.result
        if phase == "move":
            boards, moves = self._candidates, self._candidate_moves
        else:
            boards = np.zeros((0, BOARD_SIZE), dtype=np.int8)
            moves = np.zeros((0, 4, 2), dtype=np.int8)
        info = candidates_info(self.encoding, self._legal_count(phase), boards, moves)
        dice = g.dice if phase == "move" and g.dice is not None else (0, 0)
        info |= {
            "phase": phase,
            "board": self._board(),
            "dice": np.asarray(dice, dtype=np.int8),
            "seat": self._viewer(),
            "cube_value": int(g.cube_value),
            "cube_owner": self._owner_name(),
            "winner": -1 if result is None else int(result.winner),
            "points": 0 if result is None else int(result.points),
            "end_reason": None if result is None else result.reason.value,
            "passes": self._passes,
            "opponent_plies": self._opponent_plies,
            "action_wrapped": wrapped,
        }
        if self.match_length:
            info["match_score"] = self.score
            info["crawford"] = self.crawford
        return info


def _as_network(player: Player | None) -> NetworkPlayer | None:
    """``player`` if it is a network player (the module is imported only when one exists,
    so environments with benchmark opponents never load torch)."""
    module = sys.modules.get("nard_rl.players.net")
    if module is not None and isinstance(player, module.NetworkPlayer):
        return player
    return None
