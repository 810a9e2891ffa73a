"""How well ``nard analyze`` ranks players like GNU Backgammon does.

GNU Backgammon plays N matches against itself, each player at its own noise level
(``set player P chequerplay evaluation noise``; 0-ply, cube decisions with the same
noise), saves each as ``.sgf`` and exports it as ``.mat``, and analyses it at
``--gnubg-ply`` (2 by default).  ``nard analyze --ply 1`` (the library call, same code)
analyses both files of each match.  Printed:

* the Spearman rank correlation of the per-player overall error rates (mEMG per
  decision) of nard and gnubg over the 2N player-matches (target: at least 0.9), and
  the same for checker play alone;
* the ratio of nard's checker decisions to gnubg's unforced moves (target: within 3%),
  and whether the ``.sgf`` and ``.mat`` files of a match gave the same analysis;
* per player-match: noise, both error rates, both counts.

gnubg is the judge here only: nothing it computes enters training data.

Run: ``python scripts/bench_analyze.py [--matches 6] [--length 5] [--gnubg-ply 2]
[--ply 1] [--workers 1] [--keep DIR]``.  ``--make-test-data DIR`` instead writes the
small gnubg files of the test suite (``tests/data/records``) with gnubg's 0-ply analysis
of every move as JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

GNUBG = "/usr/games/gnubg"
NOISE = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08)


def play_match(
    path_stem: Path, length: int, seed: int, noise: tuple[float, float], names=("Alice", "Bob")
) -> tuple[Path, Path]:
    """A gnubg self-play match at 0-ply with the players' noise: ``.sgf`` and ``.mat``."""
    sgf, mat = path_stem.with_suffix(".sgf"), path_stem.with_suffix(".mat")
    lines = [f"set seed {seed}", f"set defaultnames {names[0]} {names[1]}"]
    for p in (0, 1):
        lines += [
            f"set player {p} gnubg",
            f"set player {p} chequerplay evaluation plies 0",
            f"set player {p} cubedecision evaluation plies 0",
            f"set player {p} chequerplay evaluation noise {noise[p]}",
            f"set player {p} cubedecision evaluation noise {noise[p]}",
        ]
    lines += [
        "set automatic game on",
        "set automatic roll on",
        "set display off",
        f"new match {length}",
        f"export match mat {mat}",
        # saved from the .mat import: the .sgf carries no analysis (the players' own
        # evaluations would otherwise be kept in it)
        "set confirm new off",
        f"import mat {mat}",
        f"save match {sgf} yes",
    ]
    subprocess.run(
        ["nice", GNUBG, "-t", "-q"],
        input="\n".join(lines) + "\n",
        text=True,
        capture_output=True,
        check=True,
        timeout=600,
    )
    if not sgf.exists() or not mat.exists():
        raise RuntimeError(f"gnubg did not write {sgf} and {mat}")
    return sgf, mat


_ANALYSE = r"""
import gnubg, json, sys
path, ply, out = PATH, PLY, OUT
gnubg.command('load match ' + path)
gnubg.command('set analysis chequerplay evaluation plies %d' % ply)
gnubg.command('set analysis cubedecision evaluation plies %d' % ply)
gnubg.command('analyse match')
m = gnubg.match(analysis=1, boards=0, statistics=1, verbose=0)
side = {'X': 0, 'O': 1}
players = {}
for key, st in m['stats'].items():
    mv, cb = st['moves'], st['cube']
    players[side[key]] = {
        'unforced': mv['unforced-moves'], 'moves': mv['total-moves'],
        'checker_error': mv['error-skill'], 'cube_decisions': cb['close-cube'],
        'cube_error_raw': cb, 'luck': st['dice']['luck'],
    }
moves = []
for gi, g in enumerate(m['games']):
    for a in g['game']:
        an = a.get('analysis') or {}
        if a['action'] == 'move' and an.get('moves'):
            ms = an['moves']
            i = an.get('imove', 0)
            moves.append({'game': gi + 1, 'player': side[a['player']], 'dice': list(a['dice']),
                          'n': len(ms), 'lost': ms[0]['score'] - ms[i]['score'],
                          'skill': an.get('skill'), 'luck': an.get('luck-value')})
        elif a['action'] in ('double', 'take', 'drop'):
            moves.append({'game': gi + 1, 'player': side[a['player']], 'kind': a['action'],
                          'skill': an.get('skill') if isinstance(an, dict) else None})
json.dump({'players': players, 'moves': moves}, open(out, 'w'))
"""


