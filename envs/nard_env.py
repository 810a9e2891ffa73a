"""``Nard-v0`` and ``NardSelfPlay-v0``: one game of Nard as a Gymnasium environment.

``NardEnv(cube=True)`` (and ``NardCube-v0``) builds the cube variant, ``nard_rl.envs.cube_env``.
"""

from __future__ import annotations

import mmap
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.position import validate_board
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.envs.core import MAX_CANDIDATES, GameBatch, InvalidAction, StepOutcome, observe
from nard_rl.envs.vector import observation_space, resolve_opponent
from nard_rl.nets.encoding import Encoding, get_encoding
from nard_rl.players import Player


class NardEnv(gym.Env):
    """One cubeless game of Nard (backgammon) per episode, the agent choosing afterstates.

    ## Description

    TD-Gammon-style agents score every legal afterstate of their roll and play the best,
    so each step hands the agent all of them, already encoded, and the action is the
    index of one.  The agent plays against an opponent player (``Nard-v0``, random by
    default) or against itself (``NardSelfPlay-v0``, ``opponent="self"``: the agent moves
    for both seats, each observation from the side to move).  Rolls without a legal play
    are passed automatically (R16), so every observation offers at least one play, and
    the opponent's turns happen inside ``step``.

    ## Observation Space

    ``Box(0, 7.5, (F + 12,), float32)``: the position from the view of the side to move,
    encoded by the chosen encoding (``tesauro198``: F = 198, ``extended``: F = 225; see
    ``nard_rl.nets.encoding``) in the project's one pre-roll convention,
    ``Encoding.encode_pre_roll``: as the opponent's afterstate, the inputs a self-play
    net is trained on (so its output for the observation is from the opponent's view,
    ``nard_rl.engine.rules.swap_sides`` turns it round), then the dice as two one-hot(6)
    blocks, the higher die first and the lower second (a double sets the same index in
    both).  Once the game is over the dice block is zero and the board is the final one,
    seen by the agent (against an opponent) or by the losing side (self-play).

    ## Action Space

    ``Discrete(MAX_CANDIDATES)`` with ``MAX_CANDIDATES = 3060``, a proven bound on the
    distinct plays of any position (``nard_rl.envs.core``).  Action ``a`` plays the a-th legal
    afterstate of ``info["afterstate_boards"]``.  ``info["action_mask"]`` (int8, length
    ``MAX_CANDIDATES``) marks the legal indices, which are always ``0..n-1``.  An index
    outside them is taken modulo n (``invalid_action="wrap"``, the default, so agents
    without masking and Gymnasium's checker still play legal moves; flagged by
    ``info["action_wrapped"]``) or raises ``ValueError`` (``invalid_action="raise"``).

    Per step the info also holds ``afterstates``: ``(MAX_CANDIDATES, F)`` float32, the
    legal afterstates encoded from the mover's view with ``on_roll=False``, zero rows
    beyond them; ``afterstate_boards``: ``(n, 26)`` int8 boards (mover's view); ``moves``:
    one ``(from, to)`` step list per play (``(n, 4, 2)``, to 0 = off, (-1, -1) pads);
    ``board``, ``dice``, ``seat`` (0 for the agent, 1 the opponent's seat in self-play);
    ``winner``/``points`` of a game that ended in the step; ``passes`` (R16) and
    ``opponent_plies`` during the step; ``match_score`` in match play.

    ## Rewards

    Zero until the game ends; then the points of the game: 1, 2 (gammon) or 3
    (backgammon) under ``rules="standard"`` (R25; 2 with the R26 option
    ``RuleSet.with_options(backgammon_value=2)``; all singles with ``jacoby=True``,
    R32), 1 or 2 (mars) under ``rules="mars"`` (R28).  Against an opponent the sign is
    the agent's (+ won, - lost); in self-play the reward goes to the side that just
    moved, which is the winner.  In match play (``match_length > 0``) the points are
    capped at what the winner needed to win the match (R33).

    ## Starting State

    The opening position (R4) with an opening roll (R5: never a double) for a seat drawn
    at random; when the opponent wins the opening it moves first inside ``reset``.
    ``reset(options={"board": [...26], "dice": [d1, d2]})`` starts from a given position
    instead (the agent to move; dice drawn when omitted); ``options={"score": (a, b)}``
    sets the match score (agent, opponent).

    ## Episode End

    Terminates when a side bears off its 15th checker (R21).  Never truncates
    (Gymnasium's ``TimeLimit`` can be added through ``max_episode_steps``).

    ## Arguments

    * ``opponent``: ``"random"`` (default), ``"pubeval"``, ``"gnubg"``/``"gnubg:PLY"``, a
      checkpoint path, ``"default"``, a ``Player``, or ``"self"`` for self-play.
    * ``rules``: ``"standard"`` (default), ``"mars"`` or a ``RuleSet``; the cube is never
      offered here.
    * ``cube``: False (default).  ``NardEnv(cube=True)`` returns a
      ``nard_rl.envs.cube_env.NardCubeEnv`` (a subclass, same spaces), where the doubling
      cube is played (standard rules only).
    * ``encoding``: ``"tesauro198"`` (default) or ``"extended"``.
    * ``match_length`` (0: money play) and ``score``: match play, see Rewards.
    * ``invalid_action``: ``"wrap"`` (default) or ``"raise"``.
    * ``render_mode``: None or ``"ansi"`` (gnubg-style text diagram).

    ``reset(seed=...)`` seeds the dice and an opponent built from a spec string.

    ## Version History

    * v0: first version (cubeless; money or match points); ``cube=True`` selects the cube
      variant (``NardCubeEnv``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __new__(cls, *args: Any, **kwargs: Any) -> NardEnv:
        # ``cube=True`` is an option of the same environment for its users (``gym.make(
        # "Nard-v0", cube=True)``), but a different game flow (the engine's ``Game`` state
        # machine instead of the batch arrays), so it is a subclass picked here; Python then
        # runs the subclass's ``__init__`` with the same arguments.
        if cls is NardEnv and kwargs.get("cube", False):
            from nard_rl.envs.cube_env import NardCubeEnv

            return super().__new__(NardCubeEnv)
        return super().__new__(cls)

    def __init__(
        self,
        opponent: str | Player = "random",
        rules: str | RuleSet = "standard",
        encoding: str = "tesauro198",
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        *,
        cube: bool = False,
        invalid_action: InvalidAction = "wrap",
        render_mode: str | None = None,
    ) -> None:
        if cube:  # only a subclass gets here: NardEnv itself dispatches in __new__
            raise ValueError(
                f"{type(self).__name__} is cubeless; use nard_rl.envs.cube_env.NardCubeEnv"
            )
        self._configure(opponent, rules, encoding, match_length, score, render_mode)
        self.rules = self.rules.with_options(cube=False)
        self.opponent = resolve_opponent(opponent, self.rules, None)
        self.game = GameBatch(
            1,
            self.rules,
            self.np_random,
            opponent=self.opponent,
            autoreset=False,
            invalid_action=invalid_action,
        )

    def _configure(
        self,
        opponent: str | Player,
        rules: str | RuleSet,
        encoding: str,
        match_length: int,
        score: tuple[int, int],
        render_mode: str | None,
    ) -> None:
        """The settings both game flows share (the opponent is resolved by each)."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if match_length < 0:
            raise ValueError(f"match_length must be >= 0, got {match_length}")
        self.render_mode = render_mode
        self.rules = get_rules(rules)
        if match_length:
            self.rules = self.rules.with_options(jacoby=False)  # R33: no Jacoby in matches
        self.encoding = get_encoding(encoding)
        self.match_length = int(match_length)
        self.initial_score = check_score(score)
        self.score = self.initial_score
        self.self_play = opponent == "self"
        self._opponent_spec = opponent if isinstance(opponent, str) else None
        self.opponent: Player | None = None
        self.observation_space = observation_space(self.encoding)
        self.action_space = gym.spaces.Discrete(MAX_CANDIDATES)

    def _reseed_opponent(self, seed: int | None) -> None:
        """Rebuild an opponent made from a spec string with a seed drawn from ``seed``, so
        the same reset seed replays the same game (a random opponent has its own dice)."""
        if seed is None or self._opponent_spec in (None, "self"):
            return
        if self.opponent is not None:
            self.opponent.close()
        assert self._opponent_spec is not None
        self.opponent = resolve_opponent(
            self._opponent_spec, self.rules, int(self.np_random.integers(2**63))
        )

    # -- Gymnasium API ------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._reseed_opponent(seed)
        self.game.opponent = self.opponent
        self.game.rng = self.np_random
        opts = check_reset_options(options, RESET_OPTIONS)
        self.score = check_score(opts["score"]) if "score" in opts else self.initial_score
        board, dice = check_reset_position(opts.get("board"), opts.get("dice"))
        outcome = self.game.reset(boards=board, dice=dice)
        if outcome.winner[0] >= 0:
            # From the opening an opponent cannot win before our first move; from a given
            # position where we only ever pass (R16) it can, and there is no episode left.
            raise ValueError("the game ended before the agent's first move; pick another board")
        return self._observe(), self._info(outcome)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        outcome = self.game.step(np.array([int(action)], dtype=np.int64))
        reward = self._reward(outcome)
        terminated = bool(outcome.winner[0] >= 0)
        return self._observe(), reward, terminated, False, self._info(outcome)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        from nard_rl.engine.ascii import render_board

        g = self.game
        text = render_board(g.boards[0].tolist())
        if g.over[0]:
            return text + "\nGame over\n"
        return text + f"\nDice: {int(g.dice[0, 0])}-{int(g.dice[0, 1])}\n"

    def close(self) -> None:
        if self.opponent is not None and self._opponent_spec is not None:
            self.opponent.close()
        super().close()

    # -- helpers ------------------------------------------------------------------------
    def _reward(self, outcome: StepOutcome) -> float:
        winner = int(outcome.winner[0])
        if winner < 0:
            return 0.0
        points = int(outcome.points[0])
        if self.match_length:
            # R33: a win scores no more than the winner needs to reach the match length.
            points = min(points, max(self.match_length - self.score[winner], 1))
            a, b = self.score
            self.score = (a + points, b) if winner == 0 else (a, b + points)
        if self.self_play or winner == 0:
            return float(points)
        return -float(points)

    def _observe(self) -> np.ndarray:
        return observe(self.game, self.encoding)[0]

    def _info(self, outcome: StepOutcome) -> dict[str, Any]:
        g = self.game
        n = int(g.offsets[1])
        boards = g.afters[:n].copy()
        moves = self._moves(boards) if n else np.zeros((0, 4, 2), dtype=np.int8)
        info = candidates_info(self.encoding, n, boards, moves)
        info |= {
            "board": g.boards[0].copy(),
            "dice": g.dice[0].copy(),
            "seat": int(g.seat[0]),
            "winner": int(outcome.winner[0]),
            "points": int(outcome.points[0]),
            "passes": int(outcome.passes[0]),
            "opponent_plies": int(outcome.opponent_plies[0]),
            "action_wrapped": bool(outcome.wrapped[0]),
        }
        if self.match_length:
            info["match_score"] = self.score
        return info

    def _moves(self, boards: np.ndarray) -> np.ndarray:
        """Step lists of the candidates, in the candidates' order (a second movegen call
        with moves recorded; it lists the same afterstates in the same order)."""
        g = self.game
        afters, moves = plays_with_moves(g.boards[0], g.dice[0], self.rules)
        if not np.array_equal(afters, boards):  # pragma: no cover - movegen is deterministic
            raise RuntimeError("move generator returned a different candidate order")
        return moves


