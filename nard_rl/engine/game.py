"""The flow of one game and of a match: a small explicit state machine.

Every layer that plays (the CLI demo, environments, servers, tournaments) drives the same
``Game``: it asks ``phase`` and ``player_to_act`` what is expected, calls one action, and
gets an ``IllegalActionError`` with the reason when the action is not allowed now.  All
rules live here or below (the move generator); nothing above has to know them.

* The opening (R5, R31), turns with forced passes (R12-R16), the end of the game and its
  value (R21, R25, R26, R28, R32) follow the rule book sections 2, 4, 6, 7 and 8.
* The cube (R22-R24, R34), resignations (R27, R30) and the clock (R30) are actions and
  phases of the same machine, so a driver never has to special-case them.
* Dice come from a seeded ``numpy.random.Generator(PCG64(seed))`` (R39), or from an
  injected sequence (tests, replays), so the same seed and the same decisions always give
  the same game.
* Every action is appended to ``record`` as a typed event; ``Game.replay`` rebuilds a game
  from its record and ``nard_rl.engine.matfile`` exports it.

A ``Match`` is a sequence of games with the score, the cap at N points (R33) and the
Crawford game (R34); a match of length 0 is a money session.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

import numpy as np

from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.movetext import format_plays
from nard_rl.engine.position import (
    CHECKERS,
    START_BOARD,
    Play,
    Position,
    PositionError,
    apply_steps,
    flip_board,
    validate_board,
)
from nard_rl.engine.rules import RuleSet, get_rules, result_points

Clock = Callable[[], float]
Dice = tuple[int, int]


class IllegalActionError(ValueError):
    """An action that the rules or the current phase do not allow; the message says why."""


class Phase(Enum):
    """What the game waits for."""

    OPENING = "opening"
    """Each side throws one die (R5); ``roll()``."""
    ROLL_OR_DOUBLE = "roll_or_double"
    """Start of a turn: ``roll()``, ``double()`` (R23) or ``resign()``."""
    TAKE_OR_DROP = "take_or_drop"
    """The doubled player answers: ``take()`` or ``drop()`` (R24)."""
    MOVE = "move"
    """Dice are rolled and a legal play exists: ``play()`` or ``resign()``."""
    RESIGN_PENDING = "resign_pending"
    """The opponent of the resigner answers: ``accept_resignation()`` or
    ``decline_resignation()`` (R27)."""
    GAME_OVER = "game_over"
    """``result`` is set; no action is allowed."""


class ResultKind(Enum):
    """How big a win is on the board (R25, R28); what it scores is ``GameResult.multiplier``."""

    SINGLE = 1
    GAMMON = 2
    """A gammon; under mars this is the mars (R28)."""
    BACKGAMMON = 3


class EndReason(Enum):
    BEAR_OFF = "bear_off"
    """The winner bore off all 15 checkers (R21)."""
    DROP = "drop"
    """A double was dropped (R24)."""
    RESIGN = "resign"
    """A resignation was accepted (R27, R30)."""
    TIMEOUT = "timeout"
    """The loser's reserve ran out (R30)."""


@dataclass(frozen=True)
class GameResult:
    winner: int
    kind: ResultKind
    reason: EndReason
    multiplier: int
    """The result's value before the stake: 1, 2, 3 (R25, R26, R28, R30, R32)."""
    cube: int
    """The stake the game was played for (R22, R24, R31)."""

    @property
    def points(self) -> int:
        """Points won, before a match caps the score at N (R33)."""
        return self.multiplier * self.cube


class Step(NamedTuple):
    """One checker step of a play, in the mover's numbering: 25 is the bar, 0 is off."""

    src: int
    dst: int
    hit: bool


# Record events ------------------------------------------------------------------------------
# Players are 0 and 1; boards are from the view of the player named in the event.


@dataclass(frozen=True)
class OpeningRoll:
    """One opening throw (R5): ``dice[p]`` is player p's die; a tie is thrown again."""

    dice: Dice


@dataclass(frozen=True)
class AutomaticDouble:
    """An opening tie doubled the stake with the cube in the middle (R31)."""

    cube: int


@dataclass(frozen=True)
class Roll:
    player: int
    dice: Dice


@dataclass(frozen=True)
class Move:
    """A committed play (R38): ``board`` is the result from the mover's view."""

    player: int
    dice: Dice
    move: str
    steps: tuple[Step, ...]
    board: tuple[int, ...]


