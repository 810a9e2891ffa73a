"""The receiver's answer to a double (one shared ``take_decision``, judged from the
doubler's side), cube-model properties, score-aware utilities, ``nard cube --jsonl`` and
the shared reference file judged with the net's own probabilities."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from test_cube import _bench_module, _tiny_net

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.cube.model import (
    DECISIONS,
    DOUBLE_PASS,
    PROB_NAMES,
    TOO_GOOD,
    CubeState,
    cube_decision,
    cubeless_equity,
    score_utility,
    swap_sides,
    take_decision,
)
from nard_rl.engine.rules import STANDARD

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cube_gnubg_public.jsonl"

# races (no contact): the player on roll far ahead / far behind
FAR_AHEAD = [0, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, -2, -3, -3, -3, 0, 0, 0, 0, 0, 0, 0]
FAR_BEHIND = [0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -3, -3, -3, 0]


@pytest.fixture(scope="module")
def met() -> MatchEquityTable:
    return MatchEquityTable.default()


def _random_probs(rng: np.random.Generator, n: int, gammons: bool = True) -> np.ndarray:
    s = rng.random((n, 5))
    win = s[:, 0]
    g = s[:, 1] * 0.5 if gammons else np.zeros(n)
    return np.stack(
        [
            win,
            win * g,
            win * g * s[:, 2] * 0.3,
            (1 - win) * s[:, 3] * 0.5,
            (1 - win) * s[:, 3] * 0.5 * s[:, 4] * 0.3,
        ],
        axis=1,
    )


# --------------------------------------------------------------------------------------
# the receiver's answer


def test_take_decision_is_judged_from_the_doublers_side() -> None:
    doubler = np.array([0.90, 0.0, 0.0, 0.0, 0.0])  # a race the doubler wins 90%
    assert take_decision(doubler, CubeState()) is False
    # the receiver's own cube decision asks whether the DOUBLER would take a double from
    # a 10% side: yes, and that was the wrong answer to give
    assert cube_decision(swap_sides(doubler), CubeState()).take is True
    # the same position with the doubler at 70%: a take
    assert take_decision(np.array([0.70, 0.0, 0.0, 0.0, 0.0]), CubeState()) is True


def test_take_decision_refuses_when_no_double_is_possible(met: MatchEquityTable) -> None:
    probs = np.array([0.7, 0.1, 0.0, 0.05, 0.0])
    with pytest.raises(ValueError, match="R23"):
        take_decision(probs, CubeState(2, "opponent"))
    with pytest.raises(ValueError, match="unavailable"):
        take_decision(probs, CubeState(), MatchScore(5, 4, 2, crawford=True), met=met)


def _bot_answer(human_board: list[int]) -> str:
    """``nard play``'s bot answering the human's double in ``human_board`` (human on roll)."""
    from nard_rl.commands.play import HUMAN, Session
    from nard_rl.engine.game import Game

    out = io.StringIO()
    session = Session("default", 0, "standard", 0, out)
    game = Game("standard", seed=0, start=human_board, player_on_roll=HUMAN)
    game.double()
    session.bot_turn(game)
    return out.getvalue().strip()


def test_nard_play_bot_answers_the_humans_double_from_the_humans_side() -> None:
    # the human is far ahead in a race: the bot must pass (the old code took)
    assert _bot_answer(FAR_AHEAD) == "bot drops"
    # the human is far behind and doubles anyway: the bot takes (the old code dropped)
    assert _bot_answer(FAR_BEHIND) == "bot takes"


# --------------------------------------------------------------------------------------
# properties of the cube model


@pytest.mark.parametrize("cube", [CubeState(), CubeState(2, "mover"), CubeState(4, "mover")])
def test_double_pass_is_worth_the_stake(cube: CubeState, met: MatchEquityTable) -> None:
    rng = np.random.default_rng(1)
    for p in _random_probs(rng, 200):
        d = cube_decision(p, cube)
        assert d.double_pass == 1.0  # per current stake: the doubler cashes the cube
        match = MatchScore(9, 2, 5)
        dm = cube_decision(p, cube, match, met=met)
        assert dm.match_equities is not None
        assert dm.match_equities["double_pass"] == pytest.approx(
            met.after_game(match.away_me, match.away_opp, cube.value)
        )
        assert dm.double_pass == pytest.approx(1.0)


def test_too_good_needs_gammon_chances(met: MatchEquityTable) -> None:
    rng = np.random.default_rng(2)
    seen_too_good = False
    for p in _random_probs(rng, 400, gammons=False):
        for match in (None, MatchScore(7, 1, 3), MatchScore(5, 0, 0)):
            for cube in (CubeState(), CubeState(2, "mover")):
                assert cube_decision(p, cube, match, met=met).decision != TOO_GOOD
    # ... and with gammons it does happen (the test above could not pass by accident)
    for win in np.linspace(0.80, 0.99, 20):
        d = cube_decision([win, 0.6 * win, 0.0, 0.0, 0.0], CubeState())
        seen_too_good |= d.decision == TOO_GOOD
    assert seen_too_good


def _take_point(cube: CubeState, match: MatchScore, met: MatchEquityTable) -> float:
    """The doubler's winning chance above which the receiver passes (bisection)."""
    lo, hi = 0.5, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if take_decision([mid, 0, 0, 0, 0], cube, match, met=met):
            lo = mid
        else:
            hi = mid
    return lo


