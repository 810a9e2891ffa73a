"""Tournaments between a run's checkpoints and baseline players: who plays whom, and the
standings, CSV, Markdown and strength plot that report it.

Playing is left to the caller (``nard evaluate --round-robin``), so everything here is a
function of entrants and finished ``MatchResult``s and is testable without playing many
games.  A result's ppg is always from its ``player_a`` side; a pair read the other way
round is the negated ppg with the same confidence interval (points are zero-sum).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from nard_rl.arena.matches import MatchResult

CHECKPOINT_PATTERN = "*.pt"
LAST_CHECKPOINT = "last.pt"
"""The trainer's rolling checkpoint, usually a copy of the newest ``games_*.pt``."""
DEFAULT_REFERENCE = "pubeval"

RESULTS_MD = "results.md"
RESULTS_CSV = "results.csv"
STRENGTH_PNG = "strength.png"


@dataclass(frozen=True)
class Entrant:
    """One seat in a tournament: a display name, the player spec that builds it, and for
    checkpoints the number of training games recorded in the file."""

    name: str
    spec: str
    train_games: int | None = None
    train_step: int | None = None

    @property
    def is_checkpoint(self) -> bool:
        return self.train_games is not None


def read_checkpoint_progress(path: Path) -> tuple[int, int]:
    """``(games, step)`` stored in a checkpoint; the file name is only a convention."""
    from nard_rl.nets.network import load_checkpoint  # torch only when checkpoints are read

    ckpt = load_checkpoint(path)
    return int(ckpt["games"]), int(ckpt["step"])


def find_checkpoints(
    folder: str | Path,
    read_progress: Callable[[Path], tuple[int, int]] = read_checkpoint_progress,
) -> list[Entrant]:
    """Every ``*.pt`` in ``folder`` (not recursive), ordered by training games then step.

    The trainer writes ``last.pt`` together with each kept ``games_*.pt``, so a
    ``last.pt`` recording the same games and step as another file is the same network
    and is left out; otherwise (say the run kept no ``games_*.pt``) it takes part.
    """
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"checkpoint folder not found: {root}")
    found = [
        (read_progress(path), path)
        for path in sorted(root.glob(CHECKPOINT_PATTERN))
        if path.is_file()
    ]
    kept = {progress for progress, path in found if path.name != LAST_CHECKPOINT}
    entrants = [
        Entrant(name=path.stem, spec=str(path), train_games=games, train_step=step)
        for (games, step), path in found
        if not (path.name == LAST_CHECKPOINT and (games, step) in kept)
    ]
    return sorted(entrants, key=lambda e: (e.train_games, e.train_step, e.name))


def parse_spec_list(text: str | None) -> list[str]:
    """``"pubeval, random,,gnubg:0"`` -> ``["pubeval", "random", "gnubg:0"]`` (order kept,
    repeats dropped)."""
    if not text:
        return []
    items = [part.strip() for part in text.split(",")]
    return list(dict.fromkeys(item for item in items if item))


def make_entrants(checkpoints: Sequence[Entrant], baselines: Sequence[str]) -> list[Entrant]:
    """Checkpoints (in training order) followed by the baseline specs, names unique."""
    entrants = [*checkpoints, *(Entrant(name=spec, spec=spec) for spec in baselines)]
    seen: set[str] = set()
    for e in entrants:
        if e.name in seen:
            raise ValueError(f"two tournament players are both called {e.name!r}")
        seen.add(e.name)
    return entrants


def schedule(
    entrants: Sequence[Entrant], vs: Sequence[str] | None = None
) -> list[tuple[Entrant, Entrant]]:
    """The matches to play, each ``(a, b)`` with ppg reported from ``a``'s side.

    Without ``vs``: every unordered pair once (a full round robin, n(n-1)/2 matches),
    the earlier entrant as ``a``, so checkpoints play as ``a`` against baselines.
    With ``vs`` (entrant names): only each checkpoint against each of those references,
    n·len(vs) matches: the cheap way to chart progress over a run.
    """
    if vs is None:
        return list(itertools.combinations(entrants, 2))
    by_name = {e.name: e for e in entrants}
    missing = [name for name in vs if name not in by_name]
    if missing:
        raise ValueError(f"--vs names players that are not in the tournament: {missing}")
    return [(e, by_name[ref]) for e in entrants if e.is_checkpoint for ref in vs if ref != e.name]


