"""The mars rule set end to end (R28-R30): the commands a person uses, not just the engine.

The engine's own rules (values, waste rule, clock arithmetic) are tested in test_game.py
and test_movegen*.py; here: ``nard play`` under mars (no cube, results of 1 or 2, a
resignation valued by R30, the clock with a timeout scoring a mars), the board drawn with
the home board on either side, and the mars net picked whenever the rule set is mars.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_play import _tiny

from nard_rl.cli import main
from nard_rl.commands.play import NO_CUBE_COMMANDS, Session
from nard_rl.engine.ascii import render_board
from nard_rl.engine.game import EndReason, Game, IllegalActionError, Phase, ResultKind
from nard_rl.engine.position import START_BOARD, Position


class FakeClock:
    """A time source the test moves by hand (R30)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _session(tmp_path: Path, clock: FakeClock, rules: str = "mars", seed: int = 5) -> Session:
    return Session(str(_tiny(tmp_path / "t.pt")), 0, rules, seed, io.StringIO(), clock=clock)


def _text(session: Session) -> str:
    out = session.out
    assert isinstance(out, io.StringIO)
    return out.getvalue()


# R28: no cube, wins of 1 or 2 ---------------------------------------------------------------
def test_r28_play_offers_no_cube_and_refuses_a_double(tmp_path: Path) -> None:
    clock = FakeClock()
    session = _session(tmp_path, clock)
    session.run(iter(["double\n", "quit\n"]))
    text = _text(session)
    assert "roll or double?" not in text  # the prompt never offers the cube
    assert "not possible" in text and "no doubling cube (R28)" in text
    assert "double" not in NO_CUBE_COMMANDS


def test_r28_play_to_the_end_scores_one_or_two_and_names_a_mars(tmp_path: Path) -> None:
    for seed in range(3):
        session = _session(tmp_path, FakeClock(), seed=seed)

        def script(s: Session = session) -> Iterator[str]:
            while True:
                game = s.match.game
                yield game.legal_plays()[0].move if game.phase is Phase.MOVE else "roll"

        session.run(script())
        result = session.match.game.result
        assert result is not None and result.points in (1, 2)
        assert result.multiplier == (1 if result.kind is ResultKind.SINGLE else 2)  # never x3
        last = _text(session).splitlines()[-1]
        assert last.endswith("(a mars)" if result.points == 2 else "(a single game)")


# R30: the clock and resignations ---------------------------------------------------------------
def test_r30_play_shows_the_clock_and_a_timeout_scores_a_mars_for_the_bot(tmp_path: Path) -> None:
    clock = FakeClock()
    session = _session(tmp_path, clock)

    def script() -> Iterator[str]:
        clock.now += 20.0  # 11 s of turn time, then 9 s of the reserve
        game = session.match.game
        yield game.legal_plays()[0].move if game.phase is Phase.MOVE else "roll"
        clock.now += 200.0  # the reserve runs out
        yield "roll"
        yield "quit"

    session.run(script())
    text = _text(session)
    assert "[11s + 1:30]" in text  # the first prompt of the human: full turn time and reserve
    assert "[0s + 1:21]" in text  # the turn time is spent, the reserve runs: 90 - 9 s left
    assert "ran out of time (R30)" in text
    assert text.splitlines()[-1] == "bot wins 2 points (a mars, on time (R30))"
    result = session.match.game.result
    assert result is not None and result.reason is EndReason.TIMEOUT and result.points == 2


def test_r30_bot_turns_do_not_run_the_humans_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    session = _session(tmp_path, clock, seed=8)
    game = session.match.game
    game.roll((1, 6))  # the bot wins the opening
    session.bot_turn(game)
    assert game.player_on_roll == 0
    clock.now += 100.0  # a slow human, but inside turn time + reserve
    assert game.time_left(0) == (0.0, pytest.approx(1.0))
    game.roll()
    assert not game.is_over


def test_r30_resigning_in_play_scores_two_before_any_checker_is_off(tmp_path: Path) -> None:
    session = _session(tmp_path, FakeClock())
    session.run(iter(["resign\n", "resign\n", "quit\n"]))
    text = _text(session)
    assert "you resign a mars" in text and "bot accepts" in text
    assert text.splitlines()[-1] == "bot wins 2 points (a mars, resignation)"


def test_r30_resigning_a_chosen_kind_is_refused_under_mars(tmp_path: Path) -> None:
    session = _session(tmp_path, FakeClock())
    session.run(iter(["resign single\n", "quit\n"]))
    assert "is a gammon here, not a single (R30)" in _text(session)


def test_r27_resignation_in_play_under_standard_rules(tmp_path: Path) -> None:
    session = _session(tmp_path, FakeClock(), rules="standard")
    session.run(iter(["resign gammon\n", "resign gammon\n", "quit\n"]))
    text = _text(session)
    assert "you resign a gammon" in text
    assert "bot wins 2 points (a gammon, resignation)" in text
    assert "[" not in text.split("you resign")[0].splitlines()[-1]  # no clock under standard


