"""Data-parallel training on torch.distributed: real Gloo processes on the CPU.

The multi-process tests start real ranks (``torchrun`` for the training app, spawned
processes for the collectives), because what can go wrong (ranks drifting apart, a rank
left waiting in a collective, a checkpoint written twice) only shows with several.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from nard_rl.nets.network import NetSpec, load_checkpoint
from nard_rl.training.distributed import (
    DistContext,
    free_port,
    init_distributed,
    local_rank_env,
    rank_rng,
    restore_rngs,
    rng_checkpoint,
    torchrun_env,
    weights_digest,
)
from nard_rl.util.shards import map_shards, shard_bounds

ROOT = Path(__file__).resolve().parents[1]
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


# --- one process ------------------------------------------------------------------------


def test_shard_bounds_cover_in_order_and_balance() -> None:
    for n in (0, 1, 7, 10, 513):
        for shards in (1, 2, 3, 8):
            b = shard_bounds(n, shards)
            assert len(b) == shards and b[0][0] == 0 and b[-1][1] == n
            assert all(b[i][1] == b[i + 1][0] for i in range(shards - 1))
            sizes = [hi - lo for lo, hi in b]
            assert max(sizes) - min(sizes) <= 1
    with pytest.raises(ValueError, match="shards"):
        shard_bounds(5, 0)


def test_torchrun_env_defaults_and_rejects_inconsistent_values() -> None:
    assert torchrun_env({}) == (0, 1, 0, 1)
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    assert torchrun_env(env) == (3, 4, 1, 2)
    with pytest.raises(ValueError, match="RANK must be in"):
        torchrun_env({"RANK": "2", "WORLD_SIZE": "2"})
    with pytest.raises(ValueError, match="WORLD_SIZE must be an integer"):
        torchrun_env({"WORLD_SIZE": "two"})


def test_single_process_context_is_a_no_op() -> None:
    ctx = init_distributed("cpu", env={})
    assert not ctx.enabled and ctx.is_main and ctx.backend is None
    assert ctx.all_sum([3, 1.5]) == [3.0, 1.5]
    assert ctx.sync_gradients(torch.nn.Linear(2, 1), 7) == 7
    assert ctx.gather_objects("x") == ["x"]


def test_rank_streams_rank0_is_the_single_process_stream_and_ranks_differ() -> None:
    assert np.array_equal(
        rank_rng(5, 0).integers(0, 1 << 30, 8), np.random.default_rng(5).integers(0, 1 << 30, 8)
    )
    draws = [rank_rng(5, r).integers(0, 1 << 30, 8).tolist() for r in range(4)]
    fresh = rank_rng(5, 1, games=1000).integers(0, 1 << 30, 8).tolist()
    assert len({tuple(d) for d in [*draws, fresh]}) == 5


def test_restore_rngs_continues_saved_streams_and_gives_new_ranks_fresh_ones() -> None:
    ctx0 = DistContext()
    streams = [rank_rng(1, 0), rank_rng(1, 1)]
    for s in streams:
        s.random(3)
    torch.manual_seed(11)
    extra = rng_checkpoint(ctx0, streams[0])
    extra["rank_rngs"].append(extra["rank_rngs"][0])  # as if written by two ranks
    extra["rank_rngs"][1] = rng_checkpoint(ctx0, streams[1])["rng"]
    expected_torch = torch.rand(4)
    torch.manual_seed(99)
    r1 = restore_rngs(extra, DistContext(rank=1, world_size=3), seed=1, games=50)
    assert torch.equal(torch.rand(4), expected_torch)  # torch CPU generator restored
    assert r1.random() == streams[1].random()
    r2 = restore_rngs(extra, DistContext(rank=2, world_size=3), seed=1, games=50)
    assert r2.random() == rank_rng(1, 2, games=50).random()
    # a checkpoint from before rank streams existed still resumes rank 0
    old = {"rng": extra["rng"], "torch_rng": extra["torch_rng"]}
    assert restore_rngs(old, DistContext(), seed=1, games=0).random() == streams[0].random()


# --- collectives between real Gloo processes ------------------------------------------


def _collectives_worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ.update(local_rank_env(rank, world, port))
    ctx = init_distributed("cpu")
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    if rank == 1:  # drift on purpose: broadcast must undo it
        with torch.no_grad():
            net.weight.add_(1.0)
    ctx.broadcast_module(net)
    gen = torch.Generator().manual_seed(42)
    xs = torch.randn(5, 3, generator=gen)
    ys = torch.randn(5, 2, generator=gen)
    mine = slice(0, 5) if rank == 0 else slice(5, 5)  # rank 1 has nothing to learn
    rows = xs[mine].shape[0]
    net.zero_grad(set_to_none=True)
    if rows:
        torch.nn.functional.mse_loss(net(xs[mine]), ys[mine], reduction="sum").div(rows).backward()
    total = ctx.sync_gradients(net, rows)
    sums = ctx.all_sum([rank + 1, 0.5])
    shards = map_shards(lambda lo, hi: list(range(lo, hi)), 11)
    torch.save(
        {
            "total": total,
            "grad": net.weight.grad.clone(),
            "sums": sums,
            "shards": shards,
            "digest": weights_digest(net),
        },
        f"{out}/rank{rank}.pt",
    )
    ctx.close()


def test_gloo_collectives_average_weighted_gradients_and_gather_shards(tmp_path: Path) -> None:
    mp.spawn(_collectives_worker, args=(2, free_port(), str(tmp_path)), nprocs=2, join=True)
    res = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 2)
    gen = torch.Generator().manual_seed(42)
    xs = torch.randn(5, 3, generator=gen)
    ys = torch.randn(5, 2, generator=gen)
    torch.nn.functional.mse_loss(ref(xs), ys, reduction="sum").div(5).backward()
    for r in res:
        assert r["total"] == 5
        assert torch.allclose(r["grad"], ref.weight.grad, atol=1e-6)  # the one-batch gradient
        assert r["sums"] == [3.0, 1.0]
        assert [x for part in r["shards"] for x in part] == list(range(11))
    assert res[0]["digest"] == res[1]["digest"]  # rank 1's drift was overwritten


def _failing_rank_worker(rank: int, world: int, port: int, out: str) -> None:
    """A two-rank training run in which rank 1 fails on its third update; each rank
    writes how it ended."""
    os.environ.update(local_rank_env(rank, world, port))
    from nard_rl.training.config import TrainConfig
    from nard_rl.training.selfplay import SelfPlay
    from nard_rl.training.td import train

    real = SelfPlay.step
    calls = [0]

    def step(self: SelfPlay, net: torch.nn.Module, opt: torch.optim.Optimizer) -> object:
        calls[0] += 1
        if rank == 1 and calls[0] == 3:
            raise RuntimeError("rank 1 breaks down")
        return real(self, net, opt)

    SelfPlay.step = step  # type: ignore[method-assign]
    cfg = TrainConfig()
    cfg.name, cfg.out_dir, cfg.device = "f", out, "cpu"
    cfg.encoding.name = "tesauro198"
    cfg.model.hidden = [8]
    tr = cfg.trainer
    tr.games, tr.parallel_games, tr.checkpoint_every = 10**6, 8, 10**6
    tr.eval_every, tr.final_eval_games, tr.log_every = 0, 0, 1000
    try:
        train(cfg)
        outcome = "finished"
    except BaseException as exc:  # what ended the rank is the result
        outcome = f"{type(exc).__name__}: {exc}".splitlines()[0]
    Path(out, f"rank{rank}.txt").write_text(outcome)


@pytest.mark.slow  # two spawned ranks import torch and compile: about a minute
def test_a_failing_rank_does_not_hang_its_peer(tmp_path: Path) -> None:
    """Rank 1 raises in the middle of training: it runs no collective on its way out (a
    final checkpoint's gathers would wait for a peer that is in another collective), it
    leaves the process group, and rank 0's pending collective then fails instead of
    waiting: both processes end within seconds, and no checkpoint is written."""
    ctx = torch.multiprocessing.get_context("spawn")
    port = free_port()
    procs = [
        ctx.Process(target=_failing_rank_worker, args=(r, 2, port, str(tmp_path))) for r in range(2)
    ]
    for p in procs:
        p.start()
    deadline = time.time() + 180
    for p in procs:
        p.join(timeout=max(1.0, deadline - time.time()))
    hung = [r for r, p in enumerate(procs) if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    assert not hung, f"rank(s) {hung} still waiting after rank 1 failed"
    assert (tmp_path / "rank1.txt").read_text() == "RuntimeError: rank 1 breaks down"
    assert (tmp_path / "rank0.txt").read_text() != "finished"  # its collective failed
    assert not (tmp_path / "f" / "checkpoints" / "last.pt").exists()
    assert not (tmp_path / "f" / "run.lock").exists()


def test_sharded_match_equals_single_process() -> None:
    from nard_rl.arena.matches import match_result, play_match, play_pairs, play_pairs_sharded
    from nard_rl.players import make_player

    a, b = make_player("pubeval"), make_player("pubeval")
    whole = play_match(a, b, 60, seed=4, batch_pairs=8)
    play = functools.partial(play_pairs, a, b, seed=4, batch_pairs=8)
    left, right = play(0, 16), play(16, 30)
    merged = match_result(
        np.concatenate([left, right], axis=1),
        name_a=whole.player_a,
        name_b=whole.player_b,
        seed=4,
        rules="standard",
        elapsed=1.0,
    )
    assert {**merged.to_dict(), "games_per_second": 0} == {
        **whole.to_dict(),
        "games_per_second": 0,
    }
    # the same in two worker processes, merged in pair order
    seen: list[int] = []
    sharded = play_pairs_sharded(play, 30, batch_pairs=8, workers=2, progress=seen.append)
    assert np.array_equal(sharded, play(0, 30))
    assert seen[-1] == 60 and seen == sorted(seen)
    with pytest.raises(ValueError, match="multiple of batch_pairs"):
        play(3, 10)


# --- the training app under torchrun -----------------------------------------------------


def _torchrun(nproc: int, *overrides: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        str(ROOT / "scripts" / "train.py"),
        *overrides,
    ]


def _kill_tree(pid: int) -> None:
    """SIGKILL the launcher and its ranks at once, as a crash or a preempted node would
    (torchrun starts each rank in its own session, so killing its group is not enough)."""
    victims = [pid]
    for p in victims:  # every descendant, the children of every thread of each
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as fh:
                    victims += [int(c) for c in fh.read().split() if int(c) not in victims]
            except OSError:
                pass
    for p in reversed(victims):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def test_killed_two_rank_run_has_identical_ranks_and_resumes_with_one(tmp_path: Path) -> None:
    common = [
        "name=d",
        f"out_dir={tmp_path}",
        "trainer=smoke",
        "encoding=tesauro198",
        "model.hidden=[8]",
        "trainer.parallel_games=16",
        "trainer.checkpoint_every=30",
        "trainer.eval_every=0",
        "trainer.final_eval_games=0",
        "trainer.log_every=5",
    ]
    last = tmp_path / "d" / "checkpoints" / "last.pt"
    proc = subprocess.Popen(
        _torchrun(2, *common, "trainer.games=1000000"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not last.exists() and proc.poll() is None:
            time.sleep(0.2)
        assert last.exists(), "no checkpoint from the two-rank run"
        time.sleep(1.0)
    finally:
        _kill_tree(proc.pid)
        proc.wait()
    ckpt = load_checkpoint(last)
    meta = ckpt["extra"]["distributed"]
    assert meta["world_size"] == 2 and meta["backend"] == "gloo"
    games = ckpt["games"]
    assert games >= 30
    assert len(meta["games_by_rank"]) == 2 and sum(meta["games_by_rank"]) == games
    assert all(g > 0 for g in meta["games_by_rank"])  # both ranks played
    # both ranks ended each step with the same weights, and these are the saved ones
    net = NetSpec.from_dict(ckpt["spec"]).build()
    net.load_state_dict(ckpt["model"])
    assert meta["weights_digests"] == [weights_digest(net)] * 2
    assert len(ckpt["extra"]["rank_rngs"]) == 2
    assert ckpt["extra"]["rank_rngs"][0] != ckpt["extra"]["rank_rngs"][1]

    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "train.py"),
            *common,
            "resume=auto",
            f"trainer.games={games + 40}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"resumed from {last} at {games:,} games" in out.stdout
    resumed = load_checkpoint(last)
    assert resumed["games"] >= games + 40 and resumed["step"] > ckpt["step"]
    assert resumed["extra"]["distributed"]["world_size"] == 1
    history = resumed["extra"]["history"]
    assert [(h["from_games"], h["world_size"]) for h in history] == [(0, 2), (games, 1)]


# --- the GPU path (run by scripts/gpu_check.sh on a machine with CUDA) ----------------


@pytest.mark.gpu
@CUDA
@pytest.mark.parametrize(("first", "second"), [("cuda", "cuda"), ("cuda", "cpu"), ("cpu", "cuda")])
def test_resume_on_another_device(tmp_path: Path, first: str, second: str) -> None:
    from nard_rl.training.config import TrainConfig
    from nard_rl.training.td import train

    def cfg(games: int, device: str) -> TrainConfig:
        c = TrainConfig()
        c.name, c.out_dir, c.device, c.resume = "g", str(tmp_path), device, "auto"
        c.model.hidden = [16]
        c.trainer.games, c.trainer.parallel_games = games, 64
        c.trainer.checkpoint_every, c.trainer.eval_every, c.trainer.final_eval_games = 50, 0, 20
        return c

    a = load_checkpoint(train(cfg(60, first)))
    assert a["extra"]["distributed"]["device_type"] == first
    assert ("cuda_rng" in a["extra"]) == (first == "cuda")
    b = load_checkpoint(train(cfg(120, second)))
    assert b["games"] >= 120 and b["step"] > a["step"]
    assert b["extra"]["distributed"]["device_type"] == second


@pytest.mark.gpu
@CUDA
def test_cuda_selfplay_matches_cpu_shapes_and_learns() -> None:
    from nard_rl.engine.rules import STANDARD
    from nard_rl.nets.encoding import get_encoding
    from nard_rl.training.selfplay import SelfPlay

    enc = get_encoding("extended")
    spec = NetSpec(enc.name, enc.version, enc.size, (32,), "sigmoid", "standard")
    dev = torch.device("cuda")
    net = spec.build().to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sp = SelfPlay(256, enc, STANDARD, np.random.default_rng(0), dev)
    before = weights_digest(net)
    while sp.games_finished < 50:
        st = sp.step(net, opt)
        assert np.isfinite(st.loss)
    assert weights_digest(net) != before
    assert all(p.device.type == "cuda" for p in net.parameters())


def test_pipeline_labelling_under_torchrun_takes_this_ranks_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import asdict

    from nard_rl.training.supervised.pipeline import PipelineConfig, generation_dir, run_pipeline

    conf = asdict(PipelineConfig())
    conf.update(out_dir=str(tmp_path), name="p", stage="label", progress=False)
    conf["label"].update(shards=3, decisions_per_shard=6, parallel_games=8, chunk=6)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    run_pipeline(conf)
    shards = generation_dir(tmp_path / "p", 1) / "shards"
    assert sorted(p.name for p in shards.glob("shard_*.npz")) == ["shard_00001.npz"]
    with pytest.raises(ValueError, match="only stage=label"):
        run_pipeline({**conf, "stage": "all"})


def test_checkpoint_written_on_a_gpu_resumes_on_the_cpu(tmp_path: Path) -> None:
    """A GPU run's checkpoint holds a CUDA generator state and says cuda; resuming it on a
    machine without CUDA restores the CPU state and continues (the state tensors are
    loaded on the CPU whatever device wrote them)."""
    from nard_rl.nets.network import atomic_torch_save
    from nard_rl.training.config import TrainConfig
    from nard_rl.training.td import train

    def cfg(games: int) -> TrainConfig:
        c = TrainConfig()
        c.name, c.out_dir, c.device, c.resume = "c", str(tmp_path), "cpu", "auto"
        c.encoding.name, c.model.hidden = "tesauro198", [8]
        c.trainer.games, c.trainer.parallel_games = games, 16
        c.trainer.checkpoint_every, c.trainer.eval_every, c.trainer.final_eval_games = 20, 0, 0
        return c

    last = train(cfg(20))
    ckpt = torch.load(last, map_location="cpu", weights_only=True)
    ckpt["extra"]["cuda_rng"] = torch.get_rng_state()  # a byte tensor, as CUDA's is
    ckpt["extra"]["distributed"]["device_type"] = "cuda"
    ckpt["config"]["device"] = "cuda"
    atomic_torch_save(ckpt, last)
    resumed = load_checkpoint(train(cfg(40)))
    assert resumed["games"] >= 40 and resumed["step"] > ckpt["step"]
    assert resumed["extra"]["distributed"]["device_type"] == "cpu"
    assert "cuda_rng" not in resumed["extra"]


def test_two_rank_fit_equals_one_process_fit(tmp_path: Path) -> None:
    """``nard pipeline stage=fit`` on 2 Gloo ranks: identical weights on both ranks, the
    world size in the checkpoint, and (the batch being global) the fit one process makes,
    up to float rounding."""
    import shutil

    from nard_rl.cli import main
    from nard_rl.training.supervised.pipeline import generation_dir

    # a fit from scratch always gains on its held-out rows; one grown from the shipped net
    # may keep its starting weights (early stopping), and then the comparison is empty
    common = [
        "supervised=tiny",
        "name=f",
        "label.decisions_per_shard=60",
        "fit.init=scratch",
        "progress=false",
    ]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["pipeline", *common, f"out_dir={one}", "stage=label"]) == 0
    shutil.copytree(one, two)
    assert main(["pipeline", *common, f"out_dir={one}", "stage=fit"]) == 0
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "-m",
        "nard_rl",
        "pipeline",
        *common,
        f"out_dir={two}",
        "stage=fit",
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("fitting") == 1  # rank 0 alone logs

    ref = load_checkpoint(generation_dir(one / "f", 1) / "candidate.pt")
    ckpt = load_checkpoint(generation_dir(two / "f", 1) / "candidate.pt")
    meta = ckpt["extra"]["distributed"]
    assert meta["world_size"] == 2 and meta["backend"] == "gloo"
    net = NetSpec.from_dict(ckpt["spec"]).build()
    net.load_state_dict(ckpt["model"])
    assert meta["weights_digests"] == [weights_digest(net)] * 2
    fit1, fit2 = ref["extra"]["history"][-1], ckpt["extra"]["history"][-1]
    assert (fit1["stage"], fit1["world_size"]) == ("fit", 1)
    assert (fit2["stage"], fit2["world_size"]) == ("fit", 2)
    assert ref["extra"]["distributed"]["world_size"] == 1
    r1, r2 = fit1["result"], fit2["result"]
    assert (r2["steps"], r2["train_rows"], r2["heldout_rows"]) == (
        r1["steps"],
        r1["train_rows"],
        r1["heldout_rows"],
    )
    for key in ("initial_heldout_loss", "best_heldout_loss", "heldout_equity_rmse"):
        assert r2[key] == pytest.approx(r1[key], rel=1e-5)  # held-out sums over both ranks
    for k, w in ref["model"].items():
        assert torch.allclose(ckpt["model"][k], w, atol=1e-6), k
    # the fit moved the weights from its start, so the comparison above means something
    assert r1["best_heldout_loss"] < 0.95 * r1["initial_heldout_loss"]
