"""``nard ubgi``: the UBGI engine driven as a host drives it.

A transcript test sends the host's lines to the engine in-process and checks every
answer; a scripted host then plays a whole money game with the cube against a real
``nard ubgi`` process, refereed by the engine's ``Game``, and fails on any protocol
error (a ``sorry``, a move that does not parse or is illegal, a cube action that does
not fit the state).
"""

from __future__ import annotations

import functools
import io
import queue
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from nard_rl.engine.game import Game, Phase
from nard_rl.engine.ids import XGIDInfo, encode_xgid
from nard_rl.engine.position import START_BOARD, apply_steps
from nard_rl.server.analysis import Analyzer
from nard_rl.server.ubgi import OPTIONS, UbgiEngine, parse_position

ROOT = Path(__file__).resolve().parents[1]
OPENING_31 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
OPENING_ROLL = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


@functools.cache
def shared_analyzer() -> Analyzer:
    return Analyzer()


class Session:
    """An in-process engine and what it wrote, line by line."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.engine = UbgiEngine(self.out, shared_analyzer)
        self._read = 0

    def send(self, line: str) -> list[str]:
        """The engine's answer to ``line`` (waiting for a rollout it starts to end)."""
        self.engine.handle(line)
        if self.engine._rollout is not None:
            self.engine._rollout.join(timeout=120)
        return self.new_lines()

    def send_no_wait(self, line: str) -> list[str]:
        """The answer to ``line`` while a rollout runs (its reports left out)."""
        self.engine.handle(line)
        return [x for x in self.new_lines() if not x.startswith("info rollout")]

    def new_lines(self) -> list[str]:
        lines = self.out.getvalue().split("\n")[:-1]
        fresh = lines[self._read :]
        self._read = len(lines)
        return fresh


def xgid(
    board: list[int] | tuple[int, ...],
    *,
    dice: tuple[int, int] = (0, 0),
    cube: int = 1,
    owner: str = "centered",
    doubled: bool = False,
    turn: int = 1,
    length: int = 0,
    score: tuple[int, int] = (0, 0),
) -> str:
    info = XGIDInfo(
        board=tuple(board),
        cube_value=cube,
        cube_owner=owner,  # type: ignore[arg-type]
        turn=turn,
        dice=dice,
        cube_action="D" if doubled else "",
        score=score,
        match_length=length,
    )
    return encode_xgid(info)


def race(mover: dict[int, int], opponent: dict[int, int]) -> list[int]:
    """A no-contact board: the mover's checkers on its points, the opponent's on its own
    points (numbered from the opponent's ace point)."""
    board = [0] * 26
    for p, n in mover.items():
        board[p] = n
    for p, n in opponent.items():
        board[25 - p] = -n
    return board


def host_steps(move: str) -> list[tuple[int, int]]:
    """How a host reads a UBGI move: from-to pairs, '/', '-' or ' ' between the numbers."""
    words = move.replace("/", " ").replace("-", " ").split()
    numbers = [25 if w == "bar" else 0 if w == "off" else int(w) for w in words]
    assert len(numbers) % 2 == 0 and len(numbers) <= 8, move
    return list(zip(numbers[::2], numbers[1::2], strict=True))


@pytest.fixture
def session() -> Session:
    s = Session()
    assert s.send("ubgi")[-1] == "readyok"
    return s


def test_handshake_and_commands_before_it() -> None:
    s = Session()
    assert s.send("go") == ["sorry send 'ubgi' first"]
    assert s.send("isready") == ["readyok"]
    lines = s.send("ubgi")
    assert lines[0] == "id name nard-rl"
    assert lines[1].startswith("id author ")
    assert lines[2].startswith("id version ") and "UBGI draft 0.01" in lines[2]
    assert lines[3 : 3 + len(OPTIONS)] == [o.line(o.default) for o in OPTIONS]
    assert lines[-1] == "readyok" and len(lines) == 4 + len(OPTIONS)
    assert s.send("quit") == []
    assert s.engine.handle("quit") is False


def test_best_actions_in_the_draft_notation(session: Session) -> None:
    s = session
    (move,) = s.send(OPENING_31)
    assert move == "8/5 6/5"  # the opening 31 every strong program plays
    (move,) = s.send("XGID=-b----E-C---eE---c-e----B-:0:0:1:66:0:0:0:0:10")
    steps = host_steps(move)
    assert len(steps) == 4 and all(a - b == 6 for a, b in steps)  # a double: 4 steps
    _, after = apply_steps(START_BOARD, steps)  # the host can replay it
    assert sum(v for v in after if v > 0) == 15
    assert s.send(OPENING_ROLL) == ["roll"]


