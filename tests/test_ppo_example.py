"""The single-file masked PPO baseline (``examples/ppo_masked.py``): its masked softmax, its
player and a seconds-long run end to end."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "ppo_masked.py"


@pytest.fixture(scope="module")
def ppo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ppo_masked", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ppo_masked"] = module  # dataclasses resolve the module by name
    spec.loader.exec_module(module)
    return module


def test_segment_log_softmax_matches_a_masked_softmax(ppo: ModuleType) -> None:
    logits = torch.tensor([0.5, -1.0, 2.0, 3.0, 0.0, 0.0, -2.0])
    offsets = np.array([0, 3, 4, 7])
    logp, entropy = ppo.segment_log_softmax(logits, offsets)
    for g in range(3):
        seg = logits[offsets[g] : offsets[g + 1]]
        # the same distribution as a 3060-way categorical with the illegal actions masked
        padded = torch.full((3060,), -torch.inf)
        padded[: seg.numel()] = seg
        ref = torch.log_softmax(padded, 0)[: seg.numel()]
        torch.testing.assert_close(logp[offsets[g] : offsets[g + 1]], ref)
        p = ref.exp()
        torch.testing.assert_close(entropy[g], -(p * ref).sum())
    assert entropy[1].item() == pytest.approx(0.0)  # one legal play: no choice


def test_player_plays_the_highest_logit_afterstate(ppo: ModuleType) -> None:
    from nard_rl.envs.vector import NardVectorEnv

    env = NardVectorEnv(1, opponent="random")
    agent = ppo.Agent(env.encoding.size, env.single_observation_space.shape[0], 16)
    player = ppo.PPOPlayer(agent, env)
    boards = np.array([START_BOARD, START_BOARD], dtype=np.int8)
    dice = np.array([[3, 1], [6, 6]], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice, False)[:2]
    chosen = player.choose_batch(boards, dice, afters, offsets)
    with torch.no_grad():
        logits = agent.logits(torch.as_tensor(env.encoding.encode(afters, on_roll=False)))
    for i in range(2):
        seg = logits[offsets[i] : offsets[i + 1]]
        assert chosen[i] == int(torch.argmax(seg))


def test_tiny_run_trains_logs_and_evaluates(ppo: ModuleType, tmp_path: Path) -> None:
    args = [
        "--total-steps=128",
        "--num-envs=8",
        "--num-steps=8",
        "--num-minibatches=2",
        "--update-epochs=1",
        "--hidden=16",
        "--eval-games=20",
        "--eval-opponents=random",
        f"--log-dir={tmp_path}",
    ]
    results = ppo.main(args)
    assert set(results) == {"random"}
    assert -3.0 <= results["random"] <= 3.0
    runs = list((tmp_path / "ppo_masked").iterdir())
    assert len(runs) == 1
    saved = torch.load(runs[0] / "agent.pt", weights_only=False)
    assert saved["config"]["total_steps"] == 128
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(runs[0]))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert "ppo_masked/losses/policy_loss" in tags
    assert all(t.startswith("ppo_masked/") for t in tags)


def test_config_flags_reject_bad_batches(ppo: ModuleType) -> None:
    cfg = ppo.parse_config(["--num-envs=4", "--no-anneal-lr"])
    assert cfg.num_envs == 4 and cfg.anneal_lr is False
    with pytest.raises(SystemExit):
        ppo.parse_config(["--num-envs=3", "--num-steps=3", "--num-minibatches=4"])
