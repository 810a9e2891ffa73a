"""Cube decisions: hand-computable cases, Janowski's take points, match play, gnubg agreement,
and the ``nard cube`` command."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.cube.model import (
    CONTACT_X,
    DECISIONS,
    PROB_NAMES,
    CubeState,
    cube_decision,
    cube_efficiency,
    cubeless_equity,
    swap_sides,
)
from nard_rl.engine.position import START_BOARD
from nard_rl.engine.rules import MARS, STANDARD

ROOT = Path(__file__).resolve().parents[1]


def _probs(
    p: float, gw: float = 0.0, gl: float = 0.0, bw: float = 0.0, bl: float = 0.0
) -> tuple[float, float, float, float, float]:
    """Probabilities from a win chance and fixed shares of gammons/backgammons."""
    return (p, p * gw, p * bw, (1 - p) * gl, (1 - p) * bl)


# --------------------------------------------------------------------------------------
# cubeless equity


def test_cubeless_equity_by_hand() -> None:
    probs = (0.6, 0.2, 0.05, 0.1, 0.01)
    # 2*0.6-1 + (0.2-0.1) [gammons one more point] + (0.05-0.01) [backgammons one more]
    assert float(cubeless_equity(probs)) == pytest.approx(0.34)
    # R26: a backgammon counts as a gammon
    assert float(cubeless_equity(probs, STANDARD.with_options(backgammon_value=2))) == (
        pytest.approx(0.30)
    )
    # R32: Jacoby, cube not turned: single games only
    jac = STANDARD.with_options(jacoby=True)
    assert float(cubeless_equity(probs, jac)) == pytest.approx(0.2)
    assert float(cubeless_equity(probs, jac, cube_turned=True)) == pytest.approx(0.34)


def test_cubeless_equity_reads_numpy_arrays_and_torch_tensors_alike() -> None:
    """One formula for analysis (numpy) and training (torch tensors, gradients)."""
    rng = np.random.default_rng(0)
    s = rng.random((200, 5))
    win = s[:, 0]
    probs = np.stack(
        [
            win,
            win * s[:, 1],
            win * s[:, 1] * s[:, 2],
            (1 - win) * s[:, 3],
            (1 - win) * s[:, 3] * s[:, 4],
        ],
        axis=1,
    )
    for rules in (STANDARD, MARS, STANDARD.with_options(jacoby=True)):
        ours = cubeless_equity(probs, rules)
        ref = cubeless_equity(torch.from_numpy(probs), rules)
        assert isinstance(ref, torch.Tensor)
        ref = ref.numpy()
        np.testing.assert_allclose(ours, ref, atol=1e-12)
    swapped = swap_sides(probs)
    np.testing.assert_allclose(cubeless_equity(swapped), -cubeless_equity(probs), atol=1e-12)
    np.testing.assert_allclose(swap_sides(swapped), probs)


def test_cube_efficiency_by_position_class() -> None:
    assert cube_efficiency(START_BOARD) == CONTACT_X
    # pure races: 0.55 + 0.00125 * pips of the player on roll, within [0.6, 0.7]
    short = [0] * 26
    short[1], short[24] = 15, -15  # mover 15 pips
    assert cube_efficiency(short) == pytest.approx(0.6)
    mid = [0] * 26
    mid[6], mid[7], mid[24] = 10, 5, -15  # 95 pips
    assert cube_efficiency(mid) == pytest.approx(0.55 + 0.00125 * 95)
    long = [0] * 26
    long[12], long[24] = 15, -15  # 180 pips, contact-free
    assert cube_efficiency(long) == pytest.approx(0.7)


# --------------------------------------------------------------------------------------
# money play


def test_certain_win_is_double_pass_or_too_good() -> None:
    d = cube_decision((1, 0, 0, 0, 0))
    assert d.decision == "double_pass" and d.take is False
    assert d.double_pass == 1.0 and d.optimal == pytest.approx(1.0)
    gammonish = cube_decision((1, 0.9, 0, 0, 0))
    assert gammonish.decision == "too_good" and gammonish.take is False
    assert gammonish.no_double > 1.0 and gammonish.optimal == gammonish.no_double


def test_even_gammonless_game_is_no_double() -> None:
    d = cube_decision((0.5, 0, 0, 0, 0))
    assert d.decision == "no_double" and d.take is True
    assert d.no_double > d.double_take  # doubling gives the opponent the cube for nothing
    assert d.optimal == d.no_double


@pytest.mark.parametrize("x", [0.0, 0.5, 0.68, 1.0])
@pytest.mark.parametrize(
    "shares", [(0.0, 0.0, 0.0, 0.0), (0.3, 0.1, 0.0, 0.0), (0.25, 0.2, 0.05, 0.02)]
)
def test_money_take_point_is_janowskis(x: float, shares: tuple[float, ...]) -> None:
    """Receiver's take point (L - 1/2) / (W + L + x/2): 25% dead, 20% fully live, no gammons.

    W and L are the receiver's average win and loss values; the model's recursion over the
    cube levels (capped at 64, R24) must land on Janowski's closed form.
    """
    gw, gl, bw, bl = shares
    lose_value = 1 + gw + bw  # the doubler's wins are the receiver's losses
    win_value = 1 + gl + bl
    expected = (lose_value - 0.5) / (win_value + lose_value + 0.5 * x)
    lo, hi = 0.0, 1.0
    for _ in range(50):
        p = (lo + hi) / 2
        if cube_decision(_probs(p, gw, gl, bw, bl), x=x).take:
            lo = p
        else:
            hi = p
    assert 1 - lo == pytest.approx(expected, abs=5e-4)
    if shares == (0.0, 0.0, 0.0, 0.0) and x == 0.0:
        assert 1 - lo == pytest.approx(0.25, abs=1e-6)


def test_doubling_window_opens_before_the_take_point() -> None:
    """Gammonless, x = 0.68: hold at 60%, double/take at 72%, double/pass at 82%."""
    assert cube_decision(_probs(0.60)).decision == "no_double"
    assert cube_decision(_probs(0.72)).decision == "double_take"
    assert cube_decision(_probs(0.82)).decision == "double_pass"


def test_owned_cube_and_redouble() -> None:
    """Owning the cube is worth more than a centered one; redoubles are judged alike (up to
    the 64 cap of R24, which trims the recube vig a little more at higher cubes)."""
    probs = _probs(0.6, 0.2, 0.1)
    centered = cube_decision(probs)
    owned = cube_decision(probs, CubeState(2, "mover"))
    assert owned.no_double > centered.no_double
    assert owned.double_take == pytest.approx(centered.double_take, abs=0.01)


def test_unavailable_when_the_rules_forbid_doubling() -> None:
    probs = _probs(0.9)
    opp = cube_decision(probs, CubeState(2, "opponent"))  # R23
    assert opp.decision == "unavailable" and opp.take is None and opp.double_take is None
    top = cube_decision(probs, CubeState(64, "mover"))  # R1/R24: no cube above 64
    assert top.decision == "unavailable"
    assert cube_decision(probs, CubeState(32, "mover")).decision != "unavailable"
    mars = cube_decision(probs, rules=MARS)  # R28: no cube at all
    assert mars.decision == "unavailable"
    assert mars.no_double == pytest.approx(float(cubeless_equity(probs, MARS)))
    # the opponent's cube is worth something to them: less than our cubeless equity
    assert opp.no_double < opp.cubeless


def test_jacoby_rule_counts_gammons_single_while_centered() -> None:
    """R32: with a centered cube a gammonish favourite cannot play on for the gammon."""
    probs = (0.85, 0.6, 0.0, 0.0, 0.0)
    plain = cube_decision(probs)
    jacoby = cube_decision(probs, rules=STANDARD.with_options(jacoby=True))
    assert plain.decision == "too_good"
    assert jacoby.decision == "double_pass"
    assert jacoby.cubeless == pytest.approx(2 * 0.85 - 1)
    assert jacoby.double_take == pytest.approx(plain.double_take)  # the turned cube counts gammons
    owned = STANDARD.with_options(jacoby=True)
    assert cube_decision(probs, CubeState(2, "mover"), rules=owned) == cube_decision(
        probs, CubeState(2, "mover")
    )


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="inconsistent"):
        cube_decision((0.5, 0.6, 0, 0, 0))
    with pytest.raises(ValueError, match="five"):
        cube_decision((0.5, 0.1))
    with pytest.raises(ValueError, match="R1"):
        CubeState(3)
    with pytest.raises(ValueError, match="R24"):
        CubeState(1, "mover")
    with pytest.raises(ValueError, match="owner"):
        CubeState(2, "nobody")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="efficiency"):
        cube_decision(_probs(0.5), x=1.5)
    with pytest.raises(ValueError, match="R33"):
        cube_decision(_probs(0.5), CubeState(2, "centered"), MatchScore(7))


# --------------------------------------------------------------------------------------
# match play


@pytest.fixture(scope="module")
def met() -> MatchEquityTable:
    return MatchEquityTable.default()


def test_crawford_game_forbids_doubling(met: MatchEquityTable) -> None:
    """R34: no double; the cube is dead, so the equity is the cubeless match equity."""
    probs = (0.7, 0.2, 0.0, 0.1, 0.0)
    d = cube_decision(probs, match=MatchScore(7, 2, 6, crawford=True))
    assert d.decision == "unavailable" and d.take is None
    # mover 5-away, opponent 1-away: hand-computed MWC from the table
    post = met.post_crawford_equity
    mwc = 0.5 * post(4) + 0.2 * post(3) + 0.3 * 0.0  # single win / gammon win / any loss
    assert d.match_equities is not None
    assert d.match_equities["no_double"] == pytest.approx(mwc)


def test_double_match_point_is_cubeless(met: MatchEquityTable) -> None:
    """1-away/1-away: gammons and the cube change nothing; equity = win chance."""
    probs = (0.6, 0.3, 0.1, 0.2, 0.0)
    d = cube_decision(probs, match=MatchScore(5, 4, 4))
    assert d.match_equities is not None
    assert d.match_equities["no_double"] == pytest.approx(0.6)
    assert d.match_equities["double_take"] == pytest.approx(0.6)
    assert d.no_double == pytest.approx(2 * 0.6 - 1)
    assert d.double_pass == pytest.approx(1.0)
    assert d.decision == "no_double"


def test_gammons_are_capped_at_the_match() -> None:
    """R33: the 1-away leader's gammons are worth no more than single wins."""
    match = MatchScore(7, 6, 4)  # post-Crawford, mover needs 1
    with_gammons = cube_decision((0.6, 0.3, 0.05, 0.0, 0.0), match=match)
    without = cube_decision((0.6, 0.0, 0.0, 0.0, 0.0), match=match)
    assert with_gammons.match_equities == pytest.approx(without.match_equities)
    # the leader gains nothing by doubling a trailer who then owns a 2-cube
    assert with_gammons.decision == "no_double"


