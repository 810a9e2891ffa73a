"""Hand-worked cases, one or more per rule of RULES.md (R8-R20, R29).

Every expected list was worked out by hand (the reasoning is in each docstring), not
produced by code.  Each case is checked against the compiled generator and against the
naive reference, so a slip in either one, or in the hand calculation, shows up.

Boards are written with ``position(mover, opp, bar, opp_bar)``: points as seen by the
mover, counts positive for both sides; checkers not mentioned are borne off (the
generator does not care how many are off).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from reference_movegen import ALL_ROLLS, reference_afterstates

from nard_rl.engine.movegen import legal_afterstates, legal_afterstates_batch

Board = tuple[int, ...]


def position(
    mover: dict[int, int], opp: dict[int, int] | None = None, bar: int = 0, opp_bar: int = 0
) -> Board:
    b = [0] * 26
    for p, n in mover.items():
        b[p] += n
    for p, n in (opp or {}).items():
        assert b[p] == 0, "one side per point"
        b[p] -= n
    b[25] = bar
    b[0] = -opp_bar
    return tuple(b)


def check(board: Board, roll: tuple[int, int], expected: Sequence[Board], mars: bool = False):
    """The compiled generator and the reference both give exactly ``expected``."""
    afters, _ = legal_afterstates(np.array(board), *roll, mars)
    got = sorted(tuple(r) for r in afters.tolist())
    assert got == sorted(expected), "compiled generator"
    assert reference_afterstates(board, *roll, mars) == sorted(expected), "reference"


# --- R8: where a checker may land ---------------------------------------------------------


def test_R8_lands_on_an_empty_point() -> None:
    """10/8/7 and 10/9/7 are the same play (R17)."""
    check(position({10: 1}), (2, 1), [position({7: 1})])


def test_R8_lands_on_its_own_point() -> None:
    """Checkers on 10 and 7, 2-1: 10/7, 7/4, 10/8 7/6, 10/9 7/5."""
    check(
        position({10: 1, 7: 1}),
        (2, 1),
        [
            position({7: 2}),
            position({10: 1, 4: 1}),
            position({8: 1, 6: 1}),
            position({9: 1, 5: 1}),
        ],
    )


def test_R8_R10_lands_on_a_blot_and_hits_it() -> None:
    """10/7* with 2-1: the blot goes to the opponent's bar (board[0] becomes -1)."""
    check(position({10: 1}, {7: 1, 20: 2}), (2, 1), [position({7: 1}, {20: 2}, opp_bar=1)])


# --- R9: blocked points -------------------------------------------------------------------


def test_R9_cannot_land_on_a_blocked_point() -> None:
    """7 is blocked, so 10/7 is impossible; each die alone can be played but not both,
    so R15 wants the 2: 10/8 (10/9 then 9/7 fails too)."""
    check(position({10: 1}, {7: 2}), (2, 1), [position({8: 1}, {7: 2})])


def test_R9_blocked_intermediate_point() -> None:
    """13/2 with 6-5 must go through 8 because 7 is blocked."""
    check(position({13: 1}, {7: 2}), (6, 5), [position({2: 1}, {7: 2})])


def test_R9_both_intermediate_points_blocked() -> None:
    """7 and 8 blocked: the open 2 point cannot be reached with 6-5; nothing moves (R16)."""
    check(position({13: 1}, {7: 2, 8: 3}), (6, 5), [])


def test_R9_passing_over_blocked_points_is_allowed() -> None:
    """A wall on 9-12 does not stop 13/7/2 or 13/8/2."""
    opp = {12: 2, 11: 2, 10: 2, 9: 2}
    check(position({13: 1}, opp), (6, 5), [position({2: 1}, opp)])


# --- R10: hitting -------------------------------------------------------------------------


def test_R10_hitting_is_not_compulsory() -> None:
    """Checkers on 10 and 20, blot on 7, 2-1: 10/7* hits; 20/17, 10/8 20/19 and
    10/9 20/18 do not, and all four are legal."""
    check(
        position({10: 1, 20: 1}, {7: 1}),
        (2, 1),
        [
            position({7: 1, 20: 1}, opp_bar=1),
            position({10: 1, 17: 1}, {7: 1}),
            position({8: 1, 19: 1}, {7: 1}),
            position({9: 1, 18: 1}, {7: 1}),
        ],
    )


def test_R10_hit_on_the_way() -> None:
    """13/8*/2 with 6-5 (7 blocked): the intermediate blot on 8 is hit."""
    check(position({13: 1}, {8: 1, 7: 2}), (6, 5), [position({2: 1}, {7: 2}, opp_bar=1)])


