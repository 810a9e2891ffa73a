"""Load test of ``nard serve``: latency percentiles and requests/s over HTTP with ``wrk``.

Starts the server from its normal command (``nard serve --port PORT``) on 127.0.0.1,
then for ``POST /v1/hint`` at 0-ply and at 1-ply and for wildbg's ``GET /move`` runs
``wrk`` with 1, 8 and 32 concurrent connections (a Lua script cycles the requests
through positions met in seeded games), prints p50/p99 latency, requests/s and errors
(non-2xx answers and socket errors), stops the server and exits.  Traffic goes only to
127.0.0.1.  Targets (issue): 0-ply hint p50 <= 5 ms with one client, >= 500 hints/s with
32 clients, no errors.

    python scripts/bench_serve.py                      # 10 s per cell
    python scripts/bench_serve.py --duration 3 --connections 1 32 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from nard_rl.engine.game import Game

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def positions(count: int, seed: int = 1) -> list[tuple[list[int], tuple[int, int]]]:
    """Positions and rolls met in seeded games of random legal plays."""
    rng = np.random.default_rng(seed)
    out: list[tuple[list[int], tuple[int, int]]] = []
    while len(out) < count:
        game = Game(seed=int(rng.integers(1 << 30)))
        while not game.is_over and len(out) < count:
            if game.phase.value != "move":
                game.roll()
                continue
            plays = game.legal_plays()
            out.append((list(game.position.board), game.dice))
            game.play(plays[int(rng.integers(len(plays)))].board)
    return out


def lua_script(requests: list[tuple[str, str, str | None]]) -> str:
    """A wrk script cycling through (method, path, body) requests."""
    rows = []
    for method, path, body in requests:
        b = "nil" if body is None else json.dumps(body)
        rows.append(f'  {{"{method}", {json.dumps(path)}, {b}}},')
    return (
        "local reqs = {\n" + "\n".join(rows) + "\n}\n"
        "local i = 0\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        "request = function()\n"
        "  i = i % #reqs + 1\n"
        "  local r = reqs[i]\n"
        "  return wrk.format(r[1], r[2], nil, r[3])\n"
        "end\n"
    )


def parse_wrk(text: str) -> dict[str, float]:
    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", text, re.MULTILINE)
        return float(m.group(1)) * UNITS[m.group(2)] if m else float("nan")

    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    total = re.search(r"(\d+) requests in", text)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    return {
        "p50_ms": ms("50%"),
        "p99_ms": ms("99%"),
        "rps": float(rps.group(1)) if rps else float("nan"),
        "requests": int(total.group(1)) if total else 0,
        "errors": (int(non2xx.group(1)) if non2xx else 0)
        + (sum(int(x) for x in sock.groups()) if sock else 0),
    }


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by a process and its children (uvicorn's
    workers), from /proc (0 where absent)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"nard serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("nard serve did not answer /health in time")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    ap.add_argument("--connections", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--positions", type=int, default=200, help="distinct requests cycled")
    ap.add_argument("--serve-args", default="", help="extra flags for nard serve")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument(
        "--only", nargs="+", choices=("hint0", "hint1", "move"), help="a subset of scenarios"
    )
    args = ap.parse_args(argv)
    wrk = shutil.which("wrk")
    if wrk is None:
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "nard_rl", "serve", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(cmd + args.serve_args.split(), stdout=subprocess.DEVNULL)
    work = Path(tempfile.mkdtemp(prefix="nard-bench-serve-"))
    pos = positions(args.positions)
    hint = [("POST", "/v1/hint", json.dumps({"board": b, "dice": list(d)})) for b, d in pos]
    hint1 = [
        ("POST", "/v1/hint", json.dumps({"board": b, "dice": list(d), "ply": 1})) for b, d in pos
    ]
    move = [
        ("GET", "/move?" + "&".join([f"die1={d[0]}", f"die2={d[1]}"]
                                    + [f"p{i}={v}" for i, v in enumerate(b) if v]), None)
        for b, d in pos
    ]  # fmt: skip
    scenarios = {"hint 0-ply": hint, "hint 1-ply": hint1, "wildbg /move": move}
    if args.only:
        keys = {"hint0": "hint 0-ply", "hint1": "hint 1-ply", "move": "wildbg /move"}
        scenarios = {keys[k]: scenarios[keys[k]] for k in args.only}
    results: list[dict[str, object]] = []
    try:
        wait_healthy(url, server)
        for name, reqs in scenarios.items():
            script = work / f"{name.replace(' ', '_').replace('/', '')}.lua"
            script.write_text(lua_script(reqs))
            # warm-up: JIT, caches, the first batches
            subprocess.run([wrk, "-t1", "-c4", "-d2s", "-s", str(script), url],
                           capture_output=True, check=False)  # fmt: skip
            for c in args.connections:
                threads = str(min(c, 2))
                cpu0 = cpu_seconds(server.pid)
                out = subprocess.run(
                    [wrk, f"-t{threads}", f"-c{c}", f"-d{args.duration}s", "--latency",
                     "--timeout", "10s", "-s", str(script), url],
                    capture_output=True, text=True, check=False,
                ).stdout  # fmt: skip
                row = {"scenario": name, "connections": c, **parse_wrk(out)}
                # the server's own CPU time per answer: what the machine's load cannot hide
                used = cpu_seconds(server.pid) - cpu0
                row["server_cpu_ms"] = 1000 * used / max(1, int(row["requests"]))
                results.append(row)
                print(
                    f"{name:<14} {c:>3} clients: p50 {row['p50_ms']:7.2f} ms  "
                    f"p99 {row['p99_ms']:7.2f} ms  {row['rps']:8.1f} req/s  "
                    f"errors {row['errors']} / {row['requests']}  "
                    f"server CPU {row['server_cpu_ms']:.2f} ms/req",
                    flush=True,
                )
        with urllib.request.urlopen(url + "/health", timeout=5) as r:
            health = json.loads(r.read())
        print(
            f"micro-batching: {health['batched_requests']} requests in {health['batches']} "
            f"forward passes, largest {health['largest_batch']} afterstates"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at the end; "
        f"server: {' '.join(cmd[2:])} {args.serve_args}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