@dataclass(frozen=True)
class NoPlay:
    """The roll had no legal play and the turn passed (R12, R16)."""

    player: int
    dice: Dice


@dataclass(frozen=True)
class Double:
    """``player`` offers the cube at ``cube``, the stake if taken (R23)."""

    player: int
    cube: int


@dataclass(frozen=True)
class Take:
    player: int
    cube: int


@dataclass(frozen=True)
class Drop:
    player: int


@dataclass(frozen=True)
class Resign:
    player: int
    kind: ResultKind


@dataclass(frozen=True)
class ResignationAccepted:
    player: int


@dataclass(frozen=True)
class ResignationDeclined:
    player: int


@dataclass(frozen=True)
class TimeOut:
    """``player``'s turn time and reserve ran out (R30)."""

    player: int


@dataclass(frozen=True)
class GameOver:
    result: GameResult


Event = (
    OpeningRoll
    | AutomaticDouble
    | Roll
    | Move
    | NoPlay
    | Double
    | Take
    | Drop
    | Resign
    | ResignationAccepted
    | ResignationDeclined
    | TimeOut
    | GameOver
)

_PHASE_HINTS = {
    Phase.OPENING: "the opening roll comes first (R5): call roll()",
    Phase.ROLL_OR_DOUBLE: "the player on roll must roll (or double) first",
    Phase.TAKE_OR_DROP: "a double is pending: the doubled player must take or drop (R24)",
    Phase.MOVE: "the dice are rolled: the player on roll must play them",
    Phase.RESIGN_PENDING: "a resignation is pending: accept or decline it first (R27)",
    Phase.GAME_OVER: "the game is over",
}


def _parse_move(text: str) -> list[tuple[int, int]] | None:
    """The steps ``(from, to)`` of a move text, or None if it cannot be read.

    Accepts the engine's notation and its variants: parts in any order, chains
    (``24/20*/16``), counts (``8/2(2)``), ``bar``/``25`` and ``off``/``0``.  A ``*`` is
    decoration: hits follow from the board.
    """
    steps: list[tuple[int, int]] = []
    for token in text.lower().split():
        count = 1
        if token.endswith(")") and "(" in token:
            token, _, n = token[:-1].partition("(")
            if not n.isdigit():
                return None
            count = int(n)
        points: list[int] = []
        for name in token.replace("*", "").split("/"):
            value = {"bar": 25, "off": 0}.get(name, int(name) if name.isdigit() else -1)
            if not 0 <= value <= 25:
                return None
            points.append(value)
        if len(points) < 2:
            return None
        steps.extend(list(itertools.pairwise(points)) * count)
    return steps


def _fixed_resignation(rules: RuleSet) -> bool:
    """Whether a resignation's value is set by R30 rather than chosen (R27).

    R30 belongs to the rule set without a cube (mars, R28); where the cube is used the
    resigner offers a single, gammon or backgammon.
    """
    return not rules.cube


def _apply_steps(
    board: Sequence[int], steps: Iterable[tuple[int, int]]
) -> tuple[tuple[Step, ...], tuple[int, ...]]:
    """``position.apply_steps`` with its steps as ``Step`` records."""
    done, after = apply_steps(board, steps)
    return tuple(Step(*st) for st in done), after


def _raw_steps(raw: np.ndarray) -> list[tuple[int, int]]:
    """One generated play's ``(from, to)`` rows, without the ``-1`` padding."""
    return [(int(f), int(t)) for f, t in raw if f >= 0]


