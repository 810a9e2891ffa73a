"""The GPU labelling burst, tried on the CPU with two workers: it labels for the time it is
given, keeps every finished shard as dataset parts, and packs them into one file that
unpacks into a dataset the pipeline reads."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from nard_rl.training.supervised.dataset import load_dataset, summary

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_burst_with_two_cpu_workers_packs_a_dataset(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "WORKERS": "2",
        "DEVICE": "cpu",
        "MINUTES": "0.6",
        "PLY": "0",
        "DECISIONS": "10",
        "SEED": "4242",
        "PYTHON": sys.executable,
        "WHEELS": str(tmp_path / "no-wheels"),
    }
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_label.sh"), str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "gpu_label.txt",
        "labels.tar",
        "worker_0.log",
        "worker_1.log",
    ]
    with tarfile.open(out / "labels.tar") as tar:
        tar.extractall(tmp_path / "back", filter="data")
    root = tmp_path / "back" / "datasets"
    (source,) = summary(root)
    assert source["seed"] == 4242 and source["method"] == "ply0" and source["race_net"]
    assert source["parts"] >= 2 and source["decisions"] == 10 * source["parts"]
    rows = load_dataset(root, "standard")
    assert rows["boards"].shape[0] > 0 and (root / "CARD.md").exists()


# What the GPU machine's Python lacks and scripts/gpu_wheels.sh does not carry: the burst
# must run without them (the full dependency set is too large to travel with the tree).
NOT_CARRIED = ("fastapi", "starlette", "pydantic", "uvicorn", "orjson", "gymnasium", "httptools")

_BLOCKER = """
import runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is not on the GPU machine")
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["nard_rl", *{argv!r}]
runpy.run_module("nard_rl", run_name="__main__")
"""


def test_the_burst_needs_only_the_carried_wheels(tmp_path: Path) -> None:
    """One worker's labelling and the packing step, with every package the wheels leave
    out made unimportable: they must not be imported on the way."""
    label = [
        "pipeline",
        "name=burst",
        f"out_dir={tmp_path / 'runs'}",
        "seed=4242",
        "stage=label",
        "label.ply=0",
        "label.shards=1",
        "label.decisions_per_shard=5",
        "threads=1",
        "progress=false",
        "dataset=null",
    ]
    shards = tmp_path / "runs" / "burst" / "gen_001" / "shards"
    add = [
        "dataset",
        "--root",
        str(tmp_path / "datasets"),
        "add",
        str(shards),
        "--teacher",
        "nard-default",
        "--checkpoint",
        str(tmp_path / "runs" / "burst" / "best.pt"),
    ]
    for argv in (label, add):
        code = _BLOCKER.format(blocked=set(NOT_CARRIED), argv=argv)
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(tmp_path / "datasets")[0]["decisions"] == 5


def test_the_wheel_script_names_what_the_burst_imports() -> None:
    """The wheels script carries hydra's stack and nothing the test above blocks."""
    text = (ROOT / "scripts" / "gpu_wheels.sh").read_text()
    for name in ("hydra-core", "omegaconf", "antlr4-python3-runtime", "--no-deps"):
        assert name in text
    for name in NOT_CARRIED:
        assert f'"{name}' not in text
