"""The lasting dataset: label shards kept compactly with provenance, read back, each board
once with the strongest label, refused when they would repeat or overflow, and fitted on
by the pipeline."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nard_rl.cli import main
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec, save_checkpoint
from nard_rl.training.supervised import dataset
from nard_rl.training.supervised.dataset import (
    deposit,
    load_dataset,
    merge_rows,
    summary,
    write_card,
)
from nard_rl.training.supervised.fit import load_rows
from nard_rl.training.supervised.label import read_shard, shard_path, write_shard

HALF_STEP = 0.5 / dataset.STEPS[dataset.FORMAT][0] + 1e-6
"""How far a kept label may be from the one given: half its quantum, and float32 rounding."""


def _shard(
    folder: Path, index: int, rows: int, *, seed: int = 3, ply: int = 2, boards=None, probs=None
) -> Path:
    rng = np.random.default_rng([seed, index])
    b = boards if boards is not None else rng.integers(-3, 4, size=(rows, 26)).astype(np.int8)
    p = probs if probs is not None else rng.random((rows, 5)).astype(np.float32)
    data = {
        "boards": b,
        "probs": p,
        "probs0": rng.random((rows, 5)).astype(np.float32),
        "decision": np.arange(rows, dtype=np.int64) // 2 + index * 1000,
        "rank0": (np.arange(rows) % 2).astype(np.int8),
        "disagree": np.arange(rows) % 4 == 0,
    }
    meta = {
        "shard": index,
        "generation": 1,
        "seed": [seed, 1, index],
        "rules": "standard",
        "label": {"method": "ply", "ply": ply, "race_net": True, "decisions_per_shard": rows},
    }
    path = shard_path(folder, index)
    write_shard(path, data, meta)
    return path


def _teacher(tmp_path: Path, seed: int = 0) -> Path:
    enc = get_encoding("extended")
    spec = NetSpec(enc.name, enc.version, enc.size, (4,), "sigmoid", "standard")
    torch.manual_seed(seed)
    path = tmp_path / f"teacher{seed}.pt"
    save_checkpoint(path, spec.build(), spec, games=0, step=0, config={})
    return path


def test_deposit_round_trip_is_compact_and_exact_to_the_quantum(tmp_path: Path) -> None:
    shards = [_shard(tmp_path / "run", i, 40) for i in range(2)]
    teacher = _teacher(tmp_path)
    folder = deposit(shards, tmp_path / "ds", teacher="gen6", teacher_path=teacher)
    assert folder == tmp_path / "ds" / "standard" / "gen6+race-ply2-s3-g1"
    source = json.loads((folder / "SOURCE.json").read_text())
    assert source["method"] == "ply2" and source["seed"] == 3 and source["race_net"] is True
    assert len(source["teacher_sha256"]) == 64
    got = load_dataset(tmp_path / "ds", "standard")
    want = load_rows([tmp_path / "run"])
    order_got = np.lexsort(got["boards"].T)
    order_want = np.lexsort(want["boards"].T)
    assert np.array_equal(got["boards"][order_got], want["boards"][order_want])
    err = np.abs(got["probs"][order_got] - want["probs"][order_want]).max()
    assert err <= 0.5 / dataset.STEPS[dataset.FORMAT][0] + 1e-7
    for key in ("decision", "rank0", "disagree"):
        assert np.array_equal(got[key][order_got], want[key][order_want])
    # compact: well under the raw float32 shard's bytes per row
    raw = sum(p.stat().st_size for p in shards)
    kept = sum(p.stat().st_size for p in folder.glob("part_*.npz"))
    assert kept < 0.8 * raw
    assert load_dataset(tmp_path / "ds", "mars")["boards"].shape[0] == 0


def test_deposit_is_idempotent_and_refuses_repeated_positions(tmp_path: Path) -> None:
    shards = [_shard(tmp_path / "run", i, 10) for i in range(2)]
    teacher = _teacher(tmp_path)
    folder = deposit(shards, tmp_path / "ds", teacher="gen6", teacher_path=teacher)
    mtimes = {p: p.stat().st_mtime_ns for p in folder.glob("part_*.npz")}
    deposit(shards, tmp_path / "ds", teacher="gen6", teacher_path=teacher)
    assert {p: p.stat().st_mtime_ns for p in folder.glob("part_*.npz")} == mtimes
    # the same job under another name for the same net joins the source it is in
    renamed = tmp_path / "renamed.pt"
    renamed.write_bytes(teacher.read_bytes())
    assert deposit(shards, tmp_path / "ds", teacher="renamed", teacher_path=renamed) == folder
    assert [s["name"] for s in summary(tmp_path / "ds")] == [folder.name]
    # the same positions labelled with other settings would store them twice
    other = [_shard(tmp_path / "run2", i, 10) for i in range(2)]
    for path in other:
        data, meta = read_shard(path)
        meta["label"]["window"] = 0.5
        write_shard(path, data, meta)
    with pytest.raises(ValueError, match="another pipeline seed"):
        deposit(other, tmp_path / "ds", teacher="renamed", teacher_path=teacher)
    # the name taken by another teacher
    with pytest.raises(ValueError, match="another teacher"):
        deposit(shards, tmp_path / "ds", teacher="gen6", teacher_path=_teacher(tmp_path, 1))


def test_deposit_refuses_shards_of_two_jobs_and_a_full_budget(tmp_path: Path) -> None:
    teacher = _teacher(tmp_path)
    a = _shard(tmp_path / "a", 0, 10, ply=2)
    b = _shard(tmp_path / "b", 1, 10, ply=1)
    with pytest.raises(ValueError, match="another labelling job"):
        deposit([a, b], tmp_path / "ds", teacher="t", teacher_path=teacher)
    deposit([a], tmp_path / "ds2", teacher="t", teacher_path=teacher)
    with pytest.raises(ValueError, match="budget"):
        deposit([b], tmp_path / "ds2", teacher="t", teacher_path=teacher, budget_mb=1e-6)


def test_depositing_what_is_kept_again_passes_a_full_budget(tmp_path: Path) -> None:
    """A run's later stage deposits its shards again (idempotent); the job that filled the
    budget must not be refused its own rows, while a new job still is."""
    teacher = _teacher(tmp_path)
    a = _shard(tmp_path / "a", 0, 10, ply=2)
    folder = deposit([a], tmp_path / "ds", teacher="t", teacher_path=teacher)
    before = sorted(p.name for p in folder.iterdir())
    again = deposit([a], tmp_path / "ds", teacher="t", teacher_path=teacher, budget_mb=1e-6)
    assert again == folder and sorted(p.name for p in folder.iterdir()) == before
    b = _shard(tmp_path / "b", 1, 10, ply=1)
    with pytest.raises(ValueError, match="budget"):
        deposit([b], tmp_path / "ds", teacher="t", teacher_path=teacher, budget_mb=1e-6)


def test_each_board_once_with_the_deepest_label(tmp_path: Path) -> None:
    teacher = _teacher(tmp_path)
    boards = np.random.default_rng(5).integers(-3, 4, size=(6, 26)).astype(np.int8)
    shallow = np.full((6, 5), 0.25, dtype=np.float32)
    deep = np.full((6, 5), 0.75, dtype=np.float32)
    s1 = _shard(tmp_path / "one", 0, 6, seed=1, ply=1, boards=boards, probs=shallow)
    s2 = _shard(tmp_path / "two", 0, 3, seed=2, ply=2, boards=boards[:3], probs=deep[:3])
    deposit([s1], tmp_path / "ds", teacher="t", teacher_path=teacher)
    deposit([s2], tmp_path / "ds", teacher="t", teacher_path=teacher)
    rows = load_dataset(tmp_path / "ds", "standard")
    assert rows["boards"].shape[0] == 6
    by_board = {r.tobytes(): p for r, p in zip(rows["boards"], rows["probs"], strict=True)}
    for i in range(6):
        want = 0.75 if i < 3 else 0.25
        assert by_board[boards[i].tobytes()][0] == pytest.approx(want, abs=HALF_STEP)
    # merging a run's own rows with the dataset keeps each board once, the first's row
    merged = merge_rows(load_rows([tmp_path / "one"]), rows)
    assert merged["boards"].shape[0] == 6
    assert np.allclose(merged["probs"][:, 0], 0.25)


def test_card_lists_sources_counts_and_used_seeds(tmp_path: Path) -> None:
    teacher = _teacher(tmp_path)
    deposit(
        [_shard(tmp_path / "r", 0, 8, seed=7)], tmp_path / "ds", teacher="g", teacher_path=teacher
    )
    card = write_card(tmp_path / "ds").read_text()
    (info,) = summary(tmp_path / "ds")
    assert info["rows"] == 8 and info["decisions"] == 4 and info["disagree_decisions"] == 2
    assert "g+race-ply2-s7-g1" in card and "(standard, 7)" in card and "8 rows" in card


def test_cli_add_card_info_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    teacher = _teacher(tmp_path)
    _shard(tmp_path / "run", 0, 8)
    root = tmp_path / "ds"
    argv = ["dataset", "--root", str(root), "add", str(tmp_path / "run")]
    assert main([*argv, "--teacher", "g", "--checkpoint", str(teacher)]) == 0
    assert (root / "CARD.md").exists()
    assert main(["dataset", "--root", str(root), "info", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{") :])["sources"][0]["rows"] == 8
    assert main([*argv, "--teacher", "g", "--checkpoint", str(tmp_path / "nope.pt")]) == 2
    assert "not found" in capsys.readouterr().err
    empty = ["dataset", "--root", str(root), "add", str(tmp_path / "none")]
    assert main([*empty, "--teacher", "g", "--checkpoint", str(teacher)]) == 2
    assert "no shard_" in capsys.readouterr().err


def test_pipeline_keeps_its_labels_and_the_next_run_fits_on_them(tmp_path: Path) -> None:
    from nard_rl.nets.network import load_checkpoint

    init = _teacher(tmp_path)
    ds = tmp_path / "datasets"
    common = [
        "pipeline",
        "supervised=tiny",
        f"out_dir={tmp_path}",
        f"init={init}",
        "generations=1",
        "label.shards=2",
        "label.decisions_per_shard=12",
        "gate.games=20",
        "progress=false",
        f"dataset={ds}",
    ]
    assert main([*common, "name=first", "seed=1"]) == 0
    (source,) = summary(ds)
    assert source["parts"] == 2 and source["teacher"] == "teacher0"
    assert main([*common, "name=second", "seed=2"]) == 0
    assert len(summary(ds)) == 2
    cand = load_checkpoint(tmp_path / "second" / "gen_001" / "candidate.pt")
    label = next(h for h in cand["extra"]["history"] if h.get("stage") == "label")
    own = sum(s["rows"] for s in summary(ds) if s["seed"] == 2)
    assert own < label["rows"] <= sum(s["rows"] for s in summary(ds))


def test_labelling_refuses_to_mix_two_jobs_in_one_folder(tmp_path: Path) -> None:
    from dataclasses import replace

    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.training.supervised.label import LabelConfig, label_shard

    cfg = LabelConfig(shards=2, decisions_per_shard=4, parallel_games=8, ply=0, chunk=4)
    ev = load_evaluator("default")
    folder = tmp_path / "shards"
    label_shard(ev, folder, cfg, k=0, num=2, progress=False)
    # more shards of the same job: fine (resuming, or growing the generation)
    label_shard(ev, folder, replace(cfg, shards=3), k=1, num=2, progress=False)
    assert len(list(folder.glob("shard_*.npz"))) == 2
    with pytest.raises(ValueError, match=r"ply: 0 -> 1"):
        label_shard(ev, folder, replace(cfg, ply=1), k=1, num=2, progress=False)


def test_shards_record_their_teacher_and_are_kept_only_under_it(tmp_path: Path) -> None:
    """A run that borrows another run's shards (or whose init changed) cannot deposit
    them under its own teacher, nor resume them with another net."""
    from nard_rl.nets.evaluator import NetEvaluator
    from nard_rl.training.supervised.dataset import teacher_digest
    from nard_rl.training.supervised.label import LabelConfig, label_shard

    cfg = LabelConfig(shards=1, decisions_per_shard=4, parallel_games=8, ply=0, chunk=4)
    mine, other = _teacher(tmp_path, 0), _teacher(tmp_path, 1)
    ev = NetEvaluator.from_checkpoint(mine)
    folder = tmp_path / "shards"
    paths = label_shard(ev, folder, cfg, progress=False)
    assert read_shard(paths[0])[1]["teacher"] == teacher_digest(mine)
    with pytest.raises(ValueError, match="labelled by the net with weights"):
        deposit(paths, tmp_path / "ds", teacher="other", teacher_path=other)
    assert not (tmp_path / "ds").exists() or not list((tmp_path / "ds").rglob("part_*"))
    assert deposit(paths, tmp_path / "ds", teacher="mine", teacher_path=mine).is_dir()
    with pytest.raises(ValueError, match="another teacher"):
        label_shard(
            NetEvaluator.from_checkpoint(other), folder, replace(cfg, shards=2), progress=False
        )


def _default_source(tmp_path: Path, shards: int, per_shard: int) -> tuple[Any, Path, Path, Path]:
    """A dataset of one source labelled at 0-ply by the shipped net: (evaluator, its
    checkpoint, the dataset root, the source's folder)."""
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.training.supervised.label import LabelConfig, label_shard

    ev = load_evaluator("default")
    cfg = LabelConfig(
        shards=shards, decisions_per_shard=per_shard, parallel_games=8, ply=0, chunk=per_shard
    )
    label_shard(ev, tmp_path / "run", cfg, progress=False)
    teacher = Path(__file__).resolve().parent.parent / "checkpoints" / "nard-default.pt"
    root = tmp_path / "ds"
    shard_files = sorted((tmp_path / "run").glob("shard_*.npz"))
    return ev, teacher, root, deposit(shard_files, root, teacher="t", teacher_path=teacher)


def test_relabel_keeps_the_old_source_and_its_labels_win_at_more_depth(tmp_path: Path) -> None:
    from nard_rl.search.nply import Search
    from nard_rl.training.supervised.dataset import relabel

    ev, teacher, root, old = _default_source(tmp_path, 1, 5)
    new = relabel(root, old.name, ev, teacher="t", teacher_path=teacher, ply=1)
    assert json.loads((new / "SOURCE.json").read_text())["label"]["relabel_of"] == old.name
    assert len(summary(root)) == 2
    rows = load_dataset(root, "standard")
    want = Search(ev).afterstate_probs(rows["boards"], ply=1)
    assert np.abs(rows["probs"] - want).max() <= HALF_STEP  # the 1-ply labels won
    with pytest.raises(ValueError, match="already labelled"):
        relabel(root, old.name, ev, teacher="t", teacher_path=teacher, ply=0)


def test_relabel_retires_superseded_parts_and_keeps_their_record(tmp_path: Path) -> None:
    """A relabel deletes each old part once its twin is written: the budget stays put, the
    board set is unchanged, the seed stays used, and RETIRED.json says what left."""
    from nard_rl.training.supervised.dataset import relabel, retire, retired

    ev, teacher, root, old = _default_source(tmp_path, 2, 4)
    before = load_dataset(root, "standard")
    # a relabel kept beside the old source (--keep-old) supersedes nothing until retired
    new = relabel(root, old.name, ev, teacher="t", teacher_path=teacher, ply=1, retire_old=False)
    assert len(list(old.glob("part_*.npz"))) == 2
    gone = retire(root)
    assert [p.name for p in gone] == ["part_00000.npz", "part_00001.npz"]
    assert not list(old.glob("part_*.npz")) and (old / "SOURCE.json").exists()
    log = retired(old)
    assert [e["superseded_by"] for e in log] == [new.name, new.name]
    assert sum(e["rows"] for e in log) == before["boards"].shape[0]
    after = load_dataset(root, "standard")
    assert np.array_equal(np.unique(after["boards"], axis=0), np.unique(before["boards"], axis=0))
    assert retire(root) == []  # idempotent
    card = write_card(root).read_text()
    assert "Retired" in card and "2 parts" in card and "(standard, " in card
    rows = {r["name"]: r for r in summary(root)}
    assert rows[old.name]["parts"] == 0 and rows[old.name]["retired_rows"] == len(before["boards"])


def test_retire_refuses_what_does_not_supersede(tmp_path: Path) -> None:
    """A source is never retired by one that is not its relabel, nor by a part whose boards
    differ (a corrupted or foreign twin)."""
    from nard_rl.training.supervised.dataset import _retire_part, _sources, retire

    teacher = _teacher(tmp_path)
    root = tmp_path / "ds"
    a = deposit([_shard(tmp_path / "a", 0, 6, seed=3)], root, teacher="a", teacher_path=teacher)
    deposit([_shard(tmp_path / "b", 0, 6, seed=4)], root, teacher="b", teacher_path=teacher)
    assert retire(root) == []
    assert (a / "part_00000.npz").exists()
    with pytest.raises(FileNotFoundError, match="no dataset source"):
        retire(root, "nope")
    (d_old, s_old), (d_new, s_new) = _sources(root)
    fake = replace(s_new, label={**s_new.label, "relabel_of": s_old.name}, created="9999")
    assert not _retire_part(d_old, s_old, d_old / "part_00000.npz", d_new, fake)  # boards differ
    assert (d_old / "part_00000.npz").exists()


def test_cli_dataset_retire(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    teacher = _teacher(tmp_path)
    root = tmp_path / "ds"
    deposit([_shard(tmp_path / "a", 0, 6)], root, teacher="a", teacher_path=teacher)
    assert main(["dataset", "--root", str(root), "retire"]) == 0
    assert "0 superseded parts retired" in capsys.readouterr().out
    assert main(["dataset", "--root", str(root), "retire", "nope"]) != 0


@pytest.mark.parametrize("started", [True, False])
def test_reading_beside_a_running_relabel_loses_no_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: bool
) -> None:
    """A fit that reads the dataset while a relabel retires parts gets every board: here
    the relabel takes one step (write a part's twin, delete the part) before each part the
    reader opens, started before the read or starting during it, from every point on."""
    import shutil

    from nard_rl.training.supervised import dataset as ds
    from nard_rl.training.supervised.dataset import relabel

    ev, teacher, root, old = _default_source(tmp_path, 3, 4)
    full = np.unique(load_dataset(root, "standard")["boards"], axis=0)
    new = relabel(root, old.name, ev, teacher="t", teacher_path=teacher, ply=1, retire_old=False)
    stash = tmp_path / "stash"
    shutil.copytree(root, stash)
    names = sorted(p.name for p in old.glob("part_*.npz"))
    read_part = ds._read_part
    for first_step in range(len(names) + 2):
        shutil.rmtree(root)
        shutil.copytree(stash, root)
        done = 1 if started else 0
        for name in names:
            if started and name == names[0]:
                (old / name).unlink()
            else:
                (new / name).unlink()
        if not started:
            shutil.rmtree(new)
        calls = 0

        def racing(path: Path, first_step: int = first_step) -> dict[str, np.ndarray]:
            nonlocal calls, done
            calls += 1
            if calls > first_step and done < len(names):
                rel = new.relative_to(root)
                (root / rel).mkdir(exist_ok=True)
                for f in ("SOURCE.json", names[done]):
                    shutil.copy(stash / rel / f, root / rel / f)
                (old / names[done]).unlink()
                done += 1
            return read_part(path)

        monkeypatch.setattr(ds, "_read_part", racing)
        got = load_dataset(root, "standard")
        monkeypatch.setattr(ds, "_read_part", read_part)
        assert np.array_equal(np.unique(got["boards"], axis=0), full), (started, first_step)


def _format1_part(path: Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """A part as format 1 wrote it (``np.savez_compressed`` columns), for the readers'
    backward compatibility."""
    path.parent.mkdir(parents=True, exist_ok=True)
    q = {k: np.round(np.clip(data[k], 0, 1) * 65535).astype(np.uint16) for k in ("probs", "probs0")}
    np.savez_compressed(
        path,
        meta=json.dumps({**meta, "format": 1}),
        boards=data["boards"].astype(np.int8),
        decision=data["decision"].astype(np.int32),
        rank0=data["rank0"].astype(np.int8),
        disagree=data["disagree"].astype(bool),
        **q,
    )


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 300),
    seed=st.integers(0, 2**32 - 1),
    extremes=st.booleans(),
    fmt=st.sampled_from([2, 3]),
)
def test_part_codec_gives_every_row_back(n: int, seed: int, extremes: bool, fmt: int) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.random((n, 5)).astype(np.float32)
    probs0 = rng.random((n, 5)).astype(np.float32)
    if extremes and n:  # the residual wraps around uint16 both ways
        probs[:, 0], probs0[:, 0] = 0.0, 1.0
        probs[:, 1], probs0[:, 1] = 1.0, 0.0
    label_steps, view_steps = dataset.STEPS[fmt]
    compact = {
        "boards": rng.integers(-15, 16, size=(n, 26)).astype(np.int8),
        "probs": dataset._quantise(probs, label_steps),
        "probs0": dataset._quantise(probs0, view_steps),
        "decision": np.sort(rng.integers(0, 2**31 - 1, size=n)).astype(np.int32),
        "rank0": rng.integers(-128, 128, size=n).astype(np.int8),
        "disagree": rng.random(n) < 0.3,
    }
    back = dataset._unpack(dataset._pack(compact, fmt), n, fmt)
    for key, value in compact.items():
        assert np.array_equal(back[key], value.reshape(back[key].shape)), key