def test_post_crawford_trailer_doubles_and_free_drop(met: MatchEquityTable) -> None:
    """Post-Crawford at 2-away the trailer doubles at once; the leader passes as an underdog.

    Doubled, the game decides the match (DT = p); passing leaves 1-away/1-away (DP = 0.5).
    """
    match = MatchScore(7, 5, 6)  # mover 2-away, opponent 1-away, post-Crawford
    under = cube_decision(_probs(0.4), match=match)
    assert under.decision == "double_take"
    assert under.match_equities is not None
    assert under.match_equities["double_take"] == pytest.approx(0.4)
    assert under.match_equities["double_pass"] == pytest.approx(0.5)
    fav = cube_decision(_probs(0.6), match=match)
    assert fav.decision == "double_pass" and fav.take is False


def test_match_equity_normalisation(met: MatchEquityTable) -> None:
    """Normalised equity maps losing/winning the cube value to -1/+1 (gnubg's convention)."""
    match = MatchScore(9, 3, 5)
    d = cube_decision(_probs(0.55, 0.2, 0.2), CubeState(2, "mover"), match)
    lose, win = met.after_game(6, 4, -2), met.after_game(6, 4, 2)
    assert d.match_equities is not None
    for key in ("no_double", "double_take", "double_pass", "optimal"):
        mwc = d.match_equities[key]
        assert mwc is not None
        assert d.to_dict()[key] == pytest.approx((2 * mwc - win - lose) / (win - lose))
    assert d.double_pass == pytest.approx(1.0)


