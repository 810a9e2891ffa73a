"""The single-game environments ``Nard-v0`` and ``NardSelfPlay-v0``."""

from __future__ import annotations

import itertools
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from reference_movegen import reference_afterstates

import envs
from envs.core import MAX_CANDIDATES
from envs.nard_env import NardEnv
from nard_rl.encoding import get_encoding
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, Position


def play_random_game(env: gym.Env, rng: np.random.Generator, seed: int | None = None) -> list:
    """Play one episode with uniformly random legal actions; return the transitions."""
    obs, info = env.reset(seed=seed)
    steps = [(obs, 0.0, False, info)]
    while True:
        n = int(info["action_mask"].sum())
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(n)))
        assert not truncated
        steps.append((obs, reward, terminated, info))
        if terminated:
            return steps


def expected_points(final_agent_view: np.ndarray, agent_won: bool, rules: str) -> int:
    """Value of the game from the final board, with the engine's Position facts only.

    R25: gammon when the loser has borne off nothing, backgammon when the loser also has
    a checker on the bar or in the winner's home board; R28 (mars): 2 for a gammon, no x3.
    """
    pos = Position(final_agent_view.tolist())
    board = pos.board if agent_won else pos.flip().board  # from the winner's view
    winner_view = Position(board)
    off_winner, off_loser = winner_view.checkers_off()
    assert off_winner == 15
    if off_loser > 0:
        return 1
    loser_back = board[0] < 0 or any(board[p] < 0 for p in range(1, 7))
    if rules == "mars":
        return 2
    return 3 if loser_back else 2


