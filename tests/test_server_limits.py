"""The server under hostile or heavy use: one client cannot evict another's games or
starve the sessions with deep searches, a mars player is never charged for the server's
queue, bodies and connections are bounded, and the micro-batcher survives Python 3.10's
``asyncio.TimeoutError``.

Each test states a fault found by fault testing (issue 31) and fails on the code that had
it.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import uvicorn
from fastapi.testclient import TestClient

from nard_rl.server import batching
from nard_rl.server.analysis import Analyzer
from nard_rl.server.app import create_app
from nard_rl.server.batching import MicroBatcher, ServerBusy, WorkQueue
from nard_rl.server.config import ServerConfig
from nard_rl.server.http import uvicorn_options
from nard_rl.server.sessions import HUMAN, SessionError, SessionLimit, SessionStore

START_ID = "4HPwATDgc/ABMA"
START = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def make_client(analyzer: Analyzer, **settings: Any) -> TestClient:
    return TestClient(create_app(ServerConfig(**settings), analyzer))


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


# --------------------------------------------------------------------------------------
# Python 3.10: asyncio.wait_for raises asyncio.TimeoutError, not the builtin


def test_micro_batcher_survives_the_pre_311_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before 3.11 ``asyncio.TimeoutError`` is its own class: a batcher catching the
    builtin died at its first wait and every later request hung."""

    class LegacyTimeout(Exception):  # asyncio.TimeoutError as Python 3.10 has it
        pass

    real_wait_for = asyncio.wait_for

    async def wait_for(aw: Any, timeout: float) -> Any:
        aw.close()  # the queue's get, never awaited here
        raise LegacyTimeout

    monkeypatch.setattr(asyncio, "TimeoutError", LegacyTimeout)
    monkeypatch.setattr(batching.asyncio, "wait_for", wait_for)  # the module's asyncio

    def fn(rows: np.ndarray, key: str) -> np.ndarray:
        return np.ones((rows.shape[0], 5))

    async def main() -> list[np.ndarray]:
        b = MicroBatcher(fn, max_wait=0.05)
        b.active = 10  # others "on the way": the batcher waits, and times out
        await b.start()
        outs = []
        for _ in range(3):  # the worker must outlive each timeout
            outs.append(await real_wait_for(b.submit(np.zeros((2, 26), np.int8), "x"), 5))
        await b.stop()
        return outs

    outs = asyncio.run(main())
    assert [o.shape for o in outs] == [(2, 5)] * 3


