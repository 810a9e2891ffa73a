"""The contact encoding: the extended inputs unchanged, plus contact features checked by
hand on a position where every roll can be counted."""

from __future__ import annotations

import numpy as np
import pytest
from boards import board

from nard_rl.engine.position import flip_boards
from nard_rl.nets.encoding import CONTACT_FEATURES, get_encoding

CONTACT = get_encoding("contact")
US = 225
THEM = US + CONTACT_FEATURES


# us: 14 on our ace point, a blot on our 10; them: all 15 on our 4 (their 21)
BLOT_AND_ACE = np.array(board("mover: 1:14 10:1; opp: 4:15"), dtype=np.int8)


def test_extended_inputs_are_unchanged() -> None:
    rng = np.random.default_rng(0)
    boards = np.stack([BLOT_AND_ACE, flip_boards(BLOT_AND_ACE[None])[0]])
    boards = np.concatenate([boards, np.repeat(boards, 3, axis=0)[rng.permutation(6)]])
    np.testing.assert_array_equal(
        CONTACT.encode(boards)[:, :225], get_encoding("extended").encode(boards)
    )
    assert CONTACT.extends == "extended" and CONTACT.size == 225 + 2 * CONTACT_FEATURES


def test_our_contact_block_by_hand() -> None:
    x = CONTACT.encode(BLOT_AND_ACE)[US:THEM]
    # their checkers on our 4 hit our blot on 10 (distance 6) with: any roll holding a 6
    # (11), 1-5 and 2-4 in either order (4), 3-3 and 2-2 (2): 17 rolls, each costing
    # 25 - 10 = 15 pips
    expected = [
        17 * 15 / 36 / 24,  # pip loss
        0.0,  # one blot: no double shots
        (10 - 4 + 1) / 167,  # break contact: the blot must pass their rearmost (our 4)
        (10 - 6) / 100,  # timing: only the blot is outside home; point 1 has no spares
        5 / 90,  # mobility: the blot can land on 9..5 but not on their point (4)
        11 / 12,  # stacking: 14 on one point
        0.0,  # no anchor in their home
        0.0,  # no outfield point
    ]
    np.testing.assert_allclose(x, expected, rtol=1e-6)


def test_their_contact_block_by_hand() -> None:
    x = CONTACT.encode(BLOT_AND_ACE)[THEM:]
    expected = [
        0.0,  # no blots of theirs
        0.0,
        15 * (21 - 15 + 1) / 167,  # our rearmost checker is on their 15
        15 * (21 - 6) / 100,
        15 * 6 / 90,  # nothing of ours holds their 20..15
        12 / 12,
        (25 - 21) / 6,  # their 21 is an anchor in our home
        0.0,
    ]
    np.testing.assert_allclose(x, expected, rtol=1e-6)


@pytest.mark.parametrize("bar", [True, False])
def test_bar_checkers_are_the_only_hitters(bar: bool) -> None:
    b = np.zeros(26, dtype=np.int8)
    b[1] = 14
    b[3] = 1  # our blot, 3 pips from their entry; their other checkers are past it
    b[20] = -14
    b[0] = -1 if bar else 0
    b[21] = 0 if bar else -1
    x = CONTACT.encode(b)[US:THEM]
    if bar:
        # from the bar (our point 0) the blot on 3 is hit by any 3 (11 rolls) and by 2-1
        # either way round (2), the 2 played first since our ace point is closed; 1-1 fails
        assert x[0] == pytest.approx(13 * (25 - 3) / 36 / 24)
    else:
        assert x[0] == 0.0  # their checkers on our 20 and 21 have passed the blot