# --------------------------------------------------------------------------------------
# agreement with GNU Backgammon's own cube analysis


def _bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cube", ROOT / "scripts" / "bench_cube.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_agreement_with_gnubg_decisions() -> None:
    """gnubg's 2-ply probabilities fed to our 0-ply cube model (floors well below the
    measured figures, see scripts/bench_cube.py): the model, not a network, is tested."""
    bench = _bench_module()
    res = bench.benchmark(bench.load_records())
    money, match = res["money"], res["match"]
    assert money["positions"] == 1800 and match["positions"] == 1200
    assert money["decision_agreement"] >= 0.93
    assert money["take_agreement"] >= 0.97
    assert money["take_agreement_doubles"] >= 0.95
    assert money["equity_mae"]["optimal"] <= 0.03
    assert match["decision_agreement"] >= 0.93
    assert match["take_agreement"] >= 0.95
    assert match["take_agreement_doubles"] >= 0.95
    assert match["equity_mae"]["optimal"] <= 0.04
    # the rules-driven part must be exact: gnubg's "unavailable" is ours and only ours
    confusion = match["confusion"]
    unavailable = sum(v for (a, b), v in confusion.items() if "unavailable" in (a, b))
    assert unavailable == confusion[("unavailable", "unavailable")] > 0


def test_equity_lost_on_gnubg_probabilities_is_small() -> None:
    """The model's own floor, judged like the nets are (mean equity lost per decision):
    money and match alike, no wrong take or pass in a match (before the match-ending
    efficiency, 0.67 mp per match decision, most of it wrong passes at 2-away)."""
    bench = _bench_module()
    res = bench.benchmark(bench.load_records())
    assert res["money"]["lost_mp"] < 0.4
    assert res["match"]["lost_mp"] < 0.4
    assert res["match"]["lost_take_mp"] < 0.05


