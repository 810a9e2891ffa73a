"""Agreement of ``nard_rl.cube.model`` with GNU Backgammon's cube decisions.

Reads ``tests/data/cube_gnubg_public.jsonl`` (3,000 pre-roll positions with gnubg 1.07's
2-ply probabilities, its cube decision, the receiver's right answer and its cubeful
equities) and feeds gnubg's *own* probabilities to ``cube_decision``, so the figures
measure the cube model alone, not a network.  Printed separately for money and match play:

* decision agreement (no_double / double_take / double_pass / too_good / unavailable),
* take agreement (over positions where doubling is available, and over those where gnubg
  doubles or is too good to double, where the take is a real question),
* mean absolute error of the cubeful equities (no double, double/take, optimal; normalised
  the way gnubg reports them), over the positions where both sides report the figure,
* the confusion matrix of the decisions.

gnubg's 2-ply cube analysis averages 0-ply cubeful values over two rolls, while the model
here applies Janowski's interpolation to the 2-ply probabilities directly, so perfect
agreement is not expected: borderline positions (a few hundredths of equity from a
decision boundary) are where the two differ.

With ``--net SPEC`` the probabilities are the net's own instead (``default`` or a
checkpoint), read before the roll at ``--ply`` (0, 1, 2; ``nard cube`` uses 1) through
``nard_rl.cube.cubeful.CubeAdvisor``, the same path as ``nard cube --jsonl``.  Then the figure
that matters is printed too: the **mean equity lost per decision** in millipoints, judged
by gnubg's 2-ply cubeful equities (``equity_lost``): the doubler's loss (optimal minus the
equity of the action taken, a double answered correctly being worth min(DT, DP)) plus the
receiver's loss when its answer is wrong (|DT - DP|), 0 where doubling is unavailable;
and the seconds per decision.

Run: ``python scripts/bench_cube.py [--data PATH] [--x X] [--net default --ply 1]``
(``--x`` forces one cube efficiency for every position instead of
``cube_efficiency(board)``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.cube.model import (
    DECISIONS,
    PROB_NAMES,
    CubeDecision,
    CubeState,
    cube_decision,
    cube_efficiency,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cube_gnubg_public.jsonl"
EQUITY_KEYS = ("no_double", "double_take", "optimal")


def load_records(path: str | Path = DATA) -> list[dict[str, Any]]:
    """The records of a cube file (``.jsonl``, or ``.jsonl.gz`` as the own validation set)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def record_state(rec: dict[str, Any]) -> tuple[CubeState, MatchScore | None]:
    cube = CubeState(int(rec["cube"]["value"]), rec["cube"]["owner"])
    m = rec["match"]
    match = None
    if m["length"]:
        match = MatchScore(m["length"], m["score"][0], m["score"][1], bool(m["crawford"]))
    return cube, match


def decide(
    rec: dict[str, Any],
    x: float | None = None,
    met: MatchEquityTable | None = None,
    probs: Any = None,
) -> CubeDecision:
    """``cube_decision`` for one reference record, with gnubg's probabilities (or ``probs``)."""
    if probs is None:
        probs = [rec["probs"][k] for k in PROB_NAMES]
    cube, match = record_state(rec)
    eff = cube_efficiency(rec["board"]) if x is None else x
    return cube_decision(np.clip(probs, 0.0, 1.0), cube, match, x=eff, met=met)


def equity_lost(rec: dict[str, Any], d: CubeDecision) -> tuple[float, float]:
    """(doubler's loss, receiver's loss) of decision ``d`` judged by the record's equities
    (see the module docstring); both 0 where doubling is unavailable."""
    e = rec["equities"]
    if rec["decision"] == "unavailable" or e.get("double_take") is None:
        return 0.0, 0.0
    dt, dp = float(e["double_take"]), float(e["double_pass"])
    doubled = d.decision in ("double_take", "double_pass")
    chosen = min(dt, dp) if doubled else float(e["no_double"])
    doubler = float(e["optimal"]) - chosen
    right_take = dt <= dp
    receiver = 0.0 if d.take is None or d.take == right_take else abs(dt - dp)
    return doubler, receiver


