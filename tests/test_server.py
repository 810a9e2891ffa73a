"""The HTTP API of ``nard serve``: hints, evaluation, bot actions, sessions, wildbg routes.

Every answer is checked against the layers the server is built on (the engine's legal
plays, ``nard agent``'s choice, the shared cube advisor), so a server that answered
plausibly but wrongly would fail.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from reference_movegen import random_game_positions

from nard_rl.commands.agent import answer_line as agent_line
from nard_rl.engine.position import START_BOARD, Position
from nard_rl.engine.rules import get_rules
from nard_rl.players.base import make_player
from nard_rl.server.analysis import Analyzer
from nard_rl.server.app import create_app
from nard_rl.server.batching import MicroBatcher
from nard_rl.server.config import ServerConfig, load_config
from nard_rl.server.models import MAX_EVALUATE_POSITIONS

START_ID = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture(scope="module")
def client(analyzer: Analyzer):
    with TestClient(create_app(ServerConfig(max_body_bytes=65_536), analyzer)) as c:
        yield c


def game_positions(count: int, seed: int = 7) -> list[tuple[list[int], tuple[int, int]]]:
    """Positions and rolls from seeded games of random plays, spread over whole games."""
    return [(list(b), r) for b, r in random_game_positions(seed, count * 7)[::7]]


def check_probs(p: dict[str, float]) -> None:
    """Cumulative probabilities that add up: win >= gammon >= backgammon, and the same
    for losses within the complement 1 - win."""
    assert 0.0 <= p["win_backgammon"] <= p["win_gammon"] + 1e-6 <= p["win"] + 2e-6 <= 1 + 1e-5
    assert 0.0 <= p["lose_backgammon"] <= p["lose_gammon"] + 1e-6 <= 1 - p["win"] + 2e-5


# --------------------------------------------------------------------------------------
# hints


def test_hint_ranks_exactly_the_legal_plays(client: TestClient) -> None:
    for board, dice in game_positions(6):
        r = client.post("/v1/hint", json={"board": board, "dice": list(dice)})
        assert r.status_code == 200, r.text
        plays = r.json()["plays"]
        legal = {p.board for p in Position(board).plays(*dice)}
        assert {tuple(p["board"]) for p in plays} == legal
        eq = [p["equity"] for p in plays]
        assert eq == sorted(eq, reverse=True)
        assert plays[0]["diff"] == 0 and all(p["diff"] <= 0 for p in plays)
        for k, p in enumerate(plays):
            check_probs(p["probs"])
            # the best plays carry the resulting position's ID, seen by the next roller
            if k < 3:
                assert Position.from_id(p["position_id"]) == Position(p["board"]).flip()


def test_hint_best_play_is_the_agents(client: TestClient) -> None:
    player = make_player("default")
    rules = get_rules("standard")
    for board, dice in game_positions(12, seed=11):
        r = client.post("/v1/hint", json={"board": board, "dice": list(dice), "top": 1})
        plays = r.json()["plays"]
        want = agent_line(json.dumps({"board": board, "dice": list(dice)}), player, rules)
        if not plays:
            assert want["move"] == ""
            continue
        assert plays[0]["board"] == want["board"]


def test_hint_ids_and_ply(client: TestClient) -> None:
    r0 = client.post("/v1/hint", json={"position_id": START_ID, "dice": [6, 5]}).json()
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:65:0:0:0:0:10"
    rx = client.post("/v1/hint", json={"xgid": xgid}).json()  # dice come from the XGID
    assert rx["dice"] == [6, 5] and rx["plays"][0]["move"] == r0["plays"][0]["move"]
    r1 = client.post("/v1/hint", json={"position_id": START_ID, "dice": [6, 5], "ply": 1})
    assert r1.status_code == 200 and r1.json()["ply"] == 1
    assert {p["move"] for p in r1.json()["plays"]} == {p["move"] for p in r0["plays"]}


def test_hint_without_dice_is_the_cube_analysis(client: TestClient, analyzer: Analyzer) -> None:
    # a racing position well ahead: the cube advisor's decision, whatever it is
    board = [0] + [0] * 24 + [0]
    board[1:7] = [3, 3, 3, 2, 2, 2]
    board[19:25] = [-1, -3, -3, -3, -3, -2]
    body = {"board": board, "match": {"length": 7, "score": [2, 4]}}
    cube = client.post("/v1/hint", json=body).json()["cube"]
    assert cube["decision"] in ("no_double", "double_take", "double_pass", "too_good")
    from nard_rl.cube.met import MatchScore
    from nard_rl.cube.model import CubeState

    adv = analyzer.advisor(get_rules("standard"))
    want = adv.decide(np.array(board), CubeState(), MatchScore(7, 2, 4))
    assert cube["decision"] == want.decision
    assert cube["no_double"] == pytest.approx(want.no_double, abs=1e-4)
    assert cube["match"] == {"length": 7, "score": [2, 4], "crawford": False}
    check_probs(cube["probs"])
    # the Crawford game: doubling is unavailable
    craw = dict(body, match={"length": 7, "score": [6, 4], "crawford": True})
    assert client.post("/v1/hint", json=craw).json()["cube"]["decision"] == "unavailable"


def test_hint_errors_name_the_problem(client: TestClient) -> None:
    cases = [
        ({"position_id": "zzz", "dice": [1, 2]}, 400, "Position ID"),
        ({"board": [1] * 26, "dice": [1, 2]}, 400, "board"),
        ({"board": [0] * 25, "dice": [1, 2]}, 422, "board"),
        ({"position_id": START_ID, "dice": [0, 7]}, 400, "dice"),
        ({"position_id": START_ID, "dice": [1]}, 422, "dice"),
        ({"position_id": START_ID, "cube": {"value": 3}}, 400, "cube value"),
        ({"position_id": START_ID, "match": {"length": 3, "score": [5, 0]}}, 400, "score"),
        ({"position_id": START_ID, "xgid": "XGID=x"}, 400, "exactly one"),
        ({"dice": [1, 2]}, 400, "exactly one"),
        ({"position_id": START_ID, "rules": "chess"}, 422, "rules"),
        ({"position_id": START_ID, "ply": 9}, 422, "ply"),
        ({"position_id": START_ID, "bogus": 1}, 422, "bogus"),
    ]
    for body, status, word in cases:
        r = client.post("/v1/hint", json=body)
        assert r.status_code == status, (body, r.text)
        assert word.lower() in r.json()["error"].lower(), (body, r.text)
    r = client.post("/v1/hint", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "json" in r.json()["error"].lower()


def test_body_limit(client: TestClient) -> None:
    r = client.post("/v1/hint", content=b"{" + b" " * 70_000 + b"}")
    assert r.status_code == 413 and "bytes" in r.json()["error"]


# --------------------------------------------------------------------------------------
# batch evaluation


def test_evaluate_batch_matches_single_positions(client: TestClient, analyzer: Analyzer) -> None:
    boards = [b for b, _ in game_positions(10, seed=3)]
    r = client.post("/v1/evaluate", json={"positions": [{"board": b} for b in boards]})
    assert r.status_code == 200
    results = r.json()["results"]
    rules = get_rules("standard")
    for board, res in zip(boards, results, strict=True):
        check_probs(res["probs"])
        # before the roll: the opponent's afterstate at 0-ply, sides swapped
        flipped = Position(board).flip().array()[None, :]
        opp = analyzer.probabilities(flipped, rules)[0]
        assert res["probs"]["win"] == pytest.approx(1 - opp[0], abs=1e-4)
        assert res["probs"]["win_gammon"] == pytest.approx(opp[3], abs=1e-4)
    after = client.post(
        "/v1/evaluate", json={"positions": [{"board": boards[0]}], "afterstate": True}
    ).json()["results"][0]["probs"]
    direct = analyzer.probabilities(np.array([boards[0]], dtype=np.int8), rules)[0]
    assert after["win"] == pytest.approx(direct[0], abs=1e-4)
    too_many = {"positions": [{"position_id": START_ID}] * (MAX_EVALUATE_POSITIONS + 1)}
    assert client.post("/v1/evaluate", json=too_many).status_code == 422


def test_micro_batcher_evaluates_concurrent_requests_together() -> None:
    calls: list[int] = []

    def fn(rows: np.ndarray, key: str) -> np.ndarray:
        calls.append(rows.shape[0])
        return np.repeat(rows[:, :1].astype(np.float64), 5, axis=1)

    async def main() -> list[np.ndarray]:
        b = MicroBatcher(fn, max_wait=0.05)
        await b.start()
        rows = [np.full((i + 1, 26), i, dtype=np.int8) for i in range(8)]
        outs = await asyncio.gather(*(b.submit(r, "standard") for r in rows))
        await b.stop()
        return outs

    outs = asyncio.run(main())
    assert calls == [sum(range(1, 9))]  # one evaluation for all eight requests
    for i, out in enumerate(outs):  # each request gets its own rows back
        assert out.shape == (i + 1, 5) and np.all(out == i)


# --------------------------------------------------------------------------------------
# bot actions


def test_action_covers_every_decision(client: TestClient) -> None:
    post = lambda body: client.post("/v1/action", json=body)  # noqa: E731
    r = post({"position_id": START_ID, "dice": [6, 5]}).json()
    assert r["action"] == "move" and r["move"] == "24/13"
    assert post({"position_id": START_ID}).json()["action"] in ("roll", "double")
    assert post({"position_id": START_ID, "may_double": False}).json() == {"action": "roll"}
    assert post({"position_id": START_ID, "doubled": True}).json() == {"action": "take"}
    assert post({"position_id": START_ID, "resignation": "gammon"}).json()["action"] == "accept"
    # the bot bears off against a closed-out opponent with none off: a gammon or more is
    # on the way, so a single resignation is rejected and a backgammon one accepted
    board = [0] * 26
    board[1:7] = [2, 2, 2, 3, 3, 3]
    board[7:13] = [-2] * 6
    board[0] = -3
    assert post({"board": board, "resignation": "single"}).json()["action"] == "reject"
    assert post({"board": board, "resignation": "backgammon"}).json()["action"] == "accept"
    bad = post({"position_id": START_ID, "doubled": True, "dice": [1, 2]})
    assert bad.status_code == 400 and "at most one" in bad.json()["error"]
    owned = post({"position_id": START_ID, "doubled": True, "cube": {"value": 2, "owner": "mover"}})
    assert owned.status_code == 400 and "R23" in owned.json()["error"]


# --------------------------------------------------------------------------------------
# game sessions


def test_money_session_plays_to_the_end(client: TestClient) -> None:
    g = client.post("/v1/games", json={"seed": 5, "first": "human"}).json()
    gid = g["id"]
    assert g["phase"] == "opening" and g["to_act"] == "human"
    for _ in range(400):
        if g["result"] is not None:
            break
        if g["phase"] == "take_or_drop":
            g = client.post(f"/v1/games/{gid}/take").json()
        elif g["phase"] in ("opening", "roll_or_double"):
            g = client.post(f"/v1/games/{gid}/roll").json()
        elif g["phase"] == "move":
            plays = g["legal_plays"]
            r = client.post(f"/v1/games/{gid}/move", json={"board": plays[-1]["board"]})
            assert r.status_code == 200, r.text
            g = r.json()
        else:  # pragma: no cover - the bot never resigns
            raise AssertionError(g)
    assert g["result"] is not None and g["result"]["points"] >= 1
    assert any("wins" in line for line in g["log"])
    assert client.post(f"/v1/games/{gid}/roll").status_code == 409


def test_session_rules_pending_play_and_errors(client: TestClient) -> None:
    g = client.post("/v1/games", json={"seed": 2, "first": "human", "match_length": 3}).json()
    gid = g["id"]
    g = client.post(f"/v1/games/{gid}/roll").json()
    assert g["phase"] == "move" and g["on_roll"] == "human"  # the human won the opening
    r = client.post(f"/v1/games/{gid}/move", json={"move": "24/1"})
    assert r.status_code == 409 and "R8" in r.json()["error"]  # illegal, with the rule id
    first, second = g["legal_plays"][0], g["legal_plays"][-1]
    # R38: a pending play can be changed until it is committed
    p = client.post(f"/v1/games/{gid}/move", json={"move": first["move"], "commit": False}).json()
    assert p["pending"]["board"] == first["board"] and p["phase"] == "move"
    p = client.post(f"/v1/games/{gid}/move", json={"move": second["move"], "commit": False}).json()
    assert p["pending"]["board"] == second["board"]
    g = client.post(f"/v1/games/{gid}/commit").json()
    assert g["pending"] is None and g["to_act"] in ("human", None)
    assert any(f"human plays {second['move']}" in line for line in g["log"])
    assert client.post(f"/v1/games/{gid}/commit").status_code == 409
    assert client.post("/v1/games/nope/roll").status_code == 404
    assert client.post(f"/v1/games/{gid}/resign", json={"kind": "huge"}).status_code == 422
    r = client.post("/v1/games", json={"rules": "mars", "match_length": 99})
    assert r.status_code == 422


def test_one_point_match_to_the_end(client: TestClient) -> None:
    g = client.post("/v1/games", json={"seed": 9, "match_length": 1}).json()
    gid = g["id"]
    for _ in range(400):
        if g["match_over"]:
            break
        if g["result"] is not None:
            g = client.post(f"/v1/games/{gid}/next").json()
        elif g["phase"] == "move":
            g = client.post(
                f"/v1/games/{gid}/move", json={"board": g["legal_plays"][0]["board"]}
            ).json()
        elif g["phase"] == "take_or_drop":
            g = client.post(f"/v1/games/{gid}/pass").json()
        else:
            g = client.post(f"/v1/games/{gid}/roll").json()
    assert g["match_over"] and max(g["score"]) == 1
    assert not g["can_double"]  # no cube in a 1-point match's only game (R33, R34)


def test_resignation_in_a_session(client: TestClient) -> None:
    g = client.post("/v1/games", json={"seed": 4, "first": "human"}).json()
    gid = g["id"]
    g = client.post(f"/v1/games/{gid}/roll").json()
    g = client.post(f"/v1/games/{gid}/resign", json={"kind": "backgammon"}).json()
    # at the start, a backgammon is far more than the bot expects: it accepts
    assert g["result"] == {"winner": "bot", "points": 3, "kind": "backgammon", "reason": "resign"}


# --------------------------------------------------------------------------------------
# wildbg


def wildbg_query(board: list[int], dice: tuple[int, int] | None = None) -> str:
    parts = [f"p{i}={v}" for i, v in enumerate(board) if v]
    if dice:
        parts += [f"die1={dice[0]}", f"die2={dice[1]}"]
    return "&".join(parts)


def apply_details(board: list[int], play: list[dict[str, int]]) -> list[int]:
    b = list(board)
    for step in play:
        f, t = step["from"], step["to"]
        assert b[f] > 0, (board, play)
        b[f] -= 1
        if t > 0:
            if b[t] == -1:
                b[t] = 0
                b[0] -= 1
            b[t] += 1
    return b


def test_wildbg_move_matches_the_agent(client: TestClient) -> None:
    player = make_player("default")
    rules = get_rules("standard")
    for board, dice in game_positions(15, seed=21):
        r = client.get("/move?" + wildbg_query(board, dice))
        assert r.status_code == 200, r.text
        moves = r.json()["moves"]
        legal = {p.board for p in Position(board).plays(*dice)}
        want = agent_line(json.dumps({"board": board, "dice": list(dice)}), player, rules)
        if not legal:
            assert len(moves) == 1 and moves[0]["play"] == []
            continue
        assert {tuple(apply_details(board, m["play"])) for m in moves} == legal
        assert apply_details(board, moves[0]["play"]) == want["board"]
        for m in moves:
            p = m["probabilities"]
            assert 0 <= p["winBg"] <= p["winG"] + 1e-6 <= p["win"] + 2e-6 <= 1 + 1e-5
            assert 0 <= p["loseBg"] <= p["loseG"] + 1e-6 <= 1 - p["win"] + 2e-5


def test_wildbg_eval_and_errors(client: TestClient) -> None:
    r = client.get("/eval?" + wildbg_query(list(START_BOARD)))
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"cube", "probabilities"} and set(body["cube"]) == {"double", "accept"}
    assert body["cube"] == {"double": False, "accept": True}
    assert 0.45 < body["probabilities"]["win"] < 0.6
    m = client.get("/move?" + wildbg_query(list(START_BOARD), (3, 1)) + "&x_away=3&o_away=5")
    assert m.status_code == 200 and m.json()["moves"][0]["play"]
    for query, word in [
        ("die1=3&die2=9&p24=2", "between 1 and 6"),
        ("die1=3&p24=2", "die1 and die2"),
        ("die1=3&die2=1&p24=x", "integer"),
        ("die1=3&die2=1&p0=2", "board[0]"),
        ("die1=3&die2=1&p5=16", "-15..15"),
        ("die1=3&die2=1&p5=3&x_away=3", "x_away"),
    ]:
        r = client.get("/move?" + query)
        assert r.status_code == 400, (query, r.text)
        assert word in r.json()["message"], (query, r.text)


# --------------------------------------------------------------------------------------
# the rest: health, docs, config, batch command-line modes


def test_health_docs_and_board(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    for route in ("/v1/hint", "/v1/evaluate", "/v1/action", "/v1/games", "/move", "/eval"):
        assert route in spec["paths"]
    assert client.get("/docs").status_code == 200
    page = client.get("/")
    assert page.status_code == 200 and "nard" in page.text.lower()


def test_config_file_and_validation(tmp_path: Path) -> None:
    path = tmp_path / "serve.json"
    path.write_text(json.dumps({"port": 9001, "ply": 1}))
    cfg = load_config(path, port=9002)
    assert (cfg.port, cfg.ply) == (9002, 1)
    path.write_text(json.dumps({"prot": 1}))
    with pytest.raises(ValueError, match="unknown server settings"):
        load_config(path)
    with pytest.raises(ValueError, match="ply"):
        load_config(None, ply=7)
    with pytest.raises(ValueError, match="cube_rollout"):
        load_config(None, cube_rollout=-1)
    assert load_config(None, cube_rollout=144).cube_rollout == 144


def test_analyzer_rolls_out_close_cube_decisions_when_asked() -> None:
    from nard_rl.cube.model import CubeState

    plain, rolling = Analyzer(), Analyzer(cube_rollout=36)
    assert rolling.advisor("standard").rollout_trials == 36
    assert plain.advisor("standard").rollout_trials == 0
    with pytest.raises(ValueError, match="cube_rollout"):
        Analyzer(cube_rollout=-2)
    # the shared reference positions: only those read one ply deeper are rolled out
    data = Path(__file__).parent / "data" / "cube_gnubg_public.jsonl"
    boards = np.array(
        [json.loads(line)["board"] for line in data.read_text().splitlines()[:40]], np.int8
    )
    cubes = [CubeState(1, "centered")] * len(boards)
    # without rollouts the search's readings are blended (CubeAdvisor.blend); read them
    # plain here, as the rolling advisor does, so only the rollouts tell the two apart
    assert plain.advisor("standard").blend and rolling.advisor("standard").blend == ()
    plain.advisor("standard").blend = ()
    p0, _, ply0 = plain.advisor("standard").analyse_batch(boards, cubes, [None] * len(boards))
    p1, _, ply1 = rolling.advisor("standard").analyse_batch(boards, cubes, [None] * len(boards))
    assert np.array_equal(ply0, ply1)
    close = ply1 == 2
    assert close.any() and not close.all()
    np.testing.assert_allclose(p1[~close], p0[~close])
    assert not np.allclose(p1[close], p0[close])


def test_hint_jsonl_command() -> None:
    lines = [
        {"position_id": START_ID, "dice": [3, 1], "top": 2},
        {"position_id": START_ID, "match": {"length": 5, "score": [2, 3]}},
        "garbage",
        {"board": [0]},
    ]
    stdin = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    out = subprocess.run(
        [sys.executable, "-m", "nard_rl", "hint", "--jsonl"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.splitlines()
    answers = [json.loads(x) for x in out]
    assert len(answers) == 4
    first, second = (p["move"] for p in answers[0]["plays"])
    assert first == "8/5 6/5" and second != first
    assert answers[1]["cube"]["decision"] in ("no_double", "double_take", "double_pass")
    assert "JSON" in answers[2]["error"] and "26" in answers[3]["error"]


def test_agent_cube_questions() -> None:
    player = make_player("default")
    rules = get_rules("standard")
    ask = lambda body: agent_line(json.dumps(body), player, rules)  # noqa: E731
    assert ask({"position_id": START_ID})["action"] in ("roll", "double")
    assert ask({"position_id": START_ID, "doubled": True}) == {"action": "take"}
    assert ask({"position_id": START_ID, "resignation": "single"}) == {"action": "accept"}
    assert "error" in ask({"position_id": START_ID, "doubled": "yes"})
    assert (
        "network player"
        in agent_line(json.dumps({"position_id": START_ID}), make_player("pubeval"), rules)["error"]
    )


def test_hint_jsonl_survives_hostile_lines_under_a_strict_locale() -> None:
    """An integer of 5,000 digits ended ``nard hint --jsonl`` (a ValueError that is no
    JSONDecodeError); invalid UTF-8 ended every stream under a strict locale."""
    import os

    from test_cli_moves import STRICT_UTF8, check_hostile_answers, hostile_stdin

    res = subprocess.run(
        [sys.executable, "-m", "nard_rl", "hint", "--jsonl"],
        input=hostile_stdin(),
        capture_output=True,
        timeout=300,
        env={**os.environ, **STRICT_UTF8},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    check_hostile_answers(res.stdout, "plays")


def test_cube_jsonl_survives_hostile_lines() -> None:
    import io

    from test_cli_moves import check_hostile_answers, hostile_stdin

    from nard_rl.commands.cube import load_advisor, serve_jsonl

    out = io.StringIO()
    serve_jsonl(io.BytesIO(hostile_stdin()), out, load_advisor("default", ply=0, refine=0))
    check_hostile_answers(out.getvalue().encode(), "decision", reads_dice=False)