@pytest.mark.parametrize("fmt", dataset.READABLE_FORMATS)
def test_quantised_labels_survive_a_read_and_a_rewrite_exactly(fmt: int) -> None:
    for steps in dataset.STEPS[fmt]:
        every = np.arange(steps + 1, dtype=np.uint16)
        assert np.array_equal(dataset._quantise(dataset._dequantise(every, steps), steps), every)


def test_latest_format_rounds_labels_to_half_a_step_and_rewrites_bit_for_bit(
    tmp_path: Path,
) -> None:
    folder = deposit(
        [_shard(tmp_path / "run", 0, 300)],
        tmp_path / "ds",
        teacher="g",
        teacher_path=_teacher(tmp_path),
    )
    data, _ = read_shard(shard_path(tmp_path / "run", 0))
    got = dataset._read_part(folder / "part_00000.npz")
    label_steps, view_steps = dataset.STEPS[dataset.FORMAT]
    assert np.abs(got["probs"] - data["probs"]).max() <= 0.5 / label_steps + 1e-7
    assert np.abs(got["probs0"] - data["probs0"]).max() <= 0.5 / view_steps + 1e-7
    for key in ("boards", "decision", "rank0", "disagree"):
        assert np.array_equal(got[key], np.asarray(data[key]).reshape(got[key].shape)), key
    # a part read and written again in its own format holds the same stream
    part = folder / "part_00000.npz"

    def stream() -> bytes:
        with np.load(part) as z:
            return z["packed"].tobytes()

    before = stream()
    dataset._write_part(part, got, dataset._part_meta(part))
    assert stream() == before