def _implied_efficiency(rec: dict, met: MatchEquityTable) -> list[tuple[bool, float]]:
    """``(ends, x)`` for the no-double and double/take values of one match record: the
    efficiency at which the model reproduces gnubg's cubeful equity, and whether a win at
    that cube ends the match for one side.  Values where live and dead barely differ
    carry no information and are skipped."""
    from nard_rl.cube.model import _check_probs, _CubeModel, _interp

    bench = _bench_module()
    cube, match = bench.record_state(rec)
    probs = _check_probs([rec["probs"][k] for k in PROB_NAMES])
    a_me, a_opp, c0 = match.away_me, match.away_opp, cube.value

    def u(points: int) -> float:
        return met.after_game(a_me, a_opp, points)

    def can_double(me: bool, c: int) -> bool:
        return match.doubling_allowed and 2 * c <= 64 and c < (a_me if me else a_opp)

    model = _CubeModel(probs, u, STANDARD, c0, can_double)
    win_c, lose_c = u(c0), u(-c0)
    eq = rec["equities"]
    if cube.owner == "centered":
        values = [(model.centered(c0), model.dead(c0), eq["no_double"], c0)]
    else:
        values = [(model.owned(c0, me=cube.owner == "mover"), model.dead(c0), eq["no_double"], c0)]
    if rec["decision"] != "unavailable" and eq.get("double_take") is not None:
        values.append(
            (model.owned(2 * c0, me=False), model.dead(2 * c0), eq["double_take"], 2 * c0)
        )
    out = []
    for knots, dead, normalised, c in values:
        live = _interp(knots, model.p)
        if normalised is None or abs(live - dead) < 0.02 * (win_c - lose_c):
            continue
        mwc = lose_c + (normalised + 1.0) / 2.0 * (win_c - lose_c)
        out.append((min(a_me, a_opp) <= c, (mwc - dead) / (live - dead)))
    return out


def test_match_efficiencies_are_the_ones_gnubgs_equities_imply() -> None:
    """The two efficiencies of a match are measurements: solving the model for the x that
    reproduces gnubg 2-ply's cubeful equities on the reference file gives the contact
    constant where both sides can still use the cube, and ``MATCH_ENDING_X`` where a
    win at the cube ends the match for one side."""
    from nard_rl.cube.model import MATCH_ENDING_X

    bench = _bench_module()
    met = MatchEquityTable.default()
    pairs = [
        v
        for rec in bench.load_records()
        if rec["match"]["length"]
        for v in _implied_efficiency(rec, met)
    ]
    ends = np.array([x for e, x in pairs if e])
    open_ = np.array([x for e, x in pairs if not e])
    assert len(ends) > 150 and len(open_) > 600
    assert abs(np.median(open_) - CONTACT_X) < 0.03
    assert abs(np.mean(ends) - MATCH_ENDING_X) < 0.05
    assert np.median(ends) > np.median(open_) + 0.15


