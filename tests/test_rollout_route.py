"""``/v1/rollout``: bounded background jobs that a client starts, polls and cancels."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nard_rl.engine.bearoff import get_bearoff_database
from nard_rl.engine.position import START_BOARD, Position
from nard_rl.server.analysis import Analyzer
from nard_rl.server.app import create_app
from nard_rl.server.config import ServerConfig
from nard_rl.server.routes_rollout import RolloutLimits

RACE = [0, 0, 1, 0, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -1, -1, -2, 0, 0, 0]
"""A bear-off: the side on roll with 6 checkers on its home points, the opponent 6."""


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture
def client(analyzer: Analyzer):
    app = create_app(ServerConfig(), analyzer)
    app.state.rollout_limits = RolloutLimits(max_trials=5000, max_jobs=2, threads=1)
    with TestClient(app) as c:
        yield c
        store = getattr(app.state, "rollout_jobs", None)
        if store is not None:
            store.close()


def wait(client: TestClient, job_id: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(f"/v1/rollout/{job_id}")
        assert r.status_code == 200
        view = r.json()
        if view["status"] not in ("queued", "running", "cancelling"):
            return view
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {view['status']} after {timeout} s")


def test_a_job_runs_to_its_result(client: TestClient) -> None:
    r = client.post("/v1/rollout", json={"board": RACE, "trials": 1296, "seed": 4, "tag": 7})
    assert r.status_code == 202
    job = r.json()
    assert set(job) == {"id", "status"} and job["status"] in ("queued", "running")
    view = wait(client, job["id"])
    assert view["status"] == "done"
    assert view["progress"] == {"trials_done": 1296, "trials_total": 1296, "fraction": 1.0}
    result = view["result"]
    assert result["mode"] == "position" and result["settings"]["trials"] == 1296
    assert result["ignored_fields"] == ["tag"]
    db = get_bearoff_database(False)
    exact = 1.0 - float(db.probabilities(Position(RACE).flip().array()[None, :])[0, 0])
    assert abs(result["win"] - exact) < 3 * result["win_se"]
    # the same request answers the same (the dice are the seed's)
    again = wait(
        client,
        client.post("/v1/rollout", json={"board": RACE, "trials": 1296, "seed": 4}).json()["id"],
    )
    assert again["result"]["win"] == result["win"]


def test_plays_and_cube_modes(client: TestClient) -> None:
    r = client.post(
        "/v1/rollout",
        json={"board": RACE, "dice": [4, 2], "trials": 144, "candidates": 3},
    )
    plays = wait(client, r.json()["id"])["result"]
    assert plays["mode"] == "plays" and len(plays["plays"]) == 3
    assert plays["plays"][0]["diff"] == 0.0
    r = client.post(
        "/v1/rollout",
        json={"position_id": Position(RACE).position_id(), "mode": "cube", "trials": 144},
    )
    cube = wait(client, r.json()["id"])["result"]
    assert cube["cube_decision"]["decision"] in (
        "no_double",
        "double_take",
        "double_pass",
        "too_good",
    )
    assert cube["cube_decision"]["equities_se"]["no_double"] > 0


def test_limits_and_bad_requests_get_4xx_with_a_message(client: TestClient) -> None:
    r = client.post("/v1/rollout", json={"board": RACE, "trials": 6000})
    assert r.status_code == 400 and "at most 5000" in r.json()["error"]
    # the work counts every candidate: 5 plays x 1,296 trials
    opening = {"board": list(START_BOARD), "dice": [3, 1], "trials": 1296}
    r = client.post("/v1/rollout", json=opening)
    assert r.status_code == 400 and "5000" in r.json()["error"]
    for body, word in [
        ({"board": RACE, "trials": 0}, "trials"),
        ({"board": RACE, "mode": "cube", "dice": [1, 2]}, "dice"),
        ({"board": RACE, "ply": 3}, "ply"),
        ({"board": [1] * 26}, "board"),
        ({"trials": 10}, "board"),
    ]:
        r = client.post("/v1/rollout", json=body)
        assert r.status_code == 400, body
        assert word in r.json()["error"], (body, r.json())
    r = client.post(
        "/v1/rollout", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert client.get("/v1/rollout/nope").status_code == 404
    assert client.delete("/v1/rollout/nope").status_code == 404


def test_cancel_the_concurrency_limit_and_other_routes_meanwhile(client: TestClient) -> None:
    # contact positions with variance reduction: slow enough to be caught running
    long = {"board": list(START_BOARD), "trials": 2500, "seed": 1}
    first = client.post("/v1/rollout", json=long).json()
    second = client.post("/v1/rollout", json={**long, "seed": 2}).json()
    r = client.post("/v1/rollout", json={**long, "seed": 3})
    assert r.status_code == 429 and "at once" in r.json()["error"]
    # the server answers other routes while the jobs run
    t0 = time.monotonic()
    hint = client.post("/v1/hint", json={"board": list(START_BOARD), "dice": [3, 1]})
    assert hint.status_code == 200 and hint.json()["plays"][0]["move"] == "8/5 6/5"
    assert client.get("/health").status_code == 200
    assert time.monotonic() - t0 < 30
    running = client.get(f"/v1/rollout/{first['id']}").json()
    assert running["status"] in ("queued", "running")
    # cancel the queued one at once and the running one between two chunks
    queued = client.delete(f"/v1/rollout/{second['id']}").json()
    assert queued["status"] == "cancelled"
    client.delete(f"/v1/rollout/{first['id']}")
    view = wait(client, first["id"])
    assert view["status"] == "cancelled"
    assert view["progress"]["trials_done"] < 2500
    assert "result" not in view
    # room again: a new job is accepted, and a finished job can be forgotten
    r = client.post("/v1/rollout", json={"board": RACE, "trials": 36})
    assert r.status_code == 202
    done = wait(client, r.json()["id"])
    assert done["status"] == "done"
    assert client.delete(f"/v1/rollout/{done['id']}").status_code == 200
    assert client.get(f"/v1/rollout/{done['id']}").status_code == 404
