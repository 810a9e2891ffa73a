"""The compiled kernels under ``NUMBA_BOUNDSCHECK=1``: any index past an array raises.

Run in a fresh interpreter with its own numba cache (an unchecked cached build would
otherwise be reused): random-play positions through the move generator, self-play plies
through the batch stepper with its pass and restart paths, and both encodings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.boundscheck]

SCRIPT = """
import numpy as np
from nard_rl.nets.encoding import get_encoding
from nard_rl.engine.batch import GameBatch, segment_argmax
from nard_rl.engine.movegen import legal_afterstates_batch

rng = np.random.default_rng(5)
for mars in (False, True):
    games = GameBatch(512, "mars" if mars else "standard", rng, pass_as_play=True)
    games.reset()
    finished = 0
    for ply in range(400):
        afters, offsets = games.afters, games.offsets
        for name in ("tesauro198", "extended"):
            get_encoding(name).encode(afters[:4096])
        local = (rng.random(512) * np.diff(offsets)).astype(np.int64)
        finished += int(games.step(local).finished.sum())
    moves = legal_afterstates_batch(games.boards, games.dice, mars, with_moves=True)
    assert moves[0].shape[0] == moves[2].shape[0]
    assert finished > 100, finished
print("ok")
"""


def test_kernels_stay_in_bounds(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=1200
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
