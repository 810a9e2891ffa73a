"""GNU Backgammon plays nard-rl through gnubg's external-player protocol.

Starts ``nard serve --no-http --gnubg-external PORT --gnubg-log LOG`` on 127.0.0.1,
drives ``gnubg -t`` (player 0 gnubg at the given ply, player 1 ``external``) through
money games with the cube and whole matches, then checks:

* every game finished (money: one result line per game; matches: the match was won);
* gnubg printed no complaint about an answer (errors, illegal or unparsable moves);
* every answer nard-rl sent is legal, checked against the engine independently of the
  server: a play is one of the legal plays of the board line and roll (an empty answer
  only when there is none), ``roll``/``double`` only before the roll, ``take``/``drop``
  only when doubled, and no ``Error:`` answer.

Prints the games, matches, points and decisions, and exits 1 when a check fails.

    python scripts/gnubg_external_play.py --money 20 --matches 3 --length 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nard_rl.engine.game import Game, IllegalActionError, Phase
from nard_rl.engine.position import Position

GNUBG = "/usr/games/gnubg"
RESULT = re.compile(r"(\S+) wins an? (single game|gammon|backgammon) and (\d+) points?")
COMPLAINT = re.compile(r"error|illegal|unparsable|unknown keyword|not a legal", re.IGNORECASE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"nard serve exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nard serve did not listen on {port} within {timeout:.0f} s")


class GnubgSession:
    """``gnubg -t`` on pipes, its output collected in a file we can poll."""

    def __init__(self, port: int, ply: int, out: Path, seed: int) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [GNUBG, "-t", "-q", "-r"],
            stdin=subprocess.PIPE,
            stdout=open(out, "w"),  # noqa: SIM115 - lives as long as the process
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.send(
            f"set seed {seed}",
            "set player 0 gnubg",
            f"set player 0 chequerplay evaluation plies {ply}",
            f"set player 0 cubedecision evaluation plies {ply}",
            f"set player 1 external 127.0.0.1:{port}",
            "set automatic game off",
            "set display off",
        )

    def send(self, *commands: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(c + "\n" for c in commands))
        self.proc.stdin.flush()

    def text(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, predicate: Callable[[str], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate(self.text()):
                return True
            if self.proc.poll() is not None:
                return predicate(self.text())
            time.sleep(0.2)
        return False

    def close(self) -> None:
        try:
            self.send("quit")
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def play(session: GnubgSession, money: int, matches: int, length: int, timeout: float) -> dict:
    results: list[tuple[str, str, int]] = []
    unfinished = 0
    for _ in range(money):
        done = len(RESULT.findall(session.text()))
        session.send("new game")
        if not session.wait_for(lambda t, d=done: len(RESULT.findall(t)) > d, timeout):
            unfinished += 1
            break
    results += [(w, k, int(p)) for w, k, p in RESULT.findall(session.text())]
    money_games = len(results)
    matches_won = 0
    for _ in range(matches):
        won = session.text().count("has won the match")
        session.send(f"new match {length}")
        deadline = time.monotonic() + timeout * 3 * length
        while time.monotonic() < deadline:
            games = len(RESULT.findall(session.text()))
            if session.text().count("has won the match") > won:
                matches_won += 1
                break
            session.send("new game")
            session.wait_for(
                lambda t, g=games: len(RESULT.findall(t)) > g or "has won the match" in t,
                timeout,
            )
        else:
            unfinished += 1
    all_results = RESULT.findall(session.text())
    return {
        "money_games": money_games,
        "money_points_nard": sum(int(p) for w, _, p in all_results[:money_games] if w != "gnubg"),
        "money_points_gnubg": sum(int(p) for w, _, p in all_results[:money_games] if w == "gnubg"),
        "match_games": len(all_results) - money_games,
        "matches_finished": matches_won,
        "matches_won_by_nard": sum(
            1
            for line in session.text().splitlines()
            if "has won the match" in line
            and not line.strip().startswith("gnubg")
            and "gnubg has won" not in line
        ),
        "unfinished": unfinished,
    }


def check_answer(line: str, answer: str) -> str | None:
    """Why an answer is wrong, or None (independent of the server's own checks)."""
    t = line.split(":")
    if len(t) < 53 or t[0] != "board":
        return f"not a board line: {line[:40]!r}"
    board = [int(v) for v in t[6:32]]
    d1, d2, doubled = int(t[33]), int(t[34]), int(t[40]) != 0
    if answer.startswith("Error"):
        return f"error answer: {answer}"
    if doubled:
        return None if answer in ("take", "drop") else f"answer to a double: {answer!r}"
    if (d1, d2) == (0, 0):
        return None if answer in ("roll", "double") else f"answer before the roll: {answer!r}"
    game = Game("standard", start=Position(board), player_on_roll=0)
    game.roll((d1, d2))
    if game.phase is not Phase.MOVE:
        return None if answer == "" else f"a play {answer!r} where none is possible (R16)"
    try:
        game.play(answer)
    except IllegalActionError as exc:
        return f"illegal play {answer!r} for {d1}-{d2}: {exc}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--money", type=int, default=10, help="money games with the cube")
    ap.add_argument("--matches", type=int, default=2, help="whole matches")
    ap.add_argument("--length", type=int, default=3, help="match length")
    ap.add_argument("--gnubg-ply", type=int, default=0, help="gnubg's evaluation plies")
    ap.add_argument("--seed", type=int, default=1, help="gnubg's dice seed")
    ap.add_argument("--game-timeout", type=float, default=180.0, help="seconds a game may take")
    ap.add_argument("--keep", metavar="DIR", help="keep gnubg's output and the transcript")
    ap.add_argument(
        "--cube-rollout", type=int, help="nard serve --cube-rollout (games per close decision)"
    )
    args = ap.parse_args(argv)
    if not Path(GNUBG).exists():
        print(f"{GNUBG} is not installed", file=sys.stderr)
        return 2
    work = Path(args.keep or tempfile.mkdtemp(prefix="nard-gnubg-"))
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = work / "transcript.jsonl"
    log.unlink(missing_ok=True)
    nard = [sys.executable, "-m", "nard_rl", "serve", "--no-http"]
    if args.cube_rollout is not None:
        nard += ["--cube-rollout", str(args.cube_rollout)]
    server = subprocess.Popen(
        [*nard, "--gnubg-external", str(port), "--gnubg-log", str(log)],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    session = None
    try:
        wait_for_port(port, server)
        session = GnubgSession(port, args.gnubg_ply, work / "gnubg.out", args.seed)
        summary = play(session, args.money, args.matches, args.length, args.game_timeout)
        session.send(f"export match mat {work / 'last.mat'}")
    finally:
        if session is not None:
            session.close()
        server.terminate()
        server.wait(timeout=20)
    out = session.text() if session else ""
    complaints = [ln for ln in out.splitlines() if COMPLAINT.search(ln)]
    decisions = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    bad = [
        (d["line"], d["answer"], why)
        for d in decisions
        if (why := check_answer(d["line"], d["answer"])) is not None
    ]
    kinds: dict[str, int] = {}
    for d in decisions:
        a = d["answer"]
        k = a if a in ("roll", "double", "take", "drop") else "play"
        kinds[k] = kinds.get(k, 0) + 1
    summary.update(
        decisions=len(decisions),
        answers=kinds,
        illegal_answers=len(bad),
        gnubg_complaints=len(complaints),
    )
    print(json.dumps(summary, indent=1))
    for line, _answer, why in bad[:10]:
        print(f"BAD: {why}\n  {line}", file=sys.stderr)
    for line in complaints[:10]:
        print(f"GNUBG: {line}", file=sys.stderr)
    ok = (
        not bad
        and not complaints
        and summary["unfinished"] == 0
        and summary["money_games"] == args.money
        and summary["matches_finished"] == args.matches
    )
    print("result:", "all checks passed" if ok else "FAILED", f"(files in {work})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
