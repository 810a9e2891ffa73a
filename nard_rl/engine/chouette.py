"""Chouette (R35-R37): three or more players, one box against a team, on top of ``Game``.

The checkers, dice, cube and scoring of each game are an ordinary two-sided ``Game``
(player 0 is the box, player 1 the team), so no rule of sections 1-6 is re-implemented
here.  What this module adds is who decides and who pays:

* ``Chouette.roll_off`` (R35): every player throws one die, ties among themselves throw
  again; the order fixes the box (highest), the captain (second) and the team behind him.
* ``ChouetteGame`` is the state machine of one game.  The captain moves the team's
  checkers; every other active member may first ``suggest`` a play, and all suggestions
  are on record with the play the captain committed (R35).  A team double is a proposal
  that every active member must agree to (R37, one veto stops it for the turn).  When the
  box doubles, each active member takes or passes alone: passers pay the box the stake
  held before the double and leave the game, the takers play on at the doubled stake
  (R37); if every member passes the box wins the game.  Each member has his own cube
  (the value he plays for, or left at) and the ledger of a game always sums to zero:
  every point is paid between the box and one member.
* After each game ``ChouetteGame.next_order`` applies the rotation of R36.

Two cases the rule book leaves open are settled as most chouette rules do: when the
captain passes a box double that other members take, the first taker behind him becomes
captain for the rest of the game and the old captain goes to the back of the team at
once; the rotation of R36 then uses the captain at the end of the game.  When every
member passes, the team has lost with its captain (R36 as written).

Chouette is a money game of the standard rule set (section 9): rule sets without a cube
(mars, R28) are refused.  Resignations are not part of the chouette flow.

``drive`` plays a game to its end by asking a ``Seat`` (a human at a prompt, a bot) for
every decision; it is the one loop the terminal command and the tests share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

import numpy as np

from nard_rl.engine.game import Clock, Game, GameResult, IllegalActionError, Phase
from nard_rl.engine.position import Play, Position
from nard_rl.engine.rules import RuleSet, get_rules

BOX = 0
"""The box's player number in the underlying ``Game``."""
TEAM = 1
"""The team's player number in the underlying ``Game``."""
MIN_PLAYERS = 3
MAX_PLAYERS = 16


class ChouettePhase(Enum):
    """What a chouette game waits for."""

    OPENING = "opening"
    """The box and the captain throw one die each (R5): ``roll()``."""
    ROLL_OR_DOUBLE = "roll_or_double"
    """Start of a turn: ``roll()``, or ``double(player)`` (the box, or a team member
    proposing a team double)."""
    TEAM_VOTE = "team_vote"
    """A team double was proposed: every active member votes with ``vote`` (R37)."""
    BOX_ANSWER = "box_answer"
    """The team doubled: the box ``take``s or ``drop``s (R24)."""
    MEMBER_ANSWERS = "member_answers"
    """The box doubled: each active member ``take``s or ``drop``s alone (R37)."""
    MOVE = "move"
    """Dice are rolled: the side on roll plays; team members may ``suggest`` first (R35)."""
    GAME_OVER = "game_over"


@dataclass
class CubeAction:
    """One double and the answers to it (R37).

    ``side`` is ``"box"`` or ``"team"``; ``by`` the box or the team member who proposed;
    ``cube`` the stake if taken.  ``votes`` holds the team members' agreement to a team
    double (in the order asked, stopping at the first veto); ``responses`` each answer to
    the double, True for take: every active member's for a box double, the box's for a
    team double.
    """

    side: str
    by: int
    cube: int
    votes: dict[int, bool] = field(default_factory=dict)
    responses: dict[int, bool] = field(default_factory=dict)

    @property
    def vetoed(self) -> bool:
        return not all(self.votes.values())

    def to_json(self, names: Sequence[str]) -> dict[str, object]:
        out: dict[str, object] = {"side": self.side, "by": names[self.by], "cube": self.cube}
        if self.side == "team":
            out["votes"] = {names[p]: "agree" if v else "veto" for p, v in self.votes.items()}
            out["vetoed"] = self.vetoed
        out["responses"] = {names[p]: "take" if v else "pass" for p, v in self.responses.items()}
        return out


@dataclass(frozen=True)
class TeamPlay:
    """A team turn (R35): each member's suggested play and the captain's committed one."""

    dice: tuple[int, int]
    captain: int
    suggestions: dict[int, str]
    move: str


