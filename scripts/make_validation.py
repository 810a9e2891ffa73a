"""Build the project's own validation set: checker decisions from nard-rl's self-play,
every legal play judged by GNU Backgammon (0-ply for all, 2-ply for a move filter's pick).

Nets are chosen on this set and on games; the shared public file
(``tests/data/checker_gnubg_public.jsonl.gz``) is a test looked at last, because choosing
on it fits it.  gnubg is only the judge here: these rows never enter training data
(``datasets/`` holds our own search labels; this file lives in ``validation/``).

Positions come from noisy 0-ply self-play of the shipped net (the same collection as the
pipeline's, ``nard_rl.training.supervised.label.collect_decisions``, on seeds the pipeline never
uses: ``--seed`` defaults to 90_000 + part), at most a few a game (``--sample``), with
at least two distinct legal plays.  The judging follows the public file's method, so the
two files score players the same way (``scripts/bench_checker.py --data FILE``):

* every distinct afterstate gets ``eq0``, gnubg 0-ply cubeless money equity for the mover
  (minus gnubg's equity of the afterstate seen by the opponent on roll; a play that bears
  off the last checker gets +1/+2/+3);
* the candidates within 0.20 of the 0-ply best, plus the 8 best, get ``eq2`` at 2-ply;
* ``err`` = ``best_equity - eq2`` (or ``best_eq0 - eq0`` without ``eq2``).

Work is split into parts of ``--per-part`` decisions written atomically to ``--out``/parts,
so a killed run resumes where it stopped; ``--merge`` joins them (and the decisions of an
earlier merge) into ``validation/checker_gnubg_own.jsonl.gz``, the one file committed.

    python scripts/make_validation.py --parts 40 --per-part 250          # 10,000 decisions
    python scripts/make_validation.py --parts 40 --per-part 250 --merge  # -> one .jsonl.gz

``--cube`` makes the cube set instead (``validation/cube_gnubg_own.jsonl.gz``, parts in
``cube_parts/``, seeds 95_000 + part): the same self-play positions before the roll, each
given a cube and score drawn like the public cube file's (``cube_state``: 60% money with
the cube centered or the mover's at 2 or 4, 40% matches to 3..11 points at every score,
the cube centered or owned by either side at 2, Crawford games where a side is one point
short), judged by gnubg 2-ply as that file is: cubeless probabilities and the cubeful
equities of no double, double/take and double/pass, normalised to the cube.  Its records
have the public file's fields, so ``scripts/bench_cube.py --data`` reads either.

    python scripts/make_validation.py --cube --parts 12 --per-part 250
    python scripts/make_validation.py --cube --parts 12 --merge
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.engine.batch import outcomes
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.util.io import atomic_write
from nard_rl.util.progress import progress_bar

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "validation"
WINDOW = 0.20
TOP = 8
SEED_BASE = 90_000


def kind_of(board: np.ndarray) -> str:
    """The public file's kinds, judged before the move: ``bearoff`` (no contact and all
    the mover's checkers home), ``race`` (no contact) or ``contact``."""
    mine = [p for p in range(1, 26) if board[p] > 0]
    theirs = [p for p in range(0, 25) if board[p] < 0]
    if board[25] > 0 or board[0] < 0 or not mine or not theirs:
        return "contact" if (board[25] > 0 or board[0] < 0) else "bearoff"
    if max(mine) >= min(theirs):
        return "contact"
    return "bearoff" if max(mine) <= 6 else "race"


def finished_equity(afters: np.ndarray) -> np.ndarray:
    """+1/+2/+3 for afterstates that end the game (NaN for the others)."""
    done, gammon, bg = outcomes(afters)
    eq = np.full(afters.shape[0], np.nan)
    eq[done] = 1.0 + gammon[done] + bg[done]
    return eq


