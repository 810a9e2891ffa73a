"""The compiled kernels give right answers both freshly compiled and loaded from cache.

numba's on-disk cache has bitten before (recursive functions loaded from cache crashed),
so this runs the move generator and the race combination in two fresh interpreters
sharing one empty ``NUMBA_CACHE_DIR``: the first compiles and writes the cache, the
second must load it (no recompilation) and still reproduce the known results.  Both the
small-batch and the large-batch output buffers are exercised, in case they reach the
kernel as different array types.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

DATA = Path(__file__).parent / "data" / "movegen_gnubg_public.jsonl"

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from nard_rl.engine.movegen import (
        _batch_kernel, legal_afterstates, legal_afterstates_batch,
    )

    recs = [json.loads(line) for line in open(sys.argv[1])]
    boards = np.array([r["board"] for r in recs], dtype=np.int8)
    dice = np.array([r["dice"] for r in recs], dtype=np.int8)
    expected = [sorted(map(tuple, r["afterstates"])) for r in recs]

    def check(afters, offsets, reps):
        got = [sorted(map(tuple, afters[offsets[i]:offsets[i + 1]].tolist()))
               for i in range(len(offsets) - 1)]
        return got == expected * reps

    ok_small = check(*legal_afterstates_batch(boards, dice), 1)
    # large enough for the big-buffer allocation path
    ok_large = check(*legal_afterstates_batch(np.tile(boards, (6, 1)), np.tile(dice, (6, 1))), 6)
    ok_single = all(
        sorted(map(tuple, legal_afterstates(np.array(r["board"]), *r["dice"])[0].tolist()))
        == expected[i]
        for i, r in enumerate(recs[:300])
    )
    from nard_rl.engine.movetext import _part_keys, format_plays
    start = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    named = {format_plays(start, legal_afterstates(np.array(start), 6, 4)[1][i:i + 1])[0]
             for i in range(14)}
    ok_names = "24/14" in named and "8/2 6/2" in named and len(named) == 14
    from nard_rl.engine.bearoff import _race_kernel, race_probabilities
    def delta(k):
        d = np.zeros((1, 8))
        d[0, k] = 1.0
        return d
    yes, no = np.array([True]), np.array([False])
    race = race_probabilities(delta(2), delta(0), delta(5), delta(3), no, yes, delta(0), delta(3))
    ok_race = race[0].tolist() == [1, 1, 1, 0, 0]
    kernels = [_batch_kernel.stats, _part_keys.stats, _race_kernel.stats]
    stats = kernels[0]
    print(json.dumps({
        "ok": [ok_small, ok_large, ok_single, ok_names, ok_race],
        "hits": sum(sum(k.cache_hits.values()) for k in kernels),
        "misses": sum(sum(k.cache_misses.values()) for k in kernels),
        "cache_path": stats.cache_path,
    }))
    """
)


def run_child(cache_dir: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(DATA)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_cold_then_warm_start(tmp_path: Path) -> None:
    cold = run_child(tmp_path)
    assert cold["ok"] == [True] * 5
    assert cold["misses"] >= 1 and cold["hits"] == 0  # compiled here, not found on disk
    assert cold["cache_path"].startswith(str(tmp_path))
    written = list(tmp_path.rglob("*.nbi")) + list(tmp_path.rglob("*.nbc"))
    assert written, "nothing was written to the cache"

    warm = run_child(tmp_path)
    assert warm["ok"] == [True] * 5
    assert warm["hits"] >= 1 and warm["misses"] == 0  # every signature came from the cache
