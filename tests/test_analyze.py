"""``nard analyze``: the analysis of gnubg-exported match files against gnubg's own
analysis of the same files (``tests/data/records/*.gnubg0.json``, gnubg 1.07 at 0-ply),
the JSON shape, the command line and ``POST /v1/analyze``.

gnubg's reference figures were written once by ``scripts/bench_analyze.py
--make-test-data``; the tests compare against the stored numbers, so they need no gnubg.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nard_rl.analysis import MatchAnalyser, Settings, analyse, mark, rating
from nard_rl.records import load_match

DATA = Path(__file__).parent / "data" / "records"


@pytest.fixture(scope="module")
def analyser() -> MatchAnalyser:
    return MatchAnalyser.load("default", Settings(ply=0))


@pytest.fixture(scope="module")
def result_3pt(analyser: MatchAnalyser) -> dict[str, Any]:
    return analyse(load_match(DATA / "gnubg_3pt.sgf"), analyser).to_dict()


def _ref(stem: str) -> dict[str, Any]:
    return json.loads((DATA / f"{stem}.gnubg0.json").read_text())


def test_marks_and_ratings_follow_gnubg_thresholds() -> None:
    assert mark(0.0399) is None
    assert mark(0.04) == "doubtful"
    assert mark(0.0799) == "doubtful"
    assert mark(0.08) == "bad"
    assert mark(0.16) == "very bad"
    assert rating(1.9) == "Supernatural"
    assert rating(4.0) == "World class"
    assert rating(7.9) == "Expert"
    assert rating(11.0) == "Advanced"
    assert rating(17.0) == "Intermediate"
    assert rating(25.0) == "Casual player"
    assert rating(34.0) == "Beginner"
    assert rating(60.0) == "Awful!"


def test_json_shape(result_3pt: dict[str, Any]) -> None:
    assert set(result_3pt["players"]) == {"Alice", "Bob"}
    for p in result_3pt["players"].values():
        for block in ("checker", "cube", "overall"):
            assert {"decisions", "error_rate", "luck_rate"} <= set(p[block])
        assert p["overall"]["decisions"] == p["checker"]["decisions"] + p["cube"]["decisions"]
        assert p["rating"] == rating(p["overall"]["error_rate"])
    need = {
        "game", "move_number", "player", "kind", "dice", "position_id", "match_id",
        "played", "best", "equity_lost", "mark", "luck", "win_before", "win_after",
    }  # fmt: skip
    kinds = set()
    for d in result_3pt["decisions"]:
        assert need <= set(d)
        kinds.add(d["kind"])
        assert d["equity_lost"] >= 0
        assert d["mark"] == mark(d["equity_lost"] / 1000.0 + 1e-9) or d["equity_lost"] < 40
        assert 0.0 <= d["win_before"] <= 1.0 and 0.0 <= d["win_after"] <= 1.0
        if d["kind"] == "checker":
            assert len(d["dice"]) == 2 and d["luck"] is not None
    assert kinds == {"checker", "double", "take"}
    json.dumps(result_3pt)  # plain JSON all through


def test_error_rates_are_totals_over_decisions(result_3pt: dict[str, Any]) -> None:
    for name, p in result_3pt["players"].items():
        mine = [d for d in result_3pt["decisions"] if d["player"] == name]
        checker = [d["equity_lost"] for d in mine if d["kind"] == "checker"]
        assert p["checker"]["decisions"] == len(checker)
        assert p["checker"]["error_rate"] == pytest.approx(np.mean(checker), abs=0.06)
        every = [d["equity_lost"] for d in mine]
        assert p["overall"]["error_rate"] == pytest.approx(np.mean(every), abs=0.06)
        rolls = [t for t in result_3pt["timeline"] if t["player"] == name]
        assert p["luck_total"] == pytest.approx(sum(t["luck"] for t in rolls), abs=1.0)


def test_same_decisions_as_gnubg(result_3pt: dict[str, Any]) -> None:
    """Unforced moves exactly as gnubg counts them; the actual doubles and takes found."""
    ref = _ref("gnubg_3pt")
    names = result_3pt["names"]
    for p, name in enumerate(names):
        ours = result_3pt["players"][name]
        assert ours["checker"]["decisions"] == ref["players"][str(p)]["unforced"]
        assert ours["checker"]["moves"] == ref["players"][str(p)]["moves"]
    theirs = [(m["player"], m["kind"]) for m in ref["moves"] if "kind" in m]
    ours_cube = [
        (d["player_index"], "double" if d["kind"] == "double" else d["played"])
        for d in result_3pt["decisions"]
        if d["kind"] == "take" or (d["kind"] == "double" and d["played"] == "double")
    ]
    assert ours_cube == [(p, "take" if k == "take" else k) for p, k in theirs]


def _aligned(result: dict[str, Any], ref: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Checker errors (EMG) of the same moves: ours, gnubg's, in match order per player."""
    ours: dict[int, list[float]] = {0: [], 1: []}
    for d in result["decisions"]:
        if d["kind"] == "checker":
            ours[d["player_index"]].append(d["equity_lost"] / 1000.0)
    theirs: dict[int, list[float]] = {0: [], 1: []}
    for m in ref["moves"]:
        if "kind" not in m and m["n"] > 1:
            theirs[m["player"]].append(m["lost"])
    a = np.array(ours[0] + ours[1])
    b = np.array(theirs[0] + theirs[1])
    assert a.shape == b.shape
    return a, b


