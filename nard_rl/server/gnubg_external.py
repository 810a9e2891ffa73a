"""GNU Backgammon's external-player protocol: gnubg plays the referee, nard-rl decides.

gnubg (``set player N external HOST:PORT``) connects to this TCP server and, for each
decision of its external player, writes one FIBS-style ``board:...`` line; the answer
is one line: ``roll`` or ``double`` before the roll, ``take`` or ``drop`` when doubled,
the play in gnubg's notation after the roll (an empty line when no play is possible).
The line format and gnubg 1.07's quirks are described in ``docs/gnubg-external.md``.

Every play is checked by the engine (parsed back from its own notation and compared with
the chosen afterstate) before it is sent, because gnubg takes a parseable but illegal
play as "no play" without complaint.  A line that cannot be read is answered with
``Error: ...`` (gnubg prints it and stops the game), never a crash of the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TextIO

from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import CubeState
from nard_rl.engine.game import Game, Phase
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import get_rules
from nard_rl.server.analysis import Analyzer
from nard_rl.server.state import DecisionState

TOKENS = 53
MAX_LINE = 4096


class ProtocolError(ValueError):
    """A board line that cannot be read; the message names the problem."""


@dataclass(frozen=True)
class BoardLine:
    """The parts of a ``board:`` line a decision needs, from the external player's view."""

    board: tuple[int, ...]
    dice: tuple[int, int] | None
    doubled: bool
    cube_value: int
    may_double: bool
    opponent_may_double: bool
    match_length: int
    score: tuple[int, int]
    """(external player, gnubg), after undoing gnubg's swap while we are on roll."""
    crawford: bool

    def state(self) -> DecisionState:
        """The decision state; when doubled, the position is seen by the receiver (us)
        with gnubg, the doubler, on roll."""
        c = self.cube_value
        if c == 1 or (self.may_double and self.opponent_may_double):
            owner = "centered"
        elif self.doubled or self.opponent_may_double:
            owner = "opponent"
        else:
            owner = "mover" if self.may_double or c > 1 else "centered"
        match = None
        if self.match_length:
            me, opp = self.score
            crawford = self.crawford and (self.match_length - 1) in (me, opp)
            match = MatchScore(self.match_length, me, opp, crawford)
        if match is not None and owner == "centered" and c > 1:
            raise ProtocolError(f"a centered cube of {c} cannot occur in a match")
        return DecisionState(
            Position(self.board), get_rules("standard"), self.dice, CubeState(c, owner), match
        )


def _int(tokens: list[str], i: int) -> int:
    try:
        return int(tokens[i])
    except ValueError:
        raise ProtocolError(f"token {i} must be an integer, got {tokens[i]!r}") from None


def parse_board_line(line: str) -> BoardLine:
    """Read one FIBS board line as gnubg 1.07 sends it to an external player."""
    text = line.strip().strip("\x00").strip()
    tokens = text.split(":")
    if tokens[0] != "board":
        raise ProtocolError(f"expected a 'board:' line, got {text[:40]!r}")
    if len(tokens) < TOKENS:
        raise ProtocolError(f"a board line has {TOKENS} ':'-separated fields, got {len(tokens)}")
    length = _int(tokens, 3)
    s4, s5 = _int(tokens, 4), _int(tokens, 5)
    board = tuple(_int(tokens, i) for i in range(6, 32))
    turn = _int(tokens, 32)
    d1, d2 = _int(tokens, 33), _int(tokens, 34)
    cube = _int(tokens, 37)
    doubled = _int(tokens, 40) != 0
    if (d1, d2) != (0, 0) and not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ProtocolError(f"dice must be 0:0 or two values in 1..6, got {d1}:{d2}")
    if length < 0 or min(s4, s5) < 0:
        raise ProtocolError("match length and scores cannot be negative")
    # gnubg 1.07 swaps the scores while the external player is on roll (turn 1)
    score = (s5, s4) if turn == 1 and not doubled else (s4, s5)
    if length and max(score) >= length:
        raise ProtocolError(f"score {score} does not fit a {length}-point match")
    return BoardLine(
        board=board,
        dice=None if (d1, d2) == (0, 0) else (d1, d2),
        doubled=doubled,
        cube_value=cube,
        may_double=_int(tokens, 38) != 0,
        opponent_may_double=_int(tokens, 39) != 0,
        match_length=length,
        score=score,
        crawford=_int(tokens, 52) == 0 if length else False,
    )


def checked_play(state: DecisionState, move: str, board: list[int]) -> str:
    """``move`` after the engine confirms that it is legal and leads to ``board``."""
    assert state.dice is not None
    game = Game(state.rules, start=state.position, player_on_roll=0)
    game.roll(state.dice)
    if game.phase is not Phase.MOVE:  # the roll cannot be played: the turn passed (R16)
        if move:
            raise ProtocolError("a play was chosen for a roll that cannot be played")
        return ""
    if list(game.find_play(move).board) != list(board):
        raise ProtocolError(f"the notation {move!r} does not lead to the chosen play")
    return move


