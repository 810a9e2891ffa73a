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
