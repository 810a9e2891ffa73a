"""Self-play training throughput: finished games per second, TD update included.

Measures the real training step (``nard_rl.selfplay.SelfPlay.step``: movegen, encoding,
one forward pass over every candidate, segment argmax, one TD gradient step) for
Tesauro's 198-input net with 80 hidden units and for the shipped net's configuration.

    python scripts/bench_train.py                  # CPU, both configurations
    python scripts/bench_train.py --device cuda --parallel 8192

The last line is ``games_per_second: X`` for the 198-80 net on the first device given.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from nard_rl.encoding import get_encoding
from nard_rl.engine.rules import get_rules
from nard_rl.network import NetSpec
from nard_rl.selfplay import SelfPlay


def shipped_config() -> tuple[str, tuple[int, ...], str]:
    """Encoding, hidden sizes and activation of the shipped net (fallback: extended-128)."""
    try:
        from nard_rl.net_player import default_checkpoint_path
        from nard_rl.network import load_checkpoint

        spec = load_checkpoint(default_checkpoint_path())["spec"]
        return spec["encoding"], tuple(spec["hidden"]), spec["activation"]
    except (FileNotFoundError, ValueError, KeyError):
        return "extended", (128,), "sigmoid"


def bench(
    encoding: str,
    hidden: tuple[int, ...],
    activation: str,
    device: torch.device,
    parallel: int,
    seconds: float,
    warmup_plies: int,
    seed: int,
) -> tuple[float, float]:
    enc = get_encoding(encoding)
    spec = NetSpec(enc.name, enc.version, enc.size, hidden, activation, "standard")
    torch.manual_seed(seed)
    net = spec.build().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sp = SelfPlay(parallel, enc, get_rules("standard"), np.random.default_rng(seed), device)
    for _ in range(warmup_plies):  # compile kernels, warm caches, leave the opening phase
        sp.step(net, opt)
    if device.type == "cuda":
        torch.cuda.synchronize()
    g0, plies = sp.games_finished, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sp.step(net, opt)
        plies += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    return (sp.games_finished - g0) / dt, plies * parallel / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", action="append", help="cpu, cuda, cuda:N (repeatable)")
    ap.add_argument("--parallel", type=int, default=1024, help="games in flight")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured time per config")
    ap.add_argument("--warmup-plies", type=int, default=60)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = [torch.device(d) for d in (args.device or ["cpu"])]
    ship = shipped_config()
    configs = [("tesauro198", (80,), "sigmoid"), ship]
    print(
        f"torch {torch.__version__}, CPU threads {torch.get_num_threads()}, "
        f"parallel games {args.parallel}, {args.seconds:.0f} s per configuration"
    )
    first = None
    for dev in devices:
        for enc, hidden, act in configs:
            gps, pps = bench(
                enc, hidden, act, dev, args.parallel, args.seconds, args.warmup_plies, args.seed
            )
            hid = "-".join(str(h) for h in hidden)
            print(f"{dev.type:5s} {enc:>11s}-{hid:<8s} {gps:10,.0f} games/s {pps:12,.0f} plies/s")
            if first is None:
                first = gps
    print(f"games_per_second: {first:.0f}")


if __name__ == "__main__":
    main()
