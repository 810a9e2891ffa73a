"""Training: a smoke run end to end, resuming, and the self-play core's bookkeeping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from nard_rl.engine.batch import with_passes
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.rules import STANDARD
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec, load_checkpoint
from nard_rl.training.config import TrainConfig
from nard_rl.training.selfplay import SelfPlay, outcome_probs
from nard_rl.training.td import train


def _smoke_cfg(tmp_path: Path, games: int, **trainer: object) -> TrainConfig:
    cfg = TrainConfig()
    cfg.name = "t"
    cfg.out_dir = str(tmp_path)
    cfg.model.hidden = [16]
    cfg.trainer.games = games
    cfg.trainer.parallel_games = 32
    cfg.trainer.checkpoint_every = 50
    cfg.trainer.eval_every = 0
    cfg.trainer.final_eval_games = 20
    cfg.trainer.log_every = 10
    for k, v in trainer.items():
        setattr(cfg.trainer, k, v)
    return cfg


def test_smoke_run_writes_checkpoints_and_logs(tmp_path: Path) -> None:
    last = train(_smoke_cfg(tmp_path, 60))
    ckpt = load_checkpoint(last)
    assert ckpt["games"] >= 60
    assert ckpt["spec"]["encoding"] == "extended"
    assert ckpt["spec"]["encoding_version"] == get_encoding("extended").version
    assert ckpt["config"]["trainer"]["games"] == 60
    assert "optimizer" in ckpt and "rng" in ckpt["extra"]
    assert list((tmp_path / "t" / "checkpoints").glob("games_*.pt"))
    assert list((tmp_path / "t" / "tb").glob("events.*"))


def test_resume_continues_from_the_checkpoint(tmp_path: Path) -> None:
    first = load_checkpoint(train(_smoke_cfg(tmp_path, 50, final_eval_games=0)))
    assert 50 <= first["games"] < 100
    cfg = _smoke_cfg(tmp_path, 100, final_eval_games=0)
    cfg.resume = "auto"
    second = load_checkpoint(train(cfg))
    assert second["games"] >= 100
    assert second["step"] > first["step"]  # counted on from the checkpoint, not from zero
    history = second["extra"]["history"]
    assert [h["from_games"] for h in history] == [0, first["games"]]
    assert history[1]["config"]["resume"] == "auto"


def test_same_seed_same_weights(tmp_path: Path) -> None:
    a = load_checkpoint(train(_smoke_cfg(tmp_path / "a", 40, final_eval_games=0)))
    b = load_checkpoint(train(_smoke_cfg(tmp_path / "b", 40, final_eval_games=0)))
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_with_passes_inserts_the_board_for_rolls_without_a_play() -> None:
    blocked = np.array(
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, -2, -2, -2, -2, 3, 12],
        dtype=np.int8,
    )  # R12: closed board, the mover dances
    start = np.array(
        [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0],
        dtype=np.int8,
    )
    boards = np.stack([start, blocked, start])
    dice = np.array([[3, 1], [6, 5], [2, 1]], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice)
    nomove = np.diff(offsets) == 0
    assert nomove.tolist() == [False, True, False]
    a2, o2 = with_passes(afters, offsets, boards)
    assert np.diff(o2).tolist() == [offsets[1] - offsets[0], 1, offsets[3] - offsets[2]]
    assert np.array_equal(a2[o2[1]], blocked)
    assert np.array_equal(a2[: o2[1]], afters[: offsets[1]])
    assert np.array_equal(a2[o2[2] :], afters[offsets[2] :])


def test_outcome_probs() -> None:
    p = outcome_probs(np.array([False, True, True]), np.array([False, False, True]))
    assert p.tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]]


def test_selfplay_learns_the_final_result_target() -> None:
    # One step from positions where the mover bears off its last checker: the finished
    # games' afterstates must be pulled towards a certain win.
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    torch.manual_seed(0)
    net = spec.build()
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    sp = SelfPlay(8, enc, STANDARD, np.random.default_rng(0), torch.device("cpu"))
    last = np.zeros(26, dtype=np.int8)
    last[1] = 1
    last[24] = -15
    sp.games.reset(boards=np.tile(last, (8, 1)))
    x = torch.from_numpy(enc.encode(np.tile(np.where(np.arange(26) == 1, 0, last), (1, 1))))
    before = net(x)[0, 0].item()
    st = sp.step(net, opt)
    assert st.finished == 8
    assert st.points == 16  # opponent has borne off nothing: gammons (R25)
    assert net(x)[0, 0].item() > before
    # the stepper restarted every finished game from the opening (R4/R5)
    assert (sp.games.turn == 0).all() and (sp.boards[:, 24] == 2).all()


@pytest.mark.slow
def test_killed_run_resumes(tmp_path: Path) -> None:
    run = tmp_path / "k"
    cmd = [
        sys.executable,
        "-m",
        "nard_rl",
        "train",
        "name=k",
        f"out_dir={tmp_path}",
        "trainer=smoke",
        "trainer.games=100000",
        "trainer.checkpoint_every=50",
        "trainer.eval_every=0",
        "trainer.final_eval_games=0",
        "model.hidden=[16]",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = run / "checkpoints" / "last.pt"
    deadline = time.time() + 240
    while time.time() < deadline and not last.exists():
        time.sleep(0.5)
    time.sleep(2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    games_at_kill = load_checkpoint(last)["games"]
    assert games_at_kill >= 50
    out = subprocess.run(
        [*cmd[:6], f"trainer.games={games_at_kill + 100}", *cmd[7:], "resume=auto"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"resumed from {last} at {games_at_kill:,} games" in out.stdout
    assert load_checkpoint(last)["games"] >= games_at_kill + 100


def test_lambda_returns_by_hand() -> None:
    from nard_rl.training.selfplay import lambda_returns

    # three afterstates, movers A, B, A; A wins a gammon at the end
    v = np.array(
        [
            [0.6, 0.2, 0.0, 0.1, 0.0],  # A's view after A's first move
            [0.3, 0.1, 0.0, 0.4, 0.0],  # B's view after B's move
            [1.0, 1.0, 0.0, 0.0, 0.0],  # result, A's view
        ],
        dtype=np.float32,
    )
    mc = lambda_returns(v, 1.0)  # Monte Carlo: the result, from each mover's side
    assert np.allclose(mc[2], [1, 1, 0, 0, 0])
    assert np.allclose(mc[1], [0, 0, 0, 1, 0])  # B lost a gammon
    assert np.allclose(mc[0], [1, 1, 0, 0, 0])
    td0 = lambda_returns(v, 0.0)  # one step: the next value seen from the other side
    assert np.allclose(td0[1], [0, 0, 0, 1, 0])
    assert np.allclose(td0[0], [0.7, 0.4, 0.0, 0.1, 0.0])


def _seen_from(values: np.ndarray, steps: int) -> np.ndarray:
    """A row seen ``steps`` plies earlier, by the other side when ``steps`` is odd."""
    if steps % 2 == 0:
        return values
    return np.array([1 - values[0], values[3], values[4], values[1], values[2]])


def test_lambda_returns_follow_the_definition_not_a_plain_mix() -> None:
    """G_t = (1 - lam) * sum_n lam^(n-1) G_t^(n) + lam^(N-1) G_t^(N) over the n-step returns
    (the value n plies on, seen from t's side); with five afterstates this is a polynomial
    in lam, so no mix of the one-step and Monte Carlo targets can pass."""
    from nard_rl.training.selfplay import lambda_returns

    rng = np.random.default_rng(3)
    v = rng.uniform(0.05, 0.6, size=(5, 5)).astype(np.float32)
    v[-1] = [1.0, 1.0, 0.0, 0.0, 0.0]  # the mover of the last afterstate won a gammon
    lam = 0.6
    got = lambda_returns(v, lam)
    last = v.shape[0] - 1
    for t in range(last):
        big_n = last - t
        nstep = [_seen_from(v[t + n], n) for n in range(1, big_n + 1)]
        want = (1 - lam) * sum(lam ** (n - 1) * nstep[n - 1] for n in range(1, big_n))
        want = want + lam ** (big_n - 1) * nstep[-1]
        np.testing.assert_allclose(got[t], want, rtol=1e-5, atol=1e-6)
    mix = (1 - lam) * lambda_returns(v, 0.0) + lam * lambda_returns(v, 1.0)
    assert np.abs(got[0] - mix[0]).max() > 1e-3


def test_td_lambda_run_trains_on_whole_games(tmp_path: Path) -> None:
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    torch.manual_seed(0)
    net = spec.build()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    sp = SelfPlay(16, enc, STANDARD, np.random.default_rng(0), torch.device("cpu"), td_lambda=0.7)
    updates = 0
    plies = 0
    while sp.games_finished < 3:
        st = sp.step(net, opt)
        plies += 1
        if st.finished:
            # every row of a finished game is updated at once, nothing before it ends
            assert st.updates >= st.finished * 2
        else:
            assert st.updates == 0
        updates += st.updates
    assert updates > 0 and plies > 10
    cfg = _smoke_cfg(tmp_path, 30, td_lambda=0.7, final_eval_games=0)
    assert load_checkpoint(train(cfg))["config"]["trainer"]["td_lambda"] == 0.7


def test_the_loop_reads_a_typed_config_and_refuses_bad_fields_by_name() -> None:
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError, ValidationError

    from nard_rl.training.config import to_train_config

    typed = to_train_config({"trainer": {"lr": 0.05, "games": 10}, "model": {"hidden": [4]}})
    assert isinstance(typed, TrainConfig) and typed.trainer.lr == 0.05
    assert typed.trainer.parallel_games == TrainConfig().trainer.parallel_games  # defaults
    assert to_train_config(OmegaConf.structured(TrainConfig)).model.hidden == [128]
    with pytest.raises(ValidationError, match=r"trainer\.lr"):
        to_train_config({"trainer": {"lr": "fast"}})
    with pytest.raises(ConfigKeyError, match="learning_rate"):
        to_train_config({"trainer": {"learning_rate": 0.1}})
    with pytest.raises(ValueError, match="unknown optimizer 'rmsprop'"):
        to_train_config({"trainer": {"optimizer": "rmsprop"}})
    with pytest.raises(ValueError, match="td_lambda"):
        to_train_config({"trainer": {"td_lambda": 1.5}})


# -- run directories: no fresh start over a run, one writer at a time -------------------


def _tree_digest(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


CLI_RUN = [
    "train",
    "name=r",
    "trainer=smoke",
    "trainer.games=30",
    "trainer.eval_every=0",
    "trainer.final_eval_games=0",
    "model.hidden=[8]",
]


def test_a_fresh_train_over_a_run_refuses_and_leaves_its_files_byte_identical(
    tmp_path: Path,
) -> None:
    from nard_rl.cli import main

    args = [*CLI_RUN, f"out_dir={tmp_path}"]
    assert main(args) == 0
    run = tmp_path / "r"
    before = _tree_digest(run)
    assert "checkpoints/last.pt" in before and "hydra/overrides.yaml" in before
    with pytest.raises(SystemExit, match=r"already holds a run .* resume=auto"):
        main([*args, "trainer.games=60"])  # other settings: Hydra would rewrite its files
    assert _tree_digest(run) == before
    with pytest.raises(RuntimeError, match="already holds a run"):  # the Python API too
        train(_smoke_cfg(tmp_path, 60, final_eval_games=0), run_dir=run)
    assert _tree_digest(run) == before
    assert main([*args, "trainer.games=40", "resume=auto"]) == 0
    assert load_checkpoint(run / "checkpoints" / "last.pt")["games"] >= 40
    assert not (run / "run.lock").exists()  # released at the end


@pytest.mark.slow
def test_a_second_trainer_on_a_run_in_use_refuses_and_a_killed_ones_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    """Two trainers on one name: while the first runs, the second (even with resume=auto)
    is refused by the lock, naming the owner; after a kill -9 of the first, its stale lock
    is taken over and the run resumed."""
    cmd = [
        sys.executable,
        "-m",
        "nard_rl",
        *CLI_RUN[:4],
        "trainer.games=1000000",
        *CLI_RUN[5:],
        f"out_dir={tmp_path}",
        "trainer.checkpoint_every=20",
    ]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = tmp_path / "r"
    last = run / "checkpoints" / "last.pt"
    try:
        deadline = time.time() + 240
        while time.time() < deadline and not last.exists() and first.poll() is None:
            time.sleep(0.2)
        assert last.exists(), "the first trainer wrote no checkpoint"
        cfg = _smoke_cfg(tmp_path, 10**6, final_eval_games=0)
        cfg.name, cfg.resume = "r", "auto"
        with pytest.raises(RuntimeError, match=f"in use by pid {first.pid} on "):
            train(cfg)
    finally:
        first.kill()
        first.wait()
    games = load_checkpoint(last)["games"]
    cfg = _smoke_cfg(tmp_path, games + 20, final_eval_games=0)
    cfg.name, cfg.resume = "r", "auto"
    cfg.model.hidden = [8]
    assert load_checkpoint(train(cfg))["games"] >= games + 20
    assert not (run / "run.lock").exists()


def test_resume_from_a_checkpoint_whose_weights_do_not_fit_is_a_clear_error(
    tmp_path: Path,
) -> None:
    from nard_rl.nets.network import CheckpointError

    last = train(_smoke_cfg(tmp_path, 40, final_eval_games=0))
    ckpt = torch.load(last, weights_only=True)
    ckpt["model"]["body.0.weight"] = torch.zeros(3, 3)  # the spec still says 16 x 225
    torch.save(ckpt, last)
    cfg = _smoke_cfg(tmp_path, 80, final_eval_games=0)
    cfg.resume = "auto"
    with pytest.raises(CheckpointError, match="do not fit"):
        train(cfg)
    ckpt = torch.load(last, weights_only=True)
    ckpt["model"] = load_checkpoint(train(_smoke_cfg(tmp_path / "b", 40, final_eval_games=0)))[
        "model"
    ]
    ckpt["optimizer"] = {"state": "nonsense"}
    torch.save(ckpt, last)
    with pytest.raises(CheckpointError, match="optimizer"):
        train(cfg)