def test_take_points_at_known_match_scores(met: MatchEquityTable) -> None:
    # 2-away/2-away, first double: the 2-cube is dead (either side wins the match with
    # it), so the receiver needs what a pass leaves it, 2-away vs a 1-away leader in the
    # Crawford game: take when its chances are at least that
    crawford_2_1 = met.equity(2, 1)
    tp = _take_point(CubeState(), MatchScore(5, 3, 3), met)
    assert 1.0 - tp == pytest.approx(crawford_2_1, abs=1e-6)
    # 4-away/2-away (trailer doubles to 2, dead for the leader who needs 2): the leader's
    # pass leaves 4-away... seen from the doubler (the trailer): receiver passes when the
    # trailer's chance p satisfies p*ME(win 2) + (1-p)*ME(lose 2) > ME(win 1), dead cube
    # for the leader but the trailer could redouble: check the take point against the
    # dead-cube bound, which it can only exceed
    match = MatchScore(7, 3, 5)
    win1 = met.after_game(4, 2, 1)
    win2, lose2 = met.after_game(4, 2, 2), met.after_game(4, 2, -2)
    dead = (win1 - lose2) / (win2 - lose2)
    assert _take_point(CubeState(), match, met) >= dead - 1e-6
    # post-Crawford, a 2-away trailer doubles the 1-away leader: a pass leaves
    # 1-away/1-away (50%), a take plays this game for the match: the leader takes while
    # it wins at least half the time
    post = MatchScore(5, 3, 4)
    assert post.post_crawford
    assert _take_point(CubeState(), post, met) == pytest.approx(met.equity(1, 1), abs=1e-6)


# --------------------------------------------------------------------------------------
# score-aware utilities


def test_money_utility_is_equity_times_stake_with_jacoby() -> None:
    rng = np.random.default_rng(3)
    p = _random_probs(rng, 50)
    jac = STANDARD.with_options(jacoby=True)
    np.testing.assert_allclose(score_utility(STANDARD)(p), cubeless_equity(p))
    # R32: centered (even after an automatic double, R31) -> gammons single
    np.testing.assert_allclose(score_utility(jac, CubeState(2))(p), 2 * (2 * p[:, 0] - 1))
    np.testing.assert_allclose(score_utility(jac, CubeState(2, "mover"))(p), 2 * cubeless_equity(p))


