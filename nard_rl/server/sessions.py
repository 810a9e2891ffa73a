"""Game sessions against the bot: a ``nard_rl.engine.game.Match`` per session.

The human is player 0, the bot player 1.  Every human action is one call on the engine's
``Game`` (which checks the rules and names the rule id when it refuses); after it the bot
acts until the human has a decision to make or the game is over.  A play may be left
pending and changed until it is committed (R38).

Sessions live in memory, at most ``max_sessions`` of them (the least recently used one
goes first) and each is locked while it changes, so concurrent calls on one game are
applied one after the other.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nard_rl.cube import CubeState
from nard_rl.engine import game as g
from nard_rl.engine.game import Clock, Game, IllegalActionError, Match, Phase, ResultKind
from nard_rl.met import MatchScore
from nard_rl.server.analysis import Analyzer
from nard_rl.server.state import DecisionState

HUMAN, BOT = 0, 1
NAMES = ("human", "bot")
KINDS = {
    "single": ResultKind.SINGLE,
    "gammon": ResultKind.GAMMON,
    "backgammon": ResultKind.BACKGAMMON,
}


class SessionError(LookupError):
    """No such session."""


@dataclass
class Session:
    id: str
    match: Match
    first: str
    rng: np.random.Generator
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[str, Any] | None = None
    log: list[str] = field(default_factory=list)
    seen: int = 0
    """Events of the current game already written to ``log``."""

    @property
    def game(self) -> Game:
        return self.match.game


def _owner_for(game: Game, player: int) -> str:
    if game.cube_owner is None:
        return "centered"
    return "mover" if game.cube_owner == player else "opponent"


def decision_state(session: Session, player: int, dice: tuple[int, int] | None) -> DecisionState:
    """The game as ``player`` sees it, for the analysis functions."""
    game = session.game
    match: MatchScore | None = None
    if session.match.length:
        score = session.match.score
        match = MatchScore(session.match.length, score[player], score[1 - player], game.crawford)
    return DecisionState(
        game.position_for(player),
        game.rules,
        dice,
        CubeState(game.cube_value, _owner_for(game, player)),  # type: ignore[arg-type]
        match,
    )


def _describe(event: object) -> str | None:
    who = lambda p: NAMES[p]  # noqa: E731
    if isinstance(event, g.OpeningRoll):
        return f"opening roll: human {event.dice[0]}, bot {event.dice[1]}"
    if isinstance(event, g.AutomaticDouble):
        return f"automatic double: cube at {event.cube}"
    if isinstance(event, g.Roll):
        return f"{who(event.player)} rolls {event.dice[0]}-{event.dice[1]}"
    if isinstance(event, g.Move):
        return f"{who(event.player)} plays {event.move}"
    if isinstance(event, g.NoPlay):
        return f"{who(event.player)} cannot move (R16)"
    if isinstance(event, g.Double):
        return f"{who(event.player)} doubles to {event.cube}"
    if isinstance(event, g.Take):
        return f"{who(event.player)} takes"
    if isinstance(event, g.Drop):
        return f"{who(event.player)} passes"
    if isinstance(event, g.Resign):
        return f"{who(event.player)} offers to resign a {event.kind.name.lower()}"
    if isinstance(event, g.ResignationAccepted):
        return f"{who(event.player)} accepts the resignation"
    if isinstance(event, g.TimeOut):
        return f"{who(event.player)} runs out of time (R30)"
    if isinstance(event, g.ResignationDeclined):
        return f"{who(event.player)} declines the resignation"
    if isinstance(event, g.GameOver):
        r = event.result
        plural = "s" if r.points != 1 else ""
        return f"{who(r.winner)} wins {r.points} point{plural} ({r.reason.value})"
    return None


class SessionStore:
    """The sessions of one server and the bot that plays in them."""

    def __init__(
        self, analyzer: Analyzer, *, max_sessions: int = 1000, clock: Clock = time.monotonic
    ) -> None:
        self.analyzer = analyzer
        self.clock = clock
        """The games' time source (R30 clock of the mars rule set); injectable for tests."""
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    # lifecycle ----------------------------------------------------------------------------
    def create(
        self,
        rules: str = "standard",
        match_length: int = 0,
        first: str = "opening",
        seed: int | None = None,
    ) -> dict[str, Any]:
        seed = secrets.randbits(63) if seed is None else seed
        match = Match(match_length, rules, seed=seed, clock=self.clock)
        session = Session(secrets.token_hex(8), match, first, np.random.default_rng(seed + 1))
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        with session.lock:
            self._advance(session)
            return self.view(session)

    def get(self, session_id: str) -> Session:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                raise SessionError(f"no game {session_id!r} (finished sessions expire)")
            self._sessions.move_to_end(session_id)
            return session

    def delete(self, session_id: str) -> None:
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise SessionError(f"no game {session_id!r}")

    def state(self, session_id: str) -> dict[str, Any]:
        session = self.get(session_id)
        with session.lock:
            if session.game.check_clock():  # polled: a silent player loses on time (R30)
                self._log(session)
            return self.view(session)

    # human actions -------------------------------------------------------------------------
    def act(self, session_id: str, action: str, **kw: Any) -> dict[str, Any]:
        session = self.get(session_id)
        with session.lock:
            game = session.game
            if action == "next":
                session.match.next_game()
                session.seen = 0
                session.pending = None
                session.log.append(f"game {len(session.match.games)} begins")
            else:
                if game.is_over:
                    raise IllegalActionError("the game is over: start the next one (or a new game)")
                if game.player_to_act != HUMAN:
                    raise IllegalActionError("it is the bot's turn to act")
                self._human(session, action, **kw)
            self._advance(session)
            return self.view(session)

    def _human(self, session: Session, action: str, **kw: Any) -> None:
        game = session.game
        if action == "roll":
            if game.phase is Phase.OPENING and session.first != "opening":
                game.roll(self._fixed_opening(session))
            else:
                game.roll()
        elif action == "move":
            move, board, commit = kw.get("move"), kw.get("board"), kw.get("commit", True)
            if (move is None) == (board is None):
                raise IllegalActionError('give exactly one of "move" and "board"')
            choice = move if move is not None else board
            play = game.find_play(choice)  # the engine's reason (rule id) when illegal
            if commit:
                game.play(play.board)
                session.pending = None
            else:
                session.pending = {"move": play.move, "board": list(play.board)}  # R38
        elif action == "commit":
            if session.pending is None:
                raise IllegalActionError("no pending play to commit (R38)")
            game.play(session.pending["board"])
            session.pending = None
        elif action == "double":
            game.double()
        elif action == "take":
            game.take()
        elif action == "pass":
            game.drop()
        elif action == "resign":
            kind = kw.get("kind")
            game.resign(KINDS[kind] if kind else None, player=HUMAN)
        elif action in ("accept", "reject"):
            if action == "accept":
                game.accept_resignation()
            else:
                game.decline_resignation()
        else:
            raise IllegalActionError(f"unknown action {action!r}")

    @staticmethod
    def _fixed_opening(session: Session) -> tuple[int, int]:
        """An opening throw (human's die, bot's die) that the chosen player wins (R5)."""
        hi, lo = sorted(session.rng.choice(np.arange(1, 7), size=2, replace=False), reverse=True)
        return (int(hi), int(lo)) if session.first == "human" else (int(lo), int(hi))

    # the bot ---------------------------------------------------------------------------------
    def _advance(self, session: Session) -> None:
        """Let the bot act until the human must decide or the game is over."""
        a = self.analyzer
        for _ in range(1000):
            game = session.game
            self._log(session)
            if game.is_over or game.player_to_act != BOT:
                return
            phase = game.phase
            if phase is Phase.OPENING:
                return  # the human throws the opening dice
            if phase is Phase.ROLL_OR_DOUBLE:
                if game.can_double() and a.should_double(decision_state(session, BOT, None)):
                    game.double()
                else:
                    game.roll()
            elif phase is Phase.TAKE_OR_DROP:
                if a.should_take(decision_state(session, BOT, None)):
                    game.take()
                else:
                    game.drop()
            elif phase is Phase.MOVE:
                _, board = a.best_play(decision_state(session, BOT, game.dice))
                game.play(board)
            elif phase is Phase.RESIGN_PENDING:
                pending = game.pending_resignation
                assert pending is not None
                kind = pending[1].name.lower()
                if a.accept_resignation(decision_state(session, BOT, None), kind):
                    game.accept_resignation()
                else:
                    game.decline_resignation()
        raise RuntimeError("the bot did not finish its turn")  # pragma: no cover

    def _log(self, session: Session) -> None:
        record = session.game.record
        for event in record[session.seen :]:
            text = _describe(event)
            if text:
                session.log.append(text)
        session.seen = len(record)
        del session.log[:-200]

    # the view ---------------------------------------------------------------------------------
    def view(self, session: Session) -> dict[str, Any]:
        game = session.game
        match = session.match
        human_pos = game.position_for(HUMAN)
        on_roll = game.player_on_roll
        out: dict[str, Any] = {
            "id": session.id,
            "rules": game.rules.name,
            "match_length": match.length,
            "score": list(match.score),
            "crawford": game.crawford,
            "game_number": len(match.games),
            "phase": game.phase.value,
            "to_act": NAMES[game.player_to_act] if not game.is_over else None,
            "on_roll": NAMES[on_roll],
            "board": list(human_pos.board),
            "position_id": game.position.position_id(),
            "dice": list(game.dice) if game.dice else None,
            "cube": {
                "value": game.cube_value,
                "owner": ("centered" if game.cube_owner is None else NAMES[game.cube_owner]),
            },
            "can_double": game.can_double() and on_roll == HUMAN,
            "legal_plays": None,
            "pending": session.pending,
            "resignation": None,
            "result": None,
            "match_over": match.is_over,
            "clock": None,
            "log": session.log[-40:],
        }
        if game.phase is Phase.MOVE and on_roll == HUMAN:
            out["legal_plays"] = [
                {"move": p.move, "board": list(p.board)} for p in game.legal_plays()
            ]
        if game.has_clock:  # R30: turn time and reserve left, in seconds
            out["clock"] = {
                NAMES[p]: dict(zip(("turn", "reserve"), game.time_left(p), strict=True))
                for p in (HUMAN, BOT)
            }
        if game.pending_resignation is not None:
            who, kind = game.pending_resignation
            out["resignation"] = {"by": NAMES[who], "kind": kind.name.lower()}
        if game.result is not None:
            r = game.result
            out["result"] = {
                "winner": NAMES[r.winner],
                "points": r.points,
                "kind": r.kind.name.lower(),
                "reason": r.reason.value,
            }
        return out