class Game:
    """One game, from the opening roll (or a given position) to its result.

    ``match_length`` 0 is money play; a positive length switches off the money options
    (R31 automatic doubles, R32 Jacoby, R33), and ``crawford`` forbids doubling (R34).
    ``start`` begins at a position instead of the opening: ``player_on_roll`` moves next
    and ``start`` is from that player's view.
    """

    def __init__(
        self,
        rules: RuleSet | str = "standard",
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        dice: Iterable[Sequence[int]] | None = None,
        match_length: int = 0,
        crawford: bool = False,
        clock: Clock = time.monotonic,
        start: Position | Sequence[int] | None = None,
        player_on_roll: int = 0,
        cube_value: int = 1,
        cube_owner: int | None = None,
    ) -> None:
        self.rules = get_rules(rules)
        if rng is not None and seed is not None:
            raise ValueError("give either seed or rng, not both")
        self._rng = rng if rng is not None else np.random.Generator(np.random.PCG64(seed))
        self._dice_source: Iterator[Sequence[int]] | None = iter(dice) if dice is not None else None
        if match_length < 0:
            raise ValueError("match_length must be >= 0 (0 is money play)")
        if player_on_roll not in (0, 1) or cube_owner not in (None, 0, 1):
            raise ValueError("players are 0 and 1")
        if cube_value < 1 or cube_value & (cube_value - 1) or cube_value > self.rules.cube_max:
            raise ValueError(f"cube value must be a power of two up to {self.rules.cube_max}")
        self.match_length = match_length
        self.crawford = crawford
        self.cube_value = cube_value
        self.cube_owner = cube_owner
        self.record: list[Event] = []
        self.result: GameResult | None = None
        self._clock = clock
        self._player = player_on_roll
        self._dice: Dice | None = None
        self._plays: list[Play] = []
        self._steps: list[tuple[Step, ...]] = []
        self._automatic_doubles = 0
        self._resigned: tuple[int, ResultKind, Phase] | None = None
        reserve = self.rules.reserve_seconds or 0.0
        self._reserve = [float(reserve), float(reserve)]
        self._turn_started: float | None = None
        self._paused_at: float | None = None
        """When a pending resignation stopped the clock (R30: answers are not timed)."""
        if start is None:
            self._board: tuple[int, ...] = START_BOARD
            self._phase = Phase.OPENING
        else:
            board = start.board if isinstance(start, Position) else validate_board(start)
            if Position(board, validate=False).winner() is not None:
                raise PositionError("the start position is already won")
            self._board = board
            self._phase = Phase.ROLL_OR_DOUBLE
            self._start_turn()

    # state ------------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def player_on_roll(self) -> int:
        """The player whose turn it is (0 before the opening roll decides, R5)."""
        return self._player

    @property
    def player_to_act(self) -> int:
        """Whose decision the game waits for: the doubled player in ``TAKE_OR_DROP``, the
        resigner's opponent in ``RESIGN_PENDING``, otherwise the player on roll."""
        if self._phase is Phase.TAKE_OR_DROP:
            return 1 - self._player
        if self._phase is Phase.RESIGN_PENDING and self._resigned is not None:
            return 1 - self._resigned[0]
        return self._player

    @property
    def position(self) -> Position:
        """The position from the view of the player on roll."""
        return Position(self._board, validate=False)

    def position_for(self, player: int) -> Position:
        """The position from ``player``'s view."""
        return self.position if player == self._player else self.position.flip()

    @property
    def dice(self) -> Dice | None:
        """The roll to be played in ``MOVE`` (the opening winner's die first, R5)."""
        return self._dice

    @property
    def is_over(self) -> bool:
        return self._phase is Phase.GAME_OVER

    @property
    def pending_resignation(self) -> tuple[int, ResultKind] | None:
        """``(resigner, kind)`` while a resignation waits for an answer."""
        return None if self._resigned is None else self._resigned[:2]

    # clock (R30) --------------------------------------------------------------------------
    @property
    def has_clock(self) -> bool:
        return self.rules.turn_seconds is not None

    def time_left(self, player: int) -> tuple[float, float]:
        """``(turn time, reserve)`` left to ``player`` now (R30).

        The clock runs for the player on roll from the start of the turn until the play
        is committed (or the roll passes); answers to a double or a resignation are not
        timed (the mars rule set has no cube anyway): the clock stops while a resignation
        waits for its answer, so waiting cannot turn a resignation into a timeout.
        """
        if not self.has_clock:
            return float("inf"), float("inf")
        turn = float(self.rules.turn_seconds or 0.0)
        reserve = self._reserve[player]
        if player != self._player or self._turn_started is None:
            return turn, reserve
        now = self._paused_at if self._paused_at is not None else self._clock()
        elapsed = now - self._turn_started
        over = max(0.0, elapsed - turn)
        return max(0.0, turn - elapsed), reserve - over

    def check_clock(self) -> bool:
        """End the game if the player on roll has used up turn time and reserve (R30).

        Every action calls it first; a server polls it so a silent player still loses.
        Returns whether the game ended on time.
        """
        if self._phase is Phase.GAME_OVER or not self.has_clock or self._turn_started is None:
            return False
        if self._paused_at is not None:
            return False
        if self.time_left(self._player)[1] >= 0.0:
            return False
        self._time_out(self._player)
        return True

    def _time_out(self, player: int) -> None:
        self.record.append(TimeOut(player))
        self._finish(1 - player, ResultKind.GAMMON, EndReason.TIMEOUT, self.rules.timeout_value)

    def _start_turn(self) -> None:
        self._turn_started = self._clock() if self.has_clock else None

    def _charge_clock(self) -> None:
        """Take the time over the turn allowance out of the mover's reserve (R30)."""
        if self._turn_started is not None:
            self._reserve[self._player] = self.time_left(self._player)[1]
        self._turn_started = None

    # dice -----------------------------------------------------------------------------------
    def _draw(self, dice: Sequence[int] | None) -> Dice:
        if dice is None and self._dice_source is not None:
            try:
                dice = next(self._dice_source)
            except StopIteration:
                raise ValueError("the injected dice ran out") from None
        if dice is None:
            d = self._rng.integers(1, 7, size=2)
            return int(d[0]), int(d[1])
        if len(dice) != 2 or not all(int(v) == v and 1 <= v <= 6 for v in dice):
            raise ValueError(f"dice must be two integers in 1..6, got {dice!r}")
        return int(dice[0]), int(dice[1])

    # actions --------------------------------------------------------------------------------
    def _require(self, action: str, *phases: Phase) -> None:
        if self.check_clock():
            raise IllegalActionError(
                f"cannot {action}: player {self._player} ran out of time (R30); the game is over"
            )
        if self._phase not in phases:
            raise IllegalActionError(
                f"cannot {action} in phase {self._phase.value}: {_PHASE_HINTS[self._phase]}"
            )

    def roll(self, dice: Sequence[int] | None = None) -> Dice:
        """Throw the dice (or use ``dice``) and return them.

        In ``OPENING`` this is one opening throw, ``(player 0's die, player 1's die)``: the
        higher die moves first with both dice, a tie stays in ``OPENING`` (R5) and may
        double the stake (R31).  In ``ROLL_OR_DOUBLE`` a roll without a legal play passes
        the turn at once (R12, R16).
        """
        self._require("roll", Phase.OPENING, Phase.ROLL_OR_DOUBLE)
        rolled = self._draw(dice)
        if self._phase is Phase.OPENING:
            self._opening(rolled)
            return rolled
        self.record.append(Roll(self._player, rolled))
        self._set_roll(rolled)
        if not self._plays:
            self.record.append(NoPlay(self._player, rolled))
            self._charge_clock()
            self._pass_turn(self._board)
        return rolled

    def _opening(self, rolled: Dice) -> None:
        self.record.append(OpeningRoll(rolled))
        if rolled[0] == rolled[1]:
            if self._automatic_double_allowed():
                self.cube_value *= 2
                self._automatic_doubles += 1
                self.record.append(AutomaticDouble(self.cube_value))
            return
        winner = 0 if rolled[0] > rolled[1] else 1
        self._player = winner
        self._start_turn()
        self._set_roll((rolled[winner], rolled[1 - winner]))

    def _automatic_double_allowed(self) -> bool:
        """R31: money play only (R33), at most ``automatic_doubles`` per game, cube <= max."""
        return (
            self.rules.cube
            and self.match_length == 0
            and self._automatic_doubles < self.rules.automatic_doubles
            and self.cube_value * 2 <= self.rules.cube_max
        )

    def _set_roll(self, rolled: Dice) -> None:
        afters, raw = legal_afterstates(
            np.array(self._board, dtype=np.int8), rolled[0], rolled[1], self.rules.waste_rule
        )
        self._dice = rolled
        moves = format_plays(self._board, raw)
        self._plays = [Play(m, tuple(a)) for m, a in zip(moves, afters.tolist(), strict=True)]
        self._steps = [
            _apply_steps(self._board, _raw_steps(raw[i]))[0] for i in range(afters.shape[0])
        ]
        self._phase = Phase.MOVE

    def _pass_turn(self, mover_board: tuple[int, ...]) -> None:
        self._board = flip_board(mover_board)
        self._player = 1 - self._player
        self._dice = None
        self._plays = []
        self._steps = []
        self._phase = Phase.ROLL_OR_DOUBLE
        self._start_turn()

    def legal_plays(self) -> list[Play]:
        """The legal plays of the rolled dice (R13-R20, R29), one per resulting position."""
        self._require("list legal plays", Phase.MOVE)
        return list(self._plays)

    def play(self, choice: str | Position | Sequence[int]) -> Move:
        """Commit a play (R38), given as its resulting board from the mover's view (a
        ``Position`` or 26 ints) or as a move text that leads to it (``"24/18 13/11"``,
        parts in any order, chains split or joined, ``25``/``0`` for ``bar``/``off``)."""
        self._require("play", Phase.MOVE)
        index = self._find_play(choice)
        play = self._plays[index]
        assert self._dice is not None
        event = Move(self._player, self._dice, play.move, self._steps[index], play.board)
        self.record.append(event)
        self._charge_clock()
        if Position(play.board, validate=False).checkers_off()[0] == CHECKERS:
            self._dice = None
            self._finish_bear_off(play.board)
        else:
            self._pass_turn(play.board)
        return event

    def find_play(self, choice: str | Position | Sequence[int]) -> Play:
        """The legal play ``choice`` names (as ``play`` accepts it), without committing it:
        a chouette team records its members' suggestions (R35) before the captain commits."""
        self._require("look up a play", Phase.MOVE)
        return self._plays[self._find_play(choice)]

    def _find_play(self, choice: str | Position | Sequence[int]) -> int:
        assert self._dice is not None
        roll = f"{self._dice[0]}-{self._dice[1]}"
        if isinstance(choice, str):
            steps = _parse_move(choice)
            try:
                after = None if steps is None else apply_steps(self._board, steps)[1]
            except PositionError:  # a step from a point without a checker of the mover
                after = None
            if after is not None:
                for i, p in enumerate(self._plays):
                    if p.board == after:
                        return i
            shown = ", ".join(p.move for p in self._plays[:12])
            more = "" if len(self._plays) <= 12 else f", ... ({len(self._plays)} in all)"
            raise IllegalActionError(
                f"{choice!r} is not a legal play for {roll} (R8-R20); legal: {shown}{more}"
            )
        try:
            board = choice.board if isinstance(choice, Position) else validate_board(choice)
        except PositionError as exc:
            raise IllegalActionError(f"not a valid board: {exc}") from None
        for i, p in enumerate(self._plays):
            if p.board == board:
                return i
        if board == self._board:
            raise IllegalActionError(
                f"a legal play exists for {roll}, so the player must move (R13)"
            )
        raise IllegalActionError(
            f"that board is not reachable with {roll} under the rules: checkers move by the "
            "dice onto open points (R8-R11), as many dice as possible are used (R14), the "
            f"higher die when only one can be (R15); {len(self._plays)} legal plays"
        )

    def double(self) -> Double:
        """Offer the cube before rolling (R23); the opponent must take or drop."""
        self._require("double", Phase.ROLL_OR_DOUBLE)
        reason = self.double_refusal()
        if reason is not None:
            raise IllegalActionError(f"player {self._player} cannot double: {reason}")
        event = Double(self._player, self.cube_value * 2)
        self.record.append(event)
        self._phase = Phase.TAKE_OR_DROP
        return event

    def can_double(self) -> bool:
        """Whether the player on roll may double now (R23, R24, R28, R34)."""
        return self._phase is Phase.ROLL_OR_DOUBLE and self.double_refusal() is None

    def double_refusal(self) -> str | None:
        """Why the player on roll may not double at the start of a turn, or None."""
        if not self.rules.cube:
            return f"the {self.rules.name} rule set has no doubling cube (R28)"
        if self.crawford:
            return "no doubling in the Crawford game (R34)"
        if self.cube_owner is not None and self.cube_owner != self._player:
            return "only the owner of the cube may redouble (R23)"
        if self.cube_value * 2 > self.rules.cube_max:
            return f"the cube is at {self.cube_value}, its highest value (R24)"
        return None

    def take(self) -> Take:
        """Accept the double: the stake doubles and the taker owns the cube (R24)."""
        self._require("take", Phase.TAKE_OR_DROP)
        taker = 1 - self._player
        self.cube_value *= 2
        self.cube_owner = taker
        event = Take(taker, self.cube_value)
        self.record.append(event)
        self._phase = Phase.ROLL_OR_DOUBLE
        return event

    def drop(self) -> GameResult:
        """Refuse the double: the doubler wins the stake held before the double (R24)."""
        self._require("drop", Phase.TAKE_OR_DROP)
        self.record.append(Drop(1 - self._player))
        return self._finish(self._player, ResultKind.SINGLE, EndReason.DROP, 1)

    def resign(self, kind: ResultKind | None = None, player: int | None = None) -> Resign:
        """Offer to resign (R27); ``player`` defaults to the player on roll.

        With a cube the resigner chooses the kind (default single); under mars the value is
        fixed by R30: a mars (2) when the resigner has borne off no checker, else 1.
        """
        self._require("resign", Phase.ROLL_OR_DOUBLE, Phase.MOVE)
        resigner = self._player if player is None else player
        if resigner not in (0, 1):
            raise IllegalActionError("players are 0 and 1")
        if _fixed_resignation(self.rules):
            off = self.position_for(resigner).checkers_off()[0]
            fixed = ResultKind.GAMMON if off == 0 else ResultKind.SINGLE
            if kind is not None and kind is not fixed:
                raise IllegalActionError(
                    f"under {self.rules.name} rules a resignation is a {fixed.name.lower()} "
                    f"here, not a {kind.name.lower()} (R30)"
                )
            kind = fixed
        elif kind is None:
            kind = ResultKind.SINGLE
        event = Resign(resigner, kind)
        self.record.append(event)
        self._resigned = (resigner, kind, self._phase)
        self._phase = Phase.RESIGN_PENDING
        if self._turn_started is not None:
            self._paused_at = self._clock()
        return event

    def accept_resignation(self) -> GameResult:
        """The resigner's opponent wins the offered result times the stake (R27)."""
        self._require("accept a resignation", Phase.RESIGN_PENDING)
        assert self._resigned is not None
        resigner, kind, _ = self._resigned
        self.record.append(ResignationAccepted(1 - resigner))
        self._resigned = None
        return self._finish(1 - resigner, kind, EndReason.RESIGN, self._multiplier(kind))

    def decline_resignation(self) -> ResignationDeclined:
        """Play goes on where it stopped (R27)."""
        self._require("decline a resignation", Phase.RESIGN_PENDING)
        assert self._resigned is not None
        resigner, _, previous = self._resigned
        event = ResignationDeclined(1 - resigner)
        self.record.append(event)
        self._resigned = None
        self._phase = previous
        if self._paused_at is not None and self._turn_started is not None:
            self._turn_started += self._clock() - self._paused_at  # the pause is not charged
        self._paused_at = None
        return event

    # the end ----------------------------------------------------------------------------------
    def _multiplier(self, kind: ResultKind) -> int:
        """R25/R26/R28 values; R32 Jacoby makes every win single in money play while the
        cube has not been turned."""
        turned = self.match_length > 0 or self.cube_owner is not None  # R33: no Jacoby
        gammon, backgammon = kind is not ResultKind.SINGLE, kind is ResultKind.BACKGAMMON
        return int(result_points(self.rules, gammon, backgammon, cube_turned=turned))

    def _finish_bear_off(self, board: tuple[int, ...]) -> None:
        """R21 and R25: gammon if the loser bore off none, backgammon if also a loser's
        checker is on the bar or in the winner's home board."""
        off_loser = Position(board, validate=False).checkers_off()[1]
        kind = ResultKind.SINGLE
        if off_loser == 0:
            in_home = board[0] < 0 or any(board[p] < 0 for p in range(1, 7))
            kind = ResultKind.BACKGAMMON if in_home else ResultKind.GAMMON
        self._board = board
        self._finish(self._player, kind, EndReason.BEAR_OFF, self._multiplier(kind))

    def _finish(
        self, winner: int, kind: ResultKind, reason: EndReason, multiplier: int
    ) -> GameResult:
        result = GameResult(winner, kind, reason, multiplier, self.cube_value)
        self.result = result
        self._phase = Phase.GAME_OVER
        self._turn_started = None
        self._paused_at = None
        self.record.append(GameOver(result))
        return result

    # replay -----------------------------------------------------------------------------------
    @classmethod
    def replay(cls, events: Iterable[Event], **kwargs: object) -> Game:
        """Rebuild a game by feeding a record's dice and decisions to a new ``Game``
        (``kwargs`` as for the constructor, e.g. ``rules``, ``match_length``).  Raises
        ``IllegalActionError`` if the record breaks the rules and ``ValueError`` if its
        result differs from the one the rules give."""
        game = cls(**kwargs)  # type: ignore[arg-type]
        for event in events:
            game.apply(event)
        return game

    def apply(self, event: Event) -> None:
        """Feed one recorded event (a roll, a play, a cube action, a resignation, a
        time-out) to this game, as the player who made it did; a ``GameOver`` checks the
        result instead.  Raises ``IllegalActionError`` where the rules forbid it."""
        if isinstance(event, (OpeningRoll, Roll)):
            self.roll(event.dice)
        elif isinstance(event, Move):
            self.play(event.board)
        elif isinstance(event, Double):
            self.double()
        elif isinstance(event, Take):
            self.take()
        elif isinstance(event, Drop):
            self.drop()
        elif isinstance(event, Resign):
            self.resign(event.kind, event.player)
        elif isinstance(event, ResignationAccepted):
            self.accept_resignation()
        elif isinstance(event, ResignationDeclined):
            self.decline_resignation()
        elif isinstance(event, TimeOut):
            self._time_out(event.player)
        elif isinstance(event, GameOver) and self.result != event.result:
            raise ValueError(f"replayed result {self.result} differs from {event.result}")