def plays_with_moves(
    board: np.ndarray, dice: np.ndarray | tuple[int, int], rules: RuleSet
) -> tuple[np.ndarray, np.ndarray]:
    """The legal afterstates of a roll with their ``(n, 4, 2)`` step lists, pads ``(-1, -1)``."""
    afters, moves = legal_afterstates(
        np.asarray(board, dtype=np.int8), int(dice[0]), int(dice[1]), rules.waste_rule
    )
    moves = moves.copy()
    moves[moves[:, :, 0] < 0] = -1  # the generator leaves the pads' "to" unset
    return afters, moves


def candidates_info(
    encoding: Encoding, legal: int, boards: np.ndarray, moves: np.ndarray
) -> dict[str, Any]:
    """The info entries that describe a step's legal actions.

    ``legal`` actions ``0..legal-1`` are marked in ``action_mask``; ``boards``/``moves`` are
    the candidate afterstates of a move step (empty for the cube variant's other steps),
    encoded from the mover's view with ``on_roll=False`` into ``afterstates``.
    """
    mask = np.zeros(MAX_CANDIDATES, dtype=np.int8)
    mask[:legal] = 1
    encoded = _fresh_zeros(MAX_CANDIDATES, encoding.size)
    n = boards.shape[0]
    if n:
        encoded[:n] = encoding.encode(boards, on_roll=False)
    return {
        "action_mask": mask,
        "afterstates": encoded,
        "afterstate_boards": boards,
        "moves": moves,
    }


