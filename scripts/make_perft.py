"""Write ``tests/data/perft.jsonl``: perft-style play counts from the reference generator.

Perft (from chess engines) counts the leaves of the full game tree a few plies deep; a
mistake anywhere in legal-play generation almost always changes the count.  Here a
ply is one roll and one play, so for each position and each of the 21 distinct rolls
(counted once each, not weighted by probability) we count the distinct afterstates
(R17) ``depth`` plies down:

* depth 1: the number of legal plays of that roll;
* depth 2: for each of those plays, the position handed to the opponent (flipped), and
  the sum of the opponent's play counts over its 21 rolls.

A roll with no legal play (R16) contributes no leaf.  The counts come from the naive
pure-Python generator in ``tests/reference_movegen.py`` (slow, deliberately simple);
``tests/test_movegen.py`` checks that the compiled engine reproduces every one.

Positions: the start (depth 1 and 2), three from seeded random play (one with the mover
on the bar, one with the opponent on the bar, one ordinary), and seeded bear-offs, under
both rule sets, chosen among those where R29 (mars) changes the counts (the first also
at depth 2).

Run from the repository root: ``python scripts/make_perft.py`` (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from reference_movegen import (  # noqa: E402  (the reference lives with the tests)
    ALL_ROLLS,
    START,
    flip,
    random_bearoff_positions,
    random_game_positions,
    reference_afterstates,
)


def perft(board: Sequence[int], depth: int, mars: bool) -> dict[str, int]:
    """Leaves ``depth`` plies below ``board``, per first roll (see the module docstring)."""
    counts: dict[str, int] = {}
    for d1, d2 in ALL_ROLLS:
        frontier = reference_afterstates(board, d1, d2, mars)
        for _ in range(depth - 1):
            frontier = [
                after
                for b in frontier
                for roll in ALL_ROLLS
                for after in reference_afterstates(flip(b), *roll, mars)
            ]
        counts[f"{d1}-{d2}"] = len(frontier)
    return counts


def choose_positions() -> list[tuple[str, tuple[int, ...], int, list[str]]]:
    """(name, board, depth, rule sets) of every perft record, all seeded."""
    chosen: list[tuple[str, tuple[int, ...], int, list[str]]] = [
        ("start", START, 1, ["standard"]),
        ("start", START, 2, ["standard"]),
    ]
    games = [b for b, _ in random_game_positions(seed=11, count=400)]
    on_bar = next(b for b in games if b[25] > 0)
    opp_bar = next(b for b in games if b[0] < 0 and b[25] == 0)
    midgame = games[57]
    chosen += [
        ("bar", on_bar, 1, ["standard"]),
        ("opponent-bar", opp_bar, 1, ["standard"]),
        ("midgame", midgame, 1, ["standard"]),
    ]
    bearoffs = 0
    for board, _ in random_bearoff_positions(seed=3, count=500):
        if bearoffs == 3:
            break
        if perft(board, 1, False) != perft(board, 1, True):
            bearoffs += 1
            chosen.append((f"bearoff{bearoffs}", board, 1, ["standard", "mars"]))
            if bearoffs == 1:
                chosen.append((f"bearoff{bearoffs}", board, 2, ["standard", "mars"]))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "perft.jsonl")
    args = parser.parse_args()
    lines = []
    for name, board, depth, rule_sets in choose_positions():
        for rules in rule_sets:
            t0 = time.perf_counter()
            counts = perft(board, depth, rules == "mars")
            total = sum(counts.values())
            print(
                f"{name:>13} depth {depth} {rules:<8} total {total:>7}  "
                f"({time.perf_counter() - t0:.1f} s)",
                flush=True,
            )
            record = {
                "name": name,
                "board": list(board),
                "rules": rules,
                "depth": depth,
                "total": total,
                "per_roll": counts,
            }
            lines.append(json.dumps(record, separators=(",", ":")))
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} records to {args.out}")


if __name__ == "__main__":
    main()
