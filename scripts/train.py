"""Train by batched self-play: ``python scripts/train.py [hydra overrides]``.

The same app as ``nard train``; see ``configs/train.yaml`` and ``nard_rl/training/config.py``.
"""

import sys

from nard_rl.commands.train import run_hydra

if __name__ == "__main__":
    sys.exit(run_hydra(sys.argv[1:]))
