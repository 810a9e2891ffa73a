"""The evaluator interface: shapes, validation, exact finished games, net agreement."""

from __future__ import annotations

import numpy as np
import pytest

from nard_rl.engine.position import START_BOARD
from nard_rl.nets.evaluator import Evaluator, NetEvaluator, load_evaluator
from nard_rl.nets.paths import default_checkpoint_path
from nard_rl.players.net import NetworkPlayer


@pytest.fixture(scope="module")
def plain() -> Evaluator:
    return NetEvaluator.from_checkpoint(default_checkpoint_path())


def _finished(opp_home: bool, opp_off: int) -> np.ndarray:
    """The mover has borne off all 15; the opponent keeps 15 - opp_off checkers."""
    b = np.zeros(26, dtype=np.int8)
    left = 15 - opp_off
    if opp_home:
        b[3] = -1  # in the winner's home board: a backgammon if nothing is off
        b[20] = -(left - 1)
    else:
        b[20] = -left
    return b


def test_network_player_plays_its_evaluators_best_equity() -> None:
    """The 0-ply player's choice, per position, is the candidate whose cubeless equity
    (computed here row by row) is highest, and -1 where a position has no play."""
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.engine.rules import cubeless_equity, get_rules

    player = NetworkPlayer.from_checkpoint(default_checkpoint_path())
    boards = np.array([START_BOARD, START_BOARD, START_BOARD], dtype=np.int8)
    dice = np.array([[3, 1], [6, 6], [5, 2]], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice)
    picks = player.choose_batch(boards, dice, afters, offsets)
    rules = get_rules("standard")
    for i in range(3):
        rows = afters[offsets[i] : offsets[i + 1]]
        eq = [float(cubeless_equity(player.probabilities(r[None, :]), rules)[0]) for r in rows]
        assert picks[i] == int(np.argmax(eq))
    empty = player.choose_batch(boards[:1], dice[:1], afters[:0], np.array([0, 0]))
    assert empty.tolist() == [-1]


class _SumEvaluator:
    """Probabilities that make a row's cubeless equity grow with the sum of its board."""

    def __init__(self) -> None:
        from nard_rl.engine.rules import get_rules

        self.rules = get_rules("standard")

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        win = (np.asarray(afterstates, dtype=np.float32).sum(axis=1) + 100.0) / 200.0
        out = np.zeros((afterstates.shape[0], 5), dtype=np.float32)
        out[:, 0] = win
        return out


def test_greedy_choice_takes_each_segments_highest_equity() -> None:
    from nard_rl.nets.evaluator import greedy_choice

    afters = np.zeros((6, 26), dtype=np.int8)
    afters[:, 1] = [3, 9, 1, 5, 5, 2]  # row sums: the chooser must pick 9 and the first 5
    offsets = np.array([0, 3, 3, 6])  # the middle position has no play (R16)
    local, probs = greedy_choice(_SumEvaluator(), afters, offsets)
    assert local.tolist() == [1, -1, 0]
    np.testing.assert_allclose(probs[:, 0], (afters[:, 1] + 100.0) / 200.0)
    # noise that dwarfs the equities makes some choice differ, reproducibly per seed
    noisy = [
        greedy_choice(_SumEvaluator(), afters, offsets, noise=10.0, rng=np.random.default_rng(s))[0]
        for s in range(20)
    ]
    assert any(n.tolist() != [1, -1, 0] for n in noisy)
    again = greedy_choice(
        _SumEvaluator(), afters, offsets, noise=10.0, rng=np.random.default_rng(0)
    )
    assert again[0].tolist() == noisy[0].tolist()
    with pytest.raises(ValueError, match="rng"):
        greedy_choice(_SumEvaluator(), afters, offsets, noise=1.0)