@dataclass(frozen=True)
class RollOff:
    """One round of the opening throw of R35: ``throws[player]`` for the players still tied."""

    throws: dict[int, int]


def player_names(count: int) -> tuple[str, ...]:
    """``P1``, ``P2``, ... by seat."""
    return tuple(f"P{i + 1}" for i in range(count))


class ChouetteGame:
    """One chouette game: ``box`` against ``team`` (captain first), R35-R37.

    Players are seat numbers (``0 .. len(names) - 1``).  Every action validates who may
    take it and raises ``IllegalActionError`` with the reason otherwise.  ``start`` (a
    board from the side on roll's view, ``box_on_roll`` saying which side that is) skips
    the opening, for lessons, analysis and tests.
    """

    def __init__(
        self,
        names: Sequence[str],
        box: int,
        team: Sequence[int],
        rules: RuleSet | str = "standard",
        *,
        stake: int = 1,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        dice: Iterable[Sequence[int]] | None = None,
        clock: Clock = time.monotonic,
        start: Position | Sequence[int] | None = None,
        box_on_roll: bool = True,
    ) -> None:
        self.rules = get_rules(rules)
        if not self.rules.cube:
            raise ValueError(
                f"chouette is a money game with the doubling cube (R35-R37); the "
                f"{self.rules.name} rule set has none (R28)"
            )
        self.names = tuple(names)
        seats = [box, *team]
        if len(team) < MIN_PLAYERS - 1:
            raise ValueError(f"a chouette needs at least {MIN_PLAYERS} players (R35)")
        if sorted(seats) != list(range(len(self.names))):
            raise ValueError(
                f"box and team must name every seat 0..{len(self.names) - 1} exactly once, "
                f"got box {box} and team {list(team)}"
            )
        if isinstance(stake, bool) or not isinstance(stake, int) or stake < 1:
            raise ValueError(f"stake must be a positive whole number, got {stake!r}")
        self.box = box
        self.team = tuple(team)
        """The team's order at the start of the game, captain first (R35)."""
        self.stake = stake
        self.game = Game(
            self.rules,
            seed=seed,
            rng=rng,
            dice=dice,
            clock=clock,
            start=start,
            player_on_roll=BOX if box_on_roll else TEAM,
        )
        self.line = list(team)
        """The team's order as it stands (a captain who passes goes to its back)."""
        self.cubes = {m: 1 for m in team}
        """Each member's cube: the value he plays for, or left the game at."""
        self.passed: list[int] = []
        self.settlement = {p: 0 for p in range(len(self.names))}
        self.doubles: list[CubeAction] = []
        self.plays: list[TeamPlay] = []
        self.roll_offs: list[RollOff] = []
        self._pending: CubeAction | None = None
        self._suggestions: dict[int, Play] = {}
        self._vetoed_turn = False
        self._last_captain = self.line[0]
        """The captain when every member passed (R36 needs him once nobody is active)."""

    # state ----------------------------------------------------------------------------
    @property
    def active(self) -> list[int]:
        """Members still in the game, in team order."""
        return [m for m in self.line if m not in self.passed]

    @property
    def captain(self) -> int:
        """The member who moves the team's checkers now (R35)."""
        active = self.active
        return active[0] if active else self._last_captain

    @property
    def phase(self) -> ChouettePhase:
        gp = self.game.phase
        if gp is Phase.GAME_OVER:
            return ChouettePhase.GAME_OVER
        if gp is Phase.OPENING:
            return ChouettePhase.OPENING
        if gp is Phase.MOVE:
            return ChouettePhase.MOVE
        if gp is Phase.TAKE_OR_DROP:
            side = self.game.player_to_act
            return ChouettePhase.BOX_ANSWER if side == BOX else ChouettePhase.MEMBER_ANSWERS
        if self._pending is not None:
            return ChouettePhase.TEAM_VOTE
        return ChouettePhase.ROLL_OR_DOUBLE

    @property
    def box_on_roll(self) -> bool:
        return self.game.player_on_roll == BOX

    @property
    def is_over(self) -> bool:
        return self.game.is_over

    @property
    def result(self) -> GameResult | None:
        return self.game.result

    @property
    def winner(self) -> str | None:
        """``"box"`` or ``"team"`` once the game is over."""
        if self.game.result is None:
            return None
        return "box" if self.game.result.winner == BOX else "team"

    def awaiting(self) -> list[int]:
        """The players whose decision the game waits for, in the order to ask them."""
        phase = self.phase
        if phase is ChouettePhase.GAME_OVER:
            return []
        if phase is ChouettePhase.TEAM_VOTE:
            assert self._pending is not None
            return [m for m in self.active if m not in self._pending.votes]
        if phase is ChouettePhase.MEMBER_ANSWERS:
            assert self._pending is not None
            return [m for m in self.active if m not in self._pending.responses]
        if phase is ChouettePhase.BOX_ANSWER:
            return [self.box]
        if phase is ChouettePhase.OPENING:
            return [self.box, self.captain]
        return [self.box] if self.box_on_roll else [self.captain]

    def position_for(self, player: int) -> Position:
        """The board from ``player``'s side (a team member sees the team's side)."""
        return self.game.position_for(BOX if player == self.box else TEAM)

    @property
    def suggestions(self) -> dict[int, str]:
        """This turn's suggested plays by member (R35)."""
        return {m: p.move for m, p in self._suggestions.items()}

    @property
    def pending_double(self) -> CubeAction | None:
        """The double being voted on or answered, if any."""
        return self._pending

    def stake_of(self, member: int) -> int:
        """What ``member`` plays for now (or left at): his cube times the base stake."""
        return self.cubes[member] * self.stake

    def can_double(self, player: int) -> bool:
        """Whether ``player`` may double (box) or propose a team double (member) now."""
        return self.double_refusal(player) is None

    def double_refusal(self, player: int) -> str | None:
        """Why ``player`` may not double now, or None."""
        if self.phase is not ChouettePhase.ROLL_OR_DOUBLE:
            return f"doubling is only possible at the start of a turn, not in {self.phase.value}"
        if self.box_on_roll and player != self.box:
            return f"the box ({self.names[self.box]}) is on roll"
        if not self.box_on_roll:
            if player not in self.active:
                return f"{self._name(player)} is not an active member of the team"
            if self._vetoed_turn:
                return "a team double was vetoed this turn (R37)"
        return self.game.double_refusal()

    # actions --------------------------------------------------------------------------
    def roll(self, dice: Sequence[int] | None = None) -> tuple[int, int]:
        """The opening throw (box's die, captain's die) or the side on roll's roll."""
        if self.phase is ChouettePhase.TEAM_VOTE:
            raise IllegalActionError("a team double is being voted on: every member votes first")
        rolled = self.game.roll(dice)
        self._suggestions = {}
        self._vetoed_turn = False
        return rolled

    def double(self, player: int) -> CubeAction:
        """The box doubles, or a team member proposes a team double (R37)."""
        self._check_seat(player)
        reason = self.double_refusal(player)
        if reason is not None:
            raise IllegalActionError(f"{self._name(player)} cannot double: {reason}")
        cube = self.game.cube_value * 2
        if player == self.box:
            action = CubeAction("box", player, cube)
            self.doubles.append(action)
            self.game.double()
            self._pending = action
            return action
        action = CubeAction("team", player, cube, votes={player: True})
        self.doubles.append(action)
        self._pending = action
        self._close_vote()
        return action

    def vote(self, member: int, agree: bool) -> None:
        """One member's answer to a proposed team double; one veto stops it (R37)."""
        self._check_seat(member)
        if self.phase is not ChouettePhase.TEAM_VOTE:
            raise IllegalActionError("no team double is being voted on")
        if member not in self.awaiting():
            raise IllegalActionError(
                f"{self._name(member)} does not vote now: waiting for "
                f"{', '.join(self._name(m) for m in self.awaiting())}"
            )
        assert self._pending is not None
        self._pending.votes[member] = bool(agree)
        self._close_vote()

    def _close_vote(self) -> None:
        action = self._pending
        assert action is not None
        if action.vetoed:
            self._pending = None
            self._vetoed_turn = True
        elif not self.awaiting():
            self.game.double()

    def take(self, player: int) -> None:
        """Take the pending double: the box against the team's, a member against the box's."""
        self._answer(player, True)

    def drop(self, player: int) -> None:
        """Pass the pending double (R24, R37)."""
        self._answer(player, False)

    def _answer(self, player: int, take: bool) -> None:
        self._check_seat(player)
        phase = self.phase
        if phase not in (ChouettePhase.BOX_ANSWER, ChouettePhase.MEMBER_ANSWERS):
            raise IllegalActionError("no double is waiting for an answer")
        if player not in self.awaiting():
            raise IllegalActionError(
                f"{self._name(player)} does not answer now: waiting for "
                f"{', '.join(self._name(m) for m in self.awaiting())}"
            )
        action = self._pending
        assert action is not None
        action.responses[player] = take
        if phase is ChouettePhase.BOX_ANSWER:
            self._pending = None
            if take:
                self.game.take()
                for m in self.active:
                    self.cubes[m] = self.game.cube_value
            else:
                self.game.drop()
                self._settle_end()
            return
        if self.awaiting():
            return
        self._pending = None
        captain = self.captain
        takers = [m for m in self.active if action.responses[m]]
        passers = [m for m in self.active if not action.responses[m]]
        self._last_captain = captain
        for m in passers:  # R37: they pay the stake held before the double and leave
            self._pay(m, -self.stake_of(m))
            self.passed.append(m)
        if not takers:
            self.game.drop()
            self._settle_end()
            return
        if captain in passers:  # the first taker captains the rest of the game
            self.line.remove(captain)
            self.line.append(captain)
        self.game.take()
        for m in takers:
            self.cubes[m] = self.game.cube_value

    def suggest(self, member: int, choice: str | Position | Sequence[int]) -> Play:
        """Put a member's suggested play on record for this roll (R35)."""
        self._check_seat(member)
        if self.phase is not ChouettePhase.MOVE or self.box_on_roll:
            raise IllegalActionError("suggestions are made when the team has rolled")
        if member not in self.active:
            raise IllegalActionError(f"{self._name(member)} is not an active member of the team")
        play = self.game.find_play(choice)
        self._suggestions[member] = play
        return play

    def play(self, choice: str | Position | Sequence[int], by: int | None = None) -> Play:
        """Commit the side on roll's play: the box's, or the captain's for the team (R35)."""
        if self.phase is not ChouettePhase.MOVE:
            raise IllegalActionError(f"cannot play in phase {self.phase.value}")
        mover = self.box if self.box_on_roll else self.captain
        if by is not None and by != mover:
            self._check_seat(by)
            role = "the box" if self.box_on_roll else "the captain"
            raise IllegalActionError(
                f"{self._name(by)} cannot commit the play: {role} ({self._name(mover)}) does"
            )
        play = self.game.find_play(choice)
        assert self.game.dice is not None
        if not self.box_on_roll:
            suggestions = {m: p.move for m, p in self._suggestions.items()}
            suggestions.setdefault(mover, play.move)
            self.plays.append(TeamPlay(self.game.dice, mover, suggestions, play.move))
        self.game.play(play.board)
        self._suggestions = {}
        if self.game.is_over:
            self._settle_end()
        return play

    # settlement and rotation -------------------------------------------------------------
    def _pay(self, member: int, amount: int) -> None:
        """``amount`` points to ``member`` from the box (negative: the member pays)."""
        self.settlement[member] += amount
        self.settlement[self.box] -= amount

    def _settle_end(self) -> None:
        """Every member still in the game wins or loses the result times his stake (R37)."""
        result = self.game.result
        assert result is not None
        sign = -1 if result.winner == BOX else 1
        for m in self.active:
            self._pay(m, sign * result.multiplier * self.stake_of(m))

    def next_order(self) -> tuple[int, list[int]]:
        """``(box, team)`` of the next game by R36, once this one is over."""
        if not self.is_over:
            raise IllegalActionError("the game is not over: the rotation follows its result")
        line = list(self.line)
        captain = self.captain
        line.remove(captain)
        if self.winner == "box":
            return self.box, [*line, captain]
        return captain, [*line, self.box]

    def summary(self) -> dict[str, object]:
        """The game as JSON-ready data, players by name."""
        n = self.names
        result = self.game.result
        return {
            "box": n[self.box],
            "captain": n[self.team[0]],
            "team": [n[m] for m in self.team],
            "final_captain": n[self.captain],
            "doubles": [d.to_json(n) for d in self.doubles],
            "winner": self.winner,
            "result": None if result is None else result.kind.name.lower(),
            "reason": None if result is None else result.reason.value,
            "stakes": {n[m]: self.stake_of(m) for m in self.team},
            "passed": [n[m] for m in self.passed],
            "settlement": {n[p]: v for p, v in self.settlement.items()},
        }

    # helpers --------------------------------------------------------------------------
    def _name(self, player: int) -> str:
        return self.names[player] if 0 <= player < len(self.names) else f"player {player}"

    def _check_seat(self, player: int) -> None:
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)):
            raise IllegalActionError(f"players are seat numbers, got {player!r}")
        if not 0 <= player < len(self.names):
            raise IllegalActionError(f"no seat {player}: seats are 0..{len(self.names) - 1}")


