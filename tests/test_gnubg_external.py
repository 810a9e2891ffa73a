"""gnubg's external-player protocol: board lines in, one answer line out.

The board lines below are the shapes GNU Backgammon 1.07 sends (docs/gnubg-external.md):
on roll before the dice (names and scores swapped), doubled, and with dice.  The
end-to-end test drives the real gnubg through ``scripts/gnubg_external_play.py``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nard_rl.engine.game import Game
from nard_rl.engine.position import START_BOARD
from nard_rl.server.analysis import Analyzer
from nard_rl.server.config import ServerConfig
from nard_rl.server.gnubg_external import decide, parse_board_line, start_gnubg_server

ROOT = Path(__file__).resolve().parents[1]


def board_line(
    board: list[int] | tuple[int, ...] = START_BOARD,
    *,
    names: tuple[str, str] = ("gnubg", "nard"),
    length: int = 0,
    scores: tuple[int, int] = (0, 0),
    turn: int = 1,
    dice: tuple[int, int] = (0, 0),
    cube: int = 1,
    may: tuple[int, int] = (1, 1),
    doubled: int = 0,
    crawford_flags: tuple[int, int] = (0, 1),
) -> str:
    """A 53-token FIBS board line as gnubg writes it for its external player."""
    off_me = 15 - sum(v for v in board[1:26] if v > 0)
    off_opp = 15 + sum(v for v in board[0:25] if v < 0)
    tokens = [
        "board", *names, length, *scores, *board, turn, *dice, *dice, cube, *may, doubled,
        1, -1, 0, 25, off_me, off_opp, 0, 0, 0, 0, *crawford_flags,
    ]  # fmt: skip
    assert len(tokens) == 53
    return ":".join(str(t) for t in tokens)


@functools.cache
def shared_analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return shared_analyzer()


def test_parse_undoes_gnubgs_score_swap() -> None:
    # on roll (turn 1): token 4 is gnubg's score; doubled (turn -1): the normal order
    on_roll = parse_board_line(board_line(length=5, scores=(1, 3), turn=1))
    assert on_roll.score == (3, 1)
    doubled = parse_board_line(
        board_line(names=("nard", "gnubg"), length=5, scores=(3, 1), turn=-1, doubled=1)
    )
    assert doubled.score == (3, 1) and doubled.doubled
    assert on_roll.state().match is not None and on_roll.state().match.score_me == 3
    craw = parse_board_line(board_line(length=5, scores=(4, 2), crawford_flags=(0, 0)))
    assert craw.state().match.crawford  # token 52 is 0 in the Crawford game
    assert not craw.state().match.doubling_allowed


def test_cube_owner_from_the_may_double_flags() -> None:
    assert parse_board_line(board_line(cube=2, may=(1, 0))).state().cube.owner == "mover"
    assert parse_board_line(board_line(cube=2, may=(0, 1))).state().cube.owner == "opponent"
    assert parse_board_line(board_line(cube=1, may=(1, 1))).state().cube.owner == "centered"


def _played_lines(analyzer: Analyzer, seeds: Iterable[int]) -> Iterator[tuple[Game, str]]:
    """Each (game, board line) where a seeded game is to move; after the caller looks,
    the game goes on with the analyzer's answer."""
    for seed in seeds:
        game = Game(seed=seed)
        while not game.is_over:
            if game.phase.value != "move":
                game.roll()
                continue
            line = board_line(list(game.position.board), dice=game.dice)
            yield game, line
            game.play(decide(analyzer, line))


def test_answers(analyzer: Analyzer) -> None:
    assert decide(analyzer, board_line()) in ("roll", "double")
    assert decide(analyzer, board_line(turn=-1, doubled=1)) in ("take", "drop")
    play = decide(analyzer, board_line(dice=(6, 5)))
    assert play == "24/13"
    # every play answered for many positions and rolls is one of the legal plays (the
    # games go on with those answers: the engine reads the notation back)
    for game, line in _played_lines(analyzer, range(3)):
        answer = decide(analyzer, line)
        assert answer in {p.move for p in game.position.plays(*game.dice)}
    # a roll that cannot be played answers an empty line
    closed = [0] * 26
    closed[25] = 1
    closed[7] = 14
    closed[19:25] = [-2, -2, -2, -3, -3, -3]
    assert decide(analyzer, board_line(closed, dice=(3, 4))) == ""


def _first_ply_disagreement(analyzer: Analyzer) -> str:
    """A board line (from seeded games) whose best play differs at 0 and 1 ply."""
    for _, line in _played_lines(analyzer, range(40)):
        if decide(analyzer, line, ply=0) != decide(analyzer, line, ply=1):
            return line
    raise AssertionError("0-ply and 1-ply agreed everywhere")


def test_plays_are_answered_at_the_ply_asked(analyzer: Analyzer) -> None:
    line = _first_ply_disagreement(analyzer)
    state = parse_board_line(line).state()
    assert decide(analyzer, line, ply=1) == analyzer.best_play(state, 1)[0]
    assert decide(analyzer, line) == analyzer.best_play(state, analyzer.ply)[0]

    async def main() -> bytes:
        server = await start_gnubg_server(analyzer, "127.0.0.1", 0, ply=1)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(line.encode() + b"\n\x00")
        await writer.drain()
        answer = await asyncio.wait_for(reader.readline(), 120)
        writer.close()
        server.close()
        await server.wait_closed()
        return answer

    assert asyncio.run(main()) == decide(analyzer, line, ply=1).encode() + b"\n"