def pair_score(results: Iterable[MatchResult], a: str, b: str) -> tuple[float, float] | None:
    """``(ppg, ci95)`` of ``a`` against ``b`` from whichever orientation was played."""
    for r in results:
        if (r.player_a, r.player_b) == (a, b):
            return r.ppg, r.ci95
        if (r.player_a, r.player_b) == (b, a):
            return -r.ppg, r.ci95
    return None


@dataclass(frozen=True)
class Standing:
    """One player's line in the summary: each match weighs the same in ``mean_ppg``."""

    name: str
    train_games: int | None
    matches: int
    mean_ppg: float
    clear_wins: int
    """Matches whose whole 95% interval lies above zero."""
    clear_losses: int


def standings(entrants: Sequence[Entrant], results: Sequence[MatchResult]) -> list[Standing]:
    """Per-player summary of the played matches, best mean ppg first (players without a
    finished match are left out)."""
    rows: list[Standing] = []
    for e in entrants:
        scores = [
            s
            for other in entrants
            if other.name != e.name
            for s in [pair_score(results, e.name, other.name)]
            if s is not None
        ]
        if not scores:
            continue
        rows.append(
            Standing(
                name=e.name,
                train_games=e.train_games,
                matches=len(scores),
                mean_ppg=sum(p for p, _ in scores) / len(scores),
                clear_wins=sum(1 for p, ci in scores if p - ci > 0),
                clear_losses=sum(1 for p, ci in scores if p + ci < 0),
            )
        )
    return sorted(rows, key=lambda s: -s.mean_ppg)


def reference_name(entrants: Sequence[Entrant], vs: Sequence[str] | None = None) -> str | None:
    """Whom the strength plot measures checkpoints against: pubeval when every checkpoint
    plays it, else the first ``vs`` reference, else the first baseline, else the earliest
    checkpoint."""
    if vs:
        return DEFAULT_REFERENCE if DEFAULT_REFERENCE in vs else vs[0]
    names = [e.name for e in entrants]
    if DEFAULT_REFERENCE in names:
        return DEFAULT_REFERENCE
    baselines = [e.name for e in entrants if not e.is_checkpoint]
    if baselines:
        return baselines[0]
    return names[0] if names else None


@dataclass(frozen=True)
class StrengthPoint:
    name: str
    train_games: int
    ppg: float
    ci95: float


def strength_points(
    entrants: Sequence[Entrant], results: Sequence[MatchResult], reference: str
) -> list[StrengthPoint]:
    """Each checkpoint's ppg against ``reference``, in training order (the reference
    itself, when it is a checkpoint, scores exactly 0 against itself)."""
    points: list[StrengthPoint] = []
    for e in entrants:
        if e.train_games is None:
            continue
        score = (0.0, 0.0) if e.name == reference else pair_score(results, e.name, reference)
        if score is not None:
            points.append(StrengthPoint(e.name, e.train_games, score[0], score[1]))
    return sorted(points, key=lambda p: p.train_games)


# --- writers --------------------------------------------------------------------------

RESULT_FIELDS = tuple(f.name for f in fields(MatchResult) if f.name not in ("player_a", "player_b"))
CSV_COLUMNS = ("a", "b", "a_train_games", "b_train_games", *RESULT_FIELDS)


def csv_rows(
    entrants: Sequence[Entrant], results: Sequence[MatchResult]
) -> list[dict[str, object]]:
    """One row per played pair; training games blank for baselines."""
    train = {e.name: e.train_games for e in entrants}
    rows = []
    for r in results:
        d = r.to_dict()
        row: dict[str, object] = {
            "a": r.player_a,
            "b": r.player_b,
            "a_train_games": "" if train.get(r.player_a) is None else train[r.player_a],
            "b_train_games": "" if train.get(r.player_b) is None else train[r.player_b],
        }
        row.update({k: d[k] for k in RESULT_FIELDS})
        rows.append(row)
    return rows


def write_csv(
    path: str | Path, entrants: Sequence[Entrant], results: Sequence[MatchResult]
) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(entrants, results))


def _signed(x: float) -> str:
    return f"{x:+.3f}"


