"""Search for the position and roll with the most distinct legal plays (sizes MAX_CANDIDATES).

The environments hand an agent every legal afterstate of a roll in a candidate list of fixed
capacity (``nard_rl.envs.core.MAX_CANDIDATES``), so the capacity must cover the longest list any
position can produce.  Two halves establish it:

**Upper bound (proof).**  Label the mover's 15 checkers.  With a double ``d`` a play moves
checker ``i`` by ``k_i`` steps of ``d`` (bar entry is one such step), ``sum k_i = m`` where
``m <= 4`` is the same for every legal play (R14).  A checker moving ``k`` steps touches
down on fixed points (``p - d, p - 2d, ...``), so the hits and the final board are fixed
by the vector ``(k_1..k_15)`` alone: the distinct afterstates number at most the
compositions of ``m`` into 15 non-negative parts, ``C(m + 14, 14) <= C(18, 4) = 3060``.
A non-double moves two different checkers one die each (at most 15 * 14 ordered pairs) or
one checker both dice through one of two intermediate points (2 * 15), at most 240, and
one-die plays at most 15.  So no position has more than 3060 plays (GNU Backgammon sizes
its move list with the same bound, calling it trivial and not tight).

**Lower bound (search).**  Simulated annealing over legal boards, many chains at once,
each chain fixed to one roll: a step moves one checker (mover's or opponent's) between
bar, points and off, keeps boards valid, and is scored with the batch move generator
(one compiled call per step for all chains).  Doubles of small dice with the mover's
checkers spread out and no opponent blocks give the most plays.

Run: ``python scripts/max_plays_search.py`` (about half a minute); prints the best count per
roll and the best board overall.  Found so far: 2226 plays for 1-1 (384 chains x 4000
steps over 1-1, 2-2 and 3-3; the default run reaches 2225), 2138 for 2-2, 2052 for 3-3,
at most 212 for a non-double.  The best boards spread the mover's checkers in pairs of
adjacent points with one empty point between pairs and keep the opponent to blots.
"""

from __future__ import annotations

import argparse
import json
import time
from math import comb

import numpy as np
from numba import njit

from nard_rl.engine.movegen import legal_afterstates_batch

UPPER_BOUND = comb(18, 4)
"""The proven bound above: compositions of 4 steps over 15 labelled checkers."""


@njit(cache=True)
def _mutate(boards: np.ndarray, out: np.ndarray, seed: int) -> None:
    """Write into ``out`` a copy of each board with one checker moved (or left as is).

    Half the moves are the mover's (between bar 25, points 1..24 and off), half the
    opponent's (bar 0, points, off); a move onto a point held by the other side is refused,
    so every board stays valid.
    """
    np.random.seed(seed)
    n = boards.shape[0]
    for i in range(n):
        b = out[i]
        for k in range(26):
            b[k] = boards[i, k]
        mover = b[25]
        opp = -b[0]
        for p in range(1, 25):
            if b[p] > 0:
                mover += b[p]
            else:
                opp -= b[p]
        if np.random.random() < 0.75:
            # the mover: pick a source among off (26), points, bar
            src = np.random.randint(1, 27)
            dst = np.random.randint(1, 27)
            if src == dst:
                continue
            if src == 26:
                if mover >= 15:
                    continue
            elif b[src] <= 0:
                continue
            if dst <= 25 and b[dst] < 0:
                continue
            if dst == 25 and np.random.random() < 0.8:
                continue  # the bar rarely helps; keep it rare
            if src != 26:
                b[src] -= 1
            if dst != 26:
                b[dst] += 1
            if mover - (1 if dst == 26 else 0) + (1 if src == 26 else 0) == 0:
                for k in range(26):
                    b[k] = boards[i, k]
        else:
            # the opponent: index 0 is its bar (stored negative), 26 is off
            src = np.random.randint(0, 27)
            dst = np.random.randint(0, 27)
            if src == dst or src == 25 or dst == 25:
                continue
            if src == 26:
                if opp >= 15:
                    continue
            elif b[src] >= 0:
                continue
            if 1 <= dst <= 24 and b[dst] > 0:
                continue
            if src != 26:
                b[src] += 1
            if dst != 26:
                b[dst] -= 1
            if opp - (1 if dst == 26 else 0) + (1 if src == 26 else 0) == 0:
                for k in range(26):
                    b[k] = boards[i, k]


