"""The single-game environments ``Nard-v0`` and ``NardSelfPlay-v0``."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from reference_movegen import reference_afterstates

import nard_rl.envs as envs
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, Position, apply_steps
from nard_rl.engine.rules import STANDARD
from nard_rl.envs.core import MAX_CANDIDATES
from nard_rl.envs.cube_env import NardCubeEnv
from nard_rl.envs.nard_env import NardEnv
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import NetSpec, save_checkpoint
from nard_rl.players.net import NetworkPlayer


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
    # the mars rule set has no cube (R28): the cube id is checked with standard rules
    rules = "standard" if envs.ENV_IDS[env_id].get("cube") else "mars"
    env = gym.make(env_id, encoding="extended", rules=rules, render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "Dice" in text
    env.close()


def _fresh(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
    )


def test_make_by_module_id_needs_no_import_and_passes_check_env() -> None:
    """``gym.make("nard_rl.envs:ID")`` imports the package itself in a fresh interpreter."""
    code = (
        "import gymnasium\n"
        "from gymnasium.utils.env_checker import check_env\n"
        "for i in ('Nard-v0', 'NardSelfPlay-v0', 'NardCube-v0'):\n"
        "    env = gymnasium.make('nard_rl.envs:' + i)\n"
        "    check_env(env.unwrapped, skip_render_check=True)\n"
        "print('ok')\n"
    )
    out = _fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_ids_are_registered_by_importing_nard_rl_envs_only() -> None:
    """``import nard_rl`` registers nothing and installs no import hook; ``import
    nard_rl.envs`` (named by ``gym.register_envs``) registers every id."""
    code = (
        "import sys\n"
        "hooks = len(sys.meta_path)\n"
        "import nard_rl, gymnasium\n"
        "assert len(sys.meta_path) == hooks, sys.meta_path\n"
        "assert 'Nard-v0' not in gymnasium.registry\n"
        "import nard_rl.envs\n"
        "gymnasium.register_envs(nard_rl.envs)\n"
        "for i in ('Nard-v0', 'NardSelfPlay-v0', 'NardCube-v0'):\n"
        "    obs, info = gymnasium.make(i).reset(seed=0)\n"
        "print('ok')\n"
    )
    out = _fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_gymnasium_imports_with_the_checkout_on_the_path_and_not_installed() -> None:
    """With the installed package hidden (its editable finder dropped) and the checkout on
    ``PYTHONPATH``, ``nard_rl`` is the bare folder, without ``nard_rl.envs``: importing it
    and then Gymnasium must still work (an import hook on Gymnasium once broke this)."""
    root = Path(__file__).resolve().parents[1]
    code = (
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path\n"
        "                    if not str(getattr(f, '__module__', '')).startswith('__editable__')]\n"
        "import nard_rl\n"
        f"assert nard_rl.__file__.startswith({str(root / 'nard_rl')!r}), nard_rl.__file__\n"
        "import gymnasium\n"
        "gymnasium.make('CartPole-v1').reset(seed=0)\n"
        "print('ok')\n"
    )
    out = _fresh(code, PYTHONPATH=str(root))
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
        # observation: the position for the side on roll as the opponent's afterstate (the
        # pre-roll convention: what self-play nets are trained on), then the two dice
        theirs = Position(board.tolist()).flip().board
        np.testing.assert_array_equal(obs[: enc.size], enc.encode(theirs, on_roll=False))
        tail = obs[enc.size :]
        assert tail.shape == (12,)
        assert tail[max(dice) - 1] == 1 and tail[6 + min(dice) - 1] == 1 and tail.sum() == 2
        # the recorded steps replay to the afterstates, each step one die's distance
        # (a bear-off may use a larger die, R19/R20)
        for k in range(n):
            steps = [(int(s[0]), int(s[1])) for s in info["moves"][k] if s[0] >= 0]
            assert 1 <= len(steps) <= (4 if dice[0] == dice[1] else 2)
            assert all(f - t in dice or (t == 0 and f - t <= max(dice)) for f, t in steps)
            _, replayed = apply_steps(board.tolist(), steps)
            assert replayed == tuple(boards[k].tolist()), (board, dice, steps)
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


# -- the cube variant: NardCube-v0 / Nard-v0 with cube=True ------------------------------


def _constant_net(path: Path, roller_logit: float) -> str:
    """A checkpoint whose five outputs ignore the position: the side on roll wins with
    probability sigmoid(roller_logit), gammons practically never, as the shared cube
    advisor reads it.  (The advisor looks one roll ahead: the roller's best afterstate,
    scored by the net for the side that just moved, the roller; so the head's win logit is
    the roller's.)  With a high logit every side on roll looks a sure winner, so its cube
    owner doubles and the receiver drops."""
    win_logit = roller_logit
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (4,), "sigmoid", "standard")
    net = spec.build()
    with torch.no_grad():
        net.head.weight.zero_()
        net.head.bias.copy_(torch.tensor([win_logit, -12.0, -12.0, -12.0, -12.0]))
    save_checkpoint(path, net, spec, games=0, step=0)
    return str(path)


@pytest.fixture(scope="module")
def sure_win_net(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _constant_net(tmp_path_factory.mktemp("nets") / "sure.pt", 6.0)


@pytest.fixture()
def sure_win_player(sure_win_net: str) -> NetworkPlayer:
    """The constant net as a cube opponent whose advisor reads 1-ply only: a net that
    ignores the position contradicts itself from one ply to the next (at 2-ply the other
    side is the roller whose afterstate it scores), so the advisor's refinement of close
    decisions and its blend with the ply below are off."""
    from nard_rl.cube.cubeful import CubeAdvisor
    from nard_rl.players import make_player

    player = make_player(sure_win_net)
    assert isinstance(player, NetworkPlayer)
    player.set_cube_advisor(CubeAdvisor(player.evaluator, ply=1, refine_margin=0.0, blend=()))
    return player


def play_cube_game(
    env: gym.Env,
    rng: np.random.Generator,
    *,
    seed: int | None = None,
    options: dict | None = None,
    cube: int | None = None,
    take: int | None = None,
) -> list:
    """One episode: random legal moves; cube and take steps answered by ``cube``/``take``
    (random when None).  Returns the transitions like ``play_random_game``."""
    obs, info = env.reset(seed=seed, options=options)
    steps = [(obs, 0.0, False, info)]
    while True:
        fixed = {"cube": cube, "take": take}.get(info["phase"])
        n = int(info["action_mask"].sum())
        action = int(rng.integers(n)) if fixed is None else fixed
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        steps.append((obs, reward, terminated, info))
        if terminated:
            return steps


def test_cube_option_builds_the_cube_variant_with_the_same_spaces() -> None:
    plain = gym.make("Nard-v0")
    for env in (NardEnv(cube=True), gym.make("Nard-v0", cube=True).unwrapped):
        assert isinstance(env, NardCubeEnv)
        assert env.observation_space == plain.observation_space
        assert env.action_space == plain.action_space
    assert type(NardEnv()) is NardEnv
    with pytest.raises(ValueError, match="always plays with the cube"):
        NardCubeEnv(cube=False)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponent": "self"},
        {"opponent": "pubeval", "match_length": 5, "score": (3, 1), "crawford": False},
        {"opponent": "NET"},
    ],
)
def test_check_env_passes_for_cube_modes(kwargs: dict, sure_win_net: str) -> None:
    if kwargs["opponent"] == "NET":
        kwargs = {"opponent": sure_win_net}
    env = NardEnv(cube=True, **kwargs)
    check_env(env, skip_render_check=True)  # rendering: the registered ids' test
    env.close()


def test_mars_has_no_cube() -> None:
    """R28: the mars rule set has no doubling cube."""
    with pytest.raises(ValueError, match="R28"):
        NardEnv(rules="mars", cube=True)
    with pytest.raises(ValueError, match="R28"):
        gym.make("NardCube-v0", rules="mars")


def test_cube_same_seed_same_game_and_other_seed_other_game() -> None:
    def trajectory(seed: int) -> list[tuple[bytes, float, str]]:
        env = NardEnv(cube=True, opponent="random")
        steps = play_cube_game(env, np.random.default_rng(1), seed=seed)
        return [(obs.tobytes(), reward, info["phase"]) for obs, reward, _, info in steps]

    first = trajectory(5)
    assert trajectory(5) == first
    assert trajectory(6) != first


def test_cube_step_offers_roll_or_double_before_the_roll() -> None:
    """R23: the agent's turn starts with the cube decision while the cube is centered."""
    enc = get_encoding("tesauro198")
    env = NardEnv(cube=True, opponent="random")
    obs, info = env.reset(seed=0, options={"board": list(START_BOARD)})
    assert info["phase"] == "cube"
    assert info["action_mask"][:2].all() and info["action_mask"].sum() == 2
    assert info["cube_value"] == 1 and info["cube_owner"] == "centered"
    assert not info["dice"].any() and not obs[enc.size :].any()  # not rolled yet
    theirs = Position(START_BOARD).flip().board  # the pre-roll convention
    np.testing.assert_array_equal(obs[: enc.size], enc.encode(theirs, on_roll=False))
    obs, reward, terminated, _, info = env.step(0)  # roll: the move step of that roll
    assert (info["phase"], reward, terminated) == ("move", 0.0, False)
    assert info["dice"].all() and info["action_mask"].sum() == len(info["afterstate_boards"])


@pytest.mark.parametrize(("cube_value", "owner"), [(1, "centered"), (2, "agent"), (8, "agent")])
def test_forced_double_and_drop_scores_the_cube_before_the_double(
    sure_win_player: NetworkPlayer, cube_value: int, owner: str
) -> None:
    """R24: a dropped double ends the game; the doubler wins the stake before the double."""
    env = NardEnv(cube=True, opponent="random", cube_opponent=sure_win_player)
    _, info = env.reset(
        seed=1,
        options={"board": list(START_BOARD), "cube_value": cube_value, "cube_owner": owner},
    )
    assert info["phase"] == "cube" and info["cube_value"] == cube_value
    _, reward, terminated, _, info = env.step(1)  # double; the sure-win net drops
    assert terminated and reward == float(cube_value)
    assert info["end_reason"] == "drop" and info["winner"] == 0
    assert info["points"] == cube_value and info["phase"] == "over"
    assert not info["action_mask"].any()


def test_double_take_doubles_the_stake_and_the_final_reward() -> None:
    """R24/R25: after double/take the game is played for 2 and the taker owns the cube
    (the fixed policy of a random opponent: always take, never double)."""
    env = NardEnv(cube=True, opponent="random")
    rng = np.random.default_rng(7)
    values: set[int] = set()
    for game in range(12):
        opts = {"board": list(START_BOARD)}
        steps = play_cube_game(env, rng, seed=100 + game, options=opts, cube=1, take=0)
        _, _, _, first = steps[1]
        assert first["cube_value"] == 2 and first["cube_owner"] == "opponent"
        *middle, (_, reward, _, info) = steps
        assert all(r == 0.0 for _, r, _, _ in middle)
        # the opponent owns the cube and never redoubles; the agent cannot double
        assert all(i["phase"] == "move" for _, _, _, i in steps[1:-1])
        assert info["cube_value"] == 2 and info["end_reason"] == "bear_off"
        agent_won = info["winner"] == 0
        assert (reward > 0) == agent_won
        assert abs(reward) == 2 * expected_points(info["board"], agent_won, "standard")
        values.add(int(abs(reward)))
    assert len(values) >= 2, f"expected singles and gammons at stake 2, got {values}"


def test_opponent_double_reaches_the_agent_as_a_take_step(sure_win_player: NetworkPlayer) -> None:
    enc = get_encoding("tesauro198")
    env = NardEnv(cube=True, opponent="random", cube_opponent=sure_win_player)
    # the agent moves first; then the opponent is on roll with the cube centered
    _, info = env.reset(seed=3, options={"board": list(START_BOARD), "dice": [6, 5]})
    assert info["phase"] == "move"
    obs, reward, terminated, _, info = env.step(0)
    assert (info["phase"], reward, terminated) == ("take", 0.0, False)
    assert info["cube_value"] == 1 and info["cube_owner"] == "centered"
    assert info["opponent_plies"] == 0  # it doubled before rolling (R23)
    assert info["action_mask"][:2].all() and info["action_mask"].sum() == 2
    # the doubler is on roll: the agent's view is an afterstate (on_roll=False), no dice
    np.testing.assert_array_equal(obs[: enc.size], enc.encode(info["board"], on_roll=False))
    assert not obs[enc.size :].any()
    # take: stake 2, the agent owns the cube, so its next turn starts with a cube step
    _, reward, terminated, _, info = env.step(0)
    assert not terminated and reward == 0.0
    assert info["phase"] == "cube"
    assert (info["cube_value"], info["cube_owner"]) == (2, "agent")
    assert info["opponent_plies"] == 1
    # the same double dropped: the opponent wins the stake before the double
    env.reset(seed=3, options={"board": list(START_BOARD), "dice": [6, 5]})
    env.step(0)
    _, reward, terminated, _, info = env.step(1)
    assert terminated and reward == -1.0
    assert (info["winner"], info["end_reason"]) == (1, "drop")


def test_fixed_policy_opponents_never_double() -> None:
    env = NardEnv(cube=True, opponent="random")
    rng = np.random.default_rng(11)
    for game in range(8):
        steps = play_cube_game(env, rng, seed=200 + game, cube=0)
        assert all(info["phase"] != "take" for _, _, _, info in steps)
        *_, (_, reward, _, info) = steps
        assert info["cube_value"] == 1 and abs(reward) == info["points"]


def test_crawford_game_offers_no_cube_step() -> None:
    """R34: nobody doubles in the Crawford game; post-Crawford the cube is back."""
    env = NardEnv(cube=True, opponent="random", match_length=5, score=(4, 2))
    rng = np.random.default_rng(5)
    for game in range(6):
        steps = play_cube_game(env, rng, seed=300 + game)
        assert all(info["phase"] == "move" for _, _, _, info in steps[:-1])
        assert all(info["crawford"] for _, _, _, info in steps)
        *_, (_, reward, _, info) = steps
        # R33: the agent needs 1 point, the opponent 3
        assert reward == 1.0 if info["winner"] == 0 else reward in (-1.0, -2.0, -3.0)
    _, info = env.reset(seed=0, options={"board": list(START_BOARD), "crawford": False})
    assert info["phase"] == "cube" and not info["crawford"]
    with pytest.raises(ValueError, match="R34"):
        env.reset(options={"score": (2, 2), "crawford": True})


def test_match_play_caps_doubled_games_at_the_points_needed() -> None:
    """R33: at 1-1 in a 3-point match a game at stake 2 scores at most 2."""
    env = NardEnv(cube=True, opponent="random", match_length=3, score=(1, 1))
    rng = np.random.default_rng(9)
    for game in range(8):
        opts = {"board": list(START_BOARD)}
        *_, (_, reward, _, info) = play_cube_game(
            env, rng, seed=400 + game, options=opts, cube=1, take=0
        )
        agent_won = info["winner"] == 0
        uncapped = 2 * expected_points(info["board"], agent_won, "standard")
        assert info["points"] == uncapped
        assert abs(reward) == min(uncapped, 2)
        assert info["match_score"] == ((3, 1) if agent_won else (1, 3))


def test_jacoby_counts_gammons_single_until_the_cube_is_turned() -> None:
    """R32 (money): centered cube, every win is single; once turned, gammons count."""
    env = NardEnv(cube=True, opponent="random", rules=STANDARD.with_options(jacoby=True))
    rng = np.random.default_rng(13)
    turned: set[int] = set()
    for game in range(10):
        *_, (_, reward, _, info) = play_cube_game(env, rng, seed=500 + game, cube=0)
        assert abs(reward) == 1.0
        opts = {"board": list(START_BOARD)}
        *_, (_, reward, _, info) = play_cube_game(
            env, rng, seed=600 + game, options=opts, cube=1, take=0
        )
        agent_won = info["winner"] == 0
        assert abs(reward) == 2 * expected_points(info["board"], agent_won, "standard")
        turned.add(int(abs(reward)))
    assert turned != {2}, "random play at a turned cube should produce a gammon"


def test_cube_invalid_actions_wrap_or_raise() -> None:
    opts = {"board": list(START_BOARD)}
    env = NardEnv(cube=True, opponent="random")
    env.reset(seed=0, options=opts)
    _, _, _, _, info = env.step(7)  # 7 % 2 == 1: double (the random opponent takes)
    assert info["action_wrapped"] and info["cube_value"] == 2
    strict = NardEnv(cube=True, opponent="random", invalid_action="raise")
    strict.reset(seed=0, options=opts)
    with pytest.raises(ValueError, match="not legal in this cube step"):
        strict.step(2)


def test_cube_opponent_must_be_a_network() -> None:
    with pytest.raises(ValueError, match="must be a network"):
        NardEnv(cube=True, opponent="random", cube_opponent="pubeval")
    with pytest.raises(ValueError, match="self-play"):
        NardEnv(cube=True, opponent="self", cube_opponent="default")


def test_self_play_cube_rewards_the_acting_side() -> None:
    """Self-play: the agent doubles and answers for both seats; a drop costs the dropper."""
    env = NardEnv(cube=True, opponent="self")
    _, info = env.reset(seed=2, options={"board": list(START_BOARD)})
    assert (info["phase"], info["seat"]) == ("cube", 0)
    _, _, _, _, info = env.step(1)
    assert (info["phase"], info["seat"]) == ("take", 1)
    _, reward, terminated, _, info = env.step(1)
    assert terminated and reward == -1.0 and info["winner"] == 0


# -- input validation and the pre-roll convention ---------------------------------------


def test_reset_refuses_boards_that_are_no_position_by_name() -> None:
    """Boards from outside are validated before they reach the compiled generator."""
    env = NardEnv(opponent="random")
    bad = list(START_BOARD)
    bad[6] = 40  # 40 checkers on a point: would index past the generator's tables
    with pytest.raises(ValueError, match="the mover has 50 checkers"):
        env.reset(seed=0, options={"board": bad})
    with pytest.raises(ValueError, match="26"):
        env.reset(seed=0, options={"board": [0] * 25})
    with pytest.raises(ValueError, match="dice"):
        env.reset(seed=0, options={"board": list(START_BOARD), "dice": [7, 1]})
    vec = gym.make_vec("NardSelfPlay-v0", num_envs=2)
    with pytest.raises(ValueError, match="board 1: the opponent has 16 checkers"):
        other = list(START_BOARD)
        other[1] = -3
        vec.reset(seed=0, options={"boards": [list(START_BOARD), other]})
    env.reset(seed=0, options={"board": list(START_BOARD)})  # a valid board still works


@pytest.mark.parametrize("make", [NardEnv, NardCubeEnv], ids=["cubeless", "cube"])
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"board": [2.5, *START_BOARD[1:]]}, "whole numbers"),  # was truncated to 2
        (
            {"board": [float(v) for v in START_BOARD[:25]] + [300.0]},
            "315 checkers",
        ),  # int8 wrapped it
        ({"board": [True, *START_BOARD[1:]]}, "integers"),  # was read as 1
        ({"board": list(START_BOARD), "dice": [3.7, 1]}, "dice"),  # was a 3-1
        ({"board": list(START_BOARD), "dice": [True, 1]}, "dice"),
        ({"board": list(START_BOARD), "dice": [3, 1, 2]}, "dice"),
        ({"board": list(START_BOARD), "dice": [[3], 1]}, "dice"),
        ({"dice": [3, 1]}, "needs a board"),  # would be ignored: the opening draws its roll
        ({"score": (1.9, 0)}, "score"),
        ({"score": 3}, "score"),
        ({"bord": list(START_BOARD)}, "unknown reset option"),
    ],
)
def test_reset_validates_raw_options_before_any_cast(make: type, options: dict, match: str) -> None:
    env = make(opponent="random", match_length=5) if "score" in options else make()
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=options)


