"""Fit the cube efficiency per position class from self-play money games with the cube.

Janowski's model values a position ``x * live + (1 - x) * dead`` (``nard_rl.cube.model``); the
efficiency ``x`` says how much of the live cube's value play actually collects, and the
shipped constants (0.68 with contact; 0.55 + 0.00125 * pips in races) are folklore.  This
script learns them from the bot's own games instead:

1. the net plays ``--games`` money games against itself with the cube (both sides using the
   current cube model at ``--cube-ply``, duplicate dice, ``nard_rl.arena.cubegames``), and every
   pre-roll decision of a side with cube access is recorded with how that game ended, in
   units of the cube at that moment;
2. where the side did not double, the game's result is an unbiased sample of the
   no-double cubeful equity under this policy, which the model predicts as
   ``dead + x * (live - dead)``, linear in ``x``: least squares per class gives ``x``
   (contact: one ``x``; races: a shift of the pip-count formula), with an intercept that
   takes up any constant bias of the net's probabilities in the class, and a standard
   error clustered by dice pair (the games of one pair are not independent).

The fitted values go to ``--out`` (JSON) and are printed with their standard errors;
``nard_rl.cube.model.learned_efficiency`` reads such a file (``make_cube_bot(...,
efficiency=learned_efficiency(path))``).  Compare the two models
head to head with ``--compare N``: duplicate-dice cubeful money games between the same
net with the fitted and with the fixed efficiencies (identical checker play, so only the
cube decisions differ).

Measured (2-core CPU, 0-ply cube decisions, ``--games 600 --compare 600``): contact
x = 0.708 +- 0.361 (12,734 decisions), race shift -0.56 +- 0.87 (2,084 decisions); fitted
vs fixed in 600 duplicate cubeful money games: +0.003 points per game (95% CI -0.099 ..
+0.106).  Indistinguishable, so the fixed constants remain the default; many more games
(the standard error falls as 1/sqrt(games)) would be needed to learn x this way.

Run: ``python scripts/fit_cube_efficiency.py --games 2000 [--compare 1000]``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from nard_rl.arena.cubegames import CubeSample
from nard_rl.cube.model import (
    CONTACT_X,
    RACE_X_MAX,
    RACE_X_MIN,
    cube_decision,
    cube_efficiency,
)
from nard_rl.engine.position import Position

OUT = "cube_efficiency.json"


def fit(samples: list[CubeSample], probs: np.ndarray) -> dict[str, dict[str, float]]:
    """Least-squares ``x`` per class (see the module docstring) with standard errors."""
    rows: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for s, p in zip(samples, probs, strict=True):
        if s.doubled:
            continue
        pos = Position(s.board)
        race = pos.is_race()
        base = cube_efficiency(pos) if race else 0.0
        p = np.clip(p, 0.0, 1.0)
        dead = cube_decision(p, s.cube, x=0.0).no_double
        live = cube_decision(p, s.cube, x=1.0).no_double
        slope = live - dead
        # race: outcome - (dead + base * slope) = shift * slope
        target = s.outcome - dead - base * slope
        rows["race" if race else "contact"].append((s.pair, slope, target))
    out: dict[str, dict[str, float]] = {}
    for cls, data in rows.items():
        pairs = np.array([d[0] for d in data])
        a = np.array([d[1] for d in data])
        y = np.array([d[2] for d in data])
        # with an intercept: a constant bias of the net's probabilities in this class goes
        # there instead of into x, which is read off how results follow (live - dead)
        ac = a - a.mean()
        sxx = float(ac @ ac)
        if sxx <= 1e-12 or len(data) < 10:
            continue
        coef = float(ac @ (y - y.mean())) / sxx
        resid = y - y.mean() - coef * ac
        score: dict[int, float] = defaultdict(float)
        for pr, ai, ri in zip(pairs, ac, resid, strict=True):
            score[int(pr)] += float(ai * ri)
        se = math.sqrt(sum(v * v for v in score.values())) / sxx  # clustered by dice pair
        out[cls] = {
            "estimate": coef,
            "se": se,
            "bias": float(y.mean() - coef * a.mean()),
            "samples": len(data),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net", default="default")
    ap.add_argument("--games", type=int, default=2000, help="self-play games to fit on")
    ap.add_argument("--cube-ply", type=int, default=0, help="ply of the cube decisions")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--compare", type=int, default=0, help="games of fitted vs fixed")
    args = ap.parse_args()

    from nard_rl.arena.cubegames import make_cube_bot, play_cubeful
    from nard_rl.cube.cubeful import CubeAdvisor

    bot = make_cube_bot(args.net, cube_ply=args.cube_ply, refine=0.0)
    trace: list[CubeSample] = []
    t0 = time.perf_counter()
    res = play_cubeful(bot, bot, args.games, seed=args.seed, batch_pairs=256, trace=trace)
    print(
        f"self-play: {res.games} games, {len(trace)} cube decisions, "
        f"{time.perf_counter() - t0:.0f} s; {res.doubles:.2f} doubles a game"
    )
    advisor: CubeAdvisor = bot.cube.advisor  # type: ignore[attr-defined]
    probs = advisor.probabilities(np.array([s.board for s in trace], dtype=np.int8))
    fitted = fit(trace, probs)
    contact = fitted.get("contact", {"estimate": CONTACT_X, "se": math.inf, "samples": 0})
    race = fitted.get("race", {"estimate": 0.0, "se": math.inf, "samples": 0})
    x_contact = float(np.clip(contact["estimate"], 0.0, 1.0))
    shift = float(np.clip(race["estimate"], -RACE_X_MIN, 1.0 - RACE_X_MAX))
    print(
        f"contact: x = {contact['estimate']:.3f} +- {contact['se']:.3f} "
        f"({contact['samples']} decisions; fixed {CONTACT_X})"
    )
    print(
        f"race: shift of the pip formula {race['estimate']:+.3f} +- {race['se']:.3f} "
        f"({race['samples']} decisions; fixed 0)"
    )
    payload = {
        "contact_x": x_contact,
        "race_shift": shift,
        "fit": fitted,
        "games": res.games,
        "net": args.net,
        "cube_ply": args.cube_ply,
        "seed": args.seed,
    }
    Path(args.out).write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {args.out}")
    bot.close()

    if args.compare:
        from nard_rl.cube.model import learned_efficiency

        learned = learned_efficiency(args.out)
        a = make_cube_bot(args.net, cube_ply=args.cube_ply, efficiency=learned, refine=0.0)
        a.name = "fitted-x"
        b = make_cube_bot(args.net, cube_ply=args.cube_ply, refine=0.0)
        b.name = "fixed-x"
        r = play_cubeful(a, b, args.compare, seed=args.seed + 1, batch_pairs=256)
        print(r.summary())
        a.close()
        b.close()


if __name__ == "__main__":
    main()
