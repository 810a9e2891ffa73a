"""Agreement of ``nard_rl.cube`` with GNU Backgammon's cube decisions.

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

Run: ``python scripts/bench_cube.py [--data PATH] [--x X]`` (``--x`` forces one cube
efficiency for every position instead of ``cube_efficiency(board)``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.cube import (
    DECISIONS,
    PROB_NAMES,
    CubeDecision,
    CubeState,
    cube_decision,
    cube_efficiency,
)
from nard_rl.met import MatchEquityTable, MatchScore

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cube_gnubg_public.jsonl"
EQUITY_KEYS = ("no_double", "double_take", "optimal")


def load_records(path: str | Path = DATA) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def decide(
    rec: dict[str, Any], x: float | None = None, met: MatchEquityTable | None = None
) -> CubeDecision:
    """``cube_decision`` for one reference record, with gnubg's probabilities."""
    probs = [rec["probs"][k] for k in PROB_NAMES]
    cube = CubeState(int(rec["cube"]["value"]), rec["cube"]["owner"])
    m = rec["match"]
    match = None
    if m["length"]:
        match = MatchScore(m["length"], m["score"][0], m["score"][1], bool(m["crawford"]))
    eff = cube_efficiency(rec["board"]) if x is None else x
    return cube_decision(probs, cube, match, x=eff, met=met)


def benchmark(records: list[dict[str, Any]], x: float | None = None) -> dict[str, dict[str, Any]]:
    """Agreement figures per kind of play (``money``, ``match``)."""
    met = MatchEquityTable.default()
    out: dict[str, dict[str, Any]] = {}
    for kind in ("money", "match"):
        recs = [r for r in records if (r["match"]["length"] > 0) == (kind == "match")]
        if not recs:
            continue
        confusion: Counter[tuple[str, str]] = Counter()
        takes = take_agree = 0
        doubles = double_take_agree = 0
        errors: dict[str, list[float]] = {k: [] for k in EQUITY_KEYS}
        for rec in recs:
            d = decide(rec, x, met)
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
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--x", type=float, default=None, help="one cube efficiency for all")
    args = ap.parse_args()
    res = benchmark(load_records(args.data), x=args.x)
    for kind, r in res.items():
        print(f"== {kind}: {r['positions']} positions")
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
