"""The PettingZoo AEC view of Nard (``nard_rl.envs.pettingzoo``): PettingZoo's own API and
seed tests, and whole random games checked against the engine's ``Game`` replaying them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test

from nard_rl.engine.game import Game, Phase
from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.position import START_BOARD
from nard_rl.envs.core import MAX_CANDIDATES
from nard_rl.envs.pettingzoo import AGENTS, CUBE_ACTIONS, env, raw_cube_env, raw_env
from nard_rl.nets.encoding import get_encoding


def test_api_test_passes() -> None:
    api_test(env(), num_cycles=1000)


def test_seed_test_passes() -> None:
    seed_test(env, num_cycles=200)


def _no_play_roll(board: tuple[int, ...], rules_waste: bool) -> tuple[int, int]:
    """A roll the side to move cannot play (the environment passed such a roll, R16)."""
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            afters, _ = legal_afterstates(np.asarray(board, dtype=np.int8), d1, d2, rules_waste)
            if afters.shape[0] == 0:
                return d1, d2
    raise AssertionError("the environment passed a turn that had a legal play")


def _play_random_game(rules: str, seed: int) -> tuple[dict[str, float], Game]:
    """A random-vs-random game through ``raw_env``, replayed move by move in the engine's
    ``Game`` (which checks every play and scores the end by itself)."""
    e = raw_env(rules=rules)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game: Game | None = None
    encoding = get_encoding("tesauro198")
    totals = dict.fromkeys(AGENTS, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        seat = AGENTS.index(agent)
        board = tuple(int(v) for v in info["board"])
        if game is None:  # the opening's first mover, from its own view
            assert sorted(abs(v) for v in board) == sorted(abs(v) for v in START_BOARD)
            game = Game(rules, start=board, player_on_roll=seat)
        if game.player_on_roll != seat:  # the other side passed a roll (R16)
            game.roll(_no_play_roll(game.position.board, game.rules.waste_rule))
        assert game.player_on_roll == seat
        assert game.position.board == board
        game.roll(tuple(int(d) for d in info["dice"]))
        assert game.phase is Phase.MOVE
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        assert legal.tolist() == list(range(info["afterstate_boards"].shape[0]))
        assert len(game.legal_plays()) == legal.size
        np.testing.assert_array_equal(
            obs["observation"][: encoding.size],
            encoding.encode_pre_roll(np.asarray(board, dtype=np.int8)[None, :])[0],
        )
        action = int(rng.choice(legal))
        game.play(info["afterstate_boards"][action].tolist())
        e.step(action)
    assert game is not None and game.result is not None
    return totals, game


@pytest.mark.parametrize(("rules", "seed"), [("standard", 1), ("standard", 7), ("mars", 3)])
def test_random_game_rewards_match_the_engine(rules: str, seed: int) -> None:
    totals, game = _play_random_game(rules, seed)
    result = game.result
    assert result is not None
    winner = AGENTS[result.winner]
    loser = AGENTS[1 - result.winner]
    assert totals[winner] == result.points
    assert totals[loser] == -result.points
    assert sum(totals.values()) == 0
    assert result.points in ((1, 2) if rules == "mars" else (1, 2, 3))


def test_waiting_agent_gets_no_dice_and_no_legal_action() -> None:
    e = raw_env()
    e.reset(seed=5)
    mover = e.agent_selection
    other = AGENTS[1 - AGENTS.index(mover)]
    size = get_encoding("tesauro198").size
    mine = e.observe(mover)
    theirs = e.observe(other)
    assert mine["action_mask"].sum() == e.infos[mover]["afterstate_boards"].shape[0]
    assert theirs["action_mask"].sum() == 0
    assert mine["observation"][size:].sum() == 2  # two one-hot dice
    assert theirs["observation"][size:].sum() == 0
    assert e.infos[other]["afterstate_boards"].shape == (0, 26)
    assert mine["action_mask"].shape == (MAX_CANDIDATES,)


def test_same_seed_same_game_other_seed_other_game() -> None:
    def trajectory(seed: int) -> list[tuple[str, tuple[int, ...]]]:
        e = raw_env()
        e.reset(seed=seed)
        out = []
        for agent in e.agent_iter(max_iter=60):
            _, _, term, _, info = e.last()
            if term:
                e.step(None)
                continue
            out.append((agent, tuple(info["board"].tolist()) + tuple(info["dice"].tolist())))
            e.step(0)
        return out

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)


def test_illegal_action_raises_in_raw_env_and_ends_the_game_in_env() -> None:
    e = raw_env()
    e.reset(seed=2)
    n = int(e.observe(e.agent_selection)["action_mask"].sum())
    with pytest.raises(ValueError, match="not a legal play"):
        e.step(n)
    w = env()
    w.reset(seed=2)
    cheat = w.agent_selection
    w.step(n)  # PettingZoo logs the illegal move and ends the game
    assert w.terminations[cheat]
    assert w.rewards[cheat] == -1


def test_given_position_and_render() -> None:
    e = raw_env(render_mode="ansi")
    board = [0] * 26
    board[1], board[24] = 15, -15  # bear-off race: player_1 on roll with 6-6 bears off 4
    e.reset(options={"board": board, "dice": [6, 6], "agent": "player_1"})
    assert e.agent_selection == "player_1"
    text = e.render()
    assert "player_1 to move, dice 6-6" in text
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="human")


def test_cube_env_passes_the_api_and_seed_tests() -> None:
    api_test(env(cube=True), num_cycles=1000)
    seed_test(lambda: env(cube=True), num_cycles=200)


def _to_first_cube_step(e: raw_cube_env) -> str:
    """Play the opening move; the other agent then may double (cube centered)."""
    e.reset(seed=4)
    opener = e.agent_selection
    assert e.infos[opener]["phase"] == "move"
    e.step(0)
    doubler = e.agent_selection
    assert doubler != opener and e.infos[doubler]["phase"] == "cube"
    assert e.observe(doubler)["action_mask"].tolist()[:3] == [1, 1, 0]
    assert e.infos[opener]["phase"] == "wait"
    return doubler


def test_cube_double_and_drop_scores_the_cube_before_the_double() -> None:
    e = raw_cube_env()
    doubler = _to_first_cube_step(e)
    e.step(CUBE_ACTIONS["cube"].index("double"))
    taker = e.agent_selection
    assert taker != doubler and e.infos[taker]["phase"] == "take"
    e.step(CUBE_ACTIONS["take"].index("drop"))
    assert e.terminations[doubler] and e.terminations[taker]
    assert e.rewards == {doubler: 1.0, taker: -1.0}


def test_cube_take_hands_the_cube_over_and_the_doubler_plays_on() -> None:
    e = raw_cube_env()
    doubler = _to_first_cube_step(e)
    e.step(1)
    taker = e.agent_selection
    e.step(0)  # take
    assert e.agent_selection == doubler
    assert e.infos[doubler]["phase"] == "move"  # may not redouble: the taker owns it
    assert e.infos[doubler]["cube_value"] == 2 and e.infos[doubler]["cube_owner"] == "opponent"
    assert e.infos[taker]["cube_owner"] == "me"
    assert e.observe(doubler)["action_mask"].sum() == e.infos[doubler]["afterstate_boards"].shape[0]


def test_cube_random_games_pay_result_times_cube() -> None:
    rng = np.random.default_rng(0)
    e = raw_cube_env()
    for seed in range(5):
        e.reset(seed=seed)
        totals = dict.fromkeys(AGENTS, 0.0)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            totals[agent] += reward
            if term or trunc:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        result = e.match.result
        assert totals[AGENTS[result.winner]] == result.points
        assert sum(totals.values()) == 0
    with pytest.raises(ValueError, match="no doubling cube"):
        raw_cube_env(rules="mars")


def test_reset_options_are_validated_before_any_cast() -> None:
    from nard_rl.engine.position import PositionError

    env = raw_env()
    start = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    with pytest.raises((PositionError, ValueError)):
        env.reset(options={"board": [float(v) + 0.5 for v in start]})
    with pytest.raises(ValueError, match="dice"):
        env.reset(options={"board": start, "dice": [2.5, 1]})
    env.reset(options={"board": start, "dice": [3, 1]})
    assert env.observe(env.agent_selection)["action_mask"].sum() == 16
