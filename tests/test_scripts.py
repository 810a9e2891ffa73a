"""Every script runs: a smoke test each, with tiny sizes (figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_script(name: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def last_figure(out: subprocess.CompletedProcess[str], key: str) -> float:
    last = out.stdout.strip().splitlines()[-1]
    name, _, value = last.partition(": ")
    assert name == key, last
    return float(value)


def _line(out: subprocess.CompletedProcess[str], prefix: str) -> str:
    return next(line for line in out.stdout.splitlines() if line.startswith(prefix))


def test_bench_engine() -> None:
    """The figures agree with each other: the positions asked for, and afterstates per
    second over positions per second is the afterstates per position it reports."""
    out = run_script("bench_engine.py", "--count", "3000", "--repeat", "1")
    per_second = last_figure(out, "positions_per_second")
    assert _line(out, "positions: ").startswith("positions: 3000 ")
    per_position = float(_line(out, "afterstates per position: ").split()[3])
    total = int(_line(out, "afterstates per position: ").split("total ")[1].rstrip(")"))
    assert per_position == pytest.approx(total / 3000, abs=0.005)
    after_rate = float(_line(out, "afterstates per second: ").split(": ")[1])
    assert after_rate / per_second == pytest.approx(per_position, rel=1e-3)


def test_bench_env() -> None:
    """The figure printed last is the plies per second of the largest vector env."""
    out = run_script("bench_env.py", "--seconds", "0.2")
    vector = [line for line in out.stdout.splitlines() if line.startswith("vector env N=")]
    assert [line.split("(")[0].split("N=")[1].strip() for line in vector] == ["1", "64", "1024"]
    largest = float(vector[-1].split(": ")[1].split(" plies/s")[0].replace(",", ""))
    assert last_figure(out, "plies_per_second") == pytest.approx(largest, abs=1)  # rounding


def test_bench_train() -> None:
    args = ("--seconds", "0.5", "--warmup-plies", "2", "--parallel", "16")
    out = run_script("bench_train.py", *args)
    assert last_figure(out, "games_per_second") >= 0
    assert "tesauro198-80" in out.stdout


def test_bench_cube() -> None:
    out = run_script("bench_cube.py")
    assert "agreement" in out.stdout


def test_bench_checker_pairs_each_player_with_the_first() -> None:
    """The paired line is the difference of the two players' means on the same decisions."""
    out = run_script(
        "bench_checker.py", "--player", "pubeval", "--player", "random", "--limit", "40"
    )
    means = {
        line.split()[0]: float(line.split()[1])
        for line in out.stdout.splitlines()
        if line.split() and line.split()[0] in ("pubeval", "random")
    }
    paired = _line(out, "  minus pubeval")
    assert float(paired.split()[2]) == pytest.approx(means["random"] - means["pubeval"], abs=0.02)
    assert "(40)" in paired


def test_evaluate_script() -> None:
    out = run_script("evaluate.py", "pubeval", "random", "--games", "20", "--json")
    res = json.loads(out.stdout)
    assert res["games"] == 20


def test_train_script(tmp_path: Path) -> None:
    run_script(
        "train.py",
        "name=s",
        f"out_dir={tmp_path}",
        "trainer=smoke",
        "trainer.games=40",
        "trainer.eval_every=0",
        "trainer.final_eval_games=20",
        "model.hidden=[8]",
    )
    assert (tmp_path / "s" / "checkpoints" / "last.pt").is_file()
    assert (tmp_path / "s" / "hydra" / "config.yaml").is_file()  # resolved config saved


def test_max_plays_search() -> None:
    """The figure is the number of distinct plays of the board and roll it names, and
    within the proven bound the environments size their candidate lists by."""
    from nard_rl.engine.movegen import legal_afterstates
    from nard_rl.envs.core import MAX_CANDIDATES

    out = run_script("max_plays_search.py", "--steps", "3", "--chains", "2")
    found = last_figure(out, "max_plays_found")
    best = _line(out, "best: ")
    assert best.startswith(f"best: {int(found)} plays with ")
    roll = best.split(" with ")[1].split()[0]
    board = json.loads(best.split(" on board ")[1])
    afters, _ = legal_afterstates(np.array(board, dtype=np.int8), *map(int, roll.split("-")))
    assert afters.shape[0] == found <= MAX_CANDIDATES


