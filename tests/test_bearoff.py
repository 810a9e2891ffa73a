"""The one-sided bear-off database against brute force that shares none of its code.

The reference side uses the naive move generator of ``reference_movegen`` and computes
top down (memoised recursion over placements, expectations taken roll by roll), while the
database is built bottom up in pip order from the compiled move generator.
"""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np
import pytest
from boards import board
from reference_movegen import ALL_ROLLS, reference_afterstates

from nard_rl.engine.bearoff import (
    MAX_ROLLS,
    N_POSITIONS,
    BearoffDatabase,
    bearoff_index,
    get_bearoff_database,
)

Placement = tuple[int, ...]  # checkers on points 1..6


def _weight(roll: tuple[int, int]) -> float:
    return (1.0 if roll[0] == roll[1] else 2.0) / 36.0


def _board(p: Placement) -> tuple[int, ...]:
    """The mover's home-board placement (points 1..6) alone on the board."""
    return board(dict(enumerate(p, start=1)))


def _plays(p: Placement, roll: tuple[int, int], mars: bool) -> list[Placement]:
    return [tuple(a[1:7]) for a in reference_afterstates(_board(p), *roll, mars)]


def _brute_force(mars: bool):
    @cache
    def mean(p: Placement) -> float:
        if sum(p) == 0:
            return 0.0
        return 1.0 + sum(_weight(r) * min(mean(a) for a in _plays(p, r, mars)) for r in ALL_ROLLS)

    @cache
    def dist(p: Placement) -> tuple[float, ...]:
        out = [0.0] * MAX_ROLLS
        if sum(p) == 0:
            out[0] = 1.0
            return tuple(out)
        for r in ALL_ROLLS:
            best = min(_plays(p, r, mars), key=mean)
            for k, q in enumerate(dist(best)[:-1]):
                out[k + 1] += _weight(r) * q
        return tuple(out)

    return mean, dist


def _placements(max_checkers: int) -> list[Placement]:
    return [
        p for p in itertools.product(range(max_checkers + 1), repeat=6) if sum(p) <= max_checkers
    ]


@pytest.fixture(scope="module", params=[False, True], ids=["standard", "mars"])
def db(request: pytest.FixtureRequest) -> BearoffDatabase:
    return get_bearoff_database(request.param)


def test_index_is_a_bijection() -> None:
    every = np.array(_placements(15), dtype=np.int64)
    idx = bearoff_index(every)
    assert every.shape[0] == N_POSITIONS
    assert sorted(idx.tolist()) == list(range(N_POSITIONS))
    assert bearoff_index(np.zeros((1, 6), dtype=np.int64))[0] == 0
    with pytest.raises(ValueError, match=r"0\.\.15 checkers"):
        bearoff_index(np.array([[16, 0, 0, 0, 0, 0]]))
    with pytest.raises(ValueError, match="shape"):
        bearoff_index(np.zeros((2, 5)))


def test_small_positions_match_brute_force(db: BearoffDatabase) -> None:
    """Every placement of up to 5 checkers: the whole distribution of rolls to bear off."""
    mean, dist = _brute_force(db.waste_rule)
    places = _placements(5)
    idx = bearoff_index(np.array(places))
    want = np.array([dist(p) for p in places])
    np.testing.assert_allclose(db.rolls[idx], want, atol=2e-7)
    np.testing.assert_allclose(db.mean_rolls[idx], [mean(p) for p in places], atol=2e-6)


@pytest.mark.parametrize("table", ["rolls", "first"])
def test_bellman_equation_on_large_positions(db: BearoffDatabase, table: str) -> None:
    """Up to 15 checkers: each stored mean is one roll plus the best successor's mean,
    roll by roll, with the plays of the reference generator (exact for this DAG)."""
    rng = random.Random(7)
    means = db.mean_rolls if table == "rolls" else db.mean_first
    for _ in range(15):
        p = [0] * 6
        total = 15 if table == "first" else rng.randint(6, 15)
        for _ in range(total):
            p[rng.randrange(6)] += 1
        place = tuple(p)
        expect = 1.0
        for r in ALL_ROLLS:
            succ = _plays(place, r, db.waste_rule)
            vals = means[bearoff_index(np.array(succ))]
            if table == "first":
                vals = np.where(np.array(succ).sum(axis=1) < 15, 0.0, vals)
            expect += _weight(r) * float(vals.min())
        got = float(means[bearoff_index(np.array([place]))[0]])
        assert got == pytest.approx(expect, abs=2e-5), place