def test_cube_actions(session: Session) -> None:
    s = session
    certain = race({1: 2}, {6: 2})  # the mover bears off its last two checkers next roll
    assert s.send(xgid(certain)) == ["double"]  # double and pass: no gammon to play for
    assert s.send(xgid(certain, doubled=True)) == ["drop"]
    assert s.send(xgid(certain, cube=2, owner="opponent")) == ["roll"]  # not its cube
    assert s.send(xgid(certain, length=5, score=(4, 2))) == ["roll"]  # Crawford game
    even = race({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})  # long even race, mover on roll
    assert s.send(xgid(even)) == ["roll"]
    assert s.send(xgid(even, doubled=True)) == ["take"]
    # the same double with the doubler as the top player (turn -1) reads the same
    assert s.send(xgid(even, doubled=True, turn=-1)) == ["take"]


def test_no_legal_play_is_a_blank_line(session: Session) -> None:
    board = [0] * 26
    board[25] = 1  # on the bar ...
    board[1] = 14
    for p in range(19, 25):  # ... against a closed board
        board[p] = -2
    board[0] = -3
    assert session.send(xgid(board, dice=(6, 5))) == [""]


def test_fibs_board_line(session: Session) -> None:
    off_me = 15 - sum(v for v in START_BOARD[1:26] if v > 0)
    off_opp = 15 + sum(v for v in START_BOARD[0:25] if v < 0)
    tokens = [
        "board", "host", "nard", 0, 0, 0, *START_BOARD, 1, 3, 1, 3, 1, 1, 1, 1, 0,
        1, -1, 0, 25, off_me, off_opp, 0, 0, 0, 0, 0, 1,
    ]  # fmt: skip
    assert session.send(":".join(str(t) for t in tokens)) == ["8/5 6/5"]


def test_errors_are_answered_and_the_engine_goes_on(session: Session) -> None:
    s = session
    assert s.send("go") == ["sorry no position: send 'position <XGID or board line>' first"]
    assert s.send("frobnicate")[0] == "sorry unknown command 'frobnicate'"
    assert s.send("")[0] == "sorry empty line"
    assert s.send("XGID=nonsense")[0].startswith("sorry bad position: ")
    assert s.send("board:1:2")[0].startswith("sorry bad position: ")
    assert s.send("x" * 5000)[0].startswith("sorry line longer than")
    assert s.send("setoption name Ply value 9") == ["sorry Ply must be in 0..3, got 9"]
    assert s.send("setoption name Depth value 1")[0].startswith("sorry unknown option 'Depth'")
    assert s.send("setoption Ply 1")[0].startswith("sorry usage: setoption")
    assert (
        s.send("rollout games 5")[0]
        == "sorry no position: send 'position <XGID or board line>' first"
    )
    assert s.send("position " + OPENING_31) == ["readyok"]
    assert s.send("rollout games 5") == ["sorry usage: rollout [trials N]"]
    assert s.send("go") == ["8/5 6/5"]  # still working after all that


def test_options_position_eval_and_status(session: Session) -> None:
    s = session
    assert s.send("setoption name Ply value 1") == ["readyok"]
    assert s.send("setoption name AnalysisPlays value 3") == ["readyok"]
    assert s.send("position " + OPENING_31) == ["readyok"]
    assert s.send("status") == [f"status idle ply 1 rules standard position {OPENING_31}"]
    lines = s.send("eval")
    assert lines[-1] == "readyok" and len(lines) == 4
    equities = [float(line.split()[6]) for line in lines[:3]]
    assert lines[0].startswith("info play 1 ply ") and lines[0].endswith("move 8/5 6/5")
    assert equities == sorted(equities, reverse=True)
    pre = s.send("position " + xgid(race({1: 2}, {6: 2})))
    assert pre == ["readyok"]
    lines = s.send("eval")
    assert lines[0].startswith("info eval ply 1 equity 1.0000 win 1.0000")
    assert lines[1].startswith("info cube ") and " action doublepass response drop" in lines[1]
    assert s.send("setoption name Rules value mars") == ["readyok"]
    assert s.send("status")[0].startswith("status idle ply 1 rules mars")
    assert s.send("go") == ["roll"]  # no cube under mars (R28)
    doubled = s.send(xgid(race({1: 2}, {6: 2}), doubled=True))
    assert doubled == ["sorry the mars rule set has no doubling cube (R28)"]