def test_the_external_player_plays_at_1_ply_by_default() -> None:
    from nard_rl.server.config import ServerConfig

    assert ServerConfig().external_ply == 1
    with pytest.raises(ValueError, match="external_ply"):
        ServerConfig().updated({"external_ply": 4})


@pytest.mark.parametrize(
    "line, word",
    [
        ("hello", "board"),
        ("board:a:b", "53"),
        (board_line(dice=(3, 1)).replace(":3:1:3:1:", ":x:1:3:1:"), "integer"),
        (board_line(dice=(7, 1)), "dice"),
        (board_line(length=3, scores=(5, 0)), "score"),
        (board_line([0] * 25 + [16]), "15"),
    ],
)
def test_bad_lines_get_an_error_line(analyzer: Analyzer, line: str, word: str) -> None:
    answer = decide(analyzer, line)
    assert answer.startswith("Error: ") and word in answer and "\n" not in answer


@given(st.text(max_size=300))
def test_fuzzed_lines_never_crash(line: str) -> None:
    answer = decide(shared_analyzer(), line)
    assert answer.startswith("Error: ") and "\n" not in answer


@given(
    index=st.integers(min_value=1, max_value=52),
    value=st.integers(min_value=-99, max_value=99).map(str) | st.text(max_size=4),
)
def test_fuzzed_tokens_never_crash(index: int, value: str) -> None:
    tokens = board_line(dice=(3, 1)).split(":")
    tokens[index] = value
    answer = decide(shared_analyzer(), ":".join(tokens))
    assert "\n" not in answer


def test_tcp_server_answers_one_line_per_board_line(analyzer: Analyzer) -> None:
    async def main() -> list[bytes]:
        server = await start_gnubg_server(analyzer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answers = []
        for line in (board_line(dice=(6, 5)), "garbage", board_line()):
            writer.write(line.encode() + b"\n\x00")  # gnubg ends each line with a NUL
            await writer.drain()
            answers.append(await asyncio.wait_for(reader.readline(), 120))
        writer.close()
        server.close()
        await server.wait_closed()
        return answers

    answers = asyncio.run(main())
    assert answers[0] == b"24/13\n"
    assert answers[1].startswith(b"Error: ")
    assert answers[2] in (b"roll\n", b"double\n")


@pytest.mark.gnubg
def test_gnubg_plays_money_games_and_a_match(tmp_path: Path) -> None:
    """gnubg 1.07 referees money games with the cube and a whole match against nard serve;
    the script checks that every game ends, every answer is legal and gnubg complains
    about none."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gnubg_external_play.py"),
         "--money", "2", "--matches", "1", "--length", "3", "--keep", str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "all checks passed" in result.stdout


def _port_session(analyzer: Analyzer, config: Any, script: Any) -> Any:
    """Run ``script(port)`` against a fresh gnubg port with ``config``'s limits."""

    async def main() -> Any:
        server = await start_gnubg_server(analyzer, "127.0.0.1", 0, config=config)
        port = server.sockets[0].getsockname()[1]
        try:
            return await script(port)
        finally:
            server.close()
            await server.wait_closed()

    return asyncio.run(main())


def test_a_long_line_gets_one_answer(analyzer: Analyzer) -> None:
    """A 1 MB line was answered 125 times (once per 8 KB read); now once, and the next
    line is read as a line of its own."""

    async def script(port: int) -> list[bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"board:" + b"x" * 1_000_000 + b"\n" + board_line(dice=(6, 5)).encode() + b"\n"
        )
        await writer.drain()
        answers = [await asyncio.wait_for(reader.readline(), 120) for _ in range(2)]
        writer.close()
        rest = await asyncio.wait_for(reader.read(), 10)  # nothing more was sent
        return [*answers, rest]

    answers = _port_session(analyzer, ServerConfig(), script)
    assert answers[0].startswith(b"Error: line too long") and answers[1] == b"24/13\n"
    assert answers[2] == b""


def test_abrupt_disconnects_log_nothing_and_slow_peers_are_dropped(
    analyzer: Analyzer, caplog: pytest.LogCaptureFixture
) -> None:
    config = ServerConfig(gnubg_idle_s=0.5, gnubg_line_timeout_s=0.5, gnubg_max_connections=2)

    async def script(port: int) -> list[Any]:
        out: list[Any] = []
        lines = [board_line(dice=(6, 5)).encode(), b"board:" + b"x" * 300_000, b"garbage"]
        for line in lines:  # a question, then a reset (SO_LINGER 0) before the answer
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(line + b"\n")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        await asyncio.sleep(1.0)
        t0 = time.monotonic()  # silent: closed after the idle time
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        out.append(await asyncio.wait_for(reader.read(), 10))
        out.append(time.monotonic() - t0)
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"board:1:2:3")  # a line that never ends
        t0 = time.monotonic()
        out.append(await asyncio.wait_for(reader.read(), 10))
        out.append(time.monotonic() - t0)
        writer.close()
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)  # one too many
        out.append(await asyncio.wait_for(reader.read(), 2))
        for _, w in [*held, (reader, writer)]:
            w.close()
        return out

    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        idle, idle_s, partial, partial_s, refused = _port_session(analyzer, config, script)
    assert idle == b"" and 0.4 < idle_s < 5
    assert partial == b"" and 0.4 < partial_s < 5
    assert refused == b""
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