def test_match_utility_values_gammons_at_the_score(met: MatchEquityTable) -> None:
    single = np.array([[0.6, 0.0, 0.0, 0.0, 0.0]])
    gammony = np.array([[0.6, 0.3, 0.0, 0.0, 0.0]])
    # 1-away leader (post-Crawford): a gammon adds nothing
    u = score_utility(STANDARD, CubeState(), MatchScore(7, 6, 3))
    assert u(gammony)[0] == pytest.approx(u(single)[0])
    # 4-away trailer vs 2-away, cube 2: a gammon wins the match outright
    u = score_utility(STANDARD, CubeState(2, "opponent"), MatchScore(7, 3, 5), met=met)
    assert u(gammony)[0] == pytest.approx(0.3 * 1.0 + 0.3 * met.after_game(4, 2, 2) + 0.4 * 0.0)
    # ... and it is a match-winning chance
    rng = np.random.default_rng(4)
    vals = score_utility(STANDARD, CubeState(), MatchScore(11, 2, 7))(_random_probs(rng, 100))
    assert np.all((vals >= 0) & (vals <= 1))


def test_score_aware_play_choice_differs_from_money() -> None:
    # two candidate plays: safe (more wins, no gammons) and bold (fewer wins, gammons)
    safe = [0.62, 0.02, 0.0, 0.02, 0.0]
    bold = [0.57, 0.25, 0.0, 0.10, 0.0]
    cands = np.array([safe, bold])
    assert int(np.argmax(score_utility(STANDARD)(cands))) == 1  # money: gammons pay
    # leading 1-away post-Crawford: gammons won are worthless, lost ones lose nothing more
    u = score_utility(STANDARD, CubeState(), MatchScore(5, 4, 1))
    assert int(np.argmax(u(cands))) == 0


# --------------------------------------------------------------------------------------
# nard cube --jsonl


@pytest.fixture(scope="module")
def tiny_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_net(tmp_path_factory.mktemp("cubejsonl") / "tiny.pt")


def test_cube_jsonl_answers_reference_lines_and_errors(tiny_net: Path) -> None:
    from nard_rl.commands.cube import load_advisor, serve_jsonl

    lines = DATA.read_text().splitlines()[:5]
    bad = [
        "not json",
        "[1, 2]",
        '{"board": [1, 2]}',
        '{"position_id": "4HPwATDgc/ABMA", "cube": {"value": 3}}',
        '{"position_id": "4HPwATDgc/ABMA", "match": {"length": 5, "score": [5, 0]}}',
        '{"position_id": "4HPwATDgc/ABMA", "match": {"length": 0, "score": [1, 0]}}',
        '{"position_id": "4HPwATDgc/ABMA", "rules": "mars"}',
    ]
    crawford = (
        '{"position_id": "4HPwATDgc/ABMA", "match": {"length": 5, "score": [4, 2], '
        '"crawford": true}}'
    )
    out = io.StringIO()
    serve_jsonl(
        io.StringIO("\n".join([*lines, *bad, crawford]) + "\n"),
        out,
        load_advisor(str(tiny_net), ply=0),
    )
    answers = [json.loads(a) for a in out.getvalue().splitlines()]
    assert len(answers) == len(lines) + len(bad) + 1
    for a in answers[: len(lines)]:
        assert a["decision"] in DECISIONS
        assert set(a["equities"]) == {"no_double", "double_take", "double_pass", "optimal"}
        assert set(a["probs"]) == set(PROB_NAMES)
        e = a["equities"]
        if e["double_take"] is not None:
            assert e["optimal"] == pytest.approx(
                max(e["no_double"], min(e["double_take"], e["double_pass"]))
            )
            assert a["take"] == (e["double_take"] <= e["double_pass"] + 1e-9)
    for a, why in zip(
        answers[len(lines) : -1],
        ("JSON", "object", "26", "R1", "scores", "match length", "rules"),
        strict=True,
    ):
        assert set(a) == {"error"} and why in a["error"], a
    assert answers[-1]["decision"] == "unavailable" and answers[-1]["take"] is None