def test_match_ending_cube_takes_when_the_doublers_gammons_die(met: MatchEquityTable) -> None:
    """5-point match, the doubler at 3-1 (2-away) with 79% wins, half of them gammons:
    once doubled its gammons are worth nothing and the taker's redouble is for the match,
    so the take is right (gnubg 2-ply: double/take 0.83 against the pass's 1.0) although
    the doubler is too good to double."""
    probs = (0.794, 0.487, 0.057, 0.0, 0.0)
    d = cube_decision(probs, CubeState(), MatchScore(5, 3, 1), met=met)
    assert d.decision == "too_good" and d.take is True
    assert d.double_take < 0.95
    # the same probabilities in money play are a pass: the gammons would count double
    assert cube_decision(probs, CubeState()).take is False


# --------------------------------------------------------------------------------------
# nard cube


def _tiny_net(path: Path) -> Path:
    from nard_rl.nets.encoding import get_encoding
    from nard_rl.nets.network import NetSpec, save_checkpoint

    enc = get_encoding("extended")
    spec = NetSpec(enc.name, enc.version, enc.size, (6,), "tanh", "standard")
    save_checkpoint(path, spec.build(), spec, games=0, step=0)
    return path


def _run_cube(*argv: str) -> int:
    from nard_rl.commands import cube as command

    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return command.run(parser.parse_args(list(argv)))


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_net(tmp_path_factory.mktemp("cube") / "tiny.pt")


# The constant net's head: sigmoid outputs (win, gammon share of wins, backgammon share of
# gammons, gammon share of losses, backgammon share of those) whatever the position, so
# it says, for the side that just moved: win 0.3, win gammon 0.15, win backgammon 0.03,
# lose gammon 0.28, lose backgammon 0.07.
_CONST_SIGMOIDS = (0.3, 0.5, 0.2, 0.4, 0.25)


@pytest.fixture(scope="module")
def constant_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nard_rl.nets.encoding import get_encoding
    from nard_rl.nets.network import NetSpec, save_checkpoint

    enc = get_encoding("extended")
    spec = NetSpec(enc.name, enc.version, enc.size, (6,), "tanh", "standard")
    net = spec.build()
    with torch.no_grad():
        net.head.weight.zero_()
        s = torch.tensor(_CONST_SIGMOIDS, dtype=torch.float32)
        net.head.bias.copy_(torch.log(s / (1 - s)))
    path = tmp_path_factory.mktemp("cube") / "constant.pt"
    save_checkpoint(path, net, spec, games=0, step=0)
    return path