def test_damaged_or_unknown_parts_are_refused_with_their_path(tmp_path: Path) -> None:
    folder = deposit(
        [_shard(tmp_path / "run", 0, 30)],
        tmp_path / "ds",
        teacher="g",
        teacher_path=_teacher(tmp_path),
    )
    part = folder / "part_00000.npz"
    with np.load(part) as z:
        meta, packed = str(z["meta"]), z["packed"].copy()
    packed[len(packed) // 2] ^= 0xFF
    np.savez(part, meta=meta, packed=packed)
    with pytest.raises(ValueError, match="damaged dataset part"):
        load_dataset(tmp_path / "ds", "standard")
    np.savez(part, meta=json.dumps({**json.loads(meta), "format": 99}), packed=packed)
    with pytest.raises(ValueError, match="format 99"):
        load_dataset(tmp_path / "ds", "standard")


def test_compact_rewrites_format1_parts_smaller_with_the_same_rows_rounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = [_shard(tmp_path / "run", i, 400) for i in range(3)]
    teacher = _teacher(tmp_path)
    folder = deposit(shards, tmp_path / "ds", teacher="gen6", teacher_path=teacher)
    for i, shard in enumerate(shards):  # the same rows as the parts format 1 wrote
        data, meta = read_shard(shard)
        data["boards"] = np.sort(data["boards"], axis=0)  # neighbouring rows alike, as in play
        _format1_part(folder / f"part_{i:05d}.npz", data, {**meta, "source": folder.name})
    want = load_dataset(tmp_path / "ds", "standard")
    old_bytes = sum(p.stat().st_size for p in folder.glob("part_*.npz"))
    assert main(["dataset", "--root", str(tmp_path / "ds"), "compact"]) == 0
    assert f"3 parts rewritten in format {dataset.FORMAT}" in capsys.readouterr().out
    assert sum(p.stat().st_size for p in folder.glob("part_*.npz")) < old_bytes
    got = load_dataset(tmp_path / "ds", "standard")
    for key in want:
        if key in ("probs", "probs0"):  # rounded to the latest format's steps, no more
            steps = dataset.STEPS[dataset.FORMAT][0 if key == "probs" else 1]
            assert np.abs(got[key] - want[key]).max() <= 0.5 / steps + 1e-7, key
        else:
            assert np.array_equal(got[key], want[key]), key
    for part in folder.glob("part_*.npz"):
        assert dataset._part_meta(part)["format"] == dataset.FORMAT
    # nothing left to do: idempotent
    assert dataset.compact(tmp_path / "ds")[0] == 0