def judge(gnubg0: Any, gnubg2: Any, board: np.ndarray, dice: tuple[int, int]) -> dict[str, Any]:
    """One decision with every candidate judged (the public file's record format)."""
    afters, offsets = legal_afterstates_batch(board[None, :], np.array([dice], dtype=np.int8))
    cands = afters[int(offsets[0]) : int(offsets[1])]
    fixed = finished_equity(cands)
    live = np.isnan(fixed)
    eq0 = fixed.copy()
    if live.any():
        eq0[live] = -gnubg0.evaluate(flip_boards(cands[live]))
    order = np.argsort(-eq0, kind="stable")
    keep = np.zeros(cands.shape[0], dtype=bool)
    keep[order[:TOP]] = True
    keep |= eq0 >= eq0[order[0]] - WINDOW
    eq2 = np.full(cands.shape[0], np.nan)
    eq2[keep & ~live] = fixed[keep & ~live]
    todo = keep & live
    if todo.any():
        eq2[todo] = -gnubg2.evaluate(flip_boards(cands[todo]))
    best2 = float(np.nanmax(eq2))
    best0 = float(eq0.max())
    err = np.where(np.isnan(eq2), best0 - eq0, best2 - eq2)
    srt = np.sort(eq0)[::-1]
    gap0 = float(srt[0] - srt[1]) if srt.size > 1 else float("inf")
    return {
        "board": board.tolist(),
        "dice": [int(dice[0]), int(dice[1])],
        "kind": kind_of(board),
        "n": int(cands.shape[0]),
        "n_eq2": int(keep.sum()),
        "best_equity": round(best2, 6),
        "best_eq0": round(best0, 6),
        "gap0": round(gap0, 6),
        "nontrivial": bool(gap0 < 0.25),
        "candidates": [
            {
                "board": c.tolist(),
                "equity": None if np.isnan(e2) else round(float(e2), 6),
                "eq2": None if np.isnan(e2) else round(float(e2), 6),
                "eq0": round(float(e0), 6),
                "err": round(max(0.0, float(er)), 6),
            }
            for c, e0, e2, er in zip(cands, eq0, eq2, err, strict=True)
        ],
    }


CUBE_SEED_BASE = 95_000
OWNERS = {"centered": -1, "mover": 1, "opponent": 0}
"""gnubg's cube owner codes (the side on roll is 1)."""
LENGTHS = (3, 5, 7, 9, 11)