def gnubg_analysis(path: Path, ply: int) -> dict[str, Any]:
    """gnubg's analysis of a match file at ``ply``: per player (0, 1) the counts and
    error totals of its statistics, and per move the equity lost and the mark."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "analyse.py"
        out = Path(tmp) / "out.json"
        head = f"PATH, PLY, OUT = {str(path)!r}, {int(ply)}, {str(out)!r}\n"
        script.write_text(head + _ANALYSE)
        subprocess.run(
            ["nice", GNUBG, "-t", "-q", "-r", "-p", str(script)],
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
        data = json.loads(out.read_text())
    players = {}
    for key, p in data["players"].items():
        cb = p.pop("cube_error_raw")
        cube_err = sum(v for k, v in cb.items() if k.startswith("err-") and k.endswith("-skill"))
        p["cube_error"] = cube_err
        n = p["unforced"] + p["cube_decisions"]
        p["overall_rate"] = 1000.0 * (p["checker_error"] + cube_err) / n if n else 0.0
        p["checker_rate"] = 1000.0 * p["checker_error"] / p["unforced"] if p["unforced"] else 0.0
        players[int(key)] = p
    return {"players": players, "moves": data["moves"]}


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation (ties get their average rank)."""

    def ranks(x: list[float]) -> np.ndarray:
        arr = np.asarray(x, dtype=np.float64)
        order = np.argsort(arr, kind="stable")
        r = np.empty(len(arr))
        r[order] = np.arange(len(arr), dtype=np.float64)
        for v in np.unique(arr):
            tie = arr == v
            r[tie] = r[tie].mean()
        return r

    ra, rb = ranks(a), ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def make_test_data(out: Path) -> None:
    """The test suite's small gnubg files, with gnubg's 0-ply analysis as JSON."""
    out.mkdir(parents=True, exist_ok=True)
    for stem, length, seed, noise in (
        ("gnubg_3pt", 3, 11, (0.0, 0.04)),
        ("gnubg_5pt", 5, 23, (0.01, 0.03)),
    ):
        sgf, _ = play_match(out / stem, length, seed, noise)
        ref = gnubg_analysis(sgf, 0)
        (out / f"{stem}.gnubg0.json").write_text(json.dumps(ref, indent=0) + "\n")
        print(f"wrote {out / stem}.sgf/.mat/.gnubg0.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=6)
    ap.add_argument("--length", type=int, default=5)
    ap.add_argument("--gnubg-ply", type=int, default=2)
    ap.add_argument("--ply", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--keep", type=Path, help="keep the match files and analyses here")
    ap.add_argument("--make-test-data", type=Path, metavar="DIR")
    args = ap.parse_args(argv)
    if args.make_test_data:
        make_test_data(args.make_test_data)
        return 0

    from nard_rl.analysis.parallel import analyse_matches
    from nard_rl.records import load_match

    tmp = tempfile.TemporaryDirectory()
    where = args.keep or Path(tmp.name)
    where.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    files = []
    for i in range(args.matches):
        noise = (NOISE[i % len(NOISE)], NOISE[(3 * i + 2) % len(NOISE)])
        sgf, mat = play_match(where / f"match{i:02d}", args.length, args.seed + i, noise)
        files.append((sgf, mat, noise))
    t_play = time.perf_counter() - t0
    t0 = time.perf_counter()
    refs = [gnubg_analysis(sgf, args.gnubg_ply) for sgf, _, _ in files]
    t_gnubg = time.perf_counter() - t0
    t0 = time.perf_counter()
    replayed = [load_match(f) for sgf, mat, _ in files for f in (sgf, mat)]
    results = analyse_matches(
        replayed, ply=args.ply, workers=args.workers, progress=sys.stderr.isatty()
    )
    t_nard = time.perf_counter() - t0
    same_formats = 0
    for i, (_, _, noise) in enumerate(files):
        a, b = results[2 * i].to_dict(), results[2 * i + 1].to_dict()
        if a["players"] == b["players"]:
            same_formats += 1
        for p, name in enumerate(a["names"]):
            ours = a["players"][name]
            ref = refs[i]["players"][p]
            rows.append(
                {
                    "match": i,
                    "player": name,
                    "noise": noise[p],
                    "nard_rate": ours["overall"]["error_rate"],
                    "gnubg_rate": ref["overall_rate"],
                    "nard_checker_rate": ours["checker"]["error_rate"],
                    "gnubg_checker_rate": ref["checker_rate"],
                    "nard_checker": ours["checker"]["decisions"],
                    "gnubg_unforced": ref["unforced"],
                    "nard_cube": ours["cube"]["decisions"],
                    "gnubg_cube": ref["cube_decisions"],
                }
            )
    if args.keep:
        (where / "rows.json").write_text(json.dumps(rows, indent=1))
    print(
        f"{'match':>5} {'player':>7} {'noise':>6} {'nard':>8} {'gnubg':>8} "
        f"{'chk n':>6} {'chk g':>6} {'cube n':>6} {'cube g':>6}"
    )
    for r in rows:
        print(
            f"{r['match']:5d} {r['player']:>7} {r['noise']:6.3f} {r['nard_rate']:8.1f} "
            f"{r['gnubg_rate']:8.1f} {r['nard_checker']:6d} {r['gnubg_unforced']:6d} "
            f"{r['nard_cube']:6d} {r['gnubg_cube']:6d}"
        )
    rho = spearman([r["nard_rate"] for r in rows], [r["gnubg_rate"] for r in rows])
    rho_c = spearman(
        [r["nard_checker_rate"] for r in rows], [r["gnubg_checker_rate"] for r in rows]
    )
    ratio = sum(r["nard_checker"] for r in rows) / max(1, sum(r["gnubg_unforced"] for r in rows))
    print(
        f"\n{args.matches} {args.length}-point matches, nard {args.ply}-ply vs gnubg "
        f"{args.gnubg_ply}-ply, {len(rows)} player-matches"
    )
    print(f"Spearman rho, overall error rate: {rho:.3f} (target >= 0.9)")
    print(f"Spearman rho, checker error rate: {rho_c:.3f}")
    print(f"checker decisions nard / gnubg unforced moves: {ratio:.4f} (target 0.97-1.03)")
    print(f".sgf and .mat gave the same figures in {same_formats} of {len(files)} matches")
    print(f"time: gnubg play {t_play:.0f} s, gnubg analysis {t_gnubg:.0f} s, nard {t_nard:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
