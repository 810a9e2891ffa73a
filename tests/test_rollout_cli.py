"""``nard rollout``: answers with standard errors that mean what they say.

Races and bear-offs keep these tests fast (thousands of trials a second) and give exact
answers to compare with: the bear-off database.  Variance reduction is checked on
contact positions with a small random net (cheap to evaluate), against the same rollout
without it.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import numpy as np
import pytest
import torch

from nard_rl.cli import main
from nard_rl.engine.bearoff import get_bearoff_database
from nard_rl.engine.position import START_BOARD, Position, flip_boards
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import CompositeEvaluator, NetEvaluator
from nard_rl.nets.network import NetSpec
from nard_rl.search.rollout import Estimate, RolloutSettings, board_groups, rollout_values


def bearoff(mover: dict[int, int], opponent: dict[int, int]) -> list[int]:
    """A no-contact bear-off before the roll: the side on roll's checkers on its home
    points, the opponent's on its own."""
    b = [0] * 26
    for p, c in mover.items():
        b[p] = c
    for p, c in opponent.items():
        b[25 - p] = -c
    return b


def exact_win(board: list[int]) -> float:
    """The bear-off database's winning chance of the side on roll before the roll."""
    db = get_bearoff_database(False)
    return 1.0 - float(db.probabilities(Position(board).flip().array()[None, :])[0, 0])