def test_the_server_does_not_import_the_cli() -> None:
    code = (
        "import sys, nard_rl.server.app, nard_rl.server.lines, nard_rl.server.gnubg_external;"
        "print(sorted(m for m in sys.modules if m.startswith('nard_rl.commands')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------------------
# request bodies


def test_bool_dice_and_non_json_bodies_are_refused_with_what_was_expected(
    analyzer: Analyzer,
) -> None:
    with make_client(analyzer) as client:
        r = client.post("/v1/hint", json={"position_id": START_ID, "dice": [True, 1]})
        assert r.status_code == 422 and "dice" in r.json()["error"]
        r = client.post("/v1/hint", json={"board": [True, *START[1:]], "dice": [3, 1]})
        assert r.status_code == 422
        for raw in (b"hello", b"[1, 2]"):
            r = client.post("/v1/hint", content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 422
            message = r.json()["error"]
            assert "expected a JSON object" in message and '"dice"' in message, message
        r = client.post("/v1/games/abc/move", content=b"{", headers={"content-type": "x/json"})
        assert '"move"' in r.json()["error"]


def test_hostile_json_bodies_say_why_and_what_was_expected(analyzer: Analyzer) -> None:
    """FastAPI answers "There was an error parsing the body" for what its JSON parser
    raises besides a JSONDecodeError; each now says what went wrong and what to send."""
    hostile = [
        (b"[" * 1000, "nests too deeply"),
        (b'{"position_id": "%s", "dice": [3, %s]}' % (START_ID.encode(), b"1" * 5000), "digits"),
        (b'{"position_id": "\xff\xfe", "dice": [3, 1]}', "not valid UTF-8"),
    ]
    with make_client(analyzer) as client:
        for raw, why in hostile:
            r = client.post("/v1/hint", content=raw, headers={"content-type": "application/json"})
            message = r.json()["error"]
            assert r.status_code == 422 and why in message and '"dice"' in message, message


def test_an_oversized_chunked_body_gets_413(analyzer: Analyzer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b" " * 10_000

    with make_client(analyzer, max_body_bytes=32_768) as client:
        r = client.post("/v1/hint", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "32768 bytes" in r.json()["error"]
        parts = [b'{"position_id": "', START_ID.encode(), b'", "dice": [3, 1]}']
        json_type = {"content-type": "application/json"}
        ok = client.post("/v1/hint", content=iter(parts), headers=json_type)  # chunked, small
        assert ok.status_code == 200, ok.text


# --------------------------------------------------------------------------------------
# deep searches: bounded per request, on their own queue


def test_ply_above_max_ply_is_refused(analyzer: Analyzer) -> None:
    with make_client(analyzer, max_ply=1) as client:
        r = client.post("/v1/hint", json={"position_id": START_ID, "dice": [3, 1], "ply": 2})
        assert r.status_code == 400 and "max_ply 1" in r.json()["error"]
        r = client.post("/v1/hint", json={"position_id": START_ID, "ply": 3})  # cube analysis
        assert r.status_code == 400 and "max_ply" in r.json()["error"]
        r = client.post("/v1/action", json={"position_id": START_ID, "dice": [3, 1], "ply": 2})
        assert r.status_code == 400
        r = client.post("/v1/hint", json={"position_id": START_ID, "dice": [3, 1], "ply": 1})
        assert r.status_code == 200 and r.json()["ply"] == 1


def test_work_queue_refuses_beyond_its_bound() -> None:
    gate = threading.Event()

    async def main() -> tuple[list[Any], int]:
        q = WorkQueue("search", max_pending=2)
        jobs = [asyncio.ensure_future(q.run(gate.wait, 10)) for _ in range(2)]
        await asyncio.sleep(0.05)
        with pytest.raises(ServerBusy, match="at most 2"):
            await q.run(lambda: None)
        gate.set()
        done = await asyncio.gather(*jobs)
        after = await q.run(lambda: "free again")
        q.close()
        return [*done, after], q.pending

    results, pending = asyncio.run(main())
    assert results == [True, True, "free again"] and pending == 0


def test_sessions_do_not_wait_behind_searches(
    analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search holding the search thread (and its analyzer's lock) must not delay a
    session: ``POST /v1/games`` waited 19.5 s behind six 3-ply hints."""
    release = threading.Event()
    started = threading.Event()
    slow_rank = analyzer.rank

    def blocked_rank(*args: Any, **kwargs: Any) -> Any:
        with analyzer.lock:  # as a long search holds it
            started.set()
            release.wait(60)
            return slow_rank(*args, **kwargs)

    with make_client(analyzer, max_queued_searches=1) as client:
        monkeypatch.setattr(analyzer, "rank", blocked_rank)
        search = threading.Thread(
            target=client.post,
            args=("/v1/hint",),
            kwargs={"json": {"position_id": START_ID, "dice": [3, 1], "ply": 1}},
        )
        search.start()
        try:
            assert started.wait(30)
            t0 = time.monotonic()
            g = client.post("/v1/games", json={"seed": 3, "first": "bot"})
            took = time.monotonic() - t0
            assert g.status_code == 201 and took < 10, (g.status_code, took)
            gid = g.json()["id"]
            assert client.get(f"/v1/games/{gid}").status_code == 200
            # the search queue is full: another search is refused at once, not queued
            busy = client.post("/v1/hint", json={"position_id": START_ID, "dice": [3, 1], "ply": 1})
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
            assert "busy" in busy.json()["error"]
        finally:
            release.set()
            search.join(60)


# --------------------------------------------------------------------------------------
# sessions: no eviction of other clients' games, idle expiry, true messages


def test_one_client_cannot_evict_another_clients_games(analyzer: Analyzer) -> None:
    clock = FakeClock()
    store = SessionStore(analyzer, max_sessions=5, max_per_client=3, idle_s=600, clock=clock)
    theirs = store.create(seed=1, client="10.0.0.1")["id"]
    mine = [store.create(seed=2 + i, client="10.0.0.2")["id"] for i in range(3)]
    with pytest.raises(SessionLimit, match="max_sessions_per_client 3") as quota:
        store.create(client="10.0.0.2")
    assert quota.value.status == 429
    store.create(seed=9, client="10.0.0.3")
    with pytest.raises(SessionLimit, match="maximum of 5") as full:
        store.create(client="10.0.0.4")
    assert full.value.status == 503
    assert store.state(theirs)["id"] == theirs  # nobody's game was dropped to make room
    store.delete(mine[0])
    with pytest.raises(SessionError, match="was deleted"):
        store.state(mine[0])
    with pytest.raises(SessionError, match="no such id"):
        store.state("0123456789abcdef")
    clock.t += 601  # every game idle past the limit expires, and says so
    with pytest.raises(SessionError, match="expired after 600 s without a request"):
        store.state(theirs)
    assert len(store) == 0
    assert store.create(client="10.0.0.2")["id"]  # the quota counts live games only


def test_a_new_game_replaces_only_the_clients_own_finished_one(analyzer: Analyzer) -> None:
    """The web board's "play again" leaves the finished game behind: at the quota it makes
    room, where a game still in play (the client's or anybody's) never does."""
    store = SessionStore(analyzer, max_per_client=2)
    other = store.create(seed=1, client="b")["id"]
    store.act(other, "roll")
    store.act(other, "resign", kind="backgammon")  # finished, but another client's
    done, playing = (store.create(seed=s, first="human", client="a")["id"] for s in (2, 3))
    store.act(done, "roll")
    assert store.act(done, "resign", kind="backgammon")["result"] is not None
    fresh = store.create(seed=4, client="a")["id"]
    with pytest.raises(SessionError, match="replaced by a newer game of the same client"):
        store.state(done)
    assert store.state(other)["result"] is not None and store.state(playing)["result"] is None
    with pytest.raises(SessionLimit, match="max_sessions_per_client 2"):
        store.create(client="a")  # both of its games are in play
    assert {store.state(g)["id"] for g in (playing, fresh)} == {playing, fresh}


def test_session_quota_over_http(analyzer: Analyzer) -> None:
    with make_client(analyzer, max_sessions_per_client=2) as client:
        ids = [client.post("/v1/games", json={"seed": i}).json()["id"] for i in range(2)]
        r = client.post("/v1/games", json={})
        assert r.status_code == 429 and "DELETE" in r.json()["error"]
        assert client.delete(f"/v1/games/{ids[0]}").status_code == 204
        assert client.post("/v1/games", json={}).status_code == 201
        r = client.get(f"/v1/games/{ids[0]}")
        assert r.status_code == 404 and "deleted" in r.json()["error"]
        assert client.get("/health").json()["sessions"] == 2


def test_a_money_session_keeps_only_its_last_games(analyzer: Analyzer) -> None:
    store = SessionStore(analyzer, games_kept=2)
    gid = store.create(seed=4, first="human")["id"]
    for n in range(1, 7):
        store.act(gid, "roll")
        view = store.act(gid, "resign", kind="backgammon")  # the bot accepts: 3 points
        assert view["result"]["points"] == 3 and view["score"] == [0, 3 * n]
        assert view["game_number"] == n
        if n < 6:
            store.act(gid, "next")
    session = store.get(gid)
    assert len(session.match.games) == 2 and session.dropped_games == 4
    assert store.state(gid)["score"] == [0, 18]


def test_a_mars_player_is_not_charged_for_the_servers_queue(analyzer: Analyzer) -> None:
    """A request that waited 19 s in the queue must be applied at its arrival: the
    player's clock shows only the time before the request was sent."""
    clock = FakeClock()
    store = SessionStore(analyzer, clock=clock)
    view = store.create(rules="mars", seed=5, first="human")
    gid = view["id"]
    session = store.get(gid)
    clock.t += 2.0  # the human thinks for 2 s, then asks to roll ...
    arrived = clock.t
    clock.t += 19.0  # ... and the request waits 19 s for the server
    view = store.act(gid, "roll", at=arrived)
    assert view["phase"] == "move" and view["to_act"] == "human"
    left = view["clock"]["human"]  # 2 s at most were the human's (the opening may be free)
    assert left["turn"] >= 11.0 - 2.0 - 1e-6 and left["reserve"] == pytest.approx(90.0)
    clock.t += 3.0  # 3 s more thinking, the move arrives, 30 s of server time
    arrived = clock.t
    clock.t += 30.0
    view = store.act(gid, "move", at=arrived, board=view["legal_plays"][0]["board"])
    game = session.game
    assert game.time_left(HUMAN)[1] == pytest.approx(90.0)  # 5 s used: within the 11 s turn
    assert view["result"] is None or view["result"]["reason"] != "timeout"
    if game.player_to_act == HUMAN and not game.is_over:  # the human's next turn starts now
        assert game.time_left(HUMAN)[0] == pytest.approx(11.0)


# --------------------------------------------------------------------------------------
# connections: idle, half-sent and slow ones are closed (a real uvicorn server)


@pytest.fixture(scope="module")
def live_server(analyzer: Analyzer) -> Iterator[int]:
    cfg = ServerConfig(header_timeout_s=1.0, body_timeout_s=1.0, timeout_keep_alive=1.0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(
        create_app(cfg, analyzer), host="127.0.0.1", port=port, log_level="warning",
        **uvicorn_options(cfg),
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 120
    while not server.started:
        assert time.monotonic() < end and thread.is_alive(), "the server did not start"
        time.sleep(0.1)
    yield port
    server.should_exit = True
    thread.join(30)


def closed_within(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends before closing ``sock``; fails if it stays open longer."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        pytest.fail(f"the connection was still open after {seconds} s")
    except ConnectionResetError:
        pass
    return data


def test_idle_and_half_sent_connections_are_closed(live_server: int) -> None:
    with socket.create_connection(("127.0.0.1", live_server)) as idle:
        assert closed_within(idle, 5) == b""
    with socket.create_connection(("127.0.0.1", live_server)) as half:
        half.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        assert closed_within(half, 5) == b""
    with socket.create_connection(("127.0.0.1", live_server)) as slow:
        slow.sendall(b"POST /v1/hint HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        answer = closed_within(slow, 5)  # the body stalls: 408, then closed
        assert answer.startswith(b"HTTP/1.1 408") and b"stalled" in answer
    with socket.create_connection(("127.0.0.1", live_server)) as ok:  # still serving
        ok.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert closed_within(ok, 10).startswith(b"HTTP/1.1 200")


def test_a_slow_loris_head_is_cut_off(live_server: int) -> None:
    """One byte at a time cancelled uvicorn's keep-alive timer each time: the head now
    has a deadline of its own."""
    with socket.create_connection(("127.0.0.1", live_server)) as loris:
        t0 = time.monotonic()
        try:
            for byte in b"GET /health HTTP/1.1\r\nHost: example\r\nX-Slow: yes\r\n":
                loris.sendall(bytes([byte]))
                time.sleep(0.25)
        except OSError:
            pass
        assert closed_within(loris, 5) == b""
        assert time.monotonic() - t0 < 8


def test_docs_page_uses_only_the_packages_own_files(analyzer: Analyzer) -> None:
    with make_client(analyzer) as client:
        page = client.get("/docs").text
        assert "cdn." not in page and "/docs/assets/swagger-ui-bundle.js" in page
        js = client.get("/docs/assets/swagger-ui-bundle.js")
        assert js.status_code == 200 and b"SwaggerUIBundle" in js.content
        assert client.get("/docs/assets/..%2Fconsts.py").status_code == 404
        assert client.get("/redoc").status_code == 404  # would load from a CDN: not served
