"""The vectorised environment ``NardVectorEnv`` and ``segment_argmax``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from reference_movegen import reference_afterstates

import nard_rl.envs  # noqa: F401  (registers the ids)
from nard_rl.engine.position import START_BOARD, Position
from nard_rl.envs.core import MAX_CANDIDATES, gather_slices
from nard_rl.envs.vector import NardVectorEnv, segment_argmax
from nard_rl.nets.encoding import get_encoding


def random_actions(infos: dict, rng: np.random.Generator) -> np.ndarray:
    counts = np.diff(infos["offsets"])
    return (rng.random(counts.shape[0]) * counts).astype(np.int64)


def test_spaces_follow_gymnasium_vector_conventions() -> None:
    env = NardVectorEnv(8, encoding="extended")
    assert env.num_envs == 8
    assert env.single_observation_space.shape == (225 + 12,)
    assert env.observation_space.shape == (8, 225 + 12)
    assert env.single_action_space == gym.spaces.Discrete(MAX_CANDIDATES)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (8, 237) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert infos["afterstates"].shape == (int(infos["offsets"][-1]), 225)


def test_make_vec_uses_the_vector_entry_point() -> None:
    env = gym.make_vec("NardSelfPlay-v0", num_envs=4)
    assert isinstance(env.unwrapped, NardVectorEnv)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (4, 210)
    env.close()


@pytest.mark.parametrize("opponent", ["self", "random"])
def test_each_lane_offers_exactly_the_legal_plays_of_its_position(opponent: str) -> None:
    """Every lane's slice matches an independent generator, across passes and restarts."""
    enc = get_encoding("tesauro198")
    env = NardVectorEnv(12, encoding="tesauro198", opponent=opponent)
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=3)
    passes = 0
    for _ in range(80):
        off = infos["offsets"]
        assert (np.diff(off) >= 1).all()  # R16: passes are automatic, never an empty list
        for i in range(env.num_envs):
            board = tuple(infos["boards"][i].tolist())
            d1, d2 = (int(d) for d in infos["dice"][i])
            rows = infos["afterstate_boards"][off[i] : off[i + 1]]
            assert sorted(map(tuple, rows.tolist())) == reference_afterstates(board, d1, d2)
            theirs = Position(board).flip().board  # the pre-roll convention
            np.testing.assert_array_equal(obs[i, : enc.size], enc.encode(theirs, on_roll=False))
        np.testing.assert_array_equal(
            infos["afterstates"], enc.encode(infos["afterstate_boards"], on_roll=False)
        )
        obs, _, _, _, infos = env.step(random_actions(infos, rng))
        passes += int(infos["passes"].sum())
    assert passes > 0  # the rounds that splice passed games back in were exercised


def test_autoreset_restarts_finished_games_in_the_same_step() -> None:
    env = NardVectorEnv(16)
    rng = np.random.default_rng(1)
    _, infos = env.reset(seed=2)
    finished = np.zeros(16, dtype=bool)
    for _ in range(400):
        boards_before = infos["afterstate_boards"]
        off = infos["offsets"]
        actions = random_actions(infos, rng)
        chosen = boards_before[off[:-1] + actions]
        _, rewards, terms, truncs, infos = env.step(actions)
        assert not truncs.any()
        np.testing.assert_array_equal(terms, infos["winner"] >= 0)
        np.testing.assert_array_equal(rewards, infos["points"])  # to the mover, the winner
        for i in np.flatnonzero(terms):
            # the chosen afterstate bore off the mover's last checker (R21) ...
            assert Position(chosen[i].tolist()).checkers_off()[0] == 15
            # ... and the lane already holds a new game at its opening (R4, R5)
            assert tuple(infos["boards"][i].tolist()) == START_BOARD
            assert infos["dice"][i, 0] != infos["dice"][i, 1]
        assert (rewards[~terms] == 0).all()
        finished |= terms
        if finished.all():
            break
    assert finished.all()


def test_rewards_over_many_random_games_standard_and_mars() -> None:
    """R25 (1, 2, 3) and R28 (1, 2) values, checked from the final afterstates."""
    for rules, values in (("standard", {1, 2, 3}), ("mars", {1, 2})):
        env = NardVectorEnv(64, rules=rules)
        rng = np.random.default_rng(5)
        _, infos = env.reset(seed=5)
        seen: dict[int, int] = {}
        while sum(seen.values()) < 300:
            off = infos["offsets"]
            actions = random_actions(infos, rng)
            chosen = infos["afterstate_boards"][off[:-1] + actions]
            _, rewards, terms, _, infos = env.step(actions)
            for i in np.flatnonzero(terms):
                b = chosen[i]
                loser_off = Position(b.tolist()).checkers_off()[1]
                loser_back = b[0] < 0 or (b[1:7] < 0).any()
                if loser_off:
                    expected = 1
                elif rules == "mars":
                    expected = 2
                else:
                    expected = 3 if loser_back else 2
                assert rewards[i] == expected
                seen[expected] = seen.get(expected, 0) + 1
        assert set(seen) == values


