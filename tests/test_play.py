"""``nard play`` driven through stdin: a scripted human against a tiny network bot."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import torch

from nard_rl.commands.play import Session
from nard_rl.encoding import get_encoding
from nard_rl.engine.game import Phase
from nard_rl.network import NetSpec, save_checkpoint


def _tiny(path: Path) -> Path:
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    torch.manual_seed(0)  # the same weights whatever ran before
    save_checkpoint(path, spec.build(), spec, games=0, step=0)
    return path


def _play(ckpt: Path, script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "nard_rl", "play", "--net", str(ckpt), *args],
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