@pytest.mark.parametrize(
    ("opp_home", "opp_off", "expected"),
    [
        (False, 3, [0, 0, 0, 0, 0]),
        (False, 0, [0, 0, 0, 1, 0]),
        (True, 0, [0, 0, 0, 1, 1]),
    ],
)
def test_pre_roll_probabilities_are_the_rollers_view(
    plain: Evaluator, opp_home: bool, opp_off: int, expected: list[int]
) -> None:
    """Before the roll, a position whose other side has just borne off its last checker is
    lost for the side on roll: a loss, a gammon or a backgammon by what it has left."""
    from nard_rl.engine.position import flip_boards
    from nard_rl.nets.evaluator import pre_roll_probabilities

    roller = flip_boards(_finished(opp_home, opp_off)[None, :])
    np.testing.assert_array_equal(pre_roll_probabilities(plain, roller)[0], expected)
    player = NetworkPlayer.from_evaluator(plain)
    np.testing.assert_array_equal(player.pre_roll_probabilities(roller)[0], expected)
    # a search function in place of an evaluator: the same convention
    np.testing.assert_array_equal(pre_roll_probabilities(plain.probabilities, roller)[0], expected)


@pytest.mark.parametrize(
    ("opp_home", "opp_off", "expected"),
    [
        (False, 3, [1, 0, 0, 0, 0]),
        (False, 0, [1, 1, 0, 0, 0]),
        (True, 0, [1, 1, 1, 0, 0]),
        (True, 2, [1, 0, 0, 0, 0]),
    ],
)
def test_finished_games_are_exact(
    plain: Evaluator, opp_home: bool, opp_off: int, expected: list[int]
) -> None:
    p = plain.probabilities(_finished(opp_home, opp_off)[None, :])
    np.testing.assert_array_equal(p[0], np.array(expected, dtype=np.float32))


def test_load_evaluator_default_and_path(plain: Evaluator) -> None:
    b = np.array([START_BOARD], dtype=np.int8)
    by_path = load_evaluator(str(default_checkpoint_path()), rules="standard")
    np.testing.assert_allclose(by_path.probabilities(b), plain.probabilities(b), atol=1e-6)
    assert load_evaluator("default").probabilities(b).shape == (1, 5)
    assert load_evaluator(rules="mars").rules.name == "mars"


def test_input_validation(plain: Evaluator) -> None:
    with pytest.raises(ValueError, match="shape"):
        plain.probabilities(np.zeros((3, 25), dtype=np.int8))
    with pytest.raises(ValueError, match=r"-15\.\.15"):
        plain.probabilities(np.full((1, 26), 40, dtype=np.int64))
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_evaluator("no/such/file.pt")
    with pytest.raises(ValueError, match="unknown rule set"):
        load_evaluator(rules="tavla")
    assert plain.probabilities(np.zeros((0, 26), dtype=np.int8)).shape == (0, 5)


# the composite -----------------------------------------------------------------------


def _random_bearoffs(rng: np.random.Generator, n: int) -> np.ndarray:
    """Boards with the side on roll and the other side both all in their home boards."""
    out = np.zeros((n, 26), dtype=np.int8)
    for i in range(n):
        out[i, 1:7] = np.bincount(rng.integers(0, 6, rng.integers(1, 16)), minlength=6)
        out[i, 24:18:-1] = -np.bincount(rng.integers(0, 6, rng.integers(1, 16)), minlength=6)
    return out