def test_cube_reset_validates_cube_options() -> None:
    env = NardCubeEnv()
    for bad in (3, 2.0, True, 128):
        with pytest.raises(ValueError, match="cube value"):
            env.reset(seed=0, options={"cube_value": bad, "cube_owner": "agent"})
    with pytest.raises(ValueError, match="crawford"):
        NardCubeEnv(match_length=5).reset(seed=0, options={"score": (4, 0), "crawford": 1})
    env.reset(seed=0, options={"cube_value": 4, "cube_owner": "agent"})
    assert env.game.cube_value == 4 and env.game.cube_owner == 0


def test_reset_accepts_whole_valued_boards_and_plays_the_given_dice() -> None:
    """What the vector environment accepts, the single one does: whole floats, numpy ints."""
    env = NardEnv()
    _, info = env.reset(
        seed=0, options={"board": np.asarray(START_BOARD, dtype=float), "dice": np.array([6, 5])}
    )
    assert info["board"].tolist() == list(START_BOARD)
    assert sorted(info["dice"].tolist()) == [5, 6]


def test_observation_reads_as_the_nets_pre_roll_input(tmp_path: Path) -> None:
    """With a net whose output depends on the position, the observation fed to it gives
    exactly the players' pre-roll probabilities (after the swap), and not what the
    ``on_roll=True`` encoding of the same board gives."""
    from nard_rl.engine.rules import swap_sides

    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (16,), "sigmoid", "standard")
    torch.manual_seed(7)
    net = spec.build()
    path = tmp_path / "varied.pt"
    save_checkpoint(path, net, spec, games=0, step=0)
    player = NetworkPlayer.from_checkpoint(path)
    env = NardEnv(opponent="random", encoding="tesauro198")
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    seen = []
    for _ in range(12):
        with torch.no_grad():
            probs = net(torch.from_numpy(obs[None, : enc.size]))[0].numpy()
            on_roll = net(torch.from_numpy(enc.encode(info["board"], on_roll=True)[None]))
        expected = player.pre_roll_probabilities(info["board"][None])[0]
        np.testing.assert_allclose(swap_sides(probs), expected, atol=1e-6)
        assert np.abs(on_roll[0].numpy() - probs).max() > 1e-4
        seen.append(float(probs[0]))
        obs, _, terminated, _, info = env.step(int(rng.integers(info["action_mask"].sum())))
        if terminated:
            obs, info = env.reset()
    assert np.ptp(seen) > 1e-3  # the net's output really depends on the position
