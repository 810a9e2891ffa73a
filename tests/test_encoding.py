"""Input encodings: Tesauro's 198 units against a plain reference, hand-counted features."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from boards import board as board_from

from nard_rl.engine.classify import race_flags
from nard_rl.engine.position import START_BOARD, Position, flip_boards
from nard_rl.nets.encoding import ENCODINGS, get_encoding

DATA = Path(__file__).parent / "data"

TESAURO = get_encoding("tesauro198")
EXTENDED = get_encoding("extended")

# extended: start of each side's feature block and the offsets inside it (module docstring)
US, THEM = 200, 211
OFF, PIPS, BLOTS, SHOTS, ESCAPE, CONTAIN, PRIME, ANCHORS, HOME, ENTER, BACK = range(11)
RACE, US_ON_ROLL, THEM_ON_ROLL = 222, 223, 224


def _test_boards() -> np.ndarray:
    """The 3,000 positions of the movegen reference set plus one afterstate of each."""
    boards = []
    with open(DATA / "movegen_gnubg_public.jsonl") as fh:
        for line in fh:
            record = json.loads(line)
            boards.append(record["board"])
            if record["afterstates"]:
                boards.append(record["afterstates"][len(record["afterstates"]) // 2])
    return np.array(boards, dtype=np.int8)


BOARDS = _test_boards()


def features(board: list[int], on_roll: bool = False) -> np.ndarray:
    return EXTENDED.encode(np.array([board], dtype=np.int8), on_roll)[0]


# -- tesauro198 ---------------------------------------------------------------------------


def _tesauro_units(n: int) -> list[float]:
    if n <= 0:
        return [0.0, 0.0, 0.0, 0.0]
    return [1.0, float(n >= 2), float(n >= 3), (n - 3) / 2 if n > 3 else 0.0]


def tesauro_reference(board: list[int], on_roll: bool) -> list[float]:
    """Tesauro's inputs written out the slow, obvious way."""
    ours_on = board[25] + sum(v for v in board[1:25] if v > 0)
    theirs_on = -board[0] - sum(v for v in board[1:25] if v < 0)
    x: list[float] = []
    for p in range(1, 25):
        x += _tesauro_units(board[p])
    x += [board[25] / 2, (15 - ours_on) / 15]
    for q in range(1, 25):  # the opponent's own point q is our point 25 - q
        x += _tesauro_units(-board[25 - q])
    x += [-board[0] / 2, (15 - theirs_on) / 15]
    x += [1.0, 0.0] if on_roll else [0.0, 1.0]
    return x


@pytest.mark.parametrize("on_roll", [False, True])
def test_tesauro198_matches_reference_unit_by_unit(on_roll: bool) -> None:
    got = TESAURO.encode(BOARDS, on_roll)
    expected = np.array([tesauro_reference(b, on_roll) for b in BOARDS.tolist()])
    assert got.shape == (len(BOARDS), 198)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)


def test_tesauro198_known_position() -> None:
    x = TESAURO.encode(np.array(START_BOARD, dtype=np.int8))
    ours_6 = x[4 * 5 : 4 * 6]
    assert ours_6.tolist() == [1.0, 1.0, 1.0, 1.0]  # five checkers: (5 - 3) / 2
    ours_24 = x[4 * 23 : 4 * 24]
    assert ours_24.tolist() == [1.0, 1.0, 0.0, 0.0]
    theirs_8 = x[98 + 4 * 7 : 98 + 4 * 8]  # their 8 point is our 17
    assert theirs_8.tolist() == [1.0, 1.0, 1.0, 0.0]
    assert x[[96, 97, 194, 195]].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert x[196:].tolist() == [0.0, 1.0]
    assert x.sum() == pytest.approx(2 * (2 + 4 + 3 + 4) + 1)  # 24, 13, 8, 6 points; turn


# -- extended: raw units ------------------------------------------------------------------


def _raw_units(n: int) -> list[float]:
    if n <= 0:
        return [0.0] * 4
    if n == 1:
        return [1.0, 0.0, 0.0, 0.0]
    if n == 2:
        return [0.0, 1.0, 0.0, 0.0]
    return [0.0, 0.0, 1.0, (n - 3) / 2]