@pytest.mark.gnubg
def test_make_id_reference(tmp_path: Path) -> None:
    out_file = tmp_path / "ids.jsonl"
    run_script(
        "make_id_reference.py", "--out", str(out_file), "--boards", "3", "--matches", "2",
        "--xgids", "2",
    )  # fmt: skip
    from nard_rl.engine.ids import decode_position_id, encode_position_id

    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    kinds = [r["kind"] for r in records]
    assert (kinds.count("position"), kinds.count("match"), kinds.count("xgid")) == (3, 2, 2)
    for r in records:  # gnubg's IDs are the ones the codec writes and reads
        if r["kind"] == "position":
            assert encode_position_id(r["board"]) == r["position_id"]
            assert decode_position_id(r["position_id"]) == r["board"]


@pytest.mark.slow
def test_make_perft_reproduces_the_committed_counts(tmp_path: Path) -> None:
    out_file = tmp_path / "perft.jsonl"
    run_script("make_perft.py", "--out", str(out_file), timeout=1800)
    assert out_file.read_text() == (ROOT / "tests" / "data" / "perft.jsonl").read_text()


def test_export_checkpoint(tmp_path: Path) -> None:
    from nard_rl.nets.encoding import get_encoding
    from nard_rl.nets.network import NetSpec, load_checkpoint, load_network, save_checkpoint

    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    net = spec.build()
    import torch

    opt = torch.optim.Adam(net.parameters())
    src = tmp_path / "src.pt"
    extra = {"history": [{"from_games": 0}], "averaged": ["a.pt", "b.pt"], "rng": [1, 2]}
    save_checkpoint(src, net, spec, games=7, step=3, config={"x": 1}, optimizer=opt, extra=extra)
    run_script("export_checkpoint.py", str(src), str(tmp_path / "dst.pt"), "--note", "hi")
    out = load_checkpoint(tmp_path / "dst.pt")
    assert "optimizer" not in out and out["games"] == 7 and out["config"] == {"x": 1}
    # the record of how the weights were made travels; resume-only state does not
    assert out["extra"] == {
        "exported_from": "src.pt",
        "history": [{"from_games": 0}],
        "averaged": ["a.pt", "b.pt"],
        "note": "hi",
    }
    assert load_network(tmp_path / "dst.pt")[1] == spec


def test_average_checkpoints(tmp_path: Path) -> None:
    import torch

    from nard_rl.nets.encoding import get_encoding
    from nard_rl.nets.network import NetSpec, load_network, save_checkpoint

    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (4,), "sigmoid", "standard")
    torch.manual_seed(0)
    a, b = spec.build(), spec.build()
    save_checkpoint(tmp_path / "a.pt", a, spec, games=10, step=1)
    save_checkpoint(tmp_path / "b.pt", b, spec, games=20, step=2)
    run_script("average_checkpoints.py", str(tmp_path / "m.pt"), *(
        str(tmp_path / n) for n in ("a.pt", "b.pt")
    ))  # fmt: skip
    m, _, ck = load_network(tmp_path / "m.pt")
    assert ck["games"] == 20
    for k, v in m.state_dict().items():
        assert torch.allclose(v, (a.state_dict()[k] + b.state_dict()[k]) / 2)


def test_bench_students(tmp_path: Path) -> None:
    """Two tiny students print a line each next to the teacher's, and bad shapes are refused."""
    out = run_script(
        "bench_students.py",
        "--rows", "300", "--epochs", "1", "--limit", "20", "--save", str(tmp_path),
        "--student", "8:sigmoid5:mse", "--student", "4,4:softmax6:ce",
    )  # fmt: skip
    lines = out.stdout.splitlines()
    assert lines[-3].startswith("teacher default")
    assert lines[-2].startswith("8:sigmoid5:mse") and lines[-1].startswith("4,4:softmax6:ce")
    assert len(list(tmp_path.glob("student-*.pt"))) == 2
    bad = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_students.py"), "--student", "8:tanh:mse"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "head must be one of" in bad.stderr