def cube_state(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A cube and a score for one position, drawn like the public cube file's."""
    if rng.random() < 0.6:
        value, owner = [(1, "centered"), (2, "mover"), (4, "mover")][
            int(rng.choice(3, p=[0.7, 0.15, 0.15]))
        ]
        return {"value": value, "owner": owner}, {"length": 0, "score": [0, 0], "crawford": False}
    length = int(rng.choice(LENGTHS))
    me, opp = (int(v) for v in rng.integers(0, length, size=2))
    crawford = (me == length - 1) != (opp == length - 1) and bool(rng.random() < 0.5)
    value, owner = 1, "centered"
    if not crawford and me < length - 1 and opp < length - 1:
        value, owner = [(1, "centered"), (2, "mover"), (2, "opponent")][
            int(rng.choice(3, p=[0.6, 0.2, 0.2]))
        ]
    return {"value": value, "owner": owner}, {
        "length": length,
        "score": [me, opp],
        "crawford": crawford,
    }


def cube_decision_of(nd: float, dt: float, dp: float, available: bool) -> tuple[str, bool | None]:
    """gnubg's verdict read from its cubeful equities: the doubler's action and the
    receiver's right answer (None where doubling is unavailable)."""
    if not available:
        return "unavailable", None
    take = dt <= dp
    if min(dt, dp) > nd:
        return ("double_take" if take else "double_pass"), take
    if not take and nd > dp:
        return "too_good", take
    return "no_double", take


def judge_cube(gnubg2: Any, boards: np.ndarray, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The public cube file's record for each pre-roll board, a cube and score drawn."""
    states = [cube_state(rng) for _ in range(boards.shape[0])]
    specs = [
        [
            c["value"],
            OWNERS[c["owner"]],
            m["length"],
            m["score"][0],
            m["score"][1],
            int(m["crawford"]),
        ]
        for c, m in states
    ]
    probs = gnubg2.probabilities(boards)
    equities = gnubg2.cube_equities(boards, specs)
    records = []
    names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    for b, (cube, match), pr, (opt, nd, dt, dp) in zip(
        boards, states, probs, equities, strict=True
    ):
        available = cube["owner"] != "opponent" and not match["crawford"]
        decision, take = cube_decision_of(float(nd), float(dt), float(dp), available)
        w, wg, wb, lg, lb = (float(v) for v in pr)
        records.append(
            {
                "board": [int(v) for v in b],
                "cube": cube,
                "match": match,
                "kind": "match" if match["length"] else "money",
                "ply": 2,
                "probs": dict(zip(names, (w, wg, wb, lg, lb), strict=True)),
                "equity_cubeless": w - (1 - w) + wg - lg + wb - lb,
                "decision": decision,
                "take": take,
                "equities": {
                    "optimal": float(opt),
                    "no_double": float(nd),
                    "double_take": float(dt),
                    "double_pass": float(dp),
                },
            }
        )
    return records


def part_path(out: Path, part: int, cube: bool = False) -> Path:
    return out / ("cube_parts" if cube else "parts") / f"part_{part:04d}.jsonl.gz"


def make_part(args: argparse.Namespace, part: int, gnubg0: Any, gnubg2: Any) -> int:
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.training.supervised.label import LabelConfig, collect_decisions

    seed = (CUBE_SEED_BASE if args.cube else SEED_BASE) + part
    cfg = LabelConfig(sample=args.sample, min_plays=1 if args.cube else 2, parallel_games=64)
    evaluator = load_evaluator(args.net)
    rng = np.random.default_rng([seed])
    boards, dice = collect_decisions(evaluator, args.per_part, rng, cfg)
    if args.cube:
        judged = judge_cube(gnubg2, boards, rng)
        records = [
            {"id": part * args.per_part + i, "part": part, "seed": seed, **rec}
            for i, rec in enumerate(judged)
        ]
        return _write_part(part_path(args.out, part, cube=True), records)
    records = []
    bar = progress_bar(args.per_part, unit="pos", desc=f"part {part}")
    for i, (b, d) in enumerate(zip(boards, dice, strict=True)):
        rec = judge(gnubg0, gnubg2, b, (int(d[0]), int(d[1])))
        if len({tuple(c["board"]) for c in rec["candidates"]}) < 2:
            continue
        rec = {"id": part * args.per_part + i, "part": part, "seed": seed, **rec}
        records.append(rec)
        bar.update(1)
    bar.close()
    return _write_part(part_path(args.out, part), records)


def _write_part(path: Path, records: list[dict[str, Any]]) -> int:
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    atomic_write(path, lambda fh: fh.write(gzip.compress(text.encode())))
    return len(records)


MERGED = "checker_gnubg_own.jsonl.gz"
MERGED_CUBE = "cube_gnubg_own.jsonl.gz"


def merged_lines(out: Path, cube: bool = False) -> dict[int, list[str]]:
    """The merged file's decisions, by part (only the merged file is committed: its parts
    count as made)."""
    by_part: dict[int, list[str]] = {}
    merged = out / (MERGED_CUBE if cube else MERGED)
    if merged.exists():
        with gzip.open(merged, "rt") as fh:
            for line in fh:
                if line.strip():
                    by_part.setdefault(int(json.loads(line)["part"]), []).append(line)
    return by_part


def merge(out: Path, parts: int, cube: bool = False) -> Path:
    by_part = merged_lines(out, cube)
    for p in range(parts):
        if part_path(out, p, cube).exists():
            with gzip.open(part_path(out, p, cube), "rt") as fh:
                by_part[p] = [line for line in fh if line.strip()]
    if not by_part:
        raise SystemExit(f"no parts under {part_path(out, 0, cube).parent}")
    found = sorted(by_part)
    lines = [line for p in found for line in by_part[p]]
    target = out / (MERGED_CUBE if cube else MERGED)
    blob = gzip.compress("".join(lines).encode())
    atomic_write(target, lambda fh: fh.write(blob))
    kinds: dict[str, int] = {}
    for line in lines:
        k = json.loads(line)["kind"]
        kinds[k] = kinds.get(k, 0) + 1
    print(f"{target}: {len(lines)} decisions from {len(found)} parts; {kinds}")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=40, help="parts to make (resumable)")
    parser.add_argument("--per-part", type=int, default=250, help="decisions per part")
    parser.add_argument("--first", type=int, default=0, help="first part index to make")
    parser.add_argument("--step", type=int, default=1, help="make parts first, first+step, ...")
    parser.add_argument("--sample", type=float, default=0.08, help="share of positions kept")
    parser.add_argument("--net", default="default", help="the self-play net's spec")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder")
    parser.add_argument("--merge", action="store_true", help="join the parts into one file")
    parser.add_argument("--cube", action="store_true", help="the cube set (module docstring)")
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.out, args.parts, args.cube)
        return 0
    import torch

    from nard_rl.players.gnubg_player import GnubgPlayer

    torch.set_num_threads(1)
    gnubg0, gnubg2 = GnubgPlayer(0), GnubgPlayer(2)
    made = set(merged_lines(args.out, args.cube))
    try:
        for part in range(args.first, args.parts, args.step):
            if part in made or part_path(args.out, part, args.cube).exists():
                continue
            start = time.perf_counter()
            n = make_part(args, part, gnubg0, gnubg2)
            print(
                f"part {part}: {n} decisions in {time.perf_counter() - start:.0f} s",
                file=sys.stderr,
            )
    finally:
        gnubg0.close()
        gnubg2.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