def test_opponent_on_one_side() -> None:
    """Against a player the agent always holds seat 0 and rewards carry its sign."""
    env = NardVectorEnv(32, opponent="random")
    rng = np.random.default_rng(6)
    _, infos = env.reset(seed=6)
    signs: set[float] = set()
    for _ in range(300):
        assert (infos["seat"] == 0).all()
        _, rewards, terms, _, infos = env.step(random_actions(infos, rng))
        np.testing.assert_array_equal(terms, infos["winner"] >= 0)
        for i in np.flatnonzero(terms):
            sign = 1.0 if infos["winner"][i] == 0 else -1.0
            assert rewards[i] == sign * infos["points"][i]
            signs.add(sign)
        assert (infos["opponent_plies"] >= 0).all()
    assert signs == {1.0, -1.0}


def test_same_seed_same_games() -> None:
    def run(seed: int) -> list[bytes]:
        env = NardVectorEnv(8, opponent="random")
        rng = np.random.default_rng(0)
        obs, infos = env.reset(seed=seed)
        out = [obs.tobytes()]
        for _ in range(30):
            obs, _, _, _, infos = env.step(random_actions(infos, rng))
            out.append(obs.tobytes())
        return out

    assert run(9) == run(9)
    assert run(9) != run(10)


def test_invalid_actions() -> None:
    env = NardVectorEnv(4, invalid_action="raise")
    _, infos = env.reset(seed=0)
    bad = np.diff(infos["offsets"])  # one past each game's last index
    with pytest.raises(ValueError, match="not a legal play"):
        env.step(bad)
    wrap = NardVectorEnv(4)
    _, infos = wrap.reset(seed=0)
    _, _, _, _, infos = wrap.step(np.diff(infos["offsets"]) + 1)
    assert infos["action_wrapped"].all()


def test_td_style_greedy_step_with_segment_argmax() -> None:
    """The intended loop: score all rows, pick each game's best, step."""
    env = NardVectorEnv(16)
    weights = np.random.default_rng(0).normal(size=env.encoding.size).astype(np.float32)
    _, infos = env.reset(seed=0)
    for _ in range(20):
        values = infos["afterstates"] @ weights
        best = segment_argmax(values, infos["offsets"])
        off = infos["offsets"]
        for i in range(16):
            seg = values[off[i] : off[i + 1]]
            assert best[i] == int(np.argmax(seg))
        _, _, _, _, infos = env.step(best)


def test_segment_argmax_matches_a_plain_loop() -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 6, size=200)
    offsets = np.zeros(201, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    values = rng.integers(0, 4, size=int(offsets[-1])).astype(np.float32)  # many ties
    got = segment_argmax(values, offsets)
    for i in range(200):
        seg = values[offsets[i] : offsets[i + 1]]
        assert got[i] == (int(np.argmax(seg)) if seg.size else -1)


def test_gather_slices_keeps_the_chosen_games_in_order() -> None:
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 5, size=30)
    offsets = np.zeros(31, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    rows = rng.integers(-5, 5, size=(int(offsets[-1]), 26)).astype(np.int8)
    idx = np.array([3, 0, 17, 29, 3])
    sub, sub_off = gather_slices(rows, offsets, idx)
    for j, i in enumerate(idx):
        np.testing.assert_array_equal(
            sub[sub_off[j] : sub_off[j + 1]], rows[offsets[i] : offsets[i + 1]]
        )


@pytest.mark.parametrize("name", ["tesauro198", "extended"])
def test_observation_box_holds_extreme_positions(name: str) -> None:
    """The Box bounds hold for stacks of 15, a full bar and everything borne off."""
    env = NardVectorEnv(1, encoding=name)
    space = env.single_observation_space
    extremes = []
    for spot in (1, 6, 13, 24, 25):
        b = np.zeros(26, dtype=np.int8)
        b[spot] = 15
        b[0] = -15  # the opponent's 15 on its bar
        extremes.append(b)
    b = np.zeros(26, dtype=np.int8)
    b[1] = 1
    b[24] = -15  # mover nearly off, the opponent's stack on the mover's 24 point
    extremes.append(b)
    enc = get_encoding(name)
    for on_roll in (False, True):
        x = enc.encode(np.array(extremes), on_roll=on_roll)
        obs = np.concatenate([x, np.zeros((x.shape[0], 12), dtype=np.float32)], axis=1)
        for row in obs:
            assert space.contains(row)
