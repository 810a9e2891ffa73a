"""``nard play`` driven through stdin: a scripted human against a tiny network bot."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from nard_rl.commands.play import Session
from nard_rl.engine.game import Phase
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec, save_checkpoint


def _tiny(path: Path) -> Path:
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    torch.manual_seed(0)  # the same weights whatever ran before
    save_checkpoint(path, spec.build(), spec, games=0, step=0)
    return path


def _play(ckpt: Path, script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "nard_rl", "play", "--net", str(ckpt), "--autosave", "", *args],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_illegal_input_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    ckpt = _tiny(tmp_path / "t.pt")
    text = _play(ckpt, "roll\nnonsense\nhint\nquit\n", "--seed", "3")
    assert "opening roll" in text
    assert "not possible" in text  # the bad command is refused with a reason
    assert "Position ID" in text  # the board was drawn


class AutoHuman:
    """Answers every prompt from the game state: roll, take, and the first legal play."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __iter__(self) -> AutoHuman:
        return self

    def __next__(self) -> str:
        game = self.session.match.game
        if game.phase is Phase.TAKE_OR_DROP:
            return "take"
        if game.phase is Phase.MOVE:
            return game.legal_plays()[0].move
        return "roll"


def test_a_whole_match_is_played_to_the_end(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(str(_tiny(tmp_path / "t.pt")), 3, "standard", 11, out)
    assert session.run(AutoHuman(session)) == 0  # type: ignore[arg-type]
    text = out.getvalue()
    assert "match over" in text
    assert max(session.match.score) >= 3
    assert text.count("bot plays") > 10


# --------------------------------------------------------------------------------------
# the board, hints at every decision, undo, save


def _session_to_a_bot_double(seeds: range = range(10)) -> tuple[Session, io.StringIO, list[str]]:
    """A 5-point match with the shipped net where a weak human (the first legal play
    each time) is doubled: the session stopped at the take-or-pass prompt."""
    for seed in seeds:
        out = io.StringIO()
        session = Session("default", 5, "standard", seed, out)
        answers: list[str] = []

        def human(s: Session = session, answers: list[str] = answers) -> Iterator[str]:
            while s.match.game.phase is not Phase.TAKE_OR_DROP and len(answers) < 60:
                game = s.match.game
                answers.append(game.legal_plays()[0].move if game.phase is Phase.MOVE else "roll")
                yield answers[-1]

        session.run(human())
        if session.match.game.phase is Phase.TAKE_OR_DROP:
            return session, out, answers
    raise AssertionError(f"the bot never doubled in seeds {seeds}")


def test_at_the_bots_double_the_board_shows_cube_and_score_and_hint_answers() -> None:
    session, out, _ = _session_to_a_bot_double()
    before = len(out.getvalue())
    assert session.run(iter(["hint\n", "take\n", "quit\n"])) == 0
    text = out.getvalue()
    board = text[:before].rsplit("Position ID", 1)[1]  # the last board before the prompt
    assert "Doubles to 2" in board and "To take or pass" in board
    assert "5 points match (Cube: 1)" in board  # match length, centered cube at 1
    assert " 0 points" in board or " 1 point" in board  # each side's score
    assert "Pips: " in board
    answer = text[before:]
    assert "take or pass (normalised match equity, your side):" in answer
    assert "proper answer: take" in answer or "proper answer: pass" in answer
    assert "you take" in answer
    # after the take the human owns the cube at 2: the board says so at the next decision
    assert "X: you (Cube: 2)" in answer


def test_hint_before_the_roll_is_the_cube_analysis(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(str(_tiny(tmp_path / "t.pt")), 0, "standard", 4, out)
    session.run(iter(["hint\n", "quit\n"]))  # seed 4: the bot wins the opening, then you
    text = out.getvalue()
    assert "roll or double?" in text
    assert "cube analysis at 1-ply (equity per current stake)" in text
    assert "No double" in text and "Double, take" in text and "proper action: " in text


def test_the_bots_move_is_drawn_with_its_dice_and_play(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(str(_tiny(tmp_path / "t.pt")), 0, "standard", 4, out)
    session.run(iter(["quit\n"]))
    text = out.getvalue()
    played = next(line for line in text.splitlines() if line.startswith("bot plays "))
    header = f" bot rolled 6-5 and played {played.removeprefix('bot plays ')}"
    assert text.splitlines()[text.splitlines().index(header) + 1].strip().startswith("Position ID")


def test_a_pending_play_can_be_undone_before_it_is_committed(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(str(_tiny(tmp_path / "t.pt")), 0, "standard", 3, out, confirm=True)
    game = session.match.game
    plays: list[str] = []

    def human() -> Iterator[str]:
        yield "roll"  # the opening is automatic; a roll now is refused (it is our move)
        plays.extend(p.move for p in game.legal_plays()[:2])
        yield plays[0]
        yield "undo"
        yield plays[1]
        yield ""  # Enter commits
        yield "quit"

    session.run(human())
    text = out.getvalue()
    assert f"your play: {plays[0]} (pending)" in text
    assert f"you take back {plays[0]}" in text
    assert f"you play {plays[1]}" in text and f"you play {plays[0]}" not in text
    assert game.record[1].move == plays[1]  # type: ignore[attr-defined]


def test_save_writes_the_match_and_autosave_follows_every_game(tmp_path: Path) -> None:
    out = io.StringIO()
    auto = tmp_path / "auto.mat"
    session = Session(str(_tiny(tmp_path / "t.pt")), 1, "standard", 5, out, autosave=auto)

    class Human(AutoHuman):
        said_save = False

        def __next__(self) -> str:
            if not self.said_save:
                self.said_save = True
                return f"save {tmp_path / 'mid.mat'}"
            return super().__next__()

    session.run(Human(session))  # type: ignore[arg-type]
    mid = (tmp_path / "mid.mat").read_text()
    assert mid.startswith(" 1 point match\n") and "you : 0" in mid and "bot : 0" in mid
    final = auto.read_text()
    assert "Wins 1 point" in final  # the finished game, with its result
    from nard_rl.records import parse_match, replay

    replayed = replay(parse_match(final, str(auto)))  # the project's reader takes it back
    assert len(replayed.games) == 1
    assert f"match saved to {auto}" in out.getvalue()
    with pytest.raises(ValueError, match=r"save writes \.mat files"):
        session.save(tmp_path / "x.sgf")


def test_ply_sets_the_bots_search_and_the_hint_depth(tmp_path: Path) -> None:
    out = io.StringIO()
    session = Session(str(_tiny(tmp_path / "t.pt")), 0, "standard", 3, out, ply=1)
    session.run(iter(["hint\n", "help\n", "quit\n"]))
    text = out.getvalue()
    assert "best plays at 1-ply (by money equity):" in text
    assert "  1. " in text and "  ply" in text
    assert "save FILE" in text and "undo" in text  # help
    with pytest.raises(ValueError, match=r"--ply must be an integer in 0\.\.3"):
        Session(str(tmp_path / "t.pt"), 0, "standard", 3, out, ply=4)


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_in_tmux_the_double_shows_cube_and_score_and_hint_answers(tmp_path: Path) -> None:
    """The real terminal: ``nard play`` in a tmux pane, keys sent as a person types them
    (with --confirm, as at any terminal: each play committed with Enter)."""
    _, _, answers = _session_to_a_bot_double(range(1))  # seed 0 doubles the weak human
    name = f"nardplay{os.getpid()}"
    cmd = (
        f"{sys.executable} -m nard_rl play --match 5 --seed 0 --confirm "
        f"--autosave {tmp_path / 'auto.mat'}"
    )
    _tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "60", cmd)
    try:

        def screen() -> str:
            return _tmux("capture-pane", "-p", "-t", name, "-S", "-3000")

        def wait_for(text: str, timeout: float = 90.0, after: str = "") -> str:
            """The pane once its last line (the prompt) holds ``text`` and, if given,
            ``after`` has been printed since the last board."""
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                shown = screen()
                last_board = shown.rsplit("Position ID", 1)[-1]
                if text in (shown.rstrip().splitlines() or [""])[-1] and after in last_board:
                    return shown
                time.sleep(0.2)
            raise AssertionError(f"no {text!r} in the pane:\n{screen()[-3000:]}")

        for answer in answers:
            wait_for("roll or double?" if answer == "roll" else "your move with")
            _tmux("send-keys", "-t", name, answer, "Enter")
            if answer != "roll":
                wait_for("(Enter), or undo")
                _tmux("send-keys", "-t", name, "Enter")
        shown = wait_for("take or drop?")
        board = shown.rsplit("Position ID", 1)[1]
        assert "5 points match (Cube: 1)" in board and "Doubles to 2" in board
        assert "To take or pass" in board and "0 points" in board
        _tmux("send-keys", "-t", name, "hint", "Enter")
        shown = wait_for("take or drop?", after="proper answer: ")
        assert "proper answer: " in shown.rsplit("take or pass (", 1)[1]
        (tmp_path / "pane.txt").write_text(shown)
        _tmux("send-keys", "-t", name, "quit", "Enter")
        end = time.monotonic() + 30
        while not (tmp_path / "auto.mat").exists() and time.monotonic() < end:
            time.sleep(0.2)
        assert "Doubles => 2" in (tmp_path / "auto.mat").read_text()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