def test_r30_the_clock_stops_while_a_resignation_waits_for_its_answer() -> None:
    clock = FakeClock()
    # the resigner has borne a checker off: his resignation is worth 1, a timeout 2 (R30)
    board = [0] * 26
    board[6], board[19] = 14, -15
    accepted = Game("mars", start=board, clock=clock)
    clock.now += 5.0
    accepted.resign()
    clock.now += 500.0  # the opponent takes his time: the resigner's clock does not run
    assert not accepted.check_clock()
    result = accepted.accept_resignation()
    assert (result.reason, result.points) == (EndReason.RESIGN, 1)

    declined = Game("mars", start=board, clock=clock)
    clock.now += 5.0
    declined.resign()
    clock.now += 500.0
    declined.decline_resignation()
    assert declined.time_left(0) == (pytest.approx(6.0), pytest.approx(90.0))
    clock.now += 10.0  # the turn goes on where it stopped: 5 + 10 s, 4 s into the reserve
    assert declined.time_left(0) == (0.0, pytest.approx(86.0))


# R30: the board with the home board on either side ------------------------------------------------
def _cells(line: str) -> tuple[list[str], str, list[str]]:
    left, bar, right = line[2:20], line[21:24], line[25:43]
    return (
        [left[i : i + 3] for i in range(0, 18, 3)],
        bar,
        [right[i : i + 3] for i in range(0, 18, 3)],
    )


def test_r30_home_board_left_mirrors_every_point_and_nothing_else() -> None:
    rng = np.random.default_rng(0)
    boards = [START_BOARD]
    for _ in range(20):
        b = [0] * 26
        for sign in (1, -1):
            for _ in range(15):
                p = int(rng.integers(1, 25))
                if b[p] * sign >= 0:
                    b[p] += sign
        boards.append(tuple(b))
    for board in boards:
        right = render_board(board).splitlines()
        left = render_board(board, home="left").splitlines()
        assert len(left) == len(right)
        assert left[1].startswith(" +24-23-22-21-20-19-") and left[-1].startswith(" +-1--2--3-")
        for r, m in zip(right[2:-1], left[2:-1], strict=True):
            if r.startswith("v"):
                assert r == m
                continue
            rl, rb, rr = _cells(r)
            ml, mb, mr = _cells(m)
            assert (ml, mb, mr) == (rr[::-1], rb, rl[::-1])
            assert r[43:] == m[43:]  # the tray and the notes stay where they are
    with pytest.raises(ValueError, match="home must be one of right, left"):
        render_board(START_BOARD, home="top")


def test_home_flag_on_play_hint_and_demo(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    session = Session(
        str(_tiny(tmp_path / "t.pt")), 0, "mars", 2, io.StringIO(), clock=FakeClock(), home="left"
    )
    session.run(iter(["board\n", "quit\n"]))
    assert "+-1--2--3--4--5--6-" in _text(session)
    with pytest.raises(ValueError, match="home must be"):
        Session(str(tmp_path / "t.pt"), 0, "mars", 2, io.StringIO(), home="middle")
    assert (
        main(["hint", "--dice", "3", "1", "--net", str(tmp_path / "t.pt"), "--home", "left"]) == 0
    )
    hint = capsys.readouterr().out
    assert " +24-23-22-21-20-19-" in hint and " 1. " in hint  # the ranking follows the board
    assert main(["demo", "--seed", "3", "--rules", "mars", "--home", "left"]) == 0
    demo = capsys.readouterr().out
    assert "+-1--2--3--4--5--6-" in demo and "wins" in demo


# R29 through the game flow ---------------------------------------------------------------------
def test_r29_the_game_offers_only_the_least_waste_plays_under_mars() -> None:
    board = [0] * 26
    board[6], board[3], board[20] = 1, 1, -3  # 6-2: 6/off 3/1, or 6/4/off (the 6 wastes 2)
    standard = Game("standard", start=board, dice=[(6, 2)])
    mars = Game("mars", start=board, dice=[(6, 2)])
    standard.roll()
    mars.roll()
    assert {p.move for p in standard.legal_plays()} == {"6/off 3/1", "6/off"}
    assert [p.move for p in mars.legal_plays()] == ["6/off 3/1"]
    with pytest.raises(IllegalActionError, match="not a legal play"):
        mars.play("6/4/off")


# the mars net is the default under mars --------------------------------------------------------
def test_agent_answers_under_mars(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = [{"board": list(START_BOARD), "dice": [6, 5], "rules": "mars"}]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(json.dumps(r) for r in requests)))
    assert main(["agent", "--player", str(_tiny(tmp_path / "t.pt")), "--rules", "mars"]) == 0
    answer = json.loads(capsys.readouterr().out.splitlines()[0])
    legal = {p.move: p.board for p in Position(START_BOARD).plays(6, 5)}
    assert tuple(answer["board"]) == legal[answer["move"]]