def test_first_checker_off_by_hand(db: BearoffDatabase) -> None:
    """15 on the six point: the first roll bears one off with a 6, a 5-1 or 4-2 (one
    checker runs home and off), or 2-2 / 3-3: 11 + 4 + 2 = 17 of 36."""
    i = bearoff_index(np.array([[0, 0, 0, 0, 0, 15]]))[0]
    assert db.first[i, 1] == pytest.approx(17 / 36, abs=1e-6)
    # one on the ace point leaves only a 1 or a 6 to take it (R20: a larger die needs
    # no checker higher up), plus the same 4-2, 2-2, 3-3 as before: 20 + 2 + 2 = 24 of 36
    j = bearoff_index(np.array([[1, 0, 0, 0, 0, 14]]))[0]
    assert db.first[j, 1] == pytest.approx(24 / 36, abs=1e-6)
    some_off = bearoff_index(np.array([[0, 0, 0, 0, 0, 14]]))[0]
    assert db.first[some_off, 0] == pytest.approx(1.0)
    assert db.rolls[:, -1].max() == 0.0


def test_waste_rule_changes_the_table() -> None:
    """R29 forbids some plays, so the mars table differs (never better on average)."""
    std, mars = get_bearoff_database(False), get_bearoff_database(True)
    assert np.abs(std.mean_rolls - mars.mean_rolls).max() > 1e-3
    assert (mars.mean_rolls >= std.mean_rolls - 1e-5).all()


# two-sided ------------------------------------------------------------------------------


def _afterstate(mover: Placement, opp: Placement) -> np.ndarray:
    """Mover's checkers on its 1..6, opponent's on its 1..6 (our 24..19)."""
    b = np.zeros(26, dtype=np.int8)
    b[1:7] = mover
    b[24:18:-1] = -np.array(opp)
    return b


def _two_sided_reference(db: BearoffDatabase):
    """P(the side on roll wins) by playing the game out turn by turn, both sides choosing
    plays by least expected rolls (the database's policy, checked above)."""

    def best(p: Placement, r: tuple[int, int]) -> Placement:
        succ = _plays(p, r, db.waste_rule)
        return succ[int(np.argmin(db.mean_rolls[bearoff_index(np.array(succ))]))]

    @cache
    def win_on_roll(me: Placement, you: Placement) -> float:
        total = 0.0
        for r in ALL_ROLLS:
            after = best(me, r)
            total += _weight(r) * (1.0 if sum(after) == 0 else 1.0 - win_on_roll(you, after))
        return total

    return win_on_roll


def test_two_sided_win_probability_matches_game_recursion(db: BearoffDatabase) -> None:
    win_on_roll = _two_sided_reference(db)
    rng = random.Random(3)
    small = [p for p in _placements(4) if sum(p) > 0]
    pairs = [(rng.choice(small), rng.choice(small)) for _ in range(40)]
    boards = np.array([_afterstate(m, o) for m, o in pairs])
    got = db.probabilities(boards)
    for (m, o), row in zip(pairs, got, strict=True):
        assert row[0] == pytest.approx(1.0 - win_on_roll(o, m), abs=1e-5), (m, o)
        assert row[1] == row[2] == row[3] == row[4] == 0.0  # nobody has 15 left


def test_gammon_probabilities_by_hand() -> None:
    """One checker on the six point against fifteen there.  The lone checker is off in one
    roll with 27 of 36 (a 6: 11; 5-1..5-4, 4-2, 4-3: 12; 2-2..5-5: 4), otherwise surely in
    two; the fifteen get their first checker off in one roll with 17 of 36."""
    db = get_bearoff_database(False)
    one, fifteen = (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 15)
    i1, i15 = bearoff_index(np.array([one, fifteen]))
    assert db.rolls[i1, 1] == pytest.approx(27 / 36, abs=1e-6)
    assert db.rolls[i1, 2] == pytest.approx(9 / 36, abs=1e-6)
    a1, f1 = 27 / 36, 17 / 36
    # the fifteen just moved, the lone checker rolls first: it wins a gammon (the
    # fifteen's lose-gammon) when it is off before the fifteen have had as many rolls
    p = db.probabilities(_afterstate(fifteen, one)[None, :])[0]
    assert p[0] == pytest.approx(0.0, abs=1e-6)
    assert p[3] == pytest.approx(a1 + (1 - a1) * (1 - f1), abs=1e-6)
    # the lone checker just moved, the fifteen roll first: a gammon for it needs the
    # fifteen to miss once (then one roll of ours) or twice (two of ours)
    q = db.probabilities(_afterstate(one, fifteen)[None, :])[0]
    f_gt2 = 1.0 - db.first[i15, :3].sum()
    assert q[0] == pytest.approx(1.0, abs=1e-6)
    assert q[1] == pytest.approx(a1 * (1 - f1) + (1 - a1) * f_gt2, abs=1e-6)
    assert q[2] == q[3] == q[4] == 0.0