# --- R11, R12: the bar --------------------------------------------------------------------


def test_R11_enter_before_anything_else() -> None:
    """Bar and 13, 6-1: bar/19 then 19/18 or 13/12; bar/24 then 24/18 or 13/7.
    13 never moves alone."""
    check(
        position({13: 1}, bar=1),
        (6, 1),
        [position({18: 1, 13: 1}), position({19: 1, 12: 1}), position({24: 1, 7: 1})],
    )


def test_R11_two_on_the_bar_use_both_dice_to_enter() -> None:
    check(position({13: 1}, bar=2), (6, 1), [position({19: 1, 24: 1, 13: 1})])


def test_R11_dice_are_not_summed_to_enter() -> None:
    """24 (die 1) and 22 (die 3) blocked: 3-1 cannot enter on 21 as a 4."""
    check(position({13: 1}, {24: 2, 22: 2}, bar=1), (3, 1), [])


def test_R11_one_entered_the_other_still_on_the_bar() -> None:
    """Two on the bar, only 20 open: bar/20 with the 5, the 3 cannot enter and nothing
    else may move while a checker is still on the bar."""
    opp = {19: 2, 21: 2, 22: 2, 23: 2, 24: 2}
    check(position({13: 1}, opp, bar=2), (5, 3), [position({20: 1, 13: 1}, opp, bar=1)])


@pytest.mark.parametrize("roll", ALL_ROLLS, ids=lambda r: f"{r[0]}-{r[1]}")
def test_R12_closed_board_dances(roll: tuple[int, int]) -> None:
    closed = position({13: 5, 6: 5}, {p: 2 for p in range(19, 25)}, bar=1)
    check(closed, roll, [])


