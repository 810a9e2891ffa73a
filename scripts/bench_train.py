"""Self-play training throughput: finished games per second, TD update included.

Measures the real training step (``nard_rl.training.selfplay.SelfPlay.step``: movegen, encoding,
one forward pass over every candidate, segment argmax, one TD gradient step) for
Tesauro's 198-input net with 80 hidden units and for the shipped net's configuration.

    python scripts/bench_train.py                  # CPU, both configurations
    python scripts/bench_train.py --device cuda --parallel 8192
    python scripts/bench_train.py --nproc 2        # 2 Gloo ranks, gradients all-reduced

With ``--nproc N`` the same loop runs data-parallel in N processes (Gloo on CPU, NCCL on
CUDA with one GPU per rank), each playing ``--parallel`` games, with the per-ply
collectives of ``nard train`` under torchrun (gradient all-reduce, game count sum); the
figure is the games of all ranks per second.

The last line is ``games_per_second: X`` for the 198-80 net on the first device given.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from nard_rl.engine.rules import get_rules
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec
from nard_rl.training.distributed import DistContext, free_port, init_distributed, local_rank_env
from nard_rl.training.selfplay import SelfPlay


def shipped_config() -> tuple[str, tuple[int, ...], str]:
    """Encoding, hidden sizes and activation of the shipped net (fallback: extended-128)."""
    try:
        from nard_rl.nets.network import load_checkpoint
        from nard_rl.nets.paths import default_checkpoint_path

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
    ctx: DistContext | None = None,
) -> tuple[float, float]:
    ctx = ctx or DistContext(device=device)
    enc = get_encoding(encoding)
    spec = NetSpec(enc.name, enc.version, enc.size, hidden, activation, "standard")
    torch.manual_seed(seed)
    net = spec.build().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    rng = np.random.default_rng([seed, ctx.rank]) if ctx.enabled else np.random.default_rng(seed)
    sync = ctx.sync_gradients if ctx.enabled else None
    sp = SelfPlay(parallel, enc, get_rules("standard"), rng, device, grad_sync=sync)
    for _ in range(warmup_plies):  # compile kernels, warm caches, leave the opening phase
        sp.step(net, opt)
    if device.type == "cuda":
        torch.cuda.synchronize()
    games, plies = 0.0, 0
    t0 = time.perf_counter()
    while True:
        st = sp.step(net, opt)
        plies += 1
        if not ctx.enabled:
            games += st.finished
            if time.perf_counter() - t0 >= seconds:
                break
            continue
        # as in training: the game count summed over ranks every ply; rank 0's clock stops all
        finished, stop = ctx.all_sum(
            [st.finished, ctx.is_main and time.perf_counter() - t0 >= seconds]
        )
        games += finished
        if stop:
            break
    if device.type == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    return games / dt, plies * parallel * ctx.world_size / dt


def _rank_main(rank: int, nproc: int, port: int, device: str, jobs: list, out: list) -> None:
    os.environ.update(local_rank_env(rank, nproc, port))
    ctx = init_distributed(device)
    try:
        for k, job in enumerate(jobs):
            res = bench(*job[:3], ctx.device, *job[3:], ctx=ctx)
            if ctx.is_main:
                out[k] = res
    finally:
        ctx.close()


def bench_ranks(
    nproc: int, device: str, jobs: list[tuple[object, ...]]
) -> list[tuple[float, float]]:
    """Every job in ``nproc`` data-parallel processes; rank 0's figures."""
    import torch.multiprocessing as mp

    with mp.Manager() as manager:
        out = manager.list([None] * len(jobs))
        mp.spawn(_rank_main, args=(nproc, free_port(), device, jobs, out), nprocs=nproc)
        return list(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", action="append", help="cpu, cuda, cuda:N (repeatable)")
    ap.add_argument("--parallel", type=int, default=1024, help="games in flight")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured time per config")
    ap.add_argument("--warmup-plies", type=int, default=60)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--nproc", type=int, default=1, help="data-parallel processes (Gloo on CPU, NCCL on CUDA)"
    )
    args = ap.parse_args()
    if args.nproc < 1:
        ap.error(f"--nproc must be at least 1, got {args.nproc}")
    if args.parallel < 1 or args.seconds <= 0:
        ap.error("--parallel must be at least 1 and --seconds positive")
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = [torch.device(d) for d in (args.device or ["cpu"])]
    ship = shipped_config()
    configs = [("tesauro198", (80,), "sigmoid"), ship]
    threads = torch.get_num_threads() if args.nproc == 1 else "per rank: cores / ranks"
    print(
        f"torch {torch.__version__}, CPU threads {threads}, processes {args.nproc}, "
        f"parallel games {args.parallel} per process, {args.seconds:.0f} s per configuration"
    )
    first = None
    for dev in devices:
        tail = (args.parallel, args.seconds, args.warmup_plies, args.seed)
        if args.nproc > 1:
            figures = bench_ranks(args.nproc, str(dev), [(*c, *tail) for c in configs])
        else:
            figures = [bench(*c, dev, *tail) for c in configs]
        for (enc, hidden, _), (gps, pps) in zip(configs, figures, strict=True):
            hid = "-".join(str(h) for h in hidden)
            print(f"{dev.type:5s} {enc:>11s}-{hid:<8s} {gps:10,.0f} games/s {pps:12,.0f} plies/s")
            if first is None:
                first = gps
    print(f"games_per_second: {first:.0f}")


if __name__ == "__main__":
    main()
