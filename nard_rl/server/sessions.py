"""Game sessions against the bot: a ``nard_rl.engine.game.Match`` per session.

The human is player 0, the bot player 1.  Every human action is one call on the engine's
``Game`` (which checks the rules and names the rule id when it refuses); after it the bot
acts until the human has a decision to make or the game is over.  A play may be left
pending and changed until it is committed (R38).

Sessions live in memory and each is locked while it changes, so concurrent calls on one
game are applied one after the other.  No client can push out another's games: a session
expires only after ``idle_s`` without a request; a client holds at most
``max_per_client`` live sessions (a new one replaces the client's own oldest finished
game, else 429) and the store at most ``max_sessions`` (503 beyond, until some
expire).  A money session keeps its last ``games_kept`` games in full; older ones leave
only their points in the score.

The clock of a timed game (R30, the mars rule set) stands still while the server works:
an action is applied at the time its request arrived (``at``), the bot's turn costs
nothing, and the human's next turn starts when the answer is ready
(``SessionClock``), so a player is never charged for the server's queue.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import CubeState
from nard_rl.engine import game as g
from nard_rl.engine.game import Clock, Game, IllegalActionError, Match, Phase, ResultKind
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
    """No such session (the message says whether it was unknown, deleted or expired)."""


class SessionLimit(RuntimeError):
    """A new session would pass a limit; ``status`` is the HTTP status (429 or 503)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class SessionClock:
    """The time source of one session's games: real time (``base``), except that it
    stands still from a request's arrival until its answer is ready.

    Inside ``stopped(at)`` the clock reads the session time at which the request
    arrived; afterwards it runs on from there, so the time the server spent (queue,
    search, the bot's turn) is charged to nobody.
    """

    def __init__(self, base: Clock) -> None:
        self.base = base
        self._offset = 0.0
        self._frozen: float | None = None
        self._last = float("-inf")

    def __call__(self) -> float:
        if self._frozen is not None:
            return self._frozen
        return self.base() - self._offset

    @contextlib.contextmanager
    def stopped(self, at: float | None = None) -> Iterator[None]:
        arrived = self.base() if at is None else at
        self._frozen = max(arrived - self._offset, self._last)
        try:
            yield
        finally:
            self._last = self._frozen
            self._offset = self.base() - self._frozen
            self._frozen = None


@dataclass
class Session:
    id: str
    match: Match
    first: str
    rng: np.random.Generator
    clock: SessionClock
    client: str = "unknown"
    touched: float = 0.0
    """When a request last used the session (the store's clock)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[str, Any] | None = None
    log: list[str] = field(default_factory=list)
    seen: int = 0
    """Events of the current game already written to ``log``."""
    ply: int | None = None
    """The bot's lookahead for its plays (None: the analyzer's default)."""
    dropped_games: int = 0
    """Finished games of a money session no longer kept in ``match.games``."""
    dropped_points: list[int] = field(default_factory=lambda: [0, 0])
    """Their points (human, bot)."""

    @property
    def game(self) -> Game:
        return self.match.game

    @property
    def score(self) -> tuple[int, int]:
        """Points of every finished game, the dropped ones included."""
        s = self.match.score
        return s[0] + self.dropped_points[0], s[1] + self.dropped_points[1]

    def trim(self, kept: int) -> None:
        """Keep the last ``kept`` games of a money session (a match is short anyway)."""
        games = self.match.games
        if self.match.length:
            return
        while len(games) > kept and games[0].result is not None:
            old = games.pop(0)
            assert old.result is not None
            self.dropped_points[old.result.winner] += old.result.points
            self.dropped_games += 1


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


_HOW = {
    g.EndReason.BEAR_OFF: "all checkers borne off",
    g.EndReason.DROP: "double passed",
    g.EndReason.RESIGN: "resignation",
    g.EndReason.TIMEOUT: "on time, R30",
}
"""How a game ended, in the log's words (the view's ``result.reason`` keeps the id)."""


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
        return f"{who(r.winner)} wins {r.points} point{plural} ({_HOW[r.reason]})"
    return None


def _last_move(game: Game) -> dict[str, Any] | None:
    """The game's last play or forfeited roll: who, the dice, the notation and the checker
    steps ``[from, to]`` in the mover's own numbering (25 its bar, 0 off), for a board
    that shows the opponent's last move."""
    for event in reversed(game.record):
        if isinstance(event, g.Move):
            steps = [[s.src, s.dst] for s in event.steps]
            return {"by": NAMES[event.player], "dice": list(event.dice), "move": event.move,
                    "steps": steps}  # fmt: skip
        if isinstance(event, g.NoPlay):
            return {"by": NAMES[event.player], "dice": list(event.dice), "move": "", "steps": []}
    return None


