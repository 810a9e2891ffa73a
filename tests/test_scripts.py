"""Every script runs: a smoke test each, with tiny sizes (figures themselves are not judged)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_bench_engine() -> None:
    out = run_script("bench_engine.py", "--count", "3000", "--repeat", "1")
    assert last_figure(out, "positions_per_second") > 0


def test_bench_env() -> None:
    out = run_script("bench_env.py", "--seconds", "0.2")
    assert last_figure(out, "plies_per_second") > 0


def test_bench_train() -> None:
    args = ("--seconds", "0.5", "--warmup-plies", "2", "--parallel", "16")
    out = run_script("bench_train.py", *args)
    assert last_figure(out, "games_per_second") >= 0
    assert "tesauro198-80" in out.stdout


def test_bench_cube() -> None:
    out = run_script("bench_cube.py")
    assert "agreement" in out.stdout


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
    out = run_script("max_plays_search.py", "--steps", "3", "--chains", "2")
    assert last_figure(out, "max_plays_found") > 0


@pytest.mark.gnubg
def test_make_id_reference(tmp_path: Path) -> None:
    out_file = tmp_path / "ids.jsonl"
    run_script(
        "make_id_reference.py", "--out", str(out_file), "--boards", "3", "--matches", "2",
        "--xgids", "2",
    )  # fmt: skip
    assert len(out_file.read_text().splitlines()) >= 7


@pytest.mark.slow
def test_make_perft_reproduces_the_committed_counts(tmp_path: Path) -> None:
    out_file = tmp_path / "perft.jsonl"
    run_script("make_perft.py", "--out", str(out_file), timeout=1800)
    assert out_file.read_text() == (ROOT / "tests" / "data" / "perft.jsonl").read_text()


def test_export_checkpoint(tmp_path: Path) -> None:
    from nard_rl.encoding import get_encoding
    from nard_rl.network import NetSpec, load_checkpoint, load_network, save_checkpoint

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

    from nard_rl.encoding import get_encoding
    from nard_rl.network import NetSpec, load_network, save_checkpoint

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