def test_rollout_reports_and_result(session: Session) -> None:
    s = session
    s.send("setoption name RolloutReport value 36")
    assert s.send("position " + xgid(race({1: 2}, {6: 2}))) == ["readyok"]
    lines = s.send("rollout trials 108")
    assert [line.split()[:4] for line in lines[:-1]] == [
        ["info", "rollout", "trials", "36"],
        ["info", "rollout", "trials", "72"],
        ["info", "rollout", "done", "trials"],
    ]
    assert lines[-2].startswith("info rollout done trials 108 equity 1.0000 se 0.0000 win 1.0000")
    assert lines[-1] == "readyok"
    # with dice: the best plays side by side, on the same dice streams
    s.send("setoption name RolloutPlays value 2")
    s.send("position " + OPENING_31)
    lines = s.send("rollout trials 72")
    done = [line for line in lines if line.startswith("info rollout done")]
    assert len(done) == 2 and done[0].endswith("move 8/5 6/5")


def test_stop_status_and_busy_during_a_rollout(session: Session) -> None:
    s = session
    s.send("position " + OPENING_ROLL)
    s.engine.handle("rollout trials 1000000")
    status = s.send_no_wait("status")
    assert status[0].startswith("status rollout trials ") and status[0].endswith(" of 1000000")
    assert s.send_no_wait("go") == ["sorry busy: a rollout is running (send 'stop')"]
    assert s.send_no_wait("isready") == ["readyok"]
    lines = s.send("stop")
    done = [line for line in lines if line.startswith("info rollout done")]
    trials = int(done[0].split()[4])
    assert trials % 36 == 0 and trials < 1000000
    assert lines[-1] == "readyok"
    assert s.send("stop") == ["readyok"]  # nothing left to stop


def test_parse_position_reads_the_doubler_view() -> None:
    d = parse_position(xgid(race({6: 3}, {1: 3}), doubled=True, cube=2, owner="mover"), "standard")
    assert d.doubled and not d.may_double
    # the receiver's view: board flipped, the doubler (on roll) owns the cube from its view
    assert d.state.cube.owner == "opponent" and d.state.position.board[19] == -3


# -- a scripted host plays a whole game against `nard ubgi` --------------------------------
class Pipe:
    """A ``nard ubgi`` process; each answer is read with a timeout (a hang fails)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nard_rl", "ubgi", "--cube-ply", "0"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.lines.get(timeout=120)
        assert not answer.startswith("sorry"), f"{line!r} -> {answer!r}"
        return answer


def game_xgid(game: Game, *, doubled: bool = False) -> str:
    """The host's XGID of the game: the engine (player 0) is the bottom player."""
    me = game.player_on_roll
    owner = game.cube_owner
    return encode_xgid(
        XGIDInfo(
            board=game.position_for(me).board,
            cube_value=game.cube_value,
            cube_owner="centered" if owner is None else "mover" if owner == me else "opponent",
            turn=1 if me == 0 else -1,
            dice=(0, 0) if game.dice is None or doubled else tuple(game.dice),
            cube_action="D" if doubled else "",
        )
    )


@pytest.mark.parametrize("seed", [3])
def test_scripted_host_plays_a_whole_game(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pipe = Pipe()
    try:
        first = pipe.ask("ubgi")
        assert first == "id name nard-rl"
        while pipe.lines.get(timeout=120) != "readyok":
            pass
        game = Game("standard", seed=seed)
        while game.phase is Phase.OPENING:
            game.roll()
        turns = 0
        engine_moves = 0
        while not game.is_over:
            turns += 1
            assert turns < 1000
            me = game.player_on_roll
            if game.phase is Phase.ROLL_OR_DOUBLE:
                if me == 0:
                    action = pipe.ask(game_xgid(game))
                    assert action in ("double", "roll")
                    if action == "double":
                        assert game.can_double(), "the engine doubled without the right"
                        game.double()
                        game.take() if rng.random() < 0.7 else game.drop()
                        continue
                elif game.can_double() and rng.random() < 0.1:
                    game.double()
                    answer = pipe.ask(game_xgid(game, doubled=True))
                    assert answer in ("take", "drop")
                    game.take() if answer == "take" else game.drop()
                    continue
                before = game.position_for(me).board
                dice = game.roll()
                if game.phase is not Phase.MOVE and me == 0:  # passed (R16)
                    line = xgid(before, dice=tuple(dice))  # the host asks all the same
                    assert pipe.ask(line) == ""
                continue
            assert game.phase is Phase.MOVE
            if me == 0:
                move = pipe.ask(game_xgid(game))
                _, after = apply_steps(game.position.board, host_steps(move))
                game.play(list(after))  # raises if the play is illegal
                engine_moves += 1
            else:
                plays = game.legal_plays()
                game.play(plays[int(rng.integers(len(plays)))].board)
        assert game.result is not None
        assert engine_moves >= 1
        pipe.proc.stdin.write("quit\n")  # type: ignore[union-attr]
        pipe.proc.stdin.flush()  # type: ignore[union-attr]
        assert pipe.proc.wait(timeout=60) == 0
    finally:
        if pipe.proc.poll() is None:
            pipe.proc.kill()
