"""Cubeful games (``nard_rl.arena.cubegames``): the game loop's cube rules checked with scripted
cube policies, duplicate-dice symmetry, and gnubg's cube policy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from nard_rl.arena.cubegames import CubeBot, FixedPolicy, GnubgPolicy, play_cubeful
from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import CubeState
from nard_rl.players.pubeval import PubevalPlayer

FAR_AHEAD = [0, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -2, -2, -3, -3, -3, 0, 0, 0, 0, 0, 0, 0]
FAR_BEHIND = [0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -3, -3, -3, 0]


class Scripted:
    """Always (or never) doubles, always takes or always drops; records what it saw."""

    def __init__(self, double: bool, take: bool) -> None:
        self.double, self.take = double, take
        self.asked: list[tuple[CubeState, MatchScore | None]] = []

    def double_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        self.asked.extend(zip(cubes, matches, strict=True))
        return np.full(len(cubes), self.double)

    def take_batch(
        self, boards: np.ndarray, cubes: Sequence[CubeState], matches: Sequence[MatchScore | None]
    ) -> np.ndarray:
        return np.full(len(cubes), self.take)


def _bot(name: str, policy: object) -> CubeBot:
    return CubeBot(name, PubevalPlayer(), policy)  # type: ignore[arg-type]


def test_a_dropped_double_scores_the_cube_before_the_double() -> None:
    a = _bot("doubler", Scripted(double=True, take=False))
    b = _bot("dropper", Scripted(double=False, take=False))
    r = play_cubeful(a, b, 40, seed=3, batch_pairs=8)
    # A doubles at its first turn before rolling, B drops: +1 every game (R24)
    assert r.mean == 1.0 and r.ci95 == 0.0
    assert r.drops == 1.0 and r.doubles == 1.0


def test_cube_escalates_to_the_cap_when_both_double_and_take() -> None:
    a = _bot("a", Scripted(double=True, take=True))
    b = _bot("b", Scripted(double=True, take=True))
    r = play_cubeful(a, b, 20, seed=5, batch_pairs=4)
    assert r.mean_cube == 64.0  # R24: never above 64, every game gets there
    assert r.drops == 0.0
    # each side asked only when it may double: centered or its own cube, below 64 (R23)
    for policy, me in ((a.cube, "mover"), (b.cube, "mover")):
        for cube, _ in policy.asked:  # type: ignore[attr-defined]
            assert cube.owner in ("centered", me) and cube.value <= 32


def test_identical_bots_break_even_on_duplicate_dice() -> None:
    a = _bot("a", FixedPolicy())
    b = _bot("b", FixedPolicy())
    money = play_cubeful(a, b, 16, seed=1, batch_pairs=8)
    assert money.mean == 0.0 and money.doubles == 0.0
    match = play_cubeful(a, b, 8, match_length=3, seed=1, batch_pairs=4)
    assert match.mean == 0.5


def test_matches_respect_crawford_and_end_at_the_length() -> None:
    # every first double is dropped: games of one point, so matches reach the Crawford
    # game (played out, no one may double) and, when the trailer wins it, post-Crawford
    da, db = Scripted(double=True, take=False), Scripted(double=True, take=False)
    r = play_cubeful(_bot("a", da), _bot("b", db), 12, match_length=5, seed=2, batch_pairs=6)
    assert 0.0 <= r.mean <= 1.0
    asked = da.asked + db.asked
    # nobody is asked to double in the Crawford game (R34); post-Crawford they are
    assert asked and not any(m is not None and m.crawford for _, m in asked)
    assert any(m is not None and m.post_crawford for _, m in asked)
    # scores as seen by the doubler are always below the length
    assert all(m is not None and m.score_me < 5 and m.score_opp < 5 for _, m in asked)


def test_money_with_the_fixed_policy_is_cubeless() -> None:
    r = play_cubeful(_bot("a", FixedPolicy()), _bot("b", Scripted(False, True)), 8, seed=4)
    assert r.doubles == 0.0 and r.mean_cube == 1.0


@pytest.mark.gnubg
def test_gnubg_cube_policy_answers_from_the_doublers_side() -> None:
    from nard_rl.players.gnubg_player import GnubgPlayer

    with GnubgPlayer(0) as g:
        policy = GnubgPolicy(g)
        boards = np.array([FAR_AHEAD, FAR_BEHIND], dtype=np.int8)
        cubes = [CubeState(), CubeState()]
        takes = policy.take_batch(boards, cubes, [None, None])
        assert takes.tolist() == [False, True]
        start = np.array(
            [[0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]],
            dtype=np.int8,
        )
        assert policy.double_batch(start, [CubeState()], [None]).tolist() == [False]
        # post-Crawford the 3-away trailer doubles at once, whatever the position
        post = MatchScore(5, 2, 4)
        assert policy.double_batch(start, [CubeState()], [post]).tolist() == [True]
        # gnubg's checker play given a cube and a match score picks one of our plays
        from nard_rl.arena.cubegames import gnubg_cube_specs
        from nard_rl.engine.movegen import legal_afterstates_batch

        dice = np.array([[6, 4]], dtype=np.int8)
        afters, offsets = legal_afterstates_batch(start, dice)
        specs = gnubg_cube_specs([CubeState()], [post])
        pick = g.choose_batch(start, dice, afters, offsets, cubes=specs)
        assert 0 <= int(pick[0]) < int(offsets[1])


def test_nard_evaluate_cube_and_match_flags(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from nard_rl.commands.evaluate import main

    assert main(["pubeval", "random", "--cube", "--games", "6", "--json", "--no-progress"]) == 0
    money = json.loads(capsys.readouterr().out)
    assert money["kind"] == "money" and money["games"] == 6 and money["mean"] > 0
    argv = ["pubeval", "random", "--match", "3", "--games", "4", "--json", "--no-progress"]
    assert main(argv) == 0
    match = json.loads(capsys.readouterr().out)
    assert match["kind"] == "match" and match["match_length"] == 3 and 0 <= match["mean"] <= 1
    # the same checker player with a net's cube decisions: only A ever doubles
    argv = ["pubeval", "pubeval", "--cube", "--cube-by-a", "default", "--games", "4"]
    assert main([*argv, "--json", "--no-progress"]) == 0
    mixed = json.loads(capsys.readouterr().out)
    assert mixed["doubles"] > 0 and "cube: default" in mixed["player_a"]
    assert main(["pubeval", "pubeval", "--cube", "--cube-by-b", "pubeval", "--games", "4"]) == 2
    assert "network" in capsys.readouterr().err
    assert main(["pubeval", "--cube", "--games", "4"]) == 2
    assert "two players" in capsys.readouterr().err
    assert main(["pubeval", "random", "--match", "3", "--rules", "mars", "--games", "4"]) == 2
    assert "R28" in capsys.readouterr().err


def _fit_module():  # type: ignore[no-untyped-def]
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "fit_cube_efficiency.py"
    spec = importlib.util.spec_from_file_location("fit_cube_efficiency", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fit_recovers_a_known_cube_efficiency() -> None:
    """Results generated by the model with x = 0.8 plus a constant bias: the fit must
    find 0.8 for contact positions whatever the bias."""
    import json
    from pathlib import Path

    from nard_rl.arena.cubegames import CubeSample
    from nard_rl.cube.model import cube_decision
    from nard_rl.engine.position import Position

    fit = _fit_module().fit
    data = Path(__file__).resolve().parent / "data" / "cube_gnubg_public.jsonl"
    recs = [json.loads(line) for line in data.read_text().splitlines()]
    recs = [r for r in recs if r["match"]["length"] == 0 and not Position(r["board"]).is_race()]
    rng = np.random.default_rng(0)
    samples, probs = [], []
    for i, r in enumerate(recs[:300]):
        p = np.array(
            [
                r["probs"][k]
                for k in ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
            ]
        )
        cube = CubeState(r["cube"]["value"], r["cube"]["owner"])
        dead = cube_decision(p, cube, x=0.0).no_double
        live = cube_decision(p, cube, x=1.0).no_double
        outcome = dead + 0.8 * (live - dead) - 0.05 + rng.normal(0, 0.01)
        samples.append(CubeSample(i, 0, 0, np.array(r["board"]), cube, False, outcome))
        probs.append(p)
    res = fit(samples, np.array(probs))
    assert res["contact"]["estimate"] == pytest.approx(0.8, abs=0.02)
    assert res["contact"]["bias"] == pytest.approx(-0.05, abs=0.01)


def test_fit_script_runs(tmp_path: pytest.TempPathFactory) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = Path(str(tmp_path)) / "eff.json"
    run = subprocess.run(
        [sys.executable, str(root / "scripts" / "fit_cube_efficiency.py"), "--games", "4",
         "--compare", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=root,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "fitted-x vs fixed-x" in run.stdout
    saved = json.loads(out.read_text())
    assert 0.0 <= saved["contact_x"] <= 1.0


def test_rollouts_judge_races_without_the_race_net() -> None:
    """Cube rollouts average hundreds of race judgments, so they take the contact net
    (level on average) rather than the race net (better per position, gammons a little
    high); the search part of the advisor keeps the full default evaluator."""
    from nard_rl.cube.cubeful import CubeAdvisor
    from nard_rl.nets.evaluator import CompositeEvaluator, load_evaluator

    ev = load_evaluator("default")
    assert isinstance(ev, CompositeEvaluator) and ev.race is not None
    adv = CubeAdvisor(ev, rollout_trials=36)
    judge = adv.rollout_judge
    assert isinstance(judge, CompositeEvaluator) and judge.race is None
    assert judge.contact is ev.contact and judge.bearoff is ev.bearoff
    assert adv.search.evaluator is ev
    plain = load_evaluator("default").contact
    assert CubeAdvisor(plain).rollout_judge is plain
