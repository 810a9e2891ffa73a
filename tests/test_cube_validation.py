"""The own cube validation set is judged as the public cube file is: gnubg's cubeless
probabilities and cubeful equities, the same verdicts read from them, states drawn in the
public file's proportions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import make_validation as mv  # noqa: E402

PUBLIC = ROOT / "tests" / "data" / "cube_gnubg_public.jsonl"


def test_verdicts_read_from_the_equities() -> None:
    assert mv.cube_decision_of(0.2, -0.1, 1.0, True) == ("no_double", True)
    assert mv.cube_decision_of(0.5, 0.7, 1.0, True) == ("double_take", True)
    assert mv.cube_decision_of(0.8, 1.4, 1.0, True) == ("double_pass", False)
    assert mv.cube_decision_of(1.3, 1.6, 1.0, True) == ("too_good", False)
    assert mv.cube_decision_of(0.5, 0.7, 1.0, False) == ("unavailable", None)
    # the public file's verdicts, re-read from its equities, agree but for ties
    rows = [json.loads(line) for line in PUBLIC.open()]
    agree = 0
    for r in rows:
        e = r["equities"]
        available = r["cube"]["owner"] != "opponent" and not r["match"]["crawford"]
        got, _ = mv.cube_decision_of(e["no_double"], e["double_take"], e["double_pass"], available)
        agree += got == r["decision"]
    assert agree / len(rows) > 0.95


def test_states_follow_the_public_proportions_and_the_rules() -> None:
    rng = np.random.default_rng(0)
    states = [mv.cube_state(rng) for _ in range(4000)]
    money = [s for s in states if s[1]["length"] == 0]
    assert 0.57 < len(money) / len(states) < 0.63
    for cube, match in states:
        length, (me, opp) = match["length"], match["score"]
        if length == 0:
            assert (cube["value"], cube["owner"]) in {(1, "centered"), (2, "mover"), (4, "mover")}
            continue
        assert length in mv.LENGTHS and 0 <= me < length and 0 <= opp < length
        if match["crawford"]:  # exactly one side a point short, cube never turned
            assert (me == length - 1) != (opp == length - 1)
            assert (cube["value"], cube["owner"]) == (1, "centered")
        if me == length - 1 or opp == length - 1:
            assert cube["value"] == 1
    assert any(m["crawford"] for _, m in states) and any(
        c["owner"] == "opponent" for c, _ in states
    )


@pytest.mark.gnubg
def test_gnubg_judges_as_the_public_file() -> None:
    """gnubg's 2-ply probabilities and cube equities of the public file's first positions
    come back as that file holds them."""
    from nard_rl.players.gnubg_player import GnubgPlayer

    rows = [json.loads(line) for line in PUBLIC.open()][:4]
    boards = np.array([r["board"] for r in rows], dtype=np.int8)
    specs = [
        [
            r["cube"]["value"],
            mv.OWNERS[r["cube"]["owner"]],
            r["match"]["length"],
            *r["match"]["score"],
            int(r["match"]["crawford"]),
        ]
        for r in rows
    ]
    with GnubgPlayer(2) as g:
        probs = g.probabilities(boards)
        equities = g.cube_equities(boards, specs)
    names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    want = np.array([[r["probs"][k] for k in names] for r in rows])
    assert probs.shape == (4, 5) and np.abs(probs - want).max() < 5e-3
    keys = ("optimal", "no_double", "double_take", "double_pass")
    want_eq = np.array([[r["equities"][k] for k in keys] for r in rows])
    assert np.abs(equities - want_eq).max() < 1e-3