def test_cube_ply1_averages_the_rollers_best_plays(tiny_net: Path) -> None:
    """1-ply pre-roll probabilities, recomputed by hand: each of the 21 rolls (doubles
    1/36, others 2/36), the roller's best play by cubeless money equity."""
    from nard_rl.commands.cube import load_advisor
    from nard_rl.engine.position import Position
    from nard_rl.nets.evaluator import load_evaluator

    board = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
    ev = load_evaluator(str(tiny_net))
    expected = np.zeros(5)
    for a in range(1, 7):
        for b in range(a, 7):
            plays = Position(board).plays(a, b)
            probs = ev.probabilities(np.array([p.board for p in plays], dtype=np.int8))
            best = probs[int(np.argmax(cubeless_equity(probs)))]
            expected += best * (1 if a == b else 2) / 36
    advisor = load_advisor(str(tiny_net), ply=1)
    got = advisor.probabilities(np.array([board]), blended=False)[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    zero = load_advisor(str(tiny_net), ply=0).probabilities(np.array([board]))[0]
    assert not np.allclose(got, zero, atol=1e-4)
    # without rollouts the cube reads 1-ply blended with the 0-ply below (the search's
    # root blend); `nard cube` rolls out its close decisions, so it reads plain n-ply
    from nard_rl.cube.cubeful import CubeAdvisor

    assert advisor.rollout_trials > 0 and advisor.blend == ()
    quick = CubeAdvisor(ev, ply=1)
    w = quick.blend[0]
    blended = quick.probabilities(np.array([board]))[0]
    np.testing.assert_allclose(blended, (1 - w) * expected + w * zero, atol=1e-5)


# --------------------------------------------------------------------------------------
# the shared reference file, judged with the shipped net's own probabilities


def test_equity_lost_scoring_by_hand() -> None:
    bench = _bench_module()
    rec = {
        "decision": DOUBLE_PASS,
        "equities": {"no_double": 0.8, "double_take": 1.3, "double_pass": 1.0, "optimal": 1.0},
    }
    d = cube_decision([0.9, 0.0, 0.0, 0.0, 0.0], CubeState())  # a plain double/pass
    assert d.decision == DOUBLE_PASS
    assert bench.equity_lost(rec, d) == (0.0, 0.0)
    nd = cube_decision([0.55, 0.0, 0.0, 0.0, 0.0], CubeState())  # holds and takes
    assert bench.equity_lost(rec, nd) == pytest.approx((0.2, 0.3))


def _know_nothing(n: int) -> np.ndarray:
    """The probabilities of a player that knows nothing about the position (even chances,
    average gammons): the baseline any net must beat on the shared file."""
    return np.tile([0.5, 0.12, 0.005, 0.12, 0.005], (n, 1))


def test_reference_file_with_the_nets_own_probabilities() -> None:
    """The shipped net's own probabilities on the shared file decide the cube far better
    than knowing nothing, and better at 1-ply than at 0-ply: properties of any net worth
    shipping.  Its figures (mean equity lost, agreement) are the benchmark's:
    scripts/bench_cube.py --net default --ply 0|1.  0-ply on all 3,000 decisions; 1-ply,
    the default of ``nard cube``, on the first 600 (seconds)."""
    bench = _bench_module()
    records = bench.load_records()
    probs0, _, _ = bench.net_probabilities(records, "default", 0)
    res0 = bench.benchmark(records, probs=probs0)["all"]
    blind = bench.benchmark(records, probs=_know_nothing(len(records)))["all"]
    assert res0["lost_mp"] < 0.5 * blind["lost_mp"], (res0["lost_mp"], blind["lost_mp"])
    assert res0["decision_agreement"] > blind["decision_agreement"]
    sub = records[:600]
    probs1, _, _ = bench.net_probabilities(sub, "default", 1)
    lost1 = bench.benchmark(sub, probs=probs1)["all"]["lost_mp"]
    lost0 = bench.benchmark(sub, probs=probs0[:600])["all"]["lost_mp"]
    assert lost1 < lost0


def test_rollouts_refine_the_shipped_nets_close_cube_decisions() -> None:
    """The close decisions of the first 300 reference positions rolled out as ``nard
    cube`` does (432 games each, blended by ``SEARCH_WORTH_TRIALS``); the figures per net
    are the benchmark's (scripts/bench_cube.py --net default --refine 0.15 --rollout 432
    --limit 300).  For any net: some but not most decisions are close, the rollouts
    reach close decisions only and never cost equity there.  (144 games are too few to
    promise that on 300 positions: generation 8 lost 1.19 mp with them, 1.05 without,
    0.80 with 432.)"""
    from nard_rl.cube.cubeful import DEFAULT_CUBE_ROLLOUT

    bench = _bench_module()
    records = bench.load_records()[:300]
    # both plain n-ply (a rollout's default), so only the rollouts tell them apart
    plain, _, _ = bench.net_probabilities(records, "default", 1, 0.15, blend=())
    rolled, _, refined = bench.net_probabilities(
        records, "default", 1, 0.15, rollout=DEFAULT_CUBE_ROLLOUT
    )
    assert 0.0 < refined < 0.5
    moved = np.abs(rolled - plain).max(axis=1) > 1e-4
    assert 0.0 < moved.mean() <= refined  # close decisions only
    lost_plain = bench.benchmark(records, probs=plain)["all"]["lost_mp"]
    lost_rolled = bench.benchmark(records, probs=rolled)["all"]["lost_mp"]
    assert lost_rolled <= lost_plain + 0.05
    blind = bench.benchmark(records, probs=_know_nothing(len(records)))["all"]["lost_mp"]
    assert lost_plain < 0.5 * blind  # figures: scripts/bench_cube.py (see the docstring)


def test_cube_env_network_opponent_answers_from_the_doublers_side() -> None:
    from nard_rl.envs.cube_env import NardCubeEnv

    env = NardCubeEnv(opponent="default")
    _, info = env.reset(seed=0, options={"board": FAR_AHEAD})
    assert info["phase"] == "cube"
    _, reward, terminated, _, info = env.step(1)  # the agent, far ahead, doubles
    assert terminated and info["end_reason"] == "drop" and reward == 1.0
    _, info = env.reset(seed=0, options={"board": FAR_BEHIND})
    _, reward, terminated, _, info = env.step(1)  # far behind: the net takes
    assert not terminated and info["cube_value"] == 2 and info["cube_owner"] == "opponent"


def test_nard_agent_plays_for_the_match_score() -> None:
    """The same roll played differently at money and by a 1-away leader post-Crawford,
    whose gammons are worth nothing: the net's choice through ``score_utility``.  Which
    positions differ depends on the net, so the reference file's first positions are
    played with 4-1, some choices must differ, and each difference must be the two
    utilities' ranking."""
    from nard_rl.commands.agent import answer_request
    from nard_rl.engine.position import Position
    from nard_rl.players import make_player

    player = make_player("default")
    utility = score_utility(STANDARD, CubeState(), MatchScore(5, 4, 1))
    differ = 0
    for line in DATA.read_text().splitlines()[:60]:
        board = json.loads(line)["board"]
        request = {"board": board, "dice": [4, 1]}
        money = answer_request(request, player, STANDARD)
        leader = answer_request(
            {**request, "match": {"length": 5, "score": [4, 1]}}, player, STANDARD
        )
        if money["move"] == leader["move"]:
            continue
        differ += 1
        # the utilities ranked them so: recompute both choices from the net's probabilities
        plays = {p.move: p.board for p in Position(board).plays(4, 1)}
        chosen = np.array([plays[money["move"]], plays[leader["move"]]], dtype=np.int8)
        probs = np.asarray(player.probabilities(chosen), dtype=np.float64)
        assert cubeless_equity(probs[0]) >= cubeless_equity(probs[1])
        u = utility(probs)
        assert u[1] >= u[0]
    assert differ >= 2
    # a bad cube field is refused
    with pytest.raises(ValueError, match="R1"):
        answer_request({"board": board, "dice": [4, 1], "cube": {"value": 3}}, player, STANDARD)


def test_close_decisions_are_read_one_ply_deeper(tiny_net: Path) -> None:
    from nard_rl.cube.cubeful import CubeAdvisor, _is_close
    from nard_rl.nets.evaluator import load_evaluator

    records = [json.loads(line) for line in DATA.read_text().splitlines()[:40]]
    boards = np.array([r["board"] for r in records], dtype=np.int8)
    cubes = [CubeState(r["cube"]["value"], r["cube"]["owner"]) for r in records]
    matches = [
        MatchScore(r["match"]["length"], *r["match"]["score"], r["match"]["crawford"])
        if r["match"]["length"]
        else None
        for r in records
    ]
    ev = load_evaluator(str(tiny_net))
    plain = CubeAdvisor(ev, ply=0, refine_margin=0.0)
    refining = CubeAdvisor(ev, ply=0, refine_margin=0.5)
    p0, d0, plies0 = plain.analyse_batch(boards, cubes, matches)
    p, _, plies = refining.analyse_batch(boards, cubes, matches)
    assert np.all(plies0 == 0)
    close = np.array([_is_close(d, 0.5) for d in d0])
    assert close.any() and not close.all()
    assert np.array_equal(plies == 1, close)
    np.testing.assert_allclose(p[~close], p0[~close])
    np.testing.assert_allclose(p[close], plain.probabilities(boards[close], ply=1), atol=1e-6)


def test_rollouts_blend_into_the_close_decisions_only(tmp_path: Path) -> None:
    import torch

    from nard_rl.cube.cubeful import CubeAdvisor
    from nard_rl.engine.classify import race_flags
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.search.rollout import pre_roll_rollout

    torch.manual_seed(3)  # a fixed small random net: 16 of the 24 decisions close
    tiny_net = _tiny_net(tmp_path / "tiny.pt")

    records = [json.loads(line) for line in DATA.read_text().splitlines()[:24]]
    boards = np.array([r["board"] for r in records], dtype=np.int8)
    cubes = [CubeState(r["cube"]["value"], r["cube"]["owner"]) for r in records]
    matches: list[MatchScore | None] = [None] * len(records)
    ev = load_evaluator(str(tiny_net))
    # the search's readings blended in both (a rollout's default is plain: asked for here)
    refining = CubeAdvisor(ev, ply=0, refine_margin=0.5)
    rolling = CubeAdvisor(
        ev, ply=0, refine_margin=0.5, rollout_trials=36, rollout_weight=0.25, blend=refining.blend
    )
    p1, _, plies1 = refining.analyse_batch(boards, cubes, matches)
    p2, d2, plies2 = rolling.analyse_batch(boards, cubes, matches)
    assert np.array_equal(plies1, plies2)
    close = plies2 > 0
    assert close.any() and not close.all()
    np.testing.assert_allclose(p2[~close], p1[~close])
    # close races keep the search (see the next test); the others take in the rollout
    contact = close & ~race_flags(boards)
    assert contact.any() and (close & ~contact).any()
    np.testing.assert_allclose(p2[close & ~contact], p1[close & ~contact])
    rolled = pre_roll_rollout(ev, boards[contact], trials=36)
    # a rollout meets the plain search reading (it corrects the search's bias itself)
    plain = refining.probabilities(boards[contact], ply=1, blended=False)
    assert not np.allclose(plain, p1[contact])  # the others read the blended one
    np.testing.assert_allclose(p2[contact], 0.75 * plain + 0.25 * rolled, atol=1e-6)
    assert not np.allclose(p2[contact], p1[contact])
    # the same position gets the same answer alone or in a batch
    i = int(np.flatnonzero(close)[0])
    alone = rolling.analyse_batch(boards[i : i + 1], cubes[i : i + 1], matches[i : i + 1])
    np.testing.assert_allclose(alone[0][0], p2[i], atol=1e-6)
    assert alone[1][0].decision == d2[i].decision
    # by default a rollout weighs by its games: the search counts as SEARCH_WORTH_TRIALS
    assert CubeAdvisor(ev, rollout_trials=96).rollout_weight == pytest.approx(0.5)
    assert CubeAdvisor(ev, rollout_trials=288).rollout_weight == pytest.approx(0.75)
    for bad in ({"rollout_trials": -1}, {"rollout_trials": 2.0}, {"rollout_weight": 0.0}):
        with pytest.raises(ValueError):
            CubeAdvisor(ev, **bad)  # type: ignore[arg-type]


def test_nard_hint_ranks_for_the_match_score(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from nard_rl.commands import hint

    # the first position of the reference file where the shipped net plays 4-1
    # differently for a 1-away leader than for money (which one depends on the net)
    parser = argparse.ArgumentParser()
    hint.add_arguments(parser)
    for line in DATA.read_text().splitlines()[:60]:
        board = json.loads(line)["board"]
        base = ["--board", json.dumps(board), "--dice", "4", "1", "--json"]
        assert hint.run(parser.parse_args(base)) == 0
        money = json.loads(capsys.readouterr().out)["plays"]
        assert hint.run(parser.parse_args([*base, "--match", "5", "--score", "4", "1"])) == 0
        leader = json.loads(capsys.readouterr().out)["plays"]
        if money and money[0]["move"] != leader[0]["move"]:
            break
    else:
        raise AssertionError("the score changed no play in 60 positions")
    assert all(0.0 <= p["equity"] <= 1.0 for p in leader)  # match-winning chances


def test_close_races_keep_the_search_and_are_not_rolled_out(tmp_path: Path) -> None:
    """A rollout stops at the race, so a race's rollout would be one roll and the contact
    net's guess: close no-contact decisions keep their deeper search (race net and
    bear-off database), close contact decisions are rolled out."""
    import torch

    from nard_rl.cube.cubeful import CubeAdvisor
    from nard_rl.engine.classify import race_flags
    from nard_rl.nets.evaluator import load_evaluator

    torch.manual_seed(3)
    tiny_net = _tiny_net(tmp_path / "tiny.pt")
    records = [json.loads(line) for line in DATA.read_text().splitlines()]
    boards_all = np.array([r["board"] for r in records], dtype=np.int8)
    race = race_flags(boards_all)
    pick = np.concatenate([np.flatnonzero(race)[:8], np.flatnonzero(~race)[:8]])
    boards = boards_all[pick]
    cubes = [CubeState(1, "centered")] * len(pick)
    matches: list[MatchScore | None] = [None] * len(pick)
    ev = load_evaluator(str(tiny_net))
    refining = CubeAdvisor(ev, ply=0, refine_margin=5.0, blend=())  # every decision is close
    rolling = CubeAdvisor(ev, ply=0, refine_margin=5.0, rollout_trials=36)
    assert rolling.blend == () and CubeAdvisor(ev).blend  # plain with rollouts by default
    assert not refining.rolls_out(boards).any()
    assert np.array_equal(rolling.rolls_out(boards), ~race[pick])
    p1, _, plies1 = refining.analyse_batch(boards, cubes, matches)
    p2, _, plies2 = rolling.analyse_batch(boards, cubes, matches)
    assert np.all(plies1 == 1) and np.all(plies2 == 1)
    np.testing.assert_allclose(p2[:8], p1[:8], atol=1e-9)
    assert not np.allclose(p2[8:], p1[8:])
