"""Evaluate players or a run's checkpoints: ``python scripts/evaluate.py A B --games N``.

The same command as ``nard evaluate`` (see ``nard_rl/commands/evaluate.py``), e.g.
``python scripts/evaluate.py --round-robin runs/x/checkpoints --vs pubeval --games 2000``.
"""

import sys

from nard_rl.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="scripts/evaluate.py"))
