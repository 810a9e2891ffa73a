"""``nard evaluate`` end to end: a real match, usage errors, tournaments, clean-up."""

from __future__ import annotations

import csv
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nard_rl.cli import main as nard_main
from nard_rl.players.base import Player

ROOT = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def nard(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nard_rl", "evaluate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def test_pubeval_beats_random_json() -> None:
    proc = nard("pubeval", "random", "--games", "200", "--seed", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1  # nothing but the JSON object on stdout
    res = json.loads(lines[0])
    assert (res["spec_a"], res["spec_b"]) == ("pubeval", "random")
    assert (res["player_a"], res["player_b"]) == ("pubeval", "random")
    assert res["games"] == 200 and res["seed"] == 3 and res["rules"] == "standard"
    assert res["ppg"] - res["ci95"] > 0
    assert 0 <= res["backgammon_rate"] <= res["gammon_rate"] <= res["win_rate"] <= 1
    assert res["games_per_second"] > 0
    assert "game" in proc.stderr  # the progress bar went to stderr


def test_text_report_and_odd_game_count(capsys: pytest.CaptureFixture[str]) -> None:
    rc = nard_main(["evaluate", "random", "pubeval", "--games", "9", "--rules", "mars"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "random vs pubeval: 10 games, mars rules" in out  # rounded up to whole pairs
    assert "points per game for random" in out and "95% CI" in out
    assert "gammons lost" in out and "games/s" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchplayer", "random"], "unknown player 'nosuchplayer'"),
        (["random", "missing/net.pt"], "checkpoint not found"),
    ],
)
def test_bad_players_exit_2(args: list[str], message: str) -> None:
    proc = nard(*args, "--games", "10")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random", "pubeval", "--games", "1"], "--games must be at least 2"),
        (["random"], "exactly two players"),
        (["random", "pubeval", "--rules", "nope"], "unknown rule set"),
        (["random", "gnubg:x"], "whole number"),
        (["--round-robin", "no/such/dir"], "checkpoint folder not found"),
    ],
)
def test_usage_errors_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert nard_main(["evaluate", *args, "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_gnubg_not_installed_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import nard_rl.players.gnubg_player as gp

    monkeypatch.setattr(gp, "DEFAULT_GNUBG", "/nonexistent/gnubg")
    monkeypatch.setenv("PATH", "")
    assert nard_main(["evaluate", "random", "gnubg:0", "--games", "4"]) == 2
    assert "not installed" in capsys.readouterr().err


class _Tracked(Player):
    """First legal play (or a failure); records close() so the test sees it released."""

    name = "tracked"

    def __init__(self, fail: bool, closed: list[str]) -> None:
        self.fail = fail
        self.closed = closed

    def choose_batch(self, boards, dice, afterstates, offsets):  # type: ignore[no-untyped-def]
        if self.fail:
            raise RuntimeError("player broke mid-match")
        return np.where(np.diff(offsets) > 0, 0, -1)

    def close(self) -> None:
        self.closed.append(self.name)


def test_players_are_closed_after_the_match_even_when_it_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import nard_rl.players.base as players_base

    closed: list[str] = []
    monkeypatch.setitem(
        players_base._FACTORIES,
        "tracked",
        lambda spec, **_: _Tracked(fail=spec == "tracked:fail", closed=closed),
    )
    assert nard_main(["evaluate", "tracked", "random", "--games", "4", "--no-progress"]) == 0
    assert closed == ["tracked"]
    closed.clear()
    with pytest.raises(RuntimeError, match="broke"):
        nard_main(["evaluate", "tracked:fail", "random", "--games", "4", "--no-progress"])
    assert closed == ["tracked"]


def _tiny_checkpoints(folder: Path, games: dict[str, int]) -> None:
    import torch

    from nard_rl.nets.encoding import get_encoding
    from nard_rl.nets.network import NetSpec, save_checkpoint

    enc = get_encoding("tesauro198")
    spec = NetSpec("tesauro198", enc.version, enc.size, (8,), "sigmoid", "standard")
    for k, (name, n) in enumerate(games.items()):
        torch.manual_seed(k)
        save_checkpoint(folder / name, spec.build(), spec, games=n, step=n // 10)


def test_round_robin_over_checkpoints(tmp_path: Path) -> None:
    ckpts = tmp_path / "checkpoints"
    # the names disagree with the recorded game counts on purpose
    _tiny_checkpoints(ckpts, {"games_000000001.pt": 5000, "games_000000002.pt": 1000})
    out = tmp_path / "out"
    proc = nard(
        "--round-robin",
        str(ckpts),
        "--include",
        "pubeval",
        "--games",
        "8",
        "--out",
        str(out),
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    files = {p.name for p in out.iterdir()}
    assert files == {"results.md", "results.csv", "strength.png"}
    assert (out / "strength.png").read_bytes()[:8] == PNG_MAGIC
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    names = ["games_000000002", "games_000000001", "pubeval"]  # training order, then baseline
    assert [(r["a"], r["b"]) for r in rows] == list(itertools.combinations(names, 2))
    trained = {"games_000000001": "5000", "games_000000002": "1000", "pubeval": ""}
    for r in rows:
        assert r["a_train_games"] == trained[r["a"]] and r["b_train_games"] == trained[r["b"]]
        assert int(r["games"]) == 8 and -3 <= float(r["ppg"]) <= 3
    md = (out / "results.md").read_text()
    assert all(f"**{n}**" in md for n in names)
    assert "pubeval" in proc.stdout  # the standings are echoed


def test_script_wrapper_runs_the_same_command() -> None:
    script = str(ROOT / "scripts" / "evaluate.py")
    proc = subprocess.run(
        [sys.executable, script, "random", "random", "--json", "--games", "4", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["games"] == 4


@pytest.mark.gnubg
def test_random_against_gnubg() -> None:
    proc = nard("random", "gnubg:0", "--games", "10", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["games"] == 10 and res["player_b"] == "gnubg:0"
    assert res["ppg"] < 0  # gnubg at 0-ply crushes random play
