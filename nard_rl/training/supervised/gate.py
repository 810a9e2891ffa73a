"""Accept a new generation only when it measurably beats the previous one.

A fit lowers the held-out loss almost always, yet lower loss on the teacher's labels does
not guarantee better play; games decide.  The candidate plays the previous generation in
duplicate-dice games (``nard_rl.arena.matches.play_match``), and is accepted only if its
points per game exceed ``sigmas`` standard errors (over dice pairs), so a generation that
is merely as good, or better by luck, never replaces its parent.

The verdict is written before anything moves (``commit_verdict``): ``gate.json`` first,
then an accepted candidate is copied to its targets (``gen_NNN.pt``, then ``best.pt``),
each copy atomic and recognisable afterwards by the gate entry at the end of its history.
A crash at any point therefore leaves either no verdict (the match is played again, on the
same dice) or a verdict whose missing copies ``finish_verdict`` makes on the next start;
never a ``best.pt`` that changed without a verdict saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nard_rl.arena.matches import play_match
from nard_rl.players.base import RACE_SUFFIX, make_player
from nard_rl.util.io import atomic_write
from nard_rl.util.progress import progress_bar


@dataclass
class GateConfig:
    """How a candidate generation is judged against its parent."""

    games: int = 10_000
    """Games of the duplicate-dice match (rounded up to an even number)."""
    sigmas: float = 2.0
    """Required margin in standard errors of the mean points per game."""
    seed: int = 4242
    """Dice seed of the gate match; each generation adds its number, so the gates of
    successive generations see different dice."""
    ply: int = 0
    """Search depth of both players in the gate match."""


def gate(
    candidate: str | Path,
    previous: str | Path,
    cfg: GateConfig,
    *,
    rules: str = "standard",
    generation: int = 0,
    progress: bool = False,
    race_net: bool = False,
) -> dict[str, Any]:
    """Play the match; returns its figures and ``accepted``.

    ``race_net``: both nets play with the shipped race net answering no-contact races
    (``PATH.pt+race``), as the default player would pair them.  A generation labelled
    with the race net is never taught races, so judging it without one would count a
    drift in positions it is never asked about against its gains in contact.
    """
    if cfg.games < 2 or cfg.sigmas < 0:
        raise ValueError(f"bad gate settings: {cfg}")
    suffix = (RACE_SUFFIX if race_net else "") + (f":{cfg.ply}" if cfg.ply else "")
    a = make_player(f"{candidate}{suffix}", rules=rules)
    b = make_player(f"{previous}{suffix}", rules=rules)
    bar = progress_bar(cfg.games, unit="game", desc="gate", disable=not progress)
    try:
        res = play_match(
            a,
            b,
            cfg.games,
            seed=cfg.seed + generation,
            rules=rules,
            batch_pairs=256,
            progress=lambda done: bar.update(done - bar.n),
            name_a="candidate",
            name_b="previous",
        )
    finally:
        bar.close()
        a.close()
        b.close()
    se = res.ci95 / 1.96
    out = res.to_dict()
    out.update(
        se=se,
        margin=cfg.sigmas * se,
        accepted=bool(res.ppg > cfg.sigmas * se),
        gate=asdict(cfg),
        race_net=race_net,
    )
    return out


Copy = Callable[[Path, Path, dict[str, Any]], None]
"""``copy(src, dst, entry)``: the checkpoint ``src`` at ``dst`` with ``entry`` appended to
its history (the pipeline's ``_copy_checkpoint``)."""


def verdict_entry(verdict: dict[str, Any]) -> dict[str, Any]:
    """The history entry an accepted candidate carries: the verdict, its settings as
    ``config``."""
    entry = {"stage": "gate", **{k: v for k, v in verdict.items() if k != "gate"}}
    entry["config"] = verdict.get("gate", {})
    return entry


def holds_entry(path: Path, stage: str, generation: int) -> bool:
    """Whether the checkpoint at ``path`` was last written as generation ``generation``'s
    accepted candidate: its history ends with that generation's ``stage`` entry (``gate``,
    or ``promote`` for a candidate accepted by hand)."""
    if not path.exists():
        return False
    from nard_rl.nets.network import load_checkpoint

    history = load_checkpoint(path).get("extra", {}).get("history", [])
    last = history[-1] if history else {}
    return last.get("stage") == stage and last.get("generation") == generation


def commit_verdict(
    path: Path,
    verdict: dict[str, Any],
    candidate: Path,
    targets: Sequence[Path],
    copy: Copy,
) -> None:
    """Write ``verdict`` (with its ``generation``) to ``path``, atomically, and only then,
    if accepted, copy ``candidate`` to ``targets`` in order (``finish_verdict``)."""
    if "generation" not in verdict:
        raise ValueError("a verdict names its generation")
    atomic_write(path, lambda fh: fh.write(json.dumps(verdict, indent=2).encode()))
    finish_verdict(path, candidate, targets, copy)


def finish_verdict(path: Path, candidate: Path, targets: Sequence[Path], copy: Copy) -> list[Path]:
    """Make the copies an accepted verdict at ``path`` calls for that are not made yet (a
    crash between the verdict and its copies); returns the targets written.  A rejected
    verdict, or none, moves nothing."""
    if not path.exists():
        return []
    verdict = json.loads(path.read_text())
    if not verdict.get("accepted"):
        return []
    g = int(verdict["generation"])
    written = []
    for target in targets:
        if not holds_entry(target, "gate", g):
            copy(candidate, target, verdict_entry(verdict))
            written.append(target)
    return written
