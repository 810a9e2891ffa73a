"""Lookahead search: n-ply values against brute force, filters, cache, batching, specs.

Most tests run the search over a small deterministic evaluator (a fixed random linear
map of the board through a sigmoid), so they are fast and their numbers do not depend on
the shipped net; ties between candidates are then practically impossible, so the
brute-force choice is unambiguous.  The brute force uses the independent reference move
generator of the tests, one roll and one candidate at a time.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_movegen import (
    ALL_ROLLS,
    START,
    board_of,
    flip,
    random_game_positions,
    reference_afterstates,
)

from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules, swap_sides
from nard_rl.nets.evaluator import exact_finished
from nard_rl.players import make_player
from nard_rl.players.base import PlayerSpec, parse_player_spec
from nard_rl.search.nply import (
    _REPLIES_PER_ROLL,
    DEFAULT_BLEND,
    DEFAULT_MAX_ROWS,
    ROLL_WEIGHTS,
    ROLLS,
    MoveFilter,
    Search,
    SearchPlayer,
    filter_mask,
)


class LinearEvaluator:
    """Deterministic stand-in for a net: sigmoid of a fixed random linear map (finished
    games exact, as the Evaluator protocol asks)."""

    def __init__(self, seed: int = 7, rules: RuleSet | str = "standard") -> None:
        rng = np.random.default_rng(seed)
        self.w = rng.normal(0.0, 0.25, size=(26, 5))
        self.b = rng.normal(0.0, 0.5, size=5)
        self.rules = get_rules(rules)
        self.calls = 0

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        self.calls += 1
        arr = np.asarray(afterstates, dtype=np.int8).reshape(-1, 26)
        done, exact = exact_finished(arr)
        p = 1.0 / (1.0 + np.exp(-(arr.astype(np.float64) @ self.w + self.b)))
        return np.where(done[:, None], exact, p).astype(np.float32)


def money(probs: np.ndarray) -> np.ndarray:
    return np.asarray(cubeless_equity(probs, "standard"))


def brute_ply(ev: LinearEvaluator, after: tuple[int, ...], ply: int) -> np.ndarray:
    """n-ply of one afterstate by the definition, one roll and one candidate at a time."""
    arr = np.array(after, dtype=np.int8)
    done, _ = exact_finished(arr[None])
    if ply == 0 or done[0]:
        return np.asarray(ev.probabilities(arr[None])[0], dtype=np.float64)
    opp = flip(after)
    total = np.zeros(5)
    for (d1, d2), weight in zip(ALL_ROLLS, ROLL_WEIGHTS, strict=True):
        replies = reference_afterstates(opp, d1, d2) or [opp]
        values = [money(ev.probabilities(np.array([r], dtype=np.int8))[0]) for r in replies]
        best = replies[int(np.argmax(values))]
        total += weight * swap_sides(brute_ply(ev, best, ply - 1))
    return total


def sample_afterstates(count: int, seed: int) -> list[tuple[int, ...]]:
    """Afterstates met in random play, plus a bear-off, a closed-out blot and a finish."""
    out = []
    for board, roll in random_game_positions(seed=seed, count=count):
        plays = reference_afterstates(board, *roll)
        if plays:
            out.append(plays[len(plays) // 2])
    # opponent on the bar against a closed board: most of its rolls have no play (R16)
    out.append(tuple(board_of({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}, {24: 14}, opp_bar=1)))
    out.append(tuple(board_of({1: 3, 2: 2}, {19: 4, 20: 5})))  # a race in the bear-off
    out.append(tuple(board_of({}, {19: 15})))  # mover has borne off all: a gammon win
    return out


@pytest.fixture(scope="module")
def ev() -> LinearEvaluator:
    return LinearEvaluator()


@pytest.fixture(scope="module")
def afters() -> np.ndarray:
    return np.array(sample_afterstates(6, seed=11), dtype=np.int8)


def test_one_ply_equals_brute_force_per_roll(ev: LinearEvaluator, afters: np.ndarray) -> None:
    got = Search(ev, cache_size=0).afterstate_probs(afters, ply=1)
    want = np.array([brute_ply(ev, tuple(a), 1) for a in afters])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert got[-1].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]  # finished: exact, no lookahead


def test_two_ply_equals_brute_force(ev: LinearEvaluator) -> None:
    a = np.array(sample_afterstates(1, seed=3)[:1], dtype=np.int8)
    got = Search(ev).afterstate_probs(a, ply=2)
    np.testing.assert_allclose(got[0], brute_ply(ev, tuple(a[0]), 2), rtol=0, atol=1e-6)


def test_one_evaluator_call_per_level(afters: np.ndarray) -> None:
    """Each level is one evaluator call over all replies of all rolls of all boards, as
    far as ``max_rows`` allows (the default splits a level into CPU-friendly chunks of
    whole afterstates, never one call per candidate)."""
    counting = LinearEvaluator()
    Search(counting, cache_size=0, max_rows=1 << 22).afterstate_probs(afters, ply=2)
    assert counting.calls == 2  # all replies of all rolls of all boards at once, per level
    whole = Search(LinearEvaluator(), cache_size=0, max_rows=1 << 22)
    chunked = LinearEvaluator()
    got = Search(chunked, cache_size=0).afterstate_probs(afters, ply=2)
    # level 2 evaluates the best reply of every roll of every board: more afterstates
    # than DEFAULT_MAX_ROWS allows in one call, so it is split, with the same numbers
    per_call = DEFAULT_MAX_ROWS // (21 * _REPLIES_PER_ROLL)
    assert 21 * int((~exact_finished(afters)[0]).sum()) > per_call
    assert chunked.calls > 2
    np.testing.assert_allclose(got, whole.afterstate_probs(afters, ply=2), atol=1e-6)


def test_pre_roll_is_the_opponents_afterstate_seen_back(ev: LinearEvaluator) -> None:
    search = Search(ev)
    board = np.array([START], dtype=np.int8)
    p0 = search.pre_roll_probs(board, ply=0)[0]
    np.testing.assert_allclose(p0, swap_sides(ev.probabilities(-board[:, ::-1])[0]), atol=1e-7)
    # 1-ply before the roll: the roller's best play for each roll, at 0-ply, averaged
    want = np.zeros(5)
    for (d1, d2), weight in zip(ALL_ROLLS, ROLL_WEIGHTS, strict=True):
        plays = reference_afterstates(START, d1, d2)
        probs = ev.probabilities(np.array(plays, dtype=np.int8)).astype(np.float64)
        want += weight * probs[int(np.argmax(money(probs)))]
    np.testing.assert_allclose(search.pre_roll_probs(board, ply=1)[0], want, atol=1e-6)


def test_cache_hits_give_identical_numbers(ev: LinearEvaluator, afters: np.ndarray) -> None:
    search = Search(ev, cache_size=10_000)
    first = search.afterstate_probs(afters, ply=2)
    hits, misses = search.hits, search.misses
    again = search.afterstate_probs(afters, ply=2)
    assert search.hits - hits == afters.shape[0]  # every board, from the cache
    assert search.misses == misses
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, Search(ev, cache_size=0).afterstate_probs(afters, 2))


def test_cache_stays_bounded(ev: LinearEvaluator, afters: np.ndarray) -> None:
    search = Search(ev, cache_size=5)
    search.afterstate_probs(afters, ply=2)
    assert len(search._cache) == 5


def test_batch_equals_one_by_one(ev: LinearEvaluator, afters: np.ndarray) -> None:
    search = Search(ev, cache_size=0)
    batch = search.afterstate_probs(afters, ply=1)
    for i in range(afters.shape[0]):
        np.testing.assert_allclose(search.afterstate_probs(afters[i : i + 1], 1)[0], batch[i])
    positions = random_game_positions(seed=5, count=12)
    boards = np.array([b for b, _ in positions], dtype=np.int8)
    dice = np.array([r for _, r in positions], dtype=np.int8)
    plays, offsets = legal_afterstates_batch(boards, dice)
    picks = search.choose_batch(boards, dice, plays, offsets, ply=1)
    for i in range(len(boards)):
        own = plays[offsets[i] : offsets[i + 1]]
        one = search.choose_batch(
            boards[i : i + 1], dice[i : i + 1], own, np.array([0, len(own)]), 1
        )
        assert one[0] == picks[i]


def test_filter_keeps_the_best_within_the_window() -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 9, size=40)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    values = rng.normal(0, 0.1, size=offsets[-1])
    alive = rng.random(offsets[-1]) < 0.8
    mask = filter_mask(values, offsets, alive, keep=3, window=0.05)
    for i in range(len(counts)):
        v, a, m = (x[offsets[i] : offsets[i + 1]] for x in (values, alive, mask))
        assert not (m & ~a).any()
        if a.any():
            best = np.max(v[a])
            assert m[np.flatnonzero(a)[np.argmax(v[a])]]  # the best alive row survives
            assert m.sum() <= 3 and (v[m] >= best - 0.05).all()
            assert m.sum() == min(3, int((a & (v >= best - 0.05)).sum()))


def test_filters_never_drop_the_best_zero_ply_play(ev: LinearEvaluator) -> None:
    narrow = Search(ev, filter=MoveFilter(keep=(2,), window=(0.01,)))
    for board, roll in random_game_positions(seed=9, count=15):
        ranked = narrow.rank(board, roll, ply=1)
        if len(ranked) < 2:
            continue
        zero = narrow.rank(board, roll, ply=0)
        deep = {r.board for r in ranked if r.ply == 1}
        assert zero[0].board in deep or all(r.ply == 0 for r in ranked)


def root_value(ev: LinearEvaluator, after: tuple[int, ...], ply: int, blend) -> np.ndarray:
    """What the root ranks a candidate by: its ply-deep value with the ply below blended
    in (``Search.blend``)."""
    w = blend[ply - 1] if 1 <= ply <= len(blend) else 0.0
    deep = brute_ply(ev, after, ply)
    return deep if not w else (1 - w) * deep + w * brute_ply(ev, after, ply - 1)


@pytest.mark.parametrize("blend", [DEFAULT_BLEND, (), (0.5,)])
def test_rank_lists_deeper_plays_first_and_agrees_with_choose(
    ev: LinearEvaluator, blend: tuple[float, ...]
) -> None:
    search = Search(ev, filter=MoveFilter(keep=(3,), window=(10.0,)), blend=blend)
    roll = (6, 4)
    ranked = search.rank(START, roll, ply=1)
    assert sorted(r.board for r in ranked) == reference_afterstates(START, 6, 4)
    assert [r.ply for r in ranked] == [1, 1, 1] + [0] * (len(ranked) - 3)
    assert ranked[0].diff == 0.0 and all(r.diff <= 0 for r in ranked[:3])
    for r in ranked:
        assert r.equity == pytest.approx(float(money(np.array(r.probs))), abs=1e-9)
        want = root_value(ev, r.board, r.ply, blend)
        np.testing.assert_allclose(r.probs, want, atol=1e-6)
    boards, dice = np.array([START], np.int8), np.array([roll], np.int8)
    plays, offsets = legal_afterstates_batch(boards, dice)
    pick = search.choose_batch(boards, dice, plays, offsets, 1)
    assert tuple(plays[pick[0]]) == ranked[0].board


def test_a_utility_changes_the_root_choice_not_the_probabilities(ev: LinearEvaluator) -> None:
    search = Search(ev, filter=MoveFilter(keep=(30,), window=(10.0,)))  # all go deeper
    worst = search.rank(START, (3, 1), ply=1, utility=lambda p: -money(p))
    best = search.rank(START, (3, 1), ply=1)
    assert worst[0].board != best[0].board
    assert worst[0].equity == pytest.approx(-float(money(np.array(worst[0].probs))))
    deep_best = {r.board: r.probs for r in best if r.ply == 1}
    shared = [r for r in worst if r.ply == 1 and r.board in deep_best]
    assert len(shared) == len(best) > 2
    for r in shared:
        assert r.probs == deep_best[r.board]


def test_search_player_plays_only_legal_plays(ev: LinearEvaluator) -> None:
    player = SearchPlayer(Search(ev), ply=1)
    positions = random_game_positions(seed=21, count=30)
    positions.append(
        (tuple(flip(board_of({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}, {}, opp_bar=0))), (6, 6))
    )
    boards = np.array([b for b, _ in positions], dtype=np.int8)
    dice = np.array([r for _, r in positions], dtype=np.int8)
    plays, offsets = legal_afterstates_batch(boards, dice)
    picks = player.choose_batch(boards, dice, plays, offsets)
    for i, (board, roll) in enumerate(positions):
        legal = reference_afterstates(board, *roll)
        if not legal:
            assert picks[i] == -1
        else:
            assert 0 <= picks[i] < offsets[i + 1] - offsets[i]
            assert tuple(plays[offsets[i] + picks[i]]) in set(legal)


def test_ply_and_arguments_are_validated(ev: LinearEvaluator) -> None:
    search = Search(ev)
    with pytest.raises(ValueError, match=r"ply must be in 0\.\.3"):
        search.afterstate_probs(np.array([START], np.int8), ply=4)
    with pytest.raises(TypeError, match="ply must be an integer"):
        search.pre_roll_probs(np.array([START], np.int8), ply=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shape"):
        search.afterstate_probs(np.zeros((2, 25), np.int8))
    with pytest.raises(ValueError, match="dice"):
        search.rank(START, (0, 3))
    with pytest.raises(ValueError, match="keep counts"):
        MoveFilter(keep=(0,), window=(0.1,))
    with pytest.raises(ValueError, match="one window per keep"):
        MoveFilter(keep=(8, 2), window=(0.1,))


def test_spec_parsing() -> None:
    assert parse_player_spec(" default ") == PlayerSpec(
        "default", "default", "default", False, None
    )
    assert parse_player_spec("default:1") == PlayerSpec("default:1", "default", "default", False, 1)
    assert parse_player_spec("runs/x/last.pt+race:2") == PlayerSpec(
        "runs/x/last.pt+race:2", "runs/x/last.pt+race", "runs/x/last.pt", True, 2
    )
    for bad in ("default:x", "default:-1", "default:", "a.pt:1.5", "gnubg:two", "x.pt+race:²"):
        with pytest.raises(ValueError, match="whole number"):
            parse_player_spec(bad)
    assert parse_player_spec("default:2").is_network and parse_player_spec("a/b.pt:0").is_network
    gnubg = parse_player_spec("gnubg:2")
    assert (gnubg.name, gnubg.ply, gnubg.is_network) == ("gnubg", 2, False)
    assert not parse_player_spec("pubeval").is_network
    # after another name the ':' is the factory's own argument, kept in the name
    mine = parse_player_spec("mine:fast")
    assert (mine.name, mine.head, mine.ply) == ("mine:fast", "mine", None)


def test_make_player_builds_search_players() -> None:
    player = make_player("default:1")
    assert isinstance(player, SearchPlayer) and player.ply == 1 and player.name == "default:1"
    with pytest.raises(ValueError, match=r"ply must be in 0\.\.3"):
        make_player("default:7")
    with pytest.raises(ValueError, match="whole number"):
        make_player("default:one")
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        make_player("missing/net.pt:1")


def test_rolls_and_weights() -> None:
    assert ROLLS.shape == (21, 2) and ROLL_WEIGHTS.sum() == pytest.approx(1.0)
    assert {tuple(r) for r in ROLLS} == set(ALL_ROLLS)


def test_hint_ranks_at_the_asked_ply() -> None:
    from nard_rl.commands.hint import rank_plays

    plays = rank_plays(list(START), 6, 4, ply=1)
    assert sorted(tuple(p["board"]) for p in plays) == reference_afterstates(START, 6, 4)
    assert plays[0]["ply"] == 1
    zero = rank_plays(list(START), 6, 4, ply=0)
    assert {p["ply"] for p in zero} == {0}
    assert [p["equity"] for p in zero] == sorted((p["equity"] for p in zero), reverse=True)
    with pytest.raises(ValueError, match="ply must be in"):
        rank_plays(list(START), 6, 4, ply=4)


def test_environment_opponent_spec_with_a_ply() -> None:
    from nard_rl.envs.nard_env import NardEnv
    from nard_rl.envs.vector import resolve_opponent

    assert isinstance(resolve_opponent("default:2", get_rules("standard"), None), SearchPlayer)
    env = NardEnv(opponent="default:1")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(6):  # our plays at random; the opponent answers with its 1-ply choice
        mask = np.asarray(info["action_mask"])
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done:
            break
    assert obs.shape == env.observation_space.shape


def test_memory_bound_splits_without_changing_numbers(
    ev: LinearEvaluator, afters: np.ndarray
) -> None:
    whole = Search(ev, cache_size=0).afterstate_probs(afters, ply=2)
    counting = LinearEvaluator()
    split = Search(counting, cache_size=0, max_rows=1).afterstate_probs(afters, ply=2)
    np.testing.assert_array_equal(whole, split)
    assert counting.calls > 2


def test_two_ply_choice_blends_the_ply_below(ev: LinearEvaluator) -> None:
    """At 2-ply the root ranks the survivors of each level by the blend of that level's
    value with the level below's (filtered on the blended 1-ply values)."""
    search = Search(ev, filter=MoveFilter(keep=(3, 2), window=(10.0, 10.0)), blend=(0.4, 0.2))
    ranked = search.rank(START, (6, 4), ply=2)
    assert [r.ply for r in ranked[:3]] == [2, 2, 1]
    for r in ranked[:3]:
        np.testing.assert_allclose(r.probs, root_value(ev, r.board, r.ply, (0.4, 0.2)), atol=1e-6)
    # the probabilities a search answers stay plain n-ply
    a = np.array([ranked[0].board], dtype=np.int8)
    np.testing.assert_allclose(
        search.afterstate_probs(a, ply=1)[0], brute_ply(ev, ranked[0].board, 1), atol=1e-6
    )


@pytest.mark.parametrize("blend", [(1.0,), (-0.1,), (0.2, float("nan"))])
def test_blend_weights_are_validated(ev: LinearEvaluator, blend: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="blend"):
        Search(ev, blend=blend)