@pytest.mark.parametrize("stem", ["gnubg_3pt", pytest.param("gnubg_5pt", marks=pytest.mark.slow)])
def test_equity_lost_close_to_gnubg(analyser: MatchAnalyser, stem: str) -> None:
    """Where gnubg finds the play made the best one, nard's error is small; where gnubg
    finds a big error, so does nard; and the two rank the players alike."""
    result = (
        analyse(load_match(DATA / f"{stem}.mat"), analyser).to_dict()
        if stem != "gnubg_3pt"
        else analyse(load_match(DATA / f"{stem}.sgf"), analyser).to_dict()
    )
    ref = _ref(stem)
    ours, theirs = _aligned(result, ref)
    agree = theirs < 0.001
    assert agree.sum() >= 10
    assert np.mean(ours[agree] < 0.04) >= 0.85  # both say: no (or a tiny) error
    big = theirs >= 0.08
    if big.any():
        assert np.mean(ours[big] >= 0.02) >= 0.6  # both see the blunders
    assert np.corrcoef(ours, theirs)[0, 1] >= 0.5
    rates = [result["players"][n]["checker"]["error_rate"] for n in result["names"]]
    ref_rates = [ref["players"][k]["checker_rate"] for k in ("0", "1")]
    assert (rates[0] < rates[1]) == (ref_rates[0] < ref_rates[1])


def test_sgf_and_mat_give_the_same_analysis(
    analyser: MatchAnalyser, result_3pt: dict[str, Any]
) -> None:
    other = analyse(load_match(DATA / "gnubg_3pt.mat"), analyser).to_dict()
    assert other["players"] == result_3pt["players"]
    assert other["decisions"] == result_3pt["decisions"]


def test_cli_json_and_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from nard_rl.cli import main

    assert main(["analyze", str(DATA / "gnubg_3pt.mat"), "--json", "--ply", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["players"]["Bob"]["checker"]["decisions"] == 23
    bad = tmp_path / "bad.mat"
    bad.write_text((DATA / "gnubg_3pt.mat").read_text().replace("41: 6/5 13/9", "41: 6/1 13/9"))
    assert main(["analyze", str(bad), "--ply", "0"]) == 2
    err = capsys.readouterr().err
    assert "game 1, move 1" in err and "6/1 13/9" in err


def test_cli_text_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from nard_rl.cli import main

    html = tmp_path / "report.html"
    assert main(["analyze", str(DATA / "gnubg_3pt.sgf"), "--ply", "0", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "Worst decisions" in out and "better:" in out and "Rating" in out
    page = html.read_text()
    assert "data:image/png;base64," in page and "Marked decisions" in page


def test_route_analyze() -> None:
    from fastapi.testclient import TestClient

    from nard_rl.server.app import create_app
    from nard_rl.server.routes_analyze import MAX_MATCH_BYTES

    text = (DATA / "gnubg_3pt.mat").read_bytes()
    with TestClient(create_app()) as client:
        r = client.post("/v1/analyze?ply=0", content=text)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["players"]["Bob"]["checker"]["decisions"] == 23
        r2 = client.post("/v1/analyze", json={"match": text.decode(), "ply": 0})
        assert r2.json()["players"] == body["players"]
        chart = client.post("/v1/analyze/chart", json=body)
        assert chart.status_code == 200 and chart.content[:8] == b"\x89PNG\r\n\x1a\n"
        bad = client.post("/v1/analyze", content=text.replace(b"41: 6/5 13/9", b"41: 6/1 13/9"))
        assert bad.status_code == 400 and "game 1, move 1" in bad.json()["error"]
        big = client.post("/v1/analyze", content=b" " * (MAX_MATCH_BYTES + 10))
        assert big.status_code == 413
        assert client.post("/v1/analyze", content=b"").status_code == 400
        assert client.post("/v1/analyze/chart", json={"x": 1}).status_code == 400
        page = client.get("/analysis")
        assert page.status_code == 200 and "analysis.js" in page.text


def test_route_analyzes_a_game_session() -> None:
    """A session against the bot, analysed as it stands (a double may be pending)."""
    from fastapi.testclient import TestClient

    from nard_rl.server.app import create_app

    with TestClient(create_app()) as client:
        v = client.post("/v1/games", json={"match_length": 3, "seed": 4, "first": "human"}).json()
        gid = v["id"]
        human_moves = 0
        for _ in range(3):
            if v["phase"] in ("opening", "roll_or_double"):
                v = client.post(f"/v1/games/{gid}/roll").json()
            if v["phase"] == "move":
                board = v["legal_plays"][0]["board"]
                v = client.post(f"/v1/games/{gid}/move", json={"board": board}).json()
                human_moves += 1
        r = client.post(f"/v1/games/{gid}/analysis?ply=0")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["names"] == ["human", "bot"] and body["match_length"] == 3
        assert body["players"]["human"]["checker"]["moves"] == human_moves
        rolls = [t for t in body["timeline"] if t["player"] == "human"]
        assert len(rolls) == human_moves
        assert client.post("/v1/games/missing/analysis").status_code == 404


@pytest.mark.slow
def test_workers_give_the_same_analysis(result_3pt: dict[str, Any]) -> None:
    from nard_rl.analysis.parallel import analyse_matches

    matches = [load_match(DATA / "gnubg_3pt.sgf"), load_match(DATA / "gnubg_3pt.mat")]
    results = analyse_matches(matches, ply=0, workers=2, progress=False)
    for r in results:
        d = r.to_dict()
        assert d["players"] == result_3pt["players"]
        assert d["decisions"] == result_3pt["decisions"]