def decide(analyzer: Analyzer, line: str, ply: int | None = None) -> str:
    """The answer line (without the newline) to one board line; plays are chosen at
    ``ply`` (the analyzer's default when None)."""
    try:
        parsed = parse_board_line(line)
        state = parsed.state()
        if parsed.doubled:
            return "take" if analyzer.should_take(state) else "drop"
        if state.dice is None:
            if parsed.may_double and analyzer.should_double(state):
                return "double"
            return "roll"
        move, board = analyzer.best_play(state, ply)
        return checked_play(state, move, board)
    except (ValueError, KeyError) as exc:  # PositionError, ProtocolError, MatchScore's
        return f"Error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"


@dataclass(frozen=True)
class PortLimits:
    """How long and how much a gnubg connection may take (``ServerConfig``'s ``gnubg_*``)."""

    idle_s: float = 3600.0
    """A connection silent for this long between lines is closed."""
    line_timeout_s: float = 30.0
    """A started line must be finished (its newline) within this time."""
    max_connections: int = 32
    """Connections served at once; more are closed on arrival."""

    @classmethod
    def of(cls, config: Any) -> PortLimits:
        if config is None:
            return cls()
        return cls(config.gnubg_idle_s, config.gnubg_line_timeout_s, config.gnubg_max_connections)


async def read_lines(
    reader: asyncio.StreamReader, limits: PortLimits
) -> AsyncIterator[bytes | None]:
    """The lines of a connection (without the newline; NUL bytes dropped) until it closes
    or times out; ``None`` once for each line longer than ``MAX_LINE``, whose rest is
    skipped up to its newline (one answer per line, however long)."""
    buffer = b""
    skipping = False
    while True:
        timeout = limits.line_timeout_s if (buffer or skipping) else limits.idle_s
        try:
            chunk = await asyncio.wait_for(reader.read(4096), timeout)
        except asyncio.TimeoutError:  # noqa: UP041 (not the builtin before 3.11)
            return
        if not chunk:
            return
        buffer += chunk.replace(b"\x00", b"")
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            line, buffer = buffer[:end], buffer[end + 1 :]
            if skipping:
                skipping = False  # the end of an over-long line: answered already
                continue
            yield line
        if len(buffer) > MAX_LINE:
            if not skipping:
                yield None
            skipping = True
            buffer = b""


async def _handle(
    analyzer: Analyzer,
    run: Any,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    transcript: TextIO | None,
    ply: int | None = None,
    limits: PortLimits | None = None,
) -> None:
    try:
        async for raw in read_lines(reader, limits or PortLimits()):
            if raw is None:
                answer = f"Error: line too long (over {MAX_LINE} bytes)"
                text = ""
            else:
                text = raw.decode("ascii", "replace").strip()
                if not text:
                    continue
                try:
                    answer = await run(decide, analyzer, text, ply)
                except Exception as exc:  # a bug must not cost gnubg its connection
                    answer = f"Error: internal error ({type(exc).__name__})"
            if transcript is not None:
                transcript.write(json.dumps({"line": text[:MAX_LINE], "answer": answer}) + "\n")
                transcript.flush()
            writer.write(answer.encode("ascii", "replace") + b"\n")
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
        return  # gnubg went away, abruptly or not: nothing to log
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def start_gnubg_server(
    analyzer: Analyzer,
    host: str,
    port: int,
    batcher: Any = None,
    transcript: TextIO | None = None,
    ply: int | None = None,
    config: Any = None,
) -> asyncio.Server:
    """Listen for gnubg; decisions run on ``batcher``'s thread when given (a
    ``WorkQueue`` or anything with ``run_sync``).  ``transcript`` receives one JSON line
    per decision: ``{"line", "answer"}``; plays are chosen at ``ply`` (the analyzer's
    default when None); ``config`` (a ``ServerConfig``) gives the timeouts and limits."""
    loop = asyncio.get_running_loop()
    limits = PortLimits.of(config)
    runner = getattr(batcher, "run", None) or getattr(batcher, "run_sync", None)
    open_connections = 0

    async def run(fn: Any, *args: Any) -> Any:
        if runner is not None:
            return await runner(fn, *args)
        return await loop.run_in_executor(None, fn, *args)

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_connections
        if open_connections >= limits.max_connections:
            writer.close()
            return
        open_connections += 1
        try:
            await _handle(analyzer, run, reader, writer, transcript, ply, limits)
        except asyncio.CancelledError:
            return  # the server is shutting down: the connection is closed, nothing to log
        finally:
            open_connections -= 1

    return await asyncio.start_server(connected, host, port, limit=MAX_LINE)


async def serve_forever(
    analyzer: Analyzer,
    host: str,
    port: int,
    transcript: TextIO | None = None,
    ply: int | None = None,
    config: Any = None,
) -> None:
    server = await start_gnubg_server(
        analyzer, host, port, transcript=transcript, ply=ply, config=config
    )
    async with server:
        await server.serve_forever()


__all__ = ["BoardLine", "PositionError", "ProtocolError", "decide", "parse_board_line"]
