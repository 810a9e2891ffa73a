"""Regenerate ``tests/data/gnubg_ids.jsonl``: IDs as GNU Backgammon writes and reads them.

GNU Backgammon is the outside authority on its own Position and Match IDs, and it can
read (not write) XGIDs.  This script draws random cases with a fixed seed, asks a
``gnubg`` process about each of them, and writes one JSON object a line:

* ``{"kind": "position", "board": [...26 ints...], "position_id": ...}``: gnubg's
  ``positionid()`` of the board, handed to gnubg as its own two 25-slot arrays (the
  side not on roll first, points from each side's ace point, then the bar).
* ``{"kind": "match", "state": {...}, "match_id": ...}``: gnubg's ``matchid()`` of a
  random cube/position state.  ``state`` keeps gnubg's absolute conventions:
  ``on_roll`` / ``turn`` are player indices, ``cube_owner`` is -1 (centred), 0 or 1,
  ``score`` is ``[player 0, player 1]``, ``dice`` in the order handed to gnubg (which
  writes the higher die first).
* ``{"kind": "xgid", "xgid": ..., "position_id": ..., "match_id": ...}``: the IDs of
  the state gnubg sets up after ``set xgid`` (gnubg makes the player on roll its
  player 1).  The XGIDs are written by ``nard_rl.engine.ids.encode_xgid``; only gnubg's
  reading of them is reference data.

Run: ``python scripts/make_id_reference.py`` (a few seconds; needs /usr/games/gnubg).
The test suite reads the file and, where gnubg is installed, reruns a small sample
through :func:`query_gnubg` (``pytest -m gnubg``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.engine.ids import XGIDInfo, encode_xgid
from nard_rl.engine.position import CHECKERS
from nard_rl.players.gnubg_script import to_gnubg_board

GNUBG = "/usr/games/gnubg"
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "gnubg_ids.jsonl"

# Runs inside gnubg's embedded Python; the two placeholders are JSON / a path literal.
_GNUBG_SIDE = """
import json
import gnubg

payload = json.loads(__PAYLOAD__)
gnubg.command("set player 0 human")
gnubg.command("set player 1 human")
gnubg.command("new game")
out = {"positions": [], "matches": [], "xgids": []}
for opp, mover in payload["boards"]:
    out["positions"].append(gnubg.positionid((tuple(opp), tuple(mover))))
for cube, pos in payload["matches"]:
    pos["dice"] = tuple(pos["dice"])
    cube["score"] = tuple(cube["score"])
    out["matches"].append(gnubg.matchid(cube, pos))
for xgid in payload["xgids"]:
    gnubg.command("set board 4HPwATDgc/ABMA")
    gnubg.command("set xgid " + xgid)
    out["xgids"].append([gnubg.positionid(), gnubg.matchid()])
with open(__OUT__, "w") as fh:
    json.dump(out, fh)
"""


def random_board(rng: np.random.Generator, *, both_sides: bool = False) -> list[int]:
    """A valid board with a mix of spread, stacked, bar-heavy and borne-off layouts."""
    while True:
        board = [0] * 26
        counts = [
            CHECKERS if rng.random() < 0.5 else int(rng.integers(0 if not both_sides else 1, 16))
            for _ in range(2)
        ]
        if counts == [0, 0]:
            continue
        for side, count in enumerate(counts):
            sign = 1 if side == 0 else -1
            spots = int(rng.integers(1, 9))  # few spots = tall stacks
            bar_weight = rng.choice([0.0, 0.05, 0.5])
            free = [p for p in range(1, 25) if board[p] == 0]
            chosen = list(rng.choice(free, size=min(spots, len(free)), replace=False))
            slots = [*chosen, "bar"]
            weights = np.array([1.0] * len(chosen) + [bar_weight * len(chosen)])
            for _ in range(count):
                slot = slots[int(rng.choice(len(slots), p=weights / weights.sum()))]
                if slot == "bar":
                    if side == 0:
                        board[25] += 1
                    else:
                        board[0] -= 1
                else:
                    board[int(slot)] += sign
        return board


def random_match_state(rng: np.random.Generator) -> dict[str, Any]:
    """A random gnubg match state, within the limits gnubg's Match ID reader accepts."""
    length = int(rng.choice([0, 0, 1, 3, 5, 7, 11, 25, 64]))
    top = length if length else (50 if rng.random() < 0.9 else 32767)
    return {
        "cube": 1 << int(rng.integers(0, 16 if rng.random() < 0.1 else 7)),
        "cube_owner": int(rng.choice([-1, 0, 1])),
        "on_roll": int(rng.integers(0, 2)),
        "turn": int(rng.integers(0, 2)),
        "crawford": int(length > 0 and rng.random() < 0.3),
        "game_state": int(rng.integers(0, 5)),
        "double_offered": int(rng.integers(0, 2)),
        "resignation": int(rng.integers(0, 4)),
        "dice": [0, 0] if rng.random() < 0.4 else [int(d) for d in rng.integers(1, 7, 2)],
        "match_length": length,
        "score": [int(s) for s in rng.integers(0, top + 1, 2)],
        "jacoby": int(rng.integers(0, 2)),
    }


