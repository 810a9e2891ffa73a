"""The shared progress bar: redraws on a terminal, a line a minute in a log."""

from __future__ import annotations

import io

import pytest
import tqdm.std

from nard_rl.util.progress import LOG_INTERVAL_S, progress_bar


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _updates(stream: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> int:
    """Redraws written for 2,000 updates spread over 20 simulated minutes."""
    clock = _Clock()
    monkeypatch.setattr(tqdm.std, "time", clock)  # tqdm reads its clock from here
    bar = progress_bar(2000, desc="games", unit="game", file=stream)
    for _ in range(2000):
        clock.now += 0.6
        bar.update(1)
    bar.close()
    return stream.getvalue().count("\r")


def test_a_log_file_gets_about_one_line_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _updates(io.StringIO(), monkeypatch)
    minutes = 2000 * 0.6 / LOG_INTERVAL_S
    assert 2 <= lines <= minutes + 3


def test_a_terminal_gets_live_redraws(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _updates(_Tty(), monkeypatch) > 500


@pytest.mark.slow
def test_a_training_run_logs_to_train_log_and_its_bar_shows_one_speed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "nard_rl", "train", "name=t", f"out_dir={tmp_path}",
         "trainer=smoke", "trainer.games=30", "trainer.eval_every=0",
         "trainer.final_eval_games=0", "model.hidden=[16]"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    log = (tmp_path / "t" / "train.log").read_text()
    assert f"checkpoint: {tmp_path / 't' / 'checkpoints' / 'last.pt'}" in log
    assert "checkpoint: " in out.stdout  # still on the console too
    updates = [u for u in out.stderr.replace("\r", "\n").splitlines() if "/30 [" in u]
    assert updates and all(u.count("game/s") + u.count("s/game") <= 1 for u in updates)
    assert "games_s" not in out.stderr