def test_probabilities_are_consistent(db: BearoffDatabase) -> None:
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(300):
        m = np.bincount(rng.integers(0, 6, rng.integers(1, 16)), minlength=6)
        o = np.bincount(rng.integers(0, 6, rng.integers(1, 16)), minlength=6)
        rows.append(_afterstate(tuple(m), tuple(o)))
    p = db.probabilities(np.array(rows))
    assert ((p >= 0) & (p <= 1)).all()
    assert (p[:, 1] <= p[:, 0] + 1e-6).all() and (p[:, 3] <= 1 - p[:, 0] + 1e-6).all()
    assert (p[:, 2] == 0).all() and (p[:, 4] == 0).all()  # no backgammon without contact


def test_race_combination_by_hand() -> None:
    """Point distributions: side A (just moved) finishes in 2 rolls, side B (to roll) in
    5, B's first checker needs 3 and its straggler leaves A's home board in 3 or 2."""
    from nard_rl.engine.bearoff import race_probabilities

    def delta(k: int) -> np.ndarray:
        d = np.zeros((1, 8))
        d[0, k] = 1.0
        return d

    yes, no = np.array([True]), np.array([False])
    p = race_probabilities(delta(2), delta(0), delta(5), delta(3), no, yes, delta(0), delta(3))
    np.testing.assert_allclose(p[0], [1, 1, 1, 0, 0])
    # B clears A's home board in 2 rolls, before A's second roll ends: a gammon only
    p = race_probabilities(delta(2), delta(0), delta(5), delta(3), no, yes, delta(0), delta(2))
    np.testing.assert_allclose(p[0], [1, 1, 0, 0, 0])
    # B rolls first: B finishing in 2 beats A's 2; A with 15 and first-off 2 is gammoned
    # (it only had one roll), and backgammoned while its straggler needs 2 rolls to leave
    p = race_probabilities(delta(2), delta(2), delta(2), delta(0), yes, no, delta(2), None)
    np.testing.assert_allclose(p[0], [0, 0, 0, 1, 1])
    p = race_probabilities(delta(2), delta(1), delta(2), delta(0), yes, no, delta(1), None)
    np.testing.assert_allclose(p[0], [0, 0, 0, 0, 0])


def _race_reference(ra, fa, rb, fb, full_a, full_b, ea, eb):  # type: ignore[no-untyped-def]
    """The combination written as whole-array cumulative sums (the definition)."""
    out = np.zeros((ra.shape[0], 5))
    out[:, 0] = (ra * (1 - np.cumsum(rb, axis=1))).sum(axis=1)
    out[:, 1] = np.where(full_b, (ra * (1 - np.cumsum(fb, axis=1))).sum(axis=1), 0)
    out[:, 3] = np.where(full_a, (rb * (1 - np.cumsum(fa, axis=1) + fa)).sum(axis=1), 0)
    if eb is not None:
        out[:, 2] = np.where(full_b, (ra * (1 - np.cumsum(eb, axis=1))).sum(axis=1), 0)
    if ea is not None:
        out[:, 4] = np.where(full_a, (rb * (1 - np.cumsum(ea, axis=1) + ea)).sum(axis=1), 0)
    out = np.clip(out, 0, 1)
    out[:, 2] = np.minimum(out[:, 2], out[:, 1])
    out[:, 4] = np.minimum(out[:, 4], out[:, 3])
    return out


