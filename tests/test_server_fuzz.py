"""Fuzzing every HTTP route: whatever arrives, the answer is a 2xx or a 4xx that says what
is wrong, never a 5xx.

Bodies are random JSON, valid requests with one field replaced by random JSON, and raw
bytes; the wildbg routes get random query strings; the session routes random ids and
actions.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from nard_rl.server.app import create_app
from nard_rl.server.config import ServerConfig

START_ID = "4HPwATDgc/ABMA"
START = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=40,
)

VALID: dict[str, dict[str, Any]] = {
    "/v1/hint": {
        "board": START,
        "dice": [3, 1],
        "cube": {"value": 2, "owner": "mover"},
        "match": {"length": 5, "score": [1, 2], "crawford": False},
        "rules": "standard",
        "ply": 0,
        "top": 3,
    },
    "/v1/evaluate": {"positions": [{"position_id": START_ID}, {"board": START}]},
    "/v1/action": {"board": START, "dice": [6, 6], "cube": {"value": 1, "owner": "centered"}},
    "/v1/games": {"rules": "standard", "match_length": 3, "first": "bot", "seed": 3},
}
FIELD_VALUES = st.sampled_from(
    [
        "board", "position_id", "xgid", "gnubg_id", "dice", "cube", "match", "rules",
        "ply", "top", "jacoby", "doubled", "resignation", "may_double", "positions",
        "afterstate", "match_length", "first", "seed",
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(ServerConfig(max_body_bytes=32_768))) as c:
        yield c


def check(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        message = body.get("error") or body.get("message")
        assert isinstance(message, str) and message, body


@given(route=st.sampled_from(sorted(VALID)), body=json_values)
def test_random_json_bodies(client: TestClient, route: str, body: Any) -> None:
    check(client.post(route, json=body))


@given(route=st.sampled_from(sorted(VALID)), key=FIELD_VALUES, value=json_values)
def test_valid_requests_with_one_field_replaced(
    client: TestClient, route: str, key: str, value: Any
) -> None:
    body = dict(VALID[route])
    body[key] = value
    check(client.post(route, json=body))


@given(
    route=st.sampled_from(sorted(VALID)),
    field=st.sampled_from(["cube", "match"]),
    key=st.sampled_from(["value", "owner", "length", "score", "crawford", "x"]),
    value=json_values,
)
def test_nested_fields(client: TestClient, route: str, field: str, key: str, value: Any) -> None:
    body = json.loads(json.dumps(VALID["/v1/hint"]))
    body[field] = dict(body[field], **{key: value})
    check(client.post("/v1/hint", json=body))


@given(route=st.sampled_from(sorted(VALID)), raw=st.binary(max_size=200))
def test_raw_bytes(client: TestClient, route: str, raw: bytes) -> None:
    check(client.post(route, content=raw, headers={"content-type": "application/json"}))


@given(
    route=st.sampled_from(["/move", "/eval"]),
    params=st.dictionaries(
        st.sampled_from(
            ["die1", "die2", "x_away", "o_away", "junk", *(f"p{i}" for i in range(26))]
        ),
        st.integers(min_value=-20, max_value=20).map(str) | st.text(max_size=8),
        max_size=12,
    ),
)
def test_wildbg_queries(client: TestClient, route: str, params: dict[str, str]) -> None:
    check(client.get(route + "?" + urllib.parse.urlencode(params)))


@given(
    game_id=st.text(
        alphabet=st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=20
    ),
    action=st.sampled_from(
        ["roll", "double", "take", "pass", "accept", "reject", "commit", "next", "move", "resign"]
    ),
    body=json_values,
)
def test_session_routes(client: TestClient, game_id: str, action: str, body: Any) -> None:
    check(client.post(f"/v1/games/{urllib.parse.quote(game_id)}/{action}", json=body))
    check(client.get(f"/v1/games/{urllib.parse.quote(game_id)}"))


@given(
    actions=st.lists(
        st.tuples(
            st.sampled_from(
                ["roll", "double", "take", "pass", "accept", "reject", "commit", "next",
                 "move", "resign"]
            ),
            json_values,
        ),
        max_size=12,
    )
)  # fmt: skip
def test_random_actions_on_a_live_game(client: TestClient, actions: list) -> None:
    g = client.post("/v1/games", json={"seed": 1, "match_length": 1}).json()
    for action, body in actions:
        check(client.post(f"/v1/games/{g['id']}/{action}", json=body))
    assert client.delete(f"/v1/games/{g['id']}").status_code == 204  # within the quota


@pytest.mark.parametrize("route", sorted(VALID))
def test_non_standard_json_numbers(client: TestClient, route: str) -> None:
    for raw in (b'{"board": [NaN]}', b'{"dice": [Infinity, 1], "board": 1}', b"-Infinity"):
        check(client.post(route, content=raw, headers={"content-type": "application/json"}))
