"""The race net: one-sided distributions, exact at home, combined like the database; the
trainer's rollouts and a tiny resumable run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from reference_movegen import board_of

from nard_rl.engine.bearoff import bearoff_index, get_bearoff_database
from nard_rl.engine.classify import BEAROFF, RACE, classify
from nard_rl.nets.evaluator import NetEvaluator
from nard_rl.nets.network import load_checkpoint
from nard_rl.nets.paths import default_checkpoint_path
from nard_rl.nets.race import (
    BINS,
    RaceEvaluator,
    RaceNet,
    load_race_net,
    one_sided_inputs,
    side_placements,
)
from nard_rl.training.race import (
    RaceConfig,
    _rollouts,
    _shifted,
    collect_race_positions,
    train_race_net,
)


@pytest.fixture(scope="module")
def untrained() -> RaceEvaluator:
    torch.manual_seed(0)
    return RaceEvaluator(RaceNet(16), get_bearoff_database(False))


def test_side_placements_are_each_sides_own_view() -> None:
    b = np.array([board_of({1: 2, 9: 3}, {24: 4, 14: 1})], dtype=np.int8)
    mine, theirs = side_placements(b)
    assert mine[0, 0] == 2 and mine[0, 8] == 3 and mine.sum() == 5
    assert theirs[0, 0] == 4 and theirs[0, 10] == 1 and theirs.sum() == 5
    flipped = -b[:, ::-1]
    m2, t2 = side_placements(flipped)
    np.testing.assert_array_equal(m2, theirs)
    np.testing.assert_array_equal(t2, mine)
    assert one_sided_inputs(mine).shape == (1, 101)


def test_home_sides_are_exact_whatever_the_net(untrained: RaceEvaluator) -> None:
    db = untrained.bearoff
    bo = np.array(
        [board_of({1: 3, 5: 2}, {20: 4}), board_of({6: 15}, {19: 1, 24: 14})], dtype=np.int8
    )
    assert (classify(bo) == BEAROFF).all()
    np.testing.assert_allclose(untrained.probabilities(bo), db.probabilities(bo), atol=1e-6)
    # half home: the home side's distribution is the table's, padded
    race = np.array([board_of({1: 3, 5: 2}, {12: 4})], dtype=np.int8)
    assert classify(race)[0] == RACE
    mine, _ = side_placements(race)
    rolls, first, escape = untrained.distributions(mine)
    i = bearoff_index(mine[:, :6])[0]
    np.testing.assert_allclose(rolls[0, : db.rolls.shape[1]], db.rolls[i], atol=1e-12)
    assert first[0, 0] == 1.0  # ten checkers are off already
    assert escape[0, 0] == 1.0  # none in the other home board
    p = untrained.probabilities(race)
    assert ((p >= 0) & (p <= 1)).all() and p[0, 2] == 0 and p[0, 4] == 0


def test_rollouts_end_home_and_count_rolls(untrained: RaceEvaluator) -> None:
    starts = np.zeros((20, 24), dtype=np.int64)
    rng = np.random.default_rng(4)
    for row in starts:
        np.add.at(row, rng.integers(6, 24, rng.integers(1, 16)), 1)
    visited, left, idx, esc = _rollouts(untrained, starts, rng, 0.1)
    assert (visited[:, 6:].sum(axis=1) > 0).all()  # every visited placement is not home
    assert (left >= 1).all() and (idx >= 0).all()  # 0: home and off in one roll
    # a trajectory's first entry is its start; pips only ever go down along it
    np.testing.assert_array_equal(visited[:20], starts)
    assert left[:20].max() <= 60
    assert (esc <= left).all() and (esc[visited[:, 18:].sum(axis=1) > 0] >= 1).all()
    # nothing to play: empty results, not an error
    v0, l0, i0, e0 = _rollouts(untrained, np.zeros((0, 24), dtype=np.int64), rng, 0.1, head=1)
    assert v0.shape == (0, 24) and l0.size == i0.size == e0.size == 0


def test_first_off_rollouts_follow_the_first_off_policy(untrained: RaceEvaluator) -> None:
    """Saving a gammon: 15 checkers, one straggler on the 7 point.  With head 1 every
    roll's choice minimises the expected rolls to the *first* checker off, which the
    database knows exactly once the straggler is home: so it comes home at once (any
    roll can do it)."""
    starts = np.zeros((30, 24), dtype=np.int64)
    starts[:, 6] = 1  # the 7 point
    starts[:, 5] = 14  # the 6 point
    rng = np.random.default_rng(5)
    visited, left, idx, _ = _rollouts(untrained, starts, rng, 0.0, head=1)
    assert visited.shape[0] == 30 and (left == 1).all()
    # the reached placement's database index is a home placement with 15 checkers or
    # 14 when the same roll bore one off (then "first off" is already done)
    assert (idx > 0).all()


def test_escape_rollouts_run_the_straggler_out_first(untrained: RaceEvaluator) -> None:
    """Saving a backgammon: a straggler on the 20 point (in the other side's home board),
    14 checkers home.  With head 2 a placement that has left 19..24 scores 0 rolls, so
    the straggler leaves with the first roll, whatever the net says about the rest."""
    starts = np.zeros((30, 24), dtype=np.int64)
    starts[:, 19] = 1  # the 20 point
    starts[:, 5] = 14
    visited, _, _, esc = _rollouts(untrained, starts, np.random.default_rng(6), 0.0, head=2)
    np.testing.assert_array_equal(visited[:30], starts)
    assert (esc[:30] == 1).all()


def test_shifted_targets() -> None:
    table = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    out = _shifted(table, np.array([0, 1, 0]), np.array([2, 0, BINS]))
    assert out[0, 3] == 0.5 and out[0, 4] == 0.5 and out[0].sum() == pytest.approx(1.0)
    assert out[1, 0] == 1.0
    assert out[2, BINS - 1] == pytest.approx(1.0)  # the tail folds into the last bin


def test_collected_positions_are_unfinished_no_contact() -> None:
    contact = NetEvaluator.from_checkpoint(default_checkpoint_path())
    pos = collect_race_positions(contact, 12, np.random.default_rng(0), explore=0.2)
    assert pos.shape[0] > 10
    assert np.isin(classify(pos), [RACE, BEAROFF]).all()
    assert ((pos[:, 1:26] > 0).sum(axis=1) > 0).all()  # the mover still has checkers
    assert np.unique(pos, axis=0).shape[0] == pos.shape[0]


def test_tiny_run_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "race.pt"
    cfg = RaceConfig(games=8, rounds=1, starts_per_round=40, epochs=1, hidden=16)
    logs: list[str] = []
    train_race_net(default_checkpoint_path(), out, cfg, log=logs.append)
    ckpt = load_checkpoint(out)
    assert ckpt["step"] == 1 and ckpt["kind"] == "race-one-sided"
    assert ckpt["config"]["contact"] == "default"  # the shipped net, by name
    assert [h["round"] for h in ckpt["extra"]["history"]] == [1]
    cfg.rounds = 2
    train_race_net(default_checkpoint_path(), out, cfg, log=logs.append)
    again = load_checkpoint(out)
    assert again["step"] == 2 and [h["round"] for h in again["extra"]["history"]] == [1, 2]
    assert sum("collected" in m for m in logs) == 1  # positions were reused
    ev = load_race_net(out)
    assert ev.step == 2
    with pytest.raises(ValueError, match="not a race-net checkpoint"):
        load_race_net(default_checkpoint_path())
    # a race net learnt over one bear-off (R29 or not) never answers under the other
    with pytest.raises(ValueError, match="pip-waste rule"):
        load_race_net(out, rules="mars")


def test_the_shipped_race_nets_load_per_rule_set() -> None:
    from nard_rl.nets.evaluator import CompositeEvaluator, load_evaluator, race_checkpoint_path

    std, mars = race_checkpoint_path("standard"), race_checkpoint_path("mars")
    assert std is not None and std.name == "nard-race.pt"
    assert mars is not None and mars.name == "nard-race-mars.pt"
    assert load_race_net(mars, rules="mars").rules.name == "mars"
    for path, other in ((std, "mars"), (mars, "standard")):
        with pytest.raises(ValueError, match="pip-waste rule"):
            load_race_net(path, rules=other)
    race = np.array([board_of({1: 5, 8: 10}, {19: 7, 24: 8})], dtype=np.int8)
    assert classify(race)[0] == RACE
    for rules in ("standard", "mars"):
        ev = load_evaluator("default", rules=rules)
        assert isinstance(ev, CompositeEvaluator) and isinstance(ev.race, RaceEvaluator)
        assert ev.route(race).tolist() == [RACE]
        np.testing.assert_allclose(ev.probabilities(race), ev.race.probabilities(race), atol=1e-6)
    # a checkpoint path is that net alone (with the database): races go to it
    assert load_evaluator(str(default_checkpoint_path())).race is None


def test_the_shipped_race_net_plays_races_better_than_the_contact_net() -> None:
    """On the gnubg 2-ply-labelled decisions: the race and bear-off decisions cost less
    with the race net answering the races, as any race net worth shipping must (its
    figures per kind: scripts/bench_checker.py --player default)."""
    import gzip
    import json

    from nard_rl.engine.batch import segment_argmax
    from nard_rl.engine.movegen import legal_afterstates_batch
    from nard_rl.engine.rules import cubeless_equity, get_rules
    from nard_rl.nets.evaluator import CompositeEvaluator, load_evaluator

    data = Path(__file__).parent / "data" / "checker_gnubg_public.jsonl.gz"
    with gzip.open(data, "rt") as fh:
        recs = [json.loads(line) for line in fh if line.strip()]
    recs = [r for r in recs if r["kind"] in ("race", "bearoff")]
    boards = np.array([r["board"] for r in recs], dtype=np.int8)
    dice = np.array([r["dice"] for r in recs], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, dice)
    shipped = load_evaluator("default")
    assert isinstance(shipped, CompositeEvaluator)
    without = CompositeEvaluator(shipped.contact, bearoff=shipped.bearoff)

    def lost(ev: CompositeEvaluator) -> float:
        eq = cubeless_equity(ev.probabilities(afters), get_rules("standard"))
        pick = segment_argmax(eq, offsets)
        errs = [
            next(c["err"] for c in r["candidates"] if c["board"] == afters[o + k].tolist())
            for r, o, k in zip(recs, offsets[:-1], pick, strict=True)
        ]
        return 1000.0 * float(np.mean(errs))

    with_net, contact_only = lost(shipped), lost(without)
    assert with_net < contact_only, (with_net, contact_only)


def test_config_is_checked() -> None:
    with pytest.raises(ValueError, match="rounds"):
        RaceConfig(rounds=0)
    with pytest.raises(ValueError, match="lr_final"):
        RaceConfig(lr=1e-3, lr_final=2e-3)
    with pytest.raises(ValueError, match="rule set"):
        RaceConfig(rules="nope")


def test_learning_rate_falls_by_cosine_over_the_rounds() -> None:
    cfg = RaceConfig(rounds=5, lr=1e-3, lr_final=1e-4)
    rates = [cfg.lr_at(r) for r in range(1, 6)]
    assert rates[0] == pytest.approx(1e-3) and rates[-1] == pytest.approx(1e-4)
    assert rates[2] == pytest.approx(5.5e-4) and all(np.diff(rates) < 0)
    assert RaceConfig(rounds=5, lr=1e-3).lr_at(5) == 1e-3  # no decay asked


def test_train_race_script(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    args = ["--out", str(tmp_path / "r.pt"), "--games", "6", "--rounds", "1", "--starts", "30"]
    out = subprocess.run(
        [sys.executable, str(root / "scripts" / "train_race.py"), *args, "--hidden", "8"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "round 1:" in out.stdout
    assert load_race_net(tmp_path / "r.pt").step == 1
    bad = subprocess.run(
        [sys.executable, str(root / "scripts" / "train_race.py"), *args, "--rounds", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert bad.returncode != 0 and "--rounds must be at least 1" in bad.stderr


def test_the_shipped_race_net_agrees_with_rollouts_on_average() -> None:
    """Absolute chances matter where the race net judges a position, not only its
    ranking of plays: rollouts of cube decisions stop at the race and take its answer.
    On races reached in self-play its mean gammon and backgammon chances must match
    rollouts played out to the end by the contact net (before the "leave the other home
    board" head learnt under its own policy, backgammons came out four times too often)."""
    from nard_rl.nets.evaluator import CompositeEvaluator, load_evaluator
    from nard_rl.search.rollout import rollout

    full = load_evaluator("default")
    assert isinstance(full, CompositeEvaluator) and full.race is not None
    plain = CompositeEvaluator(full.contact, bearoff=full.bearoff)
    pos = collect_race_positions(full.contact, 80, np.random.default_rng(3), explore=0.0)
    pos = pos[classify(pos) == RACE][:200]
    assert pos.shape[0] >= 100
    truth = rollout(plain, pos, trials=144, seed=1, stop_at_race=False)
    bias = full.probabilities(pos).mean(axis=0) - truth.mean(axis=0)
    assert np.abs(bias[[0, 1, 3]]).max() < 0.01, bias
    assert np.abs(bias[[2, 4]]).max() < 0.003, bias


def test_race_checkpoint_of_huge_declared_size_is_refused_before_allocation(tmp_path) -> None:
    import torch

    from nard_rl.nets.evaluator import race_checkpoint_path
    from nard_rl.nets.network import CheckpointError, load_checkpoint

    ckpt = load_checkpoint(race_checkpoint_path("standard"))
    huge = {**ckpt, "spec": {**ckpt["spec"], "hidden": 10**9}}
    torch.save(huge, tmp_path / "huge.pt")
    with pytest.raises(CheckpointError, match="hidden width"):
        load_race_net(tmp_path / "huge.pt")
    wrong = {**ckpt, "spec": {**ckpt["spec"], "hidden": 17}}
    torch.save(wrong, tmp_path / "wrong.pt")
    with pytest.raises(CheckpointError):
        load_race_net(tmp_path / "wrong.pt")