def test_cube_command_rolls_out_close_decisions(
    constant_net: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    args = ("--board", json.dumps(board), "--net", str(constant_net), "--json", "--ply", "0")
    # a huge margin makes every decision close: read at 1-ply and rolled out
    assert _run_cube(*args, "--refine", "5", "--rollout", "36") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ply"] == 1 and out["rollout"] == 36
    assert _run_cube(*args, "--refine", "0", "--rollout", "36") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ply"] == 0 and out["rollout"] == 0  # nothing is close without a margin
    assert _run_cube(*args, "--rollout", "-3") == 2
    assert "rollout_trials must be >= 0" in capsys.readouterr().err


def test_cube_command_json(constant_net: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    args = ("--board", json.dumps(board), "--net", str(constant_net), "--json", "--ply", "0")
    args = (*args, "--refine", "0")
    assert _run_cube(*args, "--cube", "2", "--owner", "mover") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["board"] == board and out["cube"] == {"value": 2, "owner": "mover"}
    assert out["match"] is None
    # the net reads the pre-roll position as the opponent's afterstate (what self-play
    # trains on): its (0.3, 0.15, 0.03, 0.28, 0.07) for the side that just moved are, by
    # hand, the roller's win 0.7, gammons 0.28 / 0.07 won and 0.15 / 0.03 lost
    got = np.array([out["probs"][k] for k in PROB_NAMES])
    np.testing.assert_allclose(got, [0.7, 0.28, 0.07, 0.15, 0.03], atol=1e-5)
    assert out["decision"] in DECISIONS
    assert out["x"] == CONTACT_X
    best = max(out["no_double"], min(out["double_take"], out["double_pass"]))
    assert out["optimal"] == pytest.approx(best)

    assert _run_cube(*args, "--match", "7", "--score", "2", "6", "--crawford") == 0
    crawford = json.loads(capsys.readouterr().out)
    assert crawford["decision"] == "unavailable" and crawford["take"] is None
    assert crawford["match"] == {"length": 7, "score": [2, 6], "crawford": True}
    assert crawford["match_equities"]["no_double"] is not None


def test_cube_command_text(tiny_net: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_cube("--net", str(tiny_net)) == 0  # the opening position by default
    text = capsys.readouterr().out
    assert "money game, cube 1 centered" in text
    for word in (
        "Cubeless: win",
        "No double",
        "Double, take",
        "Double, pass",
        "Proper cube action",
    ):
        assert word in text
    assert _run_cube("--net", str(tiny_net), "--match", "5", "--score", "1", "3") == 0
    assert "5-point match, score 1-3" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--cube", "3"), "R1"),
        (("--cube", "1", "--owner", "mover"), "R24"),
        (("--score", "1", "2"), "--match"),
        (("--match", "7", "--score", "2", "4", "--crawford"), "Crawford"),
        (("--match", "7", "--score", "7", "0"), "scores"),
        (("--match", "7", "--jacoby"), "R33"),
        (("--board", "[1, 2"), ""),
        (("--board", json.dumps([0] * 19 + [-15] + [0] * 6)), "over"),
        (("--id", "not-an-id"), ""),
    ],
)
def test_cube_command_errors(
    tiny_net: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    assert _run_cube("--net", str(tiny_net), *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("nard cube: error:") and message in err


def test_cube_command_bad_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_cube("--net", str(tmp_path / "missing.pt")) == 2
    assert "missing.pt" in capsys.readouterr().err
    (tmp_path / "garbage.pt").write_text("not a checkpoint")
    assert _run_cube("--net", str(tmp_path / "garbage.pt")) == 2
    assert "garbage.pt" in capsys.readouterr().err


def test_cube_command_is_wired_into_nard(tiny_net: Path) -> None:
    from nard_rl import cli

    assert "nard_rl.commands.cube" in cli.COMMAND_MODULES
    out = subprocess.run(
        [sys.executable, "-m", "nard_rl", "cube", "--net", str(tiny_net), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["decision"] in DECISIONS


# -- resignations: one answer for every bot --------------------------------------------------
def test_resignations_are_answered_by_the_score_utility() -> None:
    from nard_rl.cube.model import CubeState, resignation_answer

    probs = [0.9, 0.8, 0.0, 0.0, 0.0]  # money equity 2 * 0.9 - 1 + 0.8 = 1.6 per stake
    single = resignation_answer(probs, False, False, "standard")
    assert (single.accept, single.offered, single.expected) == (False, 1.0, pytest.approx(1.6))
    gammon = resignation_answer(probs, True, False, "standard")
    assert gammon.accept and gammon.offered == 2.0
    # the stake scales both sides alike; Jacoby (R32) with the cube centered: gammons single
    at4 = resignation_answer(probs, True, False, "standard", CubeState(4, "mover"))
    assert at4.accept and (at4.offered, at4.expected) == (8.0, pytest.approx(6.4))
    jacoby = STANDARD.with_options(jacoby=True)
    centered = resignation_answer(probs, True, False, jacoby)
    assert (centered.accept, centered.offered, centered.expected) == (True, 1.0, pytest.approx(0.8))
    # one point from the match: a single win is the match, so the single resignation is
    # taken, where money equity (1.6 > 1) would play on for the gammon
    leader = resignation_answer(probs, False, False, "standard", None, MatchScore(5, 4, 0))
    assert leader.accept and leader.offered == pytest.approx(1.0)
    with pytest.raises(ValueError, match="five finite"):
        resignation_answer([0.5, 0.1], False, False)


def test_network_bots_decide_the_cube_by_the_shared_advisor() -> None:
    """The network player's cube answers (chouette bots, NardCube-v0) are the 1-ply
    advisor's, not its 0-ply pre-roll reading."""
    from nard_rl.cube.model import CubeState
    from nard_rl.engine.rules import cubeless_equity
    from nard_rl.players import make_player

    player = make_player("default")
    board = np.array(START_BOARD, dtype=np.int8)
    decision = player.cube_action(board, CubeState())
    zero = float(cubeless_equity(player.pre_roll_probabilities(board[None])[0], STANDARD))
    one = player.cube_advisor().probabilities(board[None], ply=1)[0]
    assert decision.cubeless == pytest.approx(float(cubeless_equity(one, STANDARD)), abs=1e-9)
    assert abs(decision.cubeless - zero) > 1e-4
    assert decision.decision == "no_double" and player.takes(board, CubeState())
    assert player.cube_advisor() is player.cube_advisor("standard")
