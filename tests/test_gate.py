"""The gate's commit: the verdict is written before best.pt moves, and a crash at any point
between them is finished, not repeated or lost, on the next start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec, load_checkpoint, save_checkpoint
from nard_rl.training.supervised import pipeline
from nard_rl.training.supervised.gate import commit_verdict, finish_verdict, holds_entry
from nard_rl.training.supervised.pipeline import PipelineConfig, promote, run_pipeline


def _spec() -> NetSpec:
    enc = get_encoding("tesauro198")
    return NetSpec(enc.name, enc.version, enc.size, (4,), "sigmoid", "standard")


def _save(path: Path, seed: int, stage: str) -> Path:
    torch.manual_seed(seed)
    spec = _spec()
    save_checkpoint(
        path, spec.build(), spec, games=0, step=0, extra={"history": [{"stage": stage}]}
    )
    return path


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path)["model"]


def _same(a: Path, b: Path) -> bool:
    wa, wb = _weights(a), _weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "r"
    (run / "gen_001").mkdir(parents=True)
    _save(run / "best.pt", 1, "init")
    _save(run / "gen_001" / "candidate.pt", 2, "fit")
    return run


VERDICT = {"ppg": 0.3, "se": 0.05, "margin": 0.1, "games": 200, "accepted": True}


class Crash(Exception):
    pass


def _crashing_copy(after: int, verdict_path: Path) -> tuple[list[Path], object]:
    """A copy that checks the verdict is on disk first, and crashes on call ``after``."""
    made: list[Path] = []

    def copy(src: Path, dst: Path, entry: dict) -> None:
        assert verdict_path.exists(), "a copy before the verdict was written"
        if len(made) == after:
            raise Crash
        pipeline._copy_checkpoint(src, dst, entry)
        made.append(dst)

    return made, copy


@pytest.mark.parametrize("crash_at", [0, 1, 2], ids=["before-archive", "before-best", "none"])
def test_a_crash_between_verdict_and_copies_is_finished_on_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: int
) -> None:
    run = _run(tmp_path)
    gdir = run / "gen_001"
    old_best = load_checkpoint(run / "best.pt")["model"]
    targets = [run / "gen_001.pt", run / "best.pt"]
    _, copy = _crashing_copy(crash_at, gdir / "gate.json")
    verdict = {**VERDICT, "generation": 1, "gate": {"games": 200}}
    if crash_at < 2:
        with pytest.raises(Crash):
            commit_verdict(gdir / "gate.json", verdict, gdir / "candidate.pt", targets, copy)
        assert json.loads((gdir / "gate.json").read_text())["accepted"] is True
        if crash_at == 0:  # best.pt never moved without the verdict on disk
            assert all(torch.equal(v, old_best[k]) for k, v in _weights(run / "best.pt").items())
    else:
        commit_verdict(gdir / "gate.json", verdict, gdir / "candidate.pt", targets, copy)

    def no_match(*args: object, **kwargs: object) -> dict:
        raise AssertionError("the gate match was played again")

    monkeypatch.setattr(pipeline, "gate", no_match)
    cfg = PipelineConfig(out_dir=str(tmp_path), name="r", generations=1, resume="auto")
    cfg.progress = False
    assert run_pipeline(cfg) == run / "best.pt"
    for target in targets:
        assert _same(target, gdir / "candidate.pt"), target
        assert holds_entry(target, "gate", 1)
    entry = load_checkpoint(run / "best.pt")["extra"]["history"][-1]
    assert entry["ppg"] == 0.3 and entry["config"] == {"games": 200}
    assert finish_verdict(gdir / "gate.json", gdir / "candidate.pt", targets, copy) == []


def test_a_rejected_verdict_moves_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path)
    gdir = run / "gen_001"
    before = (run / "best.pt").read_bytes()
    verdict = {**VERDICT, "accepted": False, "generation": 1}
    targets = [run / "gen_001.pt", run / "best.pt"]
    commit_verdict(gdir / "gate.json", verdict, gdir / "candidate.pt", targets, lambda *a: None)
    assert (run / "best.pt").read_bytes() == before and not (run / "gen_001.pt").exists()
    with pytest.raises(ValueError, match="generation"):
        commit_verdict(gdir / "x.json", VERDICT, gdir / "candidate.pt", targets, lambda *a: None)


def test_a_promotion_cut_short_is_finished_by_running_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(tmp_path)
    gdir = run / "gen_001"
    (gdir / "gate.json").write_text(json.dumps({**VERDICT, "accepted": False, "generation": 1}))
    real = pipeline._copy_checkpoint
    calls: list[Path] = []

    def crash_before_best(src: Path, dst: Path, entry: dict) -> None:
        calls.append(dst)
        if dst.name == "best.pt":
            raise Crash
        real(src, dst, entry)

    monkeypatch.setattr(pipeline, "_copy_checkpoint", crash_before_best)
    with pytest.raises(Crash):
        promote(run, "better by the expert's judgement")
    monkeypatch.setattr(pipeline, "_copy_checkpoint", real)
    promote(run, "better by the expert's judgement")  # not "already accepted"
    assert _same(run / "best.pt", gdir / "candidate.pt")
    assert holds_entry(run / "best.pt", "promote", 1)
    with pytest.raises(RuntimeError, match="already accepted"):
        promote(run, "again")
