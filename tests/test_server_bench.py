"""``scripts/bench_serve.py`` runs end to end (tiny sizes; the figures are not judged here)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("wrk") is None, reason="the load test needs wrk (apt-get install wrk)"
)
def test_bench_serve_smoke(tmp_path: Path) -> None:
    out_file = tmp_path / "bench.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_serve.py"), "--duration", "1",
         "--connections", "1", "4", "--positions", "10", "--json", str(out_file)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out_file.read_text())
    assert {r["scenario"] for r in rows} == {"hint 0-ply", "hint 1-ply", "wildbg /move"}
    for r in rows:
        assert r["requests"] > 0 and r["errors"] == 0, r
        assert r["p50_ms"] <= r["p99_ms"]
    assert "micro-batching" in out.stdout