def test_R12_R16_no_move_is_an_empty_slice_in_a_batch() -> None:
    closed = position({13: 5, 6: 5}, {p: 2 for p in range(19, 25)}, bar=1)
    boards = np.array([closed, position({13: 1}), closed], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(boards, np.array([[6, 6], [2, 1], [1, 2]]))
    assert offsets.tolist() == [0, 0, 1, 1]
    assert tuple(afters[0]) == position({10: 1})


# --- R13, R14, R15: how many dice ---------------------------------------------------------


def test_R14_must_use_both_dice_one_checker() -> None:
    """9, with 5 blocked, 4-3: 9/6/2 only; stopping at 9/6 is not allowed."""
    check(position({9: 1}, {5: 2}), (4, 3), [position({2: 1}, {5: 2})])


def test_R14_must_use_both_dice_two_checkers() -> None:
    """7 and 24 with 18 blocked, 6-4: 7/3 leaves the 6 unplayable (24/18 blocked, no
    bear-off while 24 is out), so it is illegal; legal are 24/14 and 24/20 7/1."""
    opp = {18: 2}
    check(
        position({7: 1, 24: 1}, opp),
        (6, 4),
        [position({7: 1, 14: 1}, opp), position({1: 1, 20: 1}, opp)],
    )


def test_R14_doubles_as_many_as_possible() -> None:
    """13 and 24, 21 and 4 blocked, 3-3: 24 cannot move and 13/10/7 stops before 4:
    two of the four moves are played, no fewer."""
    opp = {21: 2, 4: 2}
    check(position({13: 1, 24: 1}, opp), (3, 3), [position({7: 1, 24: 1}, opp)])


def test_R15_higher_die_when_only_one_can_be_played() -> None:
    """7 and 24, 18 and 20 blocked, 6-4: 24 is stuck and 7 can play one die only;
    the 6 must be played: 7/1."""
    opp = {18: 2, 20: 2}
    check(position({7: 1, 24: 1}, opp), (6, 4), [position({1: 1, 24: 1}, opp)])


def test_R15_lower_die_when_the_higher_cannot_be_played() -> None:
    """As above with 1 blocked too: the 6 is unplayable, so 7/3."""
    opp = {18: 2, 20: 2, 1: 2}
    check(position({7: 1, 24: 1}, opp), (6, 4), [position({3: 1, 24: 1}, opp)])


def test_R16_nothing_to_play() -> None:
    check(position({13: 1}, {7: 2, 8: 2}), (6, 5), [])
    check(position({13: 1}, {7: 2, 8: 2}), (6, 5), [], mars=True)


# --- R17: one play per resulting position -------------------------------------------------


def test_R17_same_checker_two_orders_is_one_play() -> None:
    check(position({13: 1}), (2, 1), [position({10: 1})])


def test_R17_two_checkers_from_one_point() -> None:
    """13/11 13/12 in either order and either checker is one play; 13/10 the other."""
    check(position({13: 2}), (2, 1), [position({13: 1, 10: 1}), position({12: 1, 11: 1})])


def test_R17_double_split_among_two_checkers_on_one_point() -> None:
    """1-1 from two checkers on 13: the 4 steps split 4+0, 3+1 or 2+2 -> three plays."""
    check(
        position({13: 2}),
        (1, 1),
        [position({13: 1, 9: 1}), position({12: 1, 10: 1}), position({11: 2})],
    )


# --- R18, R19, R20: bearing off -----------------------------------------------------------


def test_R18_no_bearing_off_with_a_checker_outside() -> None:
    """13 and 1, 6-5: 1/off is not allowed while 13 is out; only 13/2."""
    check(position({13: 1, 1: 1}), (6, 5), [position({2: 1, 1: 1})])


def test_R18_no_bearing_off_from_the_bar() -> None:
    """Hit during the bear-off: bar and two on 1, 6-1: enter, come round, no 1/off."""
    check(position({1: 2}, bar=1), (6, 1), [position({18: 1, 1: 2})])


def test_R18_bear_off_once_the_last_checker_is_home() -> None:
    """7 and 2, 2-1: 7/6 brings the last checker home, then 2/off is legal (the play
    2/off 7/6 gives the same position).  Also 7/4 and 7/5 2/1."""
    check(
        position({7: 1, 2: 1}),
        (2, 1),
        [position({4: 1, 2: 1}), position({5: 1, 1: 1}), position({6: 1})],
    )


def test_R19_exact_bear_off_or_a_move_inside() -> None:
    """6 and 5, 4-1: 6/2 5/4; 6/2 2/1 (= 5/1 6/5); 5/1 1/off (= 5/4 4/off).
    The 4 cannot bear off the 5 or the 6."""
    check(
        position({6: 1, 5: 1}),
        (4, 1),
        [position({4: 1, 2: 1}), position({5: 1, 1: 1}), position({6: 1})],
    )


def test_R20_larger_die_bears_off_from_the_highest_point() -> None:
    """5 and 3, 6-6: 5/off then 3/off, two of the four sixes (nothing left after)."""
    check(position({5: 1, 3: 1}), (6, 6), [position({})])


def test_R20_larger_die_not_from_a_lower_point() -> None:
    """6 and 2, 1 blocked, 5-3: the 5 cannot play 6/1 (blocked) nor bear off the 2
    (the 6 is higher); 6/3 then the 5 bears off the 3 (now highest): 2 left."""
    opp = {1: 2}
    check(position({6: 1, 2: 1}, opp), (5, 3), [position({2: 1}, opp)])


def test_R20_full_value_when_it_can() -> None:
    """6 and 2, 5-4: 6/1 2/off or 6/2 2/off (the 5 never bears off the 2 from below 6)."""
    check(position({6: 1, 2: 1}), (5, 4), [position({1: 1}), position({2: 1})])


# --- R29: the pip-waste rule (mars) -------------------------------------------------------


@pytest.mark.parametrize(
    ("mover", "roll", "standard", "mars"),
    [
        # 6/off 3/1 (waste 0) vs 6/4 4/off (the 6 bears off from 4: waste 2)
        ({6: 1, 3: 1}, (6, 2), [{1: 1}, {3: 1}], [{1: 1}]),
        # 6/1 2/off (the 4 on the 2: waste 2) vs 6/2 2/off (the 5 on the 2: waste 3)
        ({6: 1, 2: 1}, (5, 4), [{1: 1}, {2: 1}], [{1: 1}]),
        # 5/off 1/off (1 + 3 = 4) vs 5/1 1/off (the 6 on the 1: 5)
        ({5: 1, 1: 1}, (6, 4), [{}, {1: 1}], [{}]),
        # 4/off 3/off (0) vs 4/1 3/off (the 4 on the 3: 1)
        ({4: 1, 3: 1}, (4, 3), [{}, {1: 1}], [{}]),
        # nothing else uses both dice: wasting 4 + 4 is still legal
        ({2: 1, 1: 1}, (6, 5), [{}], [{}]),
        # no bear-off involved: the rule changes nothing
        ({13: 2}, (2, 1), [{13: 1, 10: 1}, {12: 1, 11: 1}], [{13: 1, 10: 1}, {12: 1, 11: 1}]),
    ],
)
def test_R29_least_waste_under_mars(mover, roll, standard, mars) -> None:
    opp = {20: 3}
    board = position(mover, opp)
    check(board, roll, [position(m, opp) for m in standard], mars=False)
    check(board, roll, [position(m, opp) for m in mars], mars=True)