RACES = [
    bearoff({6: 2, 5: 2, 4: 1, 2: 1}, {6: 1, 5: 2, 3: 2, 1: 1}),
    bearoff({6: 3, 4: 3, 1: 3}, {5: 3, 3: 3, 2: 2}),
    bearoff({1: 2, 2: 1}, {6: 2}),
    bearoff({6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, {6: 3, 5: 3, 4: 3, 3: 3, 2: 3}),
]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["rollout", "--quiet", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def run_jsonl(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], lines: list[str], *argv
) -> list[dict[str, Any]]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    assert main(["rollout", "--jsonl", "--quiet", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_json_states_probabilities_errors_and_settings(capsys: pytest.CaptureFixture) -> None:
    board = RACES[0]
    out = run_cli(capsys, "--board", json.dumps(board), "--json", "--trials", "432", "--seed", "5")
    assert out["mode"] == "position" and out["trials"] == 432
    assert (
        set(out["probs"])
        == set(out["probs_se"])
        == {
            "win",
            "win_gammon",
            "win_backgammon",
            "lose_gammon",
            "lose_backgammon",
        }
    )
    s = out["settings"]
    assert (s["trials"], s["seed"], s["truncation"], s["ply"]) == (432, 5, None, 0)
    assert s["variance_reduction"] is False  # auto: off in a race
    # no gammons in this bear-off (checkers are off on both sides), so equity = 2 win - 1
    assert out["equity"] == pytest.approx(2 * out["win"] - 1, abs=1e-5)
    assert out["equity_se"] == pytest.approx(2 * out["win_se"], abs=1e-5)
    # the plain binomial error of 432 trials, give or take stratification
    p = out["win"]
    assert 0.5 * np.sqrt(p * (1 - p) / 432) < out["win_se"] < 1.5 * np.sqrt(p * (1 - p) / 432)
    assert abs(out["win"] - exact_win(board)) < 3 * out["win_se"]


def test_races_agree_with_the_bearoff_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    lines = [json.dumps({"board": b, "trials": 1296, "seed": i}) for i, b in enumerate(RACES)]
    answers = run_jsonl(monkeypatch, capsys, lines)
    assert len(answers) == len(RACES)
    for board, a in zip(RACES, answers, strict=True):
        assert a["board"] == board
        assert abs(a["win"] - exact_win(board)) < 3 * a["win_se"], (a["win"], exact_win(board))
    # a rollout of an open race with all checkers on: no gammon chance hidden
    assert answers[3]["probs"]["win_gammon"] == 0.0


def test_standard_error_shrinks_with_the_square_root_of_the_trials(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    board = RACES[1]
    lines = [json.dumps({"board": board, "trials": t, "seed": 3}) for t in (144, 1296)]
    small, large = run_jsonl(monkeypatch, capsys, lines)
    ratio = small["win_se"] / large["win_se"]
    assert 2.2 < ratio < 3.9  # sqrt(1296 / 144) = 3


def test_same_seed_same_answer_other_seed_other_dice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    board = RACES[1]
    lines = [
        json.dumps({"board": board, "trials": 300, "seed": 11}),
        json.dumps({"board": board, "trials": 300, "seed": 11}),
        json.dumps({"board": board, "trials": 300, "seed": 12}),
    ]
    a, b, c = run_jsonl(monkeypatch, capsys, lines)
    assert a == b
    assert a["win"] != c["win"]


def test_every_jsonl_line_is_answered_in_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    good = {"board": RACES[2], "trials": 36}
    lines = [
        "not json",
        json.dumps([1, 2]),
        json.dumps(good),
        json.dumps({**good, "trails": 5}),
        json.dumps({**good, "trials": 0}),
        json.dumps({**good, "truncation": -2}),
        json.dumps({**good, "ply": 2}),
        json.dumps({**good, "mode": "cube", "dice": [3, 1]}),
        json.dumps({**good, "mode": "sideways"}),
        json.dumps({"board": [0] * 26}),
        json.dumps({"position_id": "nonsense!"}),
        json.dumps({**good, "variance_reduction": "sometimes"}),
        json.dumps(good),
    ]
    answers = run_jsonl(monkeypatch, capsys, lines)
    assert len(answers) == len(lines)
    ok = [i for i, a in enumerate(answers) if "error" not in a]
    assert ok == [2, 3, 12]
    assert answers[2] == answers[12]
    assert "JSON" in answers[0]["error"]
    # a field it does not read is named, not silently dropped (the default trials ran)
    assert answers[3]["ignored_fields"] == ["trails"] and answers[3]["trials"] == 36
    assert "trials" in answers[4]["error"]
    assert "truncation" in answers[5]["error"]
    assert "ply" in answers[6]["error"]
    assert "dice" in answers[7]["error"]
    assert "mode" in answers[8]["error"]


def test_candidate_plays_share_their_dice(capsys: pytest.CaptureFixture) -> None:
    board = bearoff({6: 2, 5: 2, 4: 2, 3: 1}, {6: 3, 5: 1, 1: 2})
    out = run_cli(
        capsys, "--board", json.dumps(board), "--dice", "6", "2", "--json", "--trials", "432"
    )
    plays = out["plays"]
    assert out["mode"] == "plays" and out["dice"] == [6, 2] and out["ranked_by"] == "equity"
    legal = {p.move for p in Position(board).plays(6, 2)}
    assert {p["move"] for p in plays} <= legal and len(plays) == min(5, len(legal))
    eq = [p["equity"] for p in plays]
    assert eq == sorted(eq, reverse=True)
    assert plays[0]["diff"] == 0.0
    for p in plays[1:]:
        assert p["diff"] == pytest.approx(p["equity"] - plays[0]["equity"], abs=1e-5)
        assert p["diff_se"] > 0
    # each candidate is a rollout of its own afterstate: the database agrees
    db = get_bearoff_database(False)
    for p in plays:
        exact = float(db.probabilities(np.array([p["board"]], dtype=np.int8))[0, 0])
        assert abs(p["win"] - exact) < 3.5 * p["win_se"]


def test_cube_decision_of_a_clear_double_pass(capsys: pytest.CaptureFixture) -> None:
    board = bearoff({1: 1, 2: 1}, {6: 3, 5: 3})  # almost always off in one roll
    out = run_cli(capsys, "--board", json.dumps(board), "--mode", "cube", "--json")
    c = out["cube_decision"]
    assert c["decision"] == "double_pass" and c["take"] is False
    assert c["equities"]["double_pass"] == 1.0
    # the doubled game is worth nearly twice the cube to the doubler (a loss costs 2)
    assert c["equities"]["double_take"] > 1.5
    assert c["equities"]["no_double"] > 0.9
    assert out["settings"]["variance_reduction"] is False
    # at 1-away (post-Crawford) a win of the cube already takes the match: no double,
    # since doubling only raises what a loss costs
    out = run_cli(
        capsys,
        *("--board", json.dumps(board), "--mode", "cube", "--json", "--trials", "144"),
        *("--match", "5", "--score", "4", "2"),
    )
    assert out["match"] == {"length": 5, "score": [4, 2], "crawford": False}
    c = out["cube_decision"]
    assert c["decision"] in ("no_double", "too_good")
    assert c["double_take_minus_no_double"] <= 0


def test_cube_rollout_of_a_race_agrees_with_the_database(capsys: pytest.CaptureFixture) -> None:
    # in a short bear-off the cubeful equity of a dead cube is the cubeless one: with
    # the opponent owning a cube at 64 nobody can double, so no double = 2 p - 1
    board = RACES[0]
    out = run_cli(
        capsys,
        *("--board", json.dumps(board), "--mode", "cube", "--json", "--trials", "1296"),
        *("--cube", "64", "--owner", "opponent"),
    )
    c = out["cube_decision"]
    assert c["decision"] == "unavailable" and c["equities"]["double_take"] is None
    want = 2 * exact_win(board) - 1
    assert abs(c["equities"]["no_double"] - want) < 3 * c["equities_se"]["no_double"]


def test_text_report_and_bad_options(capsys: pytest.CaptureFixture) -> None:
    board = json.dumps(RACES[2])
    assert main(["rollout", "--quiet", "--board", board, "--mode", "cube", "--trials", "72"]) == 0
    text = capsys.readouterr().out
    assert "72 trials" in text and "Proper cube action" in text
    assert main(["rollout", "--quiet", "--board", board, "--trials", "0"]) == 2
    assert "trials" in capsys.readouterr().err
    assert main(["rollout", "--quiet", "--board", board, "--mode", "plays"]) == 2
    assert "dice" in capsys.readouterr().err
    assert main(["rollout", "--quiet", "--board", json.dumps([0] * 26)]) == 2


@pytest.mark.slow
def test_workers_give_the_same_answers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # two requests go out in chunks of trials, four as whole requests
    for n in (2, 4):
        lines = [json.dumps({"board": b, "trials": 300, "seed": 7}) for b in RACES[:n]]
        one = run_jsonl(monkeypatch, capsys, lines)
        two = run_jsonl(monkeypatch, capsys, lines, "--workers", "2")
        assert one == two


# --------------------------------------------------------------------------------------
# the library: variance reduction is unbiased and its errors are honest


def _small_net() -> CompositeEvaluator:
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (16,), "sigmoid", "standard")
    torch.manual_seed(0)
    net = spec.build().eval()
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.5)
    return CompositeEvaluator(NetEvaluator(net, spec), bearoff=get_bearoff_database(False))


def test_variance_reduction_keeps_the_mean_and_lowers_the_error() -> None:
    # the shipped net: its 0-ply values are what the luck is measured with
    from nard_rl.nets.evaluator import load_evaluator

    ev = load_evaluator("default")
    board = np.array(START_BOARD, dtype=np.int8)[None, :]
    afters = flip_boards(board)
    groups = board_groups(board)
    est = {}
    for vr in (False, True):
        s = RolloutSettings(trials=720, seed=9, truncation=3, variance_reduction=vr)
        v = rollout_values(ev, afters, s, groups=groups)[0]
        est[vr] = Estimate.of(1.0 - v[:, 0])  # the side on roll's winning chance
    plain, reduced = est[False], est[True]
    assert plain.se is not None and reduced.se is not None
    assert reduced.se < 0.5 * plain.se
    assert abs(plain.mean - reduced.mean) < 3.0 * np.hypot(plain.se, reduced.se)
    assert 0.45 < reduced.mean < 0.56  # the opening position is about even


def test_chunks_of_trials_are_the_whole_rollout() -> None:
    ev = _small_net()
    board = np.array(START_BOARD, dtype=np.int8)[None, :]
    s = RolloutSettings(trials=80, seed=4, truncation=4, variance_reduction=True)
    whole = rollout_values(ev, flip_boards(board), s, groups=board_groups(board))
    parts = [
        rollout_values(ev, flip_boards(board), s, groups=board_groups(board), trials=slice(a, b))
        for a, b in ((0, 36), (36, 50), (50, 80))
    ]
    # the same dice and plays; only float32 sums of differently sized batches differ
    np.testing.assert_allclose(np.concatenate(parts, axis=1), whole, atol=1e-6)


def test_one_ply_play_inside_the_rollout_is_stated_and_runs() -> None:
    ev = _small_net()
    board = np.array(START_BOARD, dtype=np.int8)[None, :]
    s0 = RolloutSettings(trials=36, seed=1, truncation=2, variance_reduction=False)
    s1 = RolloutSettings(trials=36, seed=1, truncation=2, variance_reduction=False, ply=1)
    v0 = rollout_values(ev, flip_boards(board), s0, groups=board_groups(board))
    v1 = rollout_values(ev, flip_boards(board), s1, groups=board_groups(board))
    assert s1.to_dict()["ply"] == 1
    assert np.abs(v0 - v1).max() > 1e-6  # 1-ply search plays differently from 0-ply


def test_a_certain_looking_outcome_keeps_an_error_bar() -> None:
    e = Estimate.of(np.ones(1296), probability=True)
    assert e.mean == 1.0 and 0.0003 < e.se < 0.0007
    assert Estimate.of(np.full(10, 0.25), probability=True).se == 0.0


@pytest.mark.parametrize("vr", [False, True])
def test_a_full_stratified_two_ply_rollout_is_the_two_ply_search(vr: bool) -> None:
    # 1,296 trials meet every pair of first two rolls once: cut after two plies the
    # rollout is exactly the 2-ply expectation, and every luck term sums to zero
    from nard_rl.search.nply import Search

    ev = _small_net()
    board = np.array(START_BOARD, dtype=np.int8)[None, :]
    afters = flip_boards(board)
    s = RolloutSettings(trials=1296, seed=2, truncation=2, variance_reduction=vr)
    got = rollout_values(ev, afters, s, groups=board_groups(board)).mean(axis=1)
    want = Search(ev, cache_size=0).afterstate_probs(afters, ply=2)
    np.testing.assert_allclose(got, want, atol=2e-5)


@pytest.mark.gnubg
def test_bench_against_gnubgs_two_sided_database() -> None:
    import re
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "bench_rollout.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--positions", "12", "--trials", "432", "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert "(Bearoff2)" in proc.stdout  # gnubg's exact two-sided database judged them
    m = re.search(r"within 3 SE: (\d+) / 12", proc.stdout)
    assert m is not None, proc.stdout
    assert int(m.group(1)) >= 11