class Chouette:
    """A chouette session: the roll-off (R35), its games and the rotation (R36).

    ``players`` is a count (names ``P1``, ``P2``, ... by seat) or the names.  Every game
    draws its dice from the session's seeded generator, so a seed fixes the session.
    """

    def __init__(
        self,
        players: int | Sequence[str],
        rules: RuleSet | str = "standard",
        *,
        stake: int = 1,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        dice: Iterable[Sequence[int]] | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        if rng is not None and seed is not None:
            raise ValueError("give either seed or rng, not both")
        if isinstance(players, int):
            if not MIN_PLAYERS <= players <= MAX_PLAYERS:
                raise ValueError(
                    f"a chouette has {MIN_PLAYERS} to {MAX_PLAYERS} players (R35), got {players}"
                )
            names = player_names(players)
        else:
            names = tuple(str(p) for p in players)
            if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
                raise ValueError(
                    f"a chouette has {MIN_PLAYERS} to {MAX_PLAYERS} players (R35), got {len(names)}"
                )
            if len(set(names)) != len(names):
                raise ValueError(f"player names must differ, got {list(names)}")
        self.names = names
        self.rules = get_rules(rules)
        if not self.rules.cube:
            raise ValueError(
                f"chouette is a money game with the doubling cube (R35-R37); the "
                f"{self.rules.name} rule set has none (R28)"
            )
        self.stake = stake
        self._rng = rng if rng is not None else np.random.Generator(np.random.PCG64(seed))
        self._dice: Iterator[Sequence[int]] | None = iter(dice) if dice is not None else None
        self._clock = clock
        self.order: tuple[int, list[int]] | None = None
        """``(box, team)`` for the next game."""
        self.roll_offs: list[RollOff] = []
        self.games: list[ChouetteGame] = []

    def roll_off(self, throws: Iterable[int] | None = None) -> tuple[int, list[int]]:
        """R35: everyone throws one die, players tied throw again among themselves; the
        highest is the box, the next the captain, the rest the team in throw order.

        ``throws`` (tests, replays) gives the dice in the order thrown: each round, the
        tied players in seat order."""
        if self.order is not None:
            raise IllegalActionError("the roll-off has been made")
        source = iter(throws) if throws is not None else None
        groups = [list(range(len(self.names)))]
        while any(len(g) > 1 for g in groups):
            thrown: dict[int, int] = {}
            split: list[list[int]] = []
            for group in groups:
                if len(group) == 1:
                    split.append(group)
                    continue
                for p in group:
                    thrown[p] = self._throw(source)
                for value in sorted({thrown[p] for p in group}, reverse=True):
                    split.append([p for p in group if thrown[p] == value])
            self.roll_offs.append(RollOff(thrown))
            groups = split
        seats = [g[0] for g in groups]
        self.order = (seats[0], seats[1:])
        return self.order

    def _throw(self, source: Iterator[int] | None) -> int:
        if source is None:
            return int(self._rng.integers(1, 7))
        try:
            value = next(source)
        except StopIteration:
            raise ValueError("the injected roll-off throws ran out") from None
        if isinstance(value, bool) or int(value) != value or not 1 <= value <= 6:
            raise ValueError(f"a die is a whole number in 1..6, got {value!r}")
        return int(value)

    @property
    def game(self) -> ChouetteGame | None:
        return self.games[-1] if self.games else None

    def new_game(self) -> ChouetteGame:
        """Start the next game: after the roll-off, or with the R36 rotation of the last."""
        last = self.game
        if last is not None:
            if not last.is_over:
                raise IllegalActionError("the current game is not over")
            self.order = last.next_order()
        elif self.order is None:
            self.roll_off()
        assert self.order is not None
        box, team = self.order
        game = ChouetteGame(
            self.names,
            box,
            team,
            self.rules,
            stake=self.stake,
            rng=self._rng,
            dice=self._dice,
            clock=self._clock,
        )
        if not self.games:
            game.roll_offs = list(self.roll_offs)
        self.games.append(game)
        return game

    def totals(self) -> dict[str, int]:
        """Points won or lost by each player over the finished games."""
        out = dict.fromkeys(self.names, 0)
        for g in self.games:
            if g.is_over:
                for p, v in g.settlement.items():
                    out[self.names[p]] += v
        return out


class Seat(Protocol):
    """Whoever takes a seat's decisions: a person at a prompt or a bot."""

    def choose_play(self, game: ChouetteGame, player: int) -> str | Sequence[int]:
        """The play to commit (box, captain) or to suggest (other members)."""
        ...

    def wants_double(self, game: ChouetteGame, player: int) -> bool:
        """Box: double now?  Member: propose a team double now?"""
        ...

    def agrees_double(self, game: ChouetteGame, player: int) -> bool:
        """Member: agree to the team double proposed (R37)?"""
        ...

    def takes(self, game: ChouetteGame, player: int) -> bool:
        """Take the double offered to ``player`` (box or member)?"""
        ...


def drive(
    game: ChouetteGame, seats: Sequence[Seat], log: Callable[[str], None] | None = None
) -> ChouetteGame:
    """Play ``game`` to its end, asking ``seats[player]`` for each of its decisions;
    ``log`` receives one line per action (for people watching)."""
    if len(seats) != len(game.names):
        raise ValueError(f"one seat per player: {len(game.names)} players, {len(seats)} seats")
    say = log if log is not None else (lambda text: None)
    n = game.names
    while not game.is_over:
        phase = game.phase
        if phase is ChouettePhase.OPENING:
            d = game.roll()
            say(f"opening roll: box {n[game.box]} {d[0]}, captain {n[game.captain]} {d[1]}")
        elif phase is ChouettePhase.ROLL_OR_DOUBLE:
            deciders = [game.box] if game.box_on_roll else game.active
            for p in deciders:
                if game.can_double(p) and seats[p].wants_double(game, p):
                    action = game.double(p)
                    verb = "doubles" if p == game.box else "proposes a team double"
                    say(f"{n[p]} {verb} to {action.cube}")
                    break
            else:
                roller = game.box if game.box_on_roll else game.captain
                d = game.roll()
                moved = game.phase is not ChouettePhase.MOVE
                say(f"{n[roller]} rolls {d[0]}-{d[1]}" + (": no legal play" if moved else ""))
        elif phase is ChouettePhase.TEAM_VOTE:
            member = game.awaiting()[0]
            agree = seats[member].agrees_double(game, member)
            game.vote(member, agree)
            say(f"{n[member]} {'agrees' if agree else 'vetoes (R37)'}")
        elif phase in (ChouettePhase.BOX_ANSWER, ChouettePhase.MEMBER_ANSWERS):
            p = game.awaiting()[0]
            if seats[p].takes(game, p):
                game.take(p)
                say(f"{n[p]} takes")
            else:
                game.drop(p)
                say(f"{n[p]} passes")
        elif phase is ChouettePhase.MOVE:
            if game.box_on_roll:
                play = game.play(seats[game.box].choose_play(game, game.box), by=game.box)
                say(f"{n[game.box]} (box) plays {play.move}")
                continue
            captain = game.captain
            for m in game.active:
                if m != captain:
                    play = game.suggest(m, seats[m].choose_play(game, m))
                    say(f"{n[m]} suggests {play.move}")
            play = game.play(seats[captain].choose_play(game, captain), by=captain)
            say(f"{n[captain]} (captain) plays {play.move}")
    result = game.result
    assert result is not None
    pay = " ".join(f"{n[p]} {v:+d}" for p, v in game.settlement.items())
    say(f"{game.winner} wins ({result.kind.name.lower()}, {result.reason.value}): {pay}")
    return game


__all__ = [
    "BOX",
    "TEAM",
    "Chouette",
    "ChouetteGame",
    "ChouettePhase",
    "CubeAction",
    "RollOff",
    "Seat",
    "TeamPlay",
    "drive",
    "player_names",
]