@pytest.mark.parametrize("rules", ["standard", "mars"])
def test_composite_never_plays_a_bearoff_worse_than_the_database(rules: str) -> None:
    """Over random no-contact bear-offs and rolls, the default player's play is one of the
    database's best plays (two-sided exact equity), and at least as good as the play the
    one-sided table itself would make (least expected rolls)."""
    from nard_rl.engine.bearoff import bearoff_index, get_bearoff_database
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.engine.rules import cubeless_equity, get_rules
    from nard_rl.players import make_player

    rs = get_rules(rules)
    db = get_bearoff_database(rs.waste_rule)
    player = make_player("default", rules=rules)
    rng = np.random.default_rng(17)
    boards = _random_bearoffs(rng, 150)
    dice = rng.integers(1, 7, size=(150, 2)).astype(np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice, rs.waste_rule)
    chosen = player.choose_batch(boards, dice, afters, offsets)
    for i in range(boards.shape[0]):
        cand = afters[offsets[i] : offsets[i + 1]]
        done = (cand[:, 1:26] > 0).sum(axis=1) == 0
        exact = db.probabilities(np.where(done[:, None], 0, cand).astype(np.int8))
        exact[done] = [1, 0, 0, 0, 0]
        exact[done, 1] = (cand[done, 19:25].sum(axis=1) == -15).astype(np.float32)
        eq = cubeless_equity(exact, rs)
        assert eq[chosen[i]] >= eq.max() - 1e-6, (boards[i].tolist(), dice[i].tolist())
        one_sided = int(np.argmin(db.mean_rolls[bearoff_index(cand[:, 1:7])]))
        assert eq[chosen[i]] >= eq[one_sided] - 1e-6


def test_composite_routes_each_class_to_its_part() -> None:
    import torch
    from reference_movegen import board_of

    from nard_rl.engine.bearoff import get_bearoff_database
    from nard_rl.engine.classify import BEAROFF, CONTACT, RACE, classify
    from nard_rl.nets.evaluator import CompositeEvaluator

    contact = NetEvaluator.from_checkpoint(default_checkpoint_path())
    torch.manual_seed(0)
    race = NetEvaluator(contact.spec.build(), contact.spec, name="other")  # untrained
    db = get_bearoff_database(False)
    ev = CompositeEvaluator(contact, race=race, bearoff=db)
    boards = np.array(
        [
            START_BOARD,
            board_of({1: 5, 8: 10}, {19: 7, 24: 8}),
            board_of({1: 5, 6: 10}, {19: 7, 24: 8}),
            board_of({}, {19: 7, 24: 8}),
        ],
        dtype=np.int8,
    )
    assert classify(boards).tolist() == [CONTACT, RACE, BEAROFF, BEAROFF]
    p = ev.probabilities(boards)
    np.testing.assert_allclose(p[0], contact.net_probabilities(boards[:1])[0], atol=1e-6)
    np.testing.assert_allclose(p[1], race.net_probabilities(boards[1:2])[0], atol=1e-6)
    np.testing.assert_allclose(p[2], db.probabilities(boards[2:3])[0], atol=1e-6)
    np.testing.assert_array_equal(p[3], [1, 1, 0, 0, 0])
    assert ev.route(boards).tolist() == [CONTACT, RACE, BEAROFF, -1]
    # without a race net races go to the contact net
    plain = CompositeEvaluator(contact, bearoff=db)
    np.testing.assert_allclose(
        plain.probabilities(boards[1:2]), contact.net_probabilities(boards[1:2]), atol=1e-6
    )
    with pytest.raises(ValueError, match="R29"):
        CompositeEvaluator(contact, bearoff=db, rules="mars")


def test_race_net_option_pairs_a_checkpoint_with_the_shipped_race_net() -> None:
    """A path alone answers races with its own net; ``race_net=True`` adds the rule set's
    shipped race net (what a pipeline teacher with ``label.race_net`` uses), and
    ``race_net=False`` takes it away from ``default``."""
    from reference_movegen import board_of

    from nard_rl.engine.classify import RACE

    race_board = np.array([board_of({1: 5, 8: 10}, {19: 7, 24: 8})], dtype=np.int8)
    path = str(default_checkpoint_path())
    alone = load_evaluator(path)
    paired = load_evaluator(path, race_net=True)
    assert alone.race is None and paired.race is not None
    assert paired.route(race_board).tolist() == [RACE]
    np.testing.assert_allclose(
        paired.probabilities(race_board), load_evaluator("default").probabilities(race_board)
    )
    assert not np.allclose(alone.probabilities(race_board), paired.probabilities(race_board))
    assert load_evaluator("default", race_net=False).race is None
    assert load_evaluator(path, rules="mars", race_net=True).race.rules.name == "mars"