def test_extended_raw_units_match_reference() -> None:
    got = EXTENDED.encode(BOARDS)
    for b, x in zip(BOARDS.tolist(), got, strict=True):
        ours = [u for p in range(1, 26) for u in _raw_units(b[p])]
        theirs = [u for q in range(1, 25) for u in _raw_units(-b[25 - q])]
        theirs += _raw_units(-b[0])
        np.testing.assert_array_equal(x[:100], ours)
        np.testing.assert_array_equal(x[100:200], theirs)


# -- extended: features against a slow reference ---------------------------------------


def _die_paths(a: int, b: int) -> list[list[int]]:
    """Every way to play an ordered roll, as the running distances after each step."""
    if a == b:
        return [[a * k for k in range(1, m + 1)] for m in range(1, 5)]
    return [[a], [b], [a, a + b], [b, a + b]]


ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]


def _shots(v: list[int]) -> int:
    """Ordered rolls with which the other side (negative in ``v``, moving up from its bar
    at 0) hits a blot of S, walking every roll, source, path and blot."""
    blots = [t for t in range(1, 25) if v[t] == 1]
    sources = [0] if v[0] < 0 else [s for s in range(1, 25) if v[s] < 0]
    count = 0
    for a, b in ROLLS:
        hit = False
        for src in sources:
            for path in _die_paths(a, b):
                *steps, last = [src + d for d in path]
                if last in blots and all(v[x] < 2 for x in steps):
                    hit = True
        count += hit
    return count


def _escapes(v: list[int], p: int) -> int:
    """Ordered rolls letting a checker of S on point ``p`` pass every blocked point among
    the 12 in front of it (a point is blocked when the other side holds it, R9)."""
    blocked = {q for q in range(p - 12, p) if 1 <= q <= 24 and v[q] <= -2}
    if not blocked:
        return 36
    count = 0
    for a, b in ROLLS:
        count += any(
            all(p - d not in blocked for d in path) and p - path[-1] < min(blocked)
            for path in _die_paths(a, b)
        )
    return count


def _side_block(v: list[int], other: list[int]) -> list[float]:
    """S's eleven features from S's view ``v`` (``other``: the same board from the other
    side's view), straight from the definitions in the module docstring."""
    ours = {p: v[p] for p in range(1, 26) if v[p] > 0}
    held = [p for p in range(1, 25) if v[p] >= 2]
    rear = max((p for p in range(1, 26) if v[p] > 0), default=0)  # the bar is 25
    longest = 0
    for start in range(1, 25):
        length = 0
        while start + length <= 24 and v[start + length] >= 2:
            length += 1
        longest = max(longest, length)
    closed = sum(1 for q in range(19, 25) if v[q] <= -2)
    return [
        (15 - sum(ours.values())) / 15,
        sum(p * n for p, n in ours.items()) / 167,
        sum(1 for p in range(1, 25) if v[p] == 1) / 15,
        _shots(v) / 36,
        (_escapes(v, rear) if rear else 36) / 36,
        1 - min(_escapes(other, q) for q in range(15, 26)) / 36,  # any point, occupied or not
        longest / 6,
        sum(1 for p in held if p >= 19) / 6,
        sum(1 for p in held if p <= 6) / 6,
        (36 - closed * closed) / 36,
        sum(ours.get(p, 0) for p in range(19, 26)) / 15,
    ]


def extended_features_reference(board: list[int], on_roll: bool) -> list[float]:
    """Inputs 200..224 of ``extended`` for one board, the slow, obvious way."""
    theirs = [-board[25 - i] for i in range(26)]  # the board from the opponent's view
    return [
        *_side_block(board, theirs),
        *_side_block(theirs, board),
        float(Position(board).is_race()),
        float(on_roll),
        float(not on_roll),
    ]