@pytest.mark.parametrize("env_id", sorted(envs.ENV_IDS))
def test_check_env_passes_for_every_registered_id(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", sorted(envs.ENV_IDS))
def test_check_env_with_other_options(env_id: str) -> None:
    env = gym.make(env_id, encoding="extended", rules="mars", render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "Dice" in text
    env.close()


def test_registration_needs_only_importing_nard_rl() -> None:
    """A fresh interpreter that imports nothing but nard_rl can make every id."""
    code = (
        "import gymnasium, nard_rl\n"
        "for i in ('Nard-v0', 'NardSelfPlay-v0'):\n"
        "    env = gymnasium.make(i)\n"
        "    obs, info = env.reset(seed=0)\n"
        "    assert obs.shape == env.observation_space.shape\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_same_seed_same_game_and_other_seed_other_game() -> None:
    def trajectory(seed: int) -> list[tuple[bytes, float]]:
        env = NardEnv(opponent="random")
        steps = play_random_game(env, np.random.default_rng(1), seed=seed)
        return [(obs.tobytes(), reward) for obs, reward, _, _ in steps]

    first = trajectory(5)
    assert trajectory(5) == first
    assert trajectory(6) != first


def test_observation_layout_and_action_mask_match_the_legal_plays() -> None:
    """Mask, candidate boards and encodings agree with an independent generator (R17)."""
    enc = get_encoding("tesauro198")
    env = NardEnv(opponent="random", encoding="tesauro198")
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=11)
    for _ in range(60):
        board, dice = info["board"], info["dice"]
        n = int(info["action_mask"].sum())
        assert info["action_mask"][:n].all() and not info["action_mask"][n:].any()
        boards = info["afterstate_boards"]
        assert boards.shape == (n, 26)
        ref = reference_afterstates(tuple(board.tolist()), int(dice[0]), int(dice[1]))
        assert sorted(map(tuple, boards.tolist())) == ref
        assert info["afterstates"].shape == (MAX_CANDIDATES, enc.size)
        np.testing.assert_array_equal(info["afterstates"][:n], enc.encode(boards, on_roll=False))
        assert not info["afterstates"][n:].any()
        # observation: the position for the side on roll, then the two one-hot dice
        np.testing.assert_array_equal(obs[: enc.size], enc.encode(board, on_roll=True))
        tail = obs[enc.size :]
        assert tail.shape == (12,)
        assert tail[max(dice) - 1] == 1 and tail[6 + min(dice) - 1] == 1 and tail.sum() == 2
        # the recorded steps replay to the afterstates
        for k in range(n):
            steps = [tuple(s) for s in info["moves"][k] if s[0] >= 0]
            assert 1 <= len(steps) <= 4
        obs, _, terminated, _, info = env.step(int(rng.integers(n)))
        if terminated:
            obs, info = env.reset()


@pytest.mark.parametrize(("rules", "values"), [("standard", {1, 2, 3}), ("mars", {1, 2})])
def test_rewards_at_game_end_random_vs_random(rules: str, values: set[int]) -> None:
    env = NardEnv(opponent="random", rules=rules)
    rng = np.random.default_rng(0)
    seen: set[int] = set()
    signs: set[float] = set()
    for game in range(50):
        steps = play_random_game(env, rng, seed=game if game == 0 else None)
        *middle, (_, reward, terminated, info) = steps
        assert all(r == 0.0 for _, r, _, _ in middle)
        assert terminated and reward != 0.0
        agent_won = info["winner"] == 0
        assert (reward > 0) == agent_won
        assert abs(reward) == info["points"]
        assert abs(reward) == expected_points(info["board"], agent_won, rules)
        seen.add(int(abs(reward)))
        signs.add(np.sign(reward))
        assert not info["action_mask"].any()
    assert seen <= values
    assert seen == values, f"random play should produce every result value, got {seen}"
    assert signs == {1.0, -1.0}


def test_self_play_alternates_sides_and_rewards_the_mover() -> None:
    env = NardEnv(opponent="self")
    rng = np.random.default_rng(2)
    steps = play_random_game(env, rng, seed=3)
    infos = [info for _, _, terminated, info in steps if not terminated]
    for prev, info in itertools.pairwise(infos):
        # the seat toggles each ply, and once more for each turn passed (R16)
        assert info["seat"] == prev["seat"] ^ ((1 + info["passes"]) % 2)
    *_, (_, reward, terminated, info) = steps
    assert terminated and reward == info["points"] > 0
    assert info["winner"] == infos[-1]["seat"]


def test_match_play_caps_the_points_at_what_the_winner_needs() -> None:
    """R33: at 2-2 in a 3-point match every game is worth exactly one point."""
    env = NardEnv(opponent="random", match_length=3, score=(2, 2))
    rng = np.random.default_rng(4)
    for game in range(15):
        *_, (_, reward, _, info) = play_random_game(env, rng, seed=game if game == 0 else None)
        assert abs(reward) == 1.0
        assert info["match_score"] in ((3, 2), (2, 3))


def test_rolls_without_a_play_pass_automatically() -> None:
    """R16: the agent on the bar against a closed board never sees that roll."""
    board = [0] * 26
    board[25] = 1  # the agent on the bar
    board[6] = 14
    for p in range(19, 25):
        board[p] = -2  # the opponent's closed home board
    board[0] = 0
    env = NardEnv(opponent="random")
    _, info = env.reset(seed=0, options={"board": board, "dice": [6, 5]})
    assert info["passes"] >= 1 and info["opponent_plies"] >= 1
    assert info["action_mask"].sum() >= 1


def test_invalid_actions_wrap_by_default_or_raise() -> None:
    env = NardEnv(opponent="random")
    _, info = env.reset(seed=0)
    n = int(info["action_mask"].sum())
    _, _, _, _, info = env.step(n + 3)
    assert info["action_wrapped"]
    strict = NardEnv(opponent="random", invalid_action="raise")
    _, info = strict.reset(seed=0)
    n = int(info["action_mask"].sum())
    with pytest.raises(ValueError, match="not a legal play"):
        strict.step(n)


def test_start_state_is_the_opening() -> None:
    """R4/R5: the opening position and a non-double roll (the opponent may move first)."""
    env = NardEnv(opponent="self")
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert tuple(info["board"].tolist()) == START_BOARD
        assert info["dice"][0] != info["dice"][1]


def test_capacity_is_the_proven_bound_and_never_exceeded() -> None:
    """MAX_CANDIDATES covers every roll of a large sample of varied positions, including
    the most prolific board the annealing search found."""
    # the bound's count: ways to share 4 steps of a double among 15 labelled checkers
    shares = sum(1 for _ in itertools.combinations_with_replacement(range(15), 4))
    assert shares == MAX_CANDIDATES
    rng = np.random.default_rng(0)
    n = 20_000
    # the mover's 15 checkers scattered over the points (rarely the bar), a few opponent
    # blots or points on other points: the shape that gives doubles the most plays
    spots = rng.choice(26, size=(n, 15), p=np.r_[0.0, np.full(24, 0.99 / 24), 0.01])
    boards = np.zeros((n, 26), dtype=np.int8)
    np.add.at(boards, (np.repeat(np.arange(n), 15), spots.ravel()), 1)
    opp = rng.integers(1, 25, size=(n, 4))
    there = np.take_along_axis(boards, opp, axis=1)
    placed = np.where(there == 0, -rng.integers(1, 3, size=(n, 4)), there)
    np.put_along_axis(boards, opp, placed.astype(np.int8), axis=1)
    assert (np.where(boards > 0, boards, 0).sum(axis=1) == 15).all()
    dice = rng.integers(1, 7, size=(n, 2)).astype(np.int8)
    dice[: n // 2, 1] = dice[: n // 2, 0]  # half of them doubles, which give the most plays
    best = np.array(
        [[0, 0, 0, 1, 1, -1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, -1, 1, 1, 0, 1, 1, -1, 1, 1, 0]]
    )
    boards = np.vstack([boards, best]).astype(np.int8)
    dice = np.vstack([dice, [[1, 1]]]).astype(np.int8)
    for mars in (False, True):
        _, offsets = legal_afterstates_batch(boards, dice, mars)
        counts = np.diff(offsets)
        assert counts.max() <= MAX_CANDIDATES
        assert counts[:-1].max() > 500  # the sample does reach long candidate lists
        assert counts[-1] > 2000  # the searched board really is prolific