def _cell(score: tuple[float, float] | None) -> str:
    if score is None:
        return ""
    ppg, ci = score
    return f"{_signed(ppg)} ± {ci:.3f}" if math.isfinite(ci) else f"{_signed(ppg)} ± ∞"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def pairwise_table(
    results: Sequence[MatchResult], rows: Sequence[str], cols: Sequence[str]
) -> list[str]:
    """Markdown lines: the row player's ppg ± CI half-width against each column player."""
    body = [
        [f"**{r}**"] + ["—" if r == c else _cell(pair_score(results, r, c)) for c in cols]
        for r in rows
    ]
    return _table(["", *cols], body)


def standings_table(rows: Sequence[Standing]) -> list[str]:
    body = [
        [
            str(rank),
            s.name,
            "" if s.train_games is None else f"{s.train_games:,}",
            str(s.matches),
            _signed(s.mean_ppg),
            str(s.clear_wins),
            str(s.clear_losses),
        ]
        for rank, s in enumerate(rows, 1)
    ]
    header = [
        "rank",
        "player",
        "training games",
        "matches",
        "mean ppg",
        "clear wins",
        "clear losses",
    ]
    return _table(header, body)


def markdown_report(
    entrants: Sequence[Entrant],
    results: Sequence[MatchResult],
    *,
    vs: Sequence[str] | None = None,
    settings: dict[str, object] | None = None,
) -> str:
    """The whole ``results.md``: settings, standings, then the pairwise ppg table
    (square for a round robin; checkpoints x references with ``vs``)."""
    names = [e.name for e in entrants]
    if vs is None:
        rows, cols = names, names
    else:
        rows = [e.name for e in entrants if e.is_checkpoint]
        cols = list(vs)
    lines = ["# Tournament results", ""]
    if settings:
        lines += [f"- {key}: {value}" for key, value in settings.items()]
        lines.append("")
    lines += [
        "Points per game (ppg) are cubeless, gammons and backgammons counted, from duplicate-"
        "dice matches; ± is the half-width of the 95% confidence interval.  A clear win or "
        "loss is a match whose whole interval lies on one side of zero.",
        "",
        "## Standings",
        "",
        *standings_table(standings(entrants, results)),
        "",
        "## Pairwise ppg (row player against column player)",
        "",
        *pairwise_table(results, rows, cols),
        "",
    ]
    return "\n".join(lines)


def plot_strength(path: str | Path, points: Sequence[StrengthPoint], reference: str) -> None:
    """ppg against ``reference`` (95% CI error bars) over training games, as a PNG.

    Uses a bare ``Figure`` (Agg canvas) rather than pyplot, so no GUI backend or global
    state is touched and it works headless.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import EngFormatter

    fig = Figure(figsize=(7.0, 4.5), dpi=100)
    ax = fig.add_subplot()
    ax.axhline(0.0, color="grey", linewidth=0.8)
    if points:
        errs = [p.ci95 if math.isfinite(p.ci95) else 0.0 for p in points]
        ax.errorbar(
            [p.train_games for p in points],
            [p.ppg for p in points],
            yerr=errs,
            fmt="o-",
            capsize=3,
        )
        ax.xaxis.set_major_formatter(EngFormatter())
    else:
        ax.text(0.5, 0.5, "no checkpoint results yet", ha="center", transform=ax.transAxes)
    ax.set_xlabel("training games")
    ax.set_ylabel(f"points per game vs {reference}")
    ax.set_title(f"Strength against {reference} (95% CI)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(str(path), format="png")


def write_outputs(
    out_dir: str | Path,
    entrants: Sequence[Entrant],
    results: Sequence[MatchResult],
    *,
    vs: Sequence[str] | None = None,
    settings: dict[str, object] | None = None,
) -> dict[str, Path]:
    """Write ``results.md``, ``results.csv`` and ``strength.png``; returns their paths.

    Cheap enough to call after every match, so an interrupted tournament keeps what it
    finished.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / RESULTS_MD, "csv": out / RESULTS_CSV, "plot": out / STRENGTH_PNG}
    paths["markdown"].write_text(markdown_report(entrants, results, vs=vs, settings=settings))
    write_csv(paths["csv"], entrants, results)
    ref = reference_name(entrants, vs)
    points = strength_points(entrants, results, ref) if ref is not None else []
    plot_strength(paths["plot"], points, ref or "?")
    return paths