def test_extended_features_match_reference() -> None:
    sample = np.concatenate([BOARDS[::20], flip_boards(BOARDS[7::40])])  # bar, race, bear-off
    flags = np.arange(len(sample)) % 3 == 0
    got = EXTENDED.encode(sample, flags)[:, 200:]
    expected = [
        extended_features_reference(b, bool(f)) for b, f in zip(sample.tolist(), flags, strict=True)
    ]
    np.testing.assert_allclose(got, np.array(expected), rtol=0, atol=1e-6)


# -- extended: hand-made positions -----------------------------------------------------------


def test_shots_on_a_blot_six_away() -> None:
    # Rolls with a 6 (11), 5-1 and 4-2 both ways (4), 3-3 and 2-2 (2): 17 of 36.
    board = board_from({10: 1, 1: 14}, {4: 1, 24: 14})
    x = features(board)
    assert x[US + SHOTS] * 36 == pytest.approx(17)
    assert x[THEM + SHOTS] * 36 == pytest.approx(17)  # our blot hits theirs the same way
    assert x[US + BLOTS] * 15 == pytest.approx(1)


def test_shots_need_open_intermediate_points() -> None:
    # Our point 7 blocks the 3-3 path (landing on 7): 16.
    assert features(board_from({10: 1, 7: 2, 1: 12}, {4: 1, 24: 14}))[US + SHOTS] * 36 == (
        pytest.approx(16)
    )
    # Points 5, 7 and 9 block 5-1 both ways and 3-3; 4-2 (via 8) and 2-2 (6, 8) stay: 14.
    board = board_from({10: 1, 9: 2, 7: 2, 5: 2, 1: 8}, {4: 1, 24: 14})
    assert features(board)[US + SHOTS] * 36 == pytest.approx(14)


def test_shots_from_the_bar_only_while_the_opponent_is_on_it() -> None:
    # A blot three away from a checker on our 3: 3s (11), 2-1 both ways (2), 1-1: 14.
    free = board_from({6: 1, 13: 14}, {3: 1, 24: 14})
    assert features(free)[US + SHOTS] * 36 == pytest.approx(14)
    # With a checker on the bar only it can hit (R11): six away from the bar, 17 rolls.
    barred = board_from({6: 1, 13: 14}, {3: 1, 24: 13}, opp_bar=1)
    assert features(barred)[US + SHOTS] * 36 == pytest.approx(17)


def test_escape_counts_rolls_that_clear_the_blockade() -> None:
    open_board = board_from({24: 1, 6: 14}, {1: 15})
    assert features(open_board)[US + ESCAPE] == pytest.approx(1.0)
    # Blocks 4 and 6 pips in front of the checker on 24: any sum >= 7 not starting on a
    # block (every non-double but 4-6 with sum >= 7: 8 pairs, 16 rolls) and 5-5: 17.
    blocked = board_from({24: 1, 6: 14}, {18: 2, 20: 2, 1: 11})
    assert features(blocked)[US + ESCAPE] * 36 == pytest.approx(17)


def test_six_prime_traps_and_contains() -> None:
    board = board_from({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 1: 3}, {2: 1, 24: 14})
    x = features(board)
    assert x[US + PRIME] == pytest.approx(1.0)
    assert x[THEM + ESCAPE] == 0.0  # their checker behind the prime cannot escape
    assert x[US + CONTAIN] == pytest.approx(1.0)
    assert x[US + HOME] * 6 == pytest.approx(4)  # points 1, 4, 5, 6
    assert x[THEM + PRIME] * 6 == pytest.approx(1)  # their 14 on one point: a run of one
    assert features(board_from({4: 2, 5: 2, 7: 2, 1: 9}, {24: 15}))[US + PRIME] * 6 == (
        pytest.approx(2)
    )


def test_bar_entry_anchors_and_back_checkers() -> None:
    board = board_from({6: 14}, {19: 2, 20: 2, 21: 2, 1: 9}, mover_bar=1)
    x = features(board)
    assert x[US + ENTER] * 36 == pytest.approx(36 - 9)
    assert x[US + BACK] * 15 == pytest.approx(1)
    anchored = features(board_from({20: 2, 22: 2, 6: 11}, {1: 15}))
    assert anchored[US + ANCHORS] * 6 == pytest.approx(2)
    assert anchored[US + BACK] * 15 == pytest.approx(4)


