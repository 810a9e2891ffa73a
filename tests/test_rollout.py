"""Rollouts (``nard_rl.search.rollout``): exact where the answer is known, reproducible, and
stratified as documented."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nard_rl.engine.bearoff import get_bearoff_database
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import swap_sides
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import CompositeEvaluator, NetEvaluator
from nard_rl.nets.network import NetSpec
from nard_rl.search.nply import Search
from nard_rl.search.rollout import _stratified_dice, board_groups, pre_roll_rollout, rollout

OPENING_AFTER = np.array(  # the opening position after 31: 8/5 6/5 (mover's view)
    [0, 0, 0, 0, 0, 2, 4, 0, 2, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0],
    dtype=np.int8,
)


def _evaluator(seed: int = 0) -> CompositeEvaluator:
    """A small random net for contact and races, the exact database for bear-offs."""
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (16,), "sigmoid", "standard")
    torch.manual_seed(seed)
    net = spec.build().eval()
    with torch.no_grad():  # default weights answer nearly the same everywhere
        for p in net.parameters():
            p.normal_(0.0, 0.5)
    return CompositeEvaluator(NetEvaluator(net, spec), bearoff=get_bearoff_database(False))


def _bearoff(mover: dict[int, int], opponent: dict[int, int]) -> np.ndarray:
    """A no-contact bear-off afterstate: mover checkers on its home points, the
    opponent's on its own (points 19..24 in the mover's numbering)."""
    b = np.zeros(26, dtype=np.int8)
    for p, c in mover.items():
        b[p] = c
    for p, c in opponent.items():
        b[25 - p] = -c
    return b


def test_one_ply_deep_stratified_rollout_is_the_one_ply_search() -> None:
    # 36 stratified trials cut after one ply meet every roll once: exactly 1-ply search
    ev = _evaluator()
    afters = np.stack([OPENING_AFTER, flip_boards(OPENING_AFTER[None])[0]])
    got = rollout(ev, afters, trials=36, seed=5, horizon=1, stratify=True)
    want = Search(ev).afterstate_probs(afters, ply=1)
    np.testing.assert_allclose(got, want, atol=2e-5)
    # drawn dice do not meet every roll once
    drawn = rollout(ev, afters, trials=36, seed=5, horizon=1, stratify=False)
    assert np.abs(drawn - want).max() > 1e-3


def test_bear_off_rollouts_to_the_end_approach_the_exact_database() -> None:
    ev = _evaluator()
    db = get_bearoff_database(False)
    afters = np.stack(
        [
            _bearoff({3: 2, 5: 1}, {2: 1, 6: 2}),
            _bearoff({6: 3}, {1: 2}),
            _bearoff({1: 1}, {4: 2, 5: 2}),
        ]
    )
    exact = db.probabilities(afters)
    rolled = rollout(ev, afters, trials=720, seed=1, stratify=True)
    np.testing.assert_allclose(rolled[:, 0], exact[:, 0], atol=0.03)
    assert np.all(rolled[:, 2:] == 0)  # a bear-off never ends in a backgammon or a loss of one
    # judged at the race (a bear-off is one) the rollout is the database itself
    np.testing.assert_allclose(
        rollout(ev, afters, trials=3, seed=1, stop_at_race=True), exact, atol=1e-6
    )


def test_pre_roll_rollout_is_seen_from_the_side_on_roll() -> None:
    ev = _evaluator()
    # the side on roll has one checker on its 1-point: any roll bears it off and wins
    board = _bearoff({1: 1}, {6: 3, 5: 3})
    got = pre_roll_rollout(ev, board[None], trials=36, stop_at_race=False)
    np.testing.assert_allclose(got, [[1, 0, 0, 0, 0]], atol=1e-6)
    # a long game is seen from the roller, as the search sees it
    contact = flip_boards(OPENING_AFTER[None])
    r = pre_roll_rollout(ev, contact, trials=36, stop_at_race=False)
    mirror = swap_sides(
        rollout(
            ev, OPENING_AFTER[None], trials=36, seed=0, stratify=True, groups=board_groups(contact)
        )
    )
    np.testing.assert_allclose(r, mirror, atol=1e-6)


def test_rollouts_are_reproducible_and_independent_of_the_batch() -> None:
    ev = _evaluator()
    a = OPENING_AFTER
    b = flip_boards(OPENING_AFTER[None])[0]
    ab = rollout(ev, np.stack([a, b]), trials=8, seed=3, horizon=6)
    ba = rollout(ev, np.stack([b, a]), trials=8, seed=3, horizon=6)
    np.testing.assert_allclose(ab, ba[::-1], atol=1e-6)
    other = rollout(ev, np.stack([a, b]), trials=8, seed=4, horizon=6)
    assert np.abs(other - ab).max() > 1e-4


def test_stratified_second_rolls_are_spread() -> None:
    trial = np.arange(144)
    first = _stratified_dice(trial, 1, 4)
    second = _stratified_dice(trial, 2, 4)
    code = lambda d: (d[:, 0] - 1) * 6 + d[:, 1] - 1  # noqa: E731
    assert np.all(np.bincount(code(first), minlength=36) == 4)
    assert np.all(np.bincount(code(second), minlength=36) == 4)
    pairs = set(zip(code(first).tolist(), code(second).tolist(), strict=True))
    assert len(pairs) == 144  # no two trials share both first rolls


@pytest.mark.parametrize(
    "kwargs",
    [{"trials": 0}, {"trials": 2.5}, {"trials": 4, "horizon": -1}, {"trials": 4, "groups": [1]}],
)
def test_rollout_rejects_bad_settings(kwargs: dict[str, object]) -> None:
    ev = _evaluator()
    with pytest.raises(ValueError):
        rollout(ev, np.stack([OPENING_AFTER, OPENING_AFTER]), seed=0, **kwargs)  # type: ignore[arg-type]