def benchmark(
    records: list[dict[str, Any]], x: float | None = None, probs: np.ndarray | None = None
) -> dict[str, dict[str, Any]]:
    """Agreement figures per kind of play (``money``, ``match``, ``all``), on gnubg's
    probabilities or on ``probs`` (one row per record)."""
    met = MatchEquityTable.default()
    out: dict[str, dict[str, Any]] = {}
    for kind in ("money", "match", "all"):
        idx = [
            i
            for i, r in enumerate(records)
            if kind == "all" or (r["match"]["length"] > 0) == (kind == "match")
        ]
        recs = [records[i] for i in idx]
        if not recs:
            continue
        lost_double: list[float] = []
        lost_take: list[float] = []
        confusion: Counter[tuple[str, str]] = Counter()
        takes = take_agree = 0
        doubles = double_take_agree = 0
        errors: dict[str, list[float]] = {k: [] for k in EQUITY_KEYS}
        for i, rec in zip(idx, recs, strict=True):
            d = decide(rec, x, met, None if probs is None else probs[i])
            ld, lt = equity_lost(rec, d)
            lost_double.append(ld)
            lost_take.append(lt)
            confusion[rec["decision"], d.decision] += 1
            if rec["take"] is not None and d.take is not None:
                takes += 1
                take_agree += rec["take"] == d.take
                if rec["decision"] in ("double_take", "double_pass", "too_good"):
                    doubles += 1
                    double_take_agree += rec["take"] == d.take
            ours = d.to_dict()
            for k in EQUITY_KEYS:
                if ours[k] is not None and rec["equities"].get(k) is not None:
                    errors[k].append(abs(float(ours[k]) - float(rec["equities"][k])))
        agree = sum(v for (a, b), v in confusion.items() if a == b)
        out[kind] = {
            "positions": len(recs),
            "decision_agreement": agree / len(recs),
            "take_positions": takes,
            "take_agreement": take_agree / takes if takes else float("nan"),
            "double_positions": doubles,
            "take_agreement_doubles": double_take_agree / doubles if doubles else float("nan"),
            "equity_mae": {k: float(np.mean(v)) if v else float("nan") for k, v in errors.items()},
            "confusion": confusion,
            "lost_mp": 1000.0 * (float(np.mean(lost_double)) + float(np.mean(lost_take))),
            "lost_double_mp": 1000.0 * float(np.mean(lost_double)),
            "lost_take_mp": 1000.0 * float(np.mean(lost_take)),
        }
    return out