class SessionStore:
    """The sessions of one server and the bot that plays in them (module docstring)."""

    def __init__(
        self,
        analyzer: Analyzer,
        *,
        max_sessions: int = 1000,
        max_per_client: int = 20,
        idle_s: float = 3600.0,
        games_kept: int = 10,
        clock: Clock = time.monotonic,
    ) -> None:
        self.analyzer = analyzer
        self.clock = clock
        """The time source of expiry and of the games' clocks (R30); injectable for tests."""
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.idle_s = idle_s
        self.games_kept = games_kept
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        """Least recently used first."""
        self._per_client: dict[str, int] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        """Why recent sessions are gone (``expired ...``, ``deleted``), for true messages."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    # lifecycle ----------------------------------------------------------------------------
    def create(
        self,
        rules: str = "standard",
        match_length: int = 0,
        first: str = "opening",
        seed: int | None = None,
        client: str = "unknown",
        ply: int | None = None,
    ) -> dict[str, Any]:
        seed = secrets.randbits(63) if seed is None else seed
        clock = SessionClock(self.clock)
        match = Match(match_length, rules, seed=seed, clock=clock)
        session = Session(
            secrets.token_hex(8),
            match,
            first,
            np.random.default_rng(seed + 1),
            clock,
            client=client,
            touched=self.clock(),
            ply=ply,
        )
        with self._lock:
            self._expire()
            held = self._per_client.get(client, 0)
            if held >= self.max_per_client and self._replace_finished(client):
                held -= 1  # "play again": the client's oldest finished game makes room
            if held >= self.max_per_client:
                raise SessionLimit(
                    f"this client already holds {held} live games (max_sessions_per_client "
                    f"{self.max_per_client}): DELETE /v1/games/ID one it no longer plays, or "
                    f"let one expire ({self.idle_s:g} s without a request)",
                    429,
                )
            if len(self._sessions) >= self.max_sessions:
                raise SessionLimit(
                    f"the server holds its maximum of {self.max_sessions} live games "
                    f"(max_sessions); try again later: games expire after {self.idle_s:g} s "
                    "without a request",
                    503,
                )
            self._sessions[session.id] = session
            self._per_client[client] = held + 1
        with session.lock, clock.stopped():
            self._advance(session)
            return self.view(session)

    def _expire(self) -> None:
        """Drop the sessions idle for ``idle_s`` (called with ``_lock`` held)."""
        limit = self.clock() - self.idle_s
        while self._sessions:
            sid, oldest = next(iter(self._sessions.items()))
            if oldest.touched > limit:
                break
            self._drop(sid, f"expired after {self.idle_s:g} s without a request")

    def _replace_finished(self, client: str) -> bool:
        """Drop ``client``'s least recently used finished session (a money session
        between games, a match that is over), if it has one (``_lock`` held)."""
        for sid, session in self._sessions.items():
            match = session.match
            if (
                session.client == client
                and match.game.is_over
                and (match.length == 0 or match.is_over)
            ):
                self._drop(sid, "was finished and replaced by a newer game of the same client")
                return True
        return False

    def _drop(self, session_id: str, why: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            left = self._per_client.get(session.client, 1) - 1
            if left > 0:
                self._per_client[session.client] = left
            else:
                self._per_client.pop(session.client, None)
            self._gone[session_id] = why
            while len(self._gone) > 4 * self.max_sessions:
                self._gone.popitem(last=False)
        return session

    def _missing(self, session_id: str) -> SessionError:
        why = self._gone.get(session_id)
        if why is None:
            return SessionError(f"no game {session_id!r}: no such id on this server")
        return SessionError(f"game {session_id!r} {why}")

    def get(self, session_id: str) -> Session:
        with self._lock:
            self._expire()
            session = self._sessions.get(session_id)
            if session is None:
                raise self._missing(session_id)
            session.touched = self.clock()
            self._sessions.move_to_end(session_id)
            return session

    def delete(self, session_id: str) -> None:
        with self._lock:
            if self._drop(session_id, "was deleted") is None:
                raise self._missing(session_id)

    def record_mat(self, session_id: str) -> str:
        """The session's games so far as Jellyfish ``.mat`` text (``nard_rl.engine.matfile``;
        a money session's oldest games may have been dropped)."""
        from nard_rl.engine.matfile import export_mat

        session = self.get(session_id)
        with session.lock:
            return export_mat(session.match, names=NAMES)

    def state(self, session_id: str, at: float | None = None) -> dict[str, Any]:
        """The view of a session; ``at``: when the request arrived (the store's clock)."""
        session = self.get(session_id)
        with session.lock, session.clock.stopped(at):
            if session.game.check_clock():  # polled: a silent player loses on time (R30)
                self._log(session)
            return self.view(session)

    # human actions -------------------------------------------------------------------------
    def act(
        self, session_id: str, action: str, at: float | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Apply the human's ``action`` as of ``at`` (when its request arrived, the
        store's clock; now when None), then let the bot act."""
        session = self.get(session_id)
        with session.lock, session.clock.stopped(at):
            game = session.game
            if action == "next":
                session.match.next_game()
                session.trim(self.games_kept)
                session.seen = 0
                session.pending = None
                number = session.dropped_games + len(session.match.games)
                session.log.append(f"game {number} begins")
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
                _, board = a.best_play(decision_state(session, BOT, game.dice), session.ply)
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
            "score": list(session.score),
            "crawford": game.crawford,
            "game_number": session.dropped_games + len(match.games),
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
            "ply": session.ply,
            "last_move": _last_move(game),
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