@pytest.mark.parametrize("escapes", ["both", "a", "b", "none"])
@pytest.mark.parametrize("seed", [0, 1])
def test_race_kernel_matches_the_cumulative_definition(escapes: str, seed: int) -> None:
    """The one-pass kernel equals the definition on random distributions of both
    lengths in use (the database's 32 rolls, the race net's 80 bins)."""
    from nard_rl.engine.bearoff import race_probabilities

    rng = np.random.default_rng(seed)
    for length in (32, 80):
        n = 300
        d = [rng.dirichlet(np.full(length, 0.3), size=n) for _ in range(6)]
        full_a, full_b = rng.random(n) < 0.5, rng.random(n) < 0.5
        ea = d[4] if escapes in ("both", "a") else None
        eb = d[5] if escapes in ("both", "b") else None
        got = race_probabilities(d[0], d[1], d[2], d[3], full_a, full_b, ea, eb)
        want = _race_reference(d[0], d[1], d[2], d[3], full_a, full_b, ea, eb)
        assert got.dtype == np.float32 and got.shape == (n, 5)
        np.testing.assert_allclose(got, want, atol=2e-6)
        # strided views (a column of a (N, 3, L) array, as the race net hands them) too
        stacked = np.stack([d[0], d[1]], axis=1)
        again = race_probabilities(stacked[:, 0], stacked[:, 1], d[2], d[3], full_a, full_b, ea, eb)
        np.testing.assert_array_equal(again, got)


def test_race_probabilities_refuses_mismatched_shapes() -> None:
    from nard_rl.engine.bearoff import race_probabilities

    a, b = np.full((2, 8), 1 / 8), np.full((2, 9), 1 / 9)
    yes = np.array([True, False])
    with pytest.raises(ValueError, match="one \\(N, L\\) shape"):
        race_probabilities(a, a, b, b, yes, yes)
    with pytest.raises(ValueError, match="full_a"):
        race_probabilities(a, a, a, a, yes[:1], yes)
    assert race_probabilities(a[:0], a[:0], a[:0], a[:0], yes[:0], yes[:0]).shape == (0, 5)


def test_the_cache_holds_the_very_numbers_the_builder_uses(
    db: BearoffDatabase, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that builds the table and every process that loads its cache answer
    with the same numbers (the cache once held float32 and the builder float64)."""
    from pathlib import Path

    built: list[BearoffDatabase] = []

    def build(waste_rule: bool) -> BearoffDatabase:
        fresh = BearoffDatabase(db.rolls.copy(), db.first.copy(), waste_rule)
        built.append(fresh)
        return fresh

    monkeypatch.setattr(BearoffDatabase, "build", classmethod(lambda cls, w: build(w)))
    builder = BearoffDatabase.load(db.waste_rule, directory=tmp_path)
    assert len(built) == 1
    (cache_file,) = Path(tmp_path).iterdir()
    loader = BearoffDatabase.load(db.waste_rule, directory=tmp_path)
    assert len(built) == 1  # read from the cache, not built again
    for name in ("rolls", "first", "mean_rolls", "mean_first"):
        assert np.array_equal(getattr(builder, name), getattr(loader, name)), name
        assert np.array_equal(getattr(builder, name), getattr(db, name)), name
    rows = np.zeros((1, 26), np.int8)
    rows[0, 1:7] = [2, 3, 2, 1, 0, 0]  # the mover's home board
    rows[0, 19:25] = [0, -2, -1, -2, -3, 0]  # the opponent's
    assert np.array_equal(builder.probabilities(rows), loader.probabilities(rows))

    # a cache of the old float32 format, or a damaged one, is rebuilt, never answered from
    with np.load(cache_file) as data:
        np.savez_compressed(cache_file, rolls=data["rolls"].astype(np.float32), first=data["first"])
    again = BearoffDatabase.load(db.waste_rule, directory=tmp_path)
    assert len(built) == 2 and np.array_equal(again.rolls, db.rolls)
    cache_file.write_bytes(cache_file.read_bytes()[:1000])
    BearoffDatabase.load(db.waste_rule, directory=tmp_path)
    assert len(built) == 3
    bent = db.rolls.copy()
    bent[5, 3] += 0.01  # a row that no longer sums to 1
    np.savez_compressed(cache_file, rolls=bent, first=db.first)
    BearoffDatabase.load(db.waste_rule, directory=tmp_path)
    assert len(built) == 4