def _gnubg_dicts(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    cube = {
        "cube": state["cube"],
        "cubeowner": state["cube_owner"],
        "move": state["on_roll"],
        "matchto": state["match_length"],
        "score": state["score"],
        "crawford": state["crawford"],
        "jacoby": state["jacoby"],
        "beavers": 0,
        "bgv": 0,
    }
    pos = {
        "dice": state["dice"],
        "turn": state["turn"],
        "resigned": state["resignation"],
        "doubled": state["double_offered"],
        "gamestate": state["game_state"],
    }
    return cube, pos


def random_xgid(rng: np.random.Generator) -> str:
    """A random XGID of a state gnubg can set up (no pending double: gnubg drops it)."""
    board = random_board(rng, both_sides=True)
    length = int(rng.choice([0, 0, 1, 3, 5, 7, 9, 13, 25]))
    score = (0, 0)
    crawford = False
    if length:
        score = tuple(int(s) for s in rng.integers(0, length, 2))
        at_match_point = [s == length - 1 for s in score]
        crawford = sum(at_match_point) == 1 and rng.random() < 0.5
    cube_log = 0 if crawford else int(rng.integers(0, 7))
    owner = "centered" if cube_log == 0 else str(rng.choice(["centered", "mover", "opponent"]))
    dice = (0, 0) if rng.random() < 0.4 else tuple(int(d) for d in rng.integers(1, 7, 2))
    info = XGIDInfo(
        board=tuple(board),
        cube_value=1 << cube_log,
        cube_owner=owner,  # type: ignore[arg-type]
        turn=int(rng.choice([1, -1])),
        dice=dice,  # type: ignore[arg-type]
        score=score,  # type: ignore[arg-type]
        match_length=length,
        crawford=crawford,
        jacoby=not length and rng.random() < 0.5,
        beaver=not length and rng.random() < 0.5,
        max_cube=1 << int(rng.integers(6, 11)),
    )
    return encode_xgid(info)


def query_gnubg(
    boards: Sequence[Sequence[int]],
    match_states: Sequence[dict[str, Any]],
    xgids: Sequence[str],
    *,
    gnubg: str = GNUBG,
    timeout: float = 120.0,
) -> dict[str, list[Any]]:
    """Ask one gnubg process for Position IDs, Match IDs and its reading of XGIDs."""
    payload = {
        "boards": [to_gnubg_board(list(b)) for b in boards],
        "matches": [_gnubg_dicts(s) for s in match_states],
        "xgids": list(xgids),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out_path = Path(tmp) / "out.json"
        script = Path(tmp) / "ids.py"
        script.write_text(
            _GNUBG_SIDE.replace("__PAYLOAD__", repr(json.dumps(payload))).replace(
                "__OUT__", repr(str(out_path))
            )
        )
        proc = subprocess.run(
            [gnubg, "-t", "-q", "-r", "-p", str(script)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if "Not a valid XGID" in proc.stdout + proc.stderr or not out_path.exists():
            raise RuntimeError(f"gnubg failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        result: dict[str, list[Any]] = json.loads(out_path.read_text())
    return result


def build_records(
    seed: int, n_boards: int, n_matches: int, n_xgids: int, *, gnubg: str = GNUBG
) -> list[dict[str, Any]]:
    """Draw the cases for ``seed`` and pair each with gnubg's answer."""
    rng = np.random.default_rng(seed)
    boards = [random_board(rng) for _ in range(n_boards)]
    states = [random_match_state(rng) for _ in range(n_matches)]
    xgids = [random_xgid(rng) for _ in range(n_xgids)]
    answers = query_gnubg(boards, states, xgids, gnubg=gnubg)
    records: list[dict[str, Any]] = []
    for board, pid in zip(boards, answers["positions"], strict=True):
        records.append({"kind": "position", "board": board, "position_id": pid})
    for state, mid in zip(states, answers["matches"], strict=True):
        records.append({"kind": "match", "state": state, "match_id": mid})
    for xgid, (pid, mid) in zip(xgids, answers["xgids"], strict=True):
        records.append({"kind": "xgid", "xgid": xgid, "position_id": pid, "match_id": mid})
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=20240607)
    parser.add_argument("--boards", type=int, default=300)
    parser.add_argument("--matches", type=int, default=150)
    parser.add_argument("--xgids", type=int, default=150)
    parser.add_argument("--gnubg", default=GNUBG)
    args = parser.parse_args(argv)
    records = build_records(args.seed, args.boards, args.matches, args.xgids, gnubg=args.gnubg)
    with args.out.open("w") as fh:
        for rec in records:
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"wrote {len(records)} records to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
