"""Train the race net (``checkpoints/nard-race.pt``) by fitted value iteration over 1-ply
labels whose leaves use the bear-off database (see ``nard_rl.race_net``).

    python scripts/train_race.py --out runs/race/race.pt            # the shipped settings
    python scripts/train_race.py --out /tmp/r.pt --games 50 --rounds 1 --labels 200  # smoke

Killed runs resume from the last finished round (same ``--out``).
"""

from __future__ import annotations

import argparse
import sys

from nard_rl.net_player import default_checkpoint_path
from nard_rl.race_net import RaceConfig, train_race_net


def main(argv: list[str] | None = None) -> int:
    d = RaceConfig()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="race checkpoint to write (resumed if present)")
    ap.add_argument("--contact", default=None, help="contact net (default: the shipped one)")
    ap.add_argument("--games", type=int, default=d.games)
    ap.add_argument("--rounds", type=int, default=d.rounds)
    ap.add_argument("--labels", type=int, default=d.labels_per_round)
    ap.add_argument("--epochs", type=int, default=d.epochs)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--rules", default=d.rules, choices=["standard", "mars"])
    a = ap.parse_args(argv)
    for name in ("games", "rounds", "labels", "epochs"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    cfg = RaceConfig(
        games=a.games,
        rounds=a.rounds,
        labels_per_round=a.labels,
        epochs=a.epochs,
        lr=a.lr,
        seed=a.seed,
        rules=a.rules,
    )
    contact = a.contact or default_checkpoint_path(a.rules)
    train_race_net(contact, a.out, cfg, log=lambda m: print(m, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