def net_probabilities(
    records: list[dict[str, Any]],
    net: str,
    ply: int,
    refine: float = 0.0,
    rollout: int = 0,
    blend: tuple[float, ...] | None = None,
) -> tuple[np.ndarray, float, float]:
    """The net's pre-roll probabilities of every record through ``CubeAdvisor`` at
    ``ply`` (close decisions one ply deeper when ``refine`` > 0, and rolled out with
    ``rollout`` games each), the seconds that took and the fraction of records refined."""
    from nard_rl.cube.cubeful import CubeAdvisor
    from nard_rl.nets.evaluator import load_evaluator

    advisor = CubeAdvisor(
        load_evaluator(net), ply=ply, refine_margin=refine, rollout_trials=rollout, blend=blend
    )
    boards = np.array([r["board"] for r in records], dtype=np.int8)
    states = [record_state(r) for r in records]
    t0 = time.perf_counter()
    probs, _, plies = advisor.analyse_batch(boards, [s[0] for s in states], [s[1] for s in states])
    return probs, time.perf_counter() - t0, float(np.mean(plies > ply))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--x", type=float, default=None, help="one cube efficiency for all")
    ap.add_argument("--net", default=None, help="use this net's probabilities (e.g. default)")
    ap.add_argument("--ply", type=int, default=1, help="lookahead of the net's probabilities")
    ap.add_argument(
        "--refine", type=float, default=0.0, help="close decisions one ply deeper (margin)"
    )
    ap.add_argument(
        "--rollout", type=int, default=0, help="games rolled out per refined decision (0: off)"
    )
    ap.add_argument(
        "--blend",
        default=None,
        help="comma-separated weights of the ply below at 1, 2 ply (CubeAdvisor.blend; "
        "default: the search's, 'none': plain n-ply)",
    )
    ap.add_argument("--limit", type=int, default=0, help="use only the first N records")
    ap.add_argument(
        "--skip", type=int, default=0, help="leave out the first N records (before --limit)"
    )
    ap.add_argument(
        "--match-ending-x",
        type=float,
        nargs="+",
        default=None,
        help="sweep the model's MATCH_ENDING_X over these values (fit it on an own set)",
    )
    args = ap.parse_args()
    records = load_records(args.data)
    if args.limit < 0 or args.skip < 0:
        ap.error("--limit and --skip must be >= 0")
    records = records[args.skip :]
    if args.limit:
        records = records[: args.limit]
    if not records:
        ap.error("no records left to judge")
    probs = None
    if args.net:
        try:
            blend = (
                None
                if args.blend is None
                else tuple(float(w) for w in args.blend.split(",") if w.strip() and w != "none")
            )
        except ValueError as exc:
            ap.error(f"--blend takes numbers: {exc}")
        probs, secs, refined = net_probabilities(
            records, args.net, args.ply, args.refine, args.rollout, blend
        )
        rolled = f", rolled out {args.rollout} games each" if args.rollout else ""
        print(
            f"probabilities: net {args.net} at {args.ply}-ply ({refined:.0%} refined one ply "
            f"deeper{rolled}), {len(records)} positions in {secs:.1f} s "
            f"({1000 * secs / len(records):.1f} ms per position, one batch)"
        )
    else:
        print("probabilities: gnubg 2-ply's own (the cube model alone)")
    if args.match_ending_x:
        from nard_rl.cube import model

        shipped = model.MATCH_ENDING_X
        print(f"MATCH_ENDING_X sweep (shipped {shipped}): mp lost per decision")
        for value in args.match_ending_x:
            model.MATCH_ENDING_X = value
            res = benchmark(records, x=args.x, probs=probs)
            row = "  ".join(f"{k} {r['lost_mp']:.3f}" for k, r in res.items())
            print(f"  {value:.3f}: {row}")
        model.MATCH_ENDING_X = shipped
        return
    res = benchmark(records, x=args.x, probs=probs)
    for kind, r in res.items():
        print(f"== {kind}: {r['positions']} positions")
        print(
            f"equity lost:        {r['lost_mp']:.2f} mp per decision (doubling "
            f"{r['lost_double_mp']:.2f} + take {r['lost_take_mp']:.2f})"
        )
        print(f"decision agreement: {r['decision_agreement']:.3f}")
        print(f"take agreement:     {r['take_agreement']:.3f} (over {r['take_positions']})")
        print(
            f"  where gnubg doubles or is too good: {r['take_agreement_doubles']:.3f}"
            f" (over {r['double_positions']})"
        )
        mae = ", ".join(f"{k} {v:.4f}" for k, v in r["equity_mae"].items())
        print(f"equity MAE:         {mae}")
        print("confusion (rows gnubg, columns ours):")
        print(" " * 13 + "".join(f"{d[:11]:>12}" for d in DECISIONS))
        for a in DECISIONS:
            row = [r["confusion"].get((a, b), 0) for b in DECISIONS]
            if any(row):
                print(f"{a[:12]:<13}" + "".join(f"{v:>12}" for v in row))


if __name__ == "__main__":
    main()