# R30 in server sessions ------------------------------------------------------------------------
def test_r30_server_sessions_show_the_clock_and_score_a_timeout_as_a_mars() -> None:
    from nard_rl.server.analysis import Analyzer
    from nard_rl.server.sessions import SessionStore

    clock = FakeClock()
    store = SessionStore(Analyzer(), clock=clock)
    assert store.create("standard", seed=1)["clock"] is None
    gid = store.create("mars", seed=3, first="human")["id"]
    view = store.act(gid, "roll")  # the human wins the opening and must move
    assert view["phase"] == "move" and view["can_double"] is False
    assert view["clock"]["human"] == {"turn": 11.0, "reserve": 90.0}
    clock.now += 30.0
    assert store.state(gid)["clock"]["human"] == {"turn": 0.0, "reserve": 71.0}
    clock.now += 100.0  # nobody acts: the next poll ends the game on time
    view = store.state(gid)
    assert view["phase"] == "game_over"
    assert view["result"] == {"winner": "bot", "points": 2, "kind": "gammon", "reason": "timeout"}
    with pytest.raises(IllegalActionError, match="game is over"):
        store.act(gid, "move", move="24/18")


# a net carried over to mars --------------------------------------------------------------------
def test_training_can_start_a_mars_net_from_a_standard_one(tmp_path: Path) -> None:
    import torch
    from test_train import _smoke_cfg

    from nard_rl.nets.network import load_checkpoint
    from nard_rl.training.td import train

    standard = load_checkpoint(train(_smoke_cfg(tmp_path / "s", 40, final_eval_games=0)))
    cfg = _smoke_cfg(tmp_path / "m", 40, final_eval_games=0, lr=1e-12, lr_final=1e-12)
    cfg.rules.name = "mars"
    cfg.init = str(tmp_path / "s" / "t" / "checkpoints" / "last.pt")
    mars = load_checkpoint(train(cfg))
    assert mars["spec"]["rules"] == "mars" and standard["spec"]["rules"] == "standard"
    assert mars["games"] >= 40  # its own count, not the standard run's
    for k in standard["model"]:  # no learning to speak of: the weights are the standard net's
        assert torch.allclose(mars["model"][k], standard["model"][k], rtol=0, atol=1e-9), k
    assert mars["extra"]["history"][0]["config"]["init"] == cfg.init
    cfg.model.hidden = [8]
    cfg.name = "other"  # a fresh run: the existing one refuses a restart (run lock)
    with pytest.raises(ValueError, match="different network"):
        train(cfg)


# the shipped mars net ----------------------------------------------------------------------------
def test_r28_default_under_mars_is_its_own_net_when_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``default`` names a net trained under mars when one is shipped (every command and
    route resolves it here), else the standard net, which then plays with the mars race
    net and the mars bear-off database."""
    import nard_rl.nets.paths as paths
    from nard_rl.nets.evaluator import load_evaluator

    # this install ships no mars contact net (none has beaten the standard net under mars)
    assert paths.default_checkpoint_path("mars").name == "nard-default.pt"
    ev = load_evaluator("default", rules="mars")
    assert ev.rules.name == "mars" and ev.race is not None and ev.race.rules.name == "mars"
    assert ev.bearoff is not None and ev.bearoff.waste_rule
    # a shipped mars net is preferred under mars and only there
    shipped = paths.shipped_dir()
    for name in ("nard-default.pt", "nard-mars.pt"):
        (tmp_path / name).write_bytes((shipped / "nard-default.pt").read_bytes())
    monkeypatch.setattr(paths, "shipped_dir", lambda: tmp_path)
    assert paths.default_checkpoint_path("mars") == tmp_path / "nard-mars.pt"
    assert paths.resolve_checkpoint("default", "mars") == tmp_path / "nard-mars.pt"
    assert paths.resolve_checkpoint("default", "standard") == tmp_path / "nard-default.pt"


def test_r28_pipeline_and_train_init_default_is_the_rule_sets_net(tmp_path: Path) -> None:
    """``nard pipeline rules=mars init=default`` (and ``nard train``'s ``init``) start from
    the mars net, not the standard one; a missing path names the ``init`` it came from."""
    from nard_rl.nets.paths import resolve_checkpoint
    from nard_rl.training.supervised.pipeline import _init_path

    assert _init_path("default", "mars") == resolve_checkpoint("default", "mars")
    assert _init_path("default", "standard").name == "nard-default.pt"
    with pytest.raises(FileNotFoundError, match=r"init=.*nope\.pt"):
        _init_path(str(tmp_path / "nope.pt"), "mars")
