"""Train the race net (``checkpoints/nard-race.pt``): one-sided roll distributions learnt
from rollouts that end in the bear-off database (see ``nard_rl.training.race``).

    python scripts/train_race.py --out runs/race/race.pt          # the shipped settings
    python scripts/train_race.py --out runs/r.pt --games 20 --rounds 1 --starts 200  # smoke

Killed runs resume from the last finished round (same ``--out``).
"""

from __future__ import annotations

import argparse
import sys

from nard_rl.nets.paths import default_checkpoint_path
from nard_rl.training.race import RaceConfig, train_race_net


def main(argv: list[str] | None = None) -> int:
    d = RaceConfig()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="race checkpoint to write (resumed if present)")
    ap.add_argument("--contact", default=None, help="contact net (default: the shipped one)")
    ap.add_argument("--games", type=int, default=d.games)
    ap.add_argument("--rounds", type=int, default=d.rounds)
    ap.add_argument("--starts", type=int, default=d.starts_per_round)
    ap.add_argument("--hidden", type=int, default=d.hidden)
    ap.add_argument("--home-share", type=float, default=d.home_share)
    ap.add_argument("--epochs", type=int, default=d.epochs)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--lr-final", type=float, default=None, help="last round's rate (cosine)")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--rules", default=d.rules, choices=["standard", "mars"])
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    a = ap.parse_args(argv)
    for name in ("games", "rounds", "starts", "epochs", "hidden"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    cfg = RaceConfig(
        games=a.games,
        rounds=a.rounds,
        starts_per_round=a.starts,
        hidden=a.hidden,
        home_share=a.home_share,
        epochs=a.epochs,
        lr=a.lr,
        lr_final=a.lr_final,
        seed=a.seed,
        rules=a.rules,
    )
    import torch

    torch.set_num_threads(max(1, a.threads))
    contact = a.contact or default_checkpoint_path(a.rules)
    train_race_net(contact, a.out, cfg, log=lambda m: print(m, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