def result_name(result: GameResult, rules: RuleSet) -> str:
    """``a single game``, ``a gammon``, ``a backgammon``; under the rule set without a
    cube every double win is ``a mars`` (R28), whatever the board looked like."""
    if result.kind is ResultKind.SINGLE:
        return "a single game"
    if not rules.cube:
        return "a mars"
    return "a " + result.kind.name.lower()


def running_scores(games: Sequence[Game], length: int = 0) -> list[tuple[int, int]]:
    """The score before each game and after the last: ``len(games) + 1`` pairs.

    In a match (``length`` > 0) a score never passes the length (R33); unfinished games
    score nothing.
    """
    score = [0, 0]
    out = [(0, 0)]
    for game in games:
        if game.result is not None:
            w = game.result.winner
            score[w] += game.result.points
            if length:
                score[w] = min(score[w], length)
        out.append((score[0], score[1]))
    return out


class Match:
    """Games to ``length`` points (R33) with the Crawford rule (R34); length 0 is a money
    session of any number of games.  All games draw dice from one seeded generator."""

    def __init__(
        self,
        length: int,
        rules: RuleSet | str = "standard",
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        dice: Iterable[Sequence[int]] | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        if length < 0:
            raise ValueError("match length must be >= 0 (0 is a money session)")
        if rng is not None and seed is not None:
            raise ValueError("give either seed or rng, not both")
        self.length = length
        self.rules = get_rules(rules)
        self._rng = rng if rng is not None else np.random.Generator(np.random.PCG64(seed))
        self._dice = iter(dice) if dice is not None else None
        self._clock = clock
        self.games: list[Game] = []
        self.crawford_game: int | None = None
        """Index in ``games`` of the Crawford game, once there is one."""
        self._new_game()

    @property
    def game(self) -> Game:
        """The game being played (or the last one, once the match is over)."""
        return self.games[-1]

    def scores_before(self, index: int) -> tuple[int, int]:
        """The score at the start of game ``index``."""
        return running_scores(self.games[:index], self.length)[-1]

    @property
    def score(self) -> tuple[int, int]:
        """Points of finished games, capped at the match length (R33)."""
        return self.scores_before(len(self.games))

    @property
    def is_over(self) -> bool:
        return self.length > 0 and max(self.score) >= self.length

    @property
    def winner(self) -> int | None:
        if not self.is_over:
            return None
        return 0 if self.score[0] >= self.length else 1

    def next_game(self) -> Game:
        """Start the next game once the current one is over."""
        if not self.game.is_over:
            raise IllegalActionError("the current game is not over")
        if self.is_over:
            raise IllegalActionError(f"the match is over: player {self.winner} won")
        return self._new_game()

    def _new_game(self) -> Game:
        # R34: the game right after a player first reaches N-1 points is the Crawford game.
        crawford = (
            self.length > 0
            and self.crawford_game is None
            and self.length - 1 in self.score
            and bool(self.games)
        )
        if crawford:
            self.crawford_game = len(self.games)
        game = Game(
            self.rules,
            rng=self._rng,
            dice=self._dice,
            match_length=self.length,
            crawford=crawford,
            clock=self._clock,
        )
        self.games.append(game)
        return game