RESET_OPTIONS = frozenset({"board", "dice", "score"})
"""The keys ``NardEnv.reset(options=...)`` reads."""


def check_reset_options(options: object, known: frozenset[str]) -> dict[str, Any]:
    """``options`` as a dict of known keys, or a ValueError naming the stray ones (a
    misspelt key would otherwise be ignored and the game start from the opening)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    stray = sorted(str(k) for k in options if k not in known)
    if stray:
        raise ValueError(
            f"unknown reset option(s) {', '.join(stray)}; accepted: {', '.join(sorted(known))}"
        )
    return options


def check_score(score: object) -> tuple[int, int]:
    """A match score from outside as two ints, or a ValueError: floats and bools are refused,
    not truncated (``(1.7, 0)`` is no score)."""
    try:
        values = tuple(score)  # type: ignore[call-overload]
    except TypeError:
        values = ()
    if len(values) != 2 or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 0
        for v in values
    ):
        raise ValueError(
            f"score must be two non-negative integers (agent, opponent), got {score!r}"
        )
    return int(values[0]), int(values[1])


def check_reset_position(
    board: object, dice: object
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The ``board`` and ``dice`` reset options as a batch of one (``(1, 26)`` and ``(1, 2)``
    int8), validated entry by entry before any cast, with the engine's board checks
    (``validate_board``, which the vector environment's ``validate_boards`` vectorises;
    dice: integers in 1..6): a fractional, boolean or out-of-range entry raises
    ``ValueError`` (``PositionError`` for boards) instead of being truncated or wrapped into
    int8."""
    boards = None if board is None else np.array([validate_board(board)], dtype=np.int8)
    rolls = None
    if dice is not None:
        if board is None:  # the opening's roll is drawn (R5): a given one would be ignored
            raise ValueError("the dice option needs a board option (the position to roll at)")
        try:
            values = list(dice)  # type: ignore[call-overload]
        except TypeError:
            values = []
        if len(values) != 2 or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 1 <= v <= 6
            for v in values
        ):
            raise ValueError(f"dice must be two integers in 1..6, got {dice!r}")
        rolls = np.array([values], dtype=np.int8)
    return boards, rolls


def _fresh_zeros(rows: int, cols: int) -> np.ndarray:
    """A zeroed float32 matrix in fresh anonymous memory.

    The candidate matrix is 3060 rows of which a step fills a few dozen; untouched pages of
    an anonymous mapping are the kernel's shared zero page, so only the written rows cost
    anything, where ``np.zeros`` would clear all 2.4 MB of a recycled heap block per step.
    """
    buf = mmap.mmap(-1, rows * cols * 4)
    return np.frombuffer(buf, dtype=np.float32).reshape(rows, cols)