def random_spread_boards(n: int, rng: np.random.Generator) -> np.ndarray:
    """Boards with the mover's 15 checkers spread over random points, one opponent checker."""
    boards = np.zeros((n, 26), dtype=np.int8)
    for i in range(n):
        pts = rng.choice(np.arange(1, 25), size=15, replace=True)
        np.add.at(boards[i], pts, 1)
        free = np.flatnonzero(boards[i, 1:25] == 0) + 1
        if free.size:
            boards[i, rng.choice(free)] = -1
        else:
            boards[i, 0] = -1
    return boards


def count_plays(boards: np.ndarray, dice: np.ndarray, mars: bool) -> np.ndarray:
    _, offsets = legal_afterstates_batch(boards, dice, mars)
    return np.diff(offsets)


def anneal(
    rolls: list[tuple[int, int]],
    chains_per_roll: int,
    steps: int,
    seed: int,
    mars: bool,
    t0: float,
) -> dict[tuple[int, int], tuple[int, list[int]]]:
    """Simulated annealing; returns the best ``(count, board)`` found for each roll."""
    rng = np.random.default_rng(seed)
    n = len(rolls) * chains_per_roll
    dice = np.repeat(np.array(rolls, dtype=np.int8), chains_per_roll, axis=0)
    boards = random_spread_boards(n, rng)
    scores = count_plays(boards, dice, mars)
    best = scores.copy()
    best_boards = boards.copy()
    proposal = np.empty_like(boards)
    for step in range(steps):
        temp = t0 * (1.0 - step / steps) + 1e-3
        _mutate(boards, proposal, int(rng.integers(1 << 30)))
        new = count_plays(proposal, dice, mars)
        delta = (new - scores).astype(np.float64)
        accept = (delta >= 0) | (rng.random(n) < np.exp(np.minimum(delta, 0.0) / temp))
        boards[accept] = proposal[accept]
        scores[accept] = new[accept]
        better = scores > best
        best[better] = scores[better]
        best_boards[better] = boards[better]
    result: dict[tuple[int, int], tuple[int, list[int]]] = {}
    for r, roll in enumerate(rolls):
        lane = slice(r * chains_per_roll, (r + 1) * chains_per_roll)
        k = int(np.argmax(best[lane])) + r * chains_per_roll
        result[roll] = (int(best[k]), best_boards[k].tolist())
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500, help="annealing steps per chain")
    parser.add_argument("--chains", type=int, default=16, help="chains per roll")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--t0", type=float, default=30.0, help="starting temperature (plays)")
    parser.add_argument("--rules", choices=("standard", "mars"), default="standard")
    parser.add_argument(
        "--rolls",
        default="11,22,33,44,55,66,21,31,41,51,61,32,42,52,62,43,53,63,54,64,65",
        help="comma-separated rolls to search, e.g. 11,22",
    )
    args = parser.parse_args()
    rolls = [(int(r[0]), int(r[1])) for r in args.rolls.split(",")]
    start = time.perf_counter()
    found = anneal(rolls, args.chains, args.steps, args.seed, args.rules == "mars", args.t0)
    elapsed = time.perf_counter() - start
    for roll, (count, _) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        print(f"roll {roll[0]}-{roll[1]}: {count} plays")
    roll, (count, board) = max(found.items(), key=lambda kv: kv[1][0])
    print(f"best: {count} plays with {roll[0]}-{roll[1]} on board {json.dumps(board)}")
    print(f"upper bound (proof in the docstring): {UPPER_BOUND}")
    print(f"searched {len(rolls) * args.chains} chains x {args.steps} steps in {elapsed:.1f} s")
    print(f"max_plays_found: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