def test_pips_checkers_off_and_race_flag() -> None:
    start = features(list(START_BOARD))
    assert start[US + PIPS] == pytest.approx(1.0) and start[THEM + PIPS] == pytest.approx(1.0)
    assert start[RACE] == 0.0
    race = board_from({1: 5, 2: 4, 3: 4}, {19: 3, 24: 12})
    x = features(race, on_roll=True)
    assert x[RACE] == 1.0
    assert x[US + OFF] * 15 == pytest.approx(2)
    assert x[US + PIPS] * 167 == pytest.approx(5 + 8 + 12)
    assert x[THEM + PIPS] * 167 == pytest.approx(3 * 6 + 12 * 1)
    assert x[[US_ON_ROLL, THEM_ON_ROLL]].tolist() == [1.0, 0.0]


def test_race_flags_agree_with_position() -> None:
    expected = [Position(b).is_race() for b in BOARDS.tolist()]
    assert race_flags(BOARDS).tolist() == expected
    assert (EXTENDED.encode(BOARDS)[:, RACE] == 1.0).tolist() == expected


# -- both encodings ---------------------------------------------------------------------------


def _swap(name: str) -> np.ndarray:
    """Index permutation exchanging the two sides' inputs."""
    if name == "tesauro198":
        return np.r_[98:196, 0:98, 197, 196]
    ext = np.r_[100:200, 0:100, THEM:222, US:THEM, RACE, THEM_ON_ROLL, US_ON_ROLL]
    if name == "contact":
        return np.r_[ext, 233:241, 225:233]
    return ext


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_flipping_the_board_swaps_the_sides(name: str) -> None:
    enc = get_encoding(name)
    x = enc.encode(BOARDS, False)
    y = enc.encode(flip_boards(BOARDS), True)
    np.testing.assert_array_equal(y, x[:, _swap(name)])


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_batch_equals_rows_shapes_and_dtypes(name: str) -> None:
    enc = get_encoding(name)
    sample = BOARDS[::97]
    flags = np.arange(len(sample)) % 2 == 0
    batch = enc.encode(sample, flags)
    assert batch.dtype == np.float32 and batch.shape == (len(sample), enc.size)
    for i, b in enumerate(sample):
        row = enc.encode(b, bool(flags[i]))
        assert row.shape == (enc.size,)
        np.testing.assert_array_equal(row, batch[i])
    assert enc.encode(np.zeros((0, 26), dtype=np.int8)).shape == (0, enc.size)
    assert np.isfinite(batch).all() and (batch >= 0).all()


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_out_buffer_is_filled_completely_and_returned(name: str) -> None:
    enc = get_encoding(name)
    sample = BOARDS[::53]
    expected = enc.encode(sample, True)
    # NaN everywhere: any input the kernel skipped would show (outputs are never NaN)
    wide = np.full((len(sample), enc.size + 12), np.nan, dtype=np.float32)
    view = wide[:, : enc.size]  # a column slice, as an observation buffer holds it
    assert enc.encode(sample, True, out=view) is view
    np.testing.assert_array_equal(wide[:, : enc.size], expected)
    assert np.isnan(wide[:, enc.size :]).all()  # nothing written past the encoding
    row = np.full(enc.size, np.nan, dtype=np.float32)
    assert enc.encode(sample[3], True, out=row) is row
    np.testing.assert_array_equal(row, expected[3])
    with pytest.raises(ValueError, match="out must be"):
        enc.encode(sample, out=np.empty((len(sample), enc.size), dtype=np.float64))
    with pytest.raises(ValueError, match="out must be"):
        enc.encode(sample, out=np.empty((len(sample) + 1, enc.size), dtype=np.float32))


def test_unknown_encoding_and_bad_shapes() -> None:
    with pytest.raises(ValueError, match="tesauro198"):
        get_encoding("nope")
    with pytest.raises(ValueError, match="shape"):
        TESAURO.encode(np.zeros((3, 25), dtype=np.int8))
