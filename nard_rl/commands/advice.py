"""The bot's advice in words, for the human seats of ``nard play`` and ``nard chouette``.

A player at the prompt asks ``hint`` at any decision and wants the answer to *that*
decision: which play, whether to double or roll, whether to take or pass.  The numbers come
from ``nard_rl.search.nply`` (plays) and ``nard_rl.cube.model`` (cube decisions); this
module only turns them into lines, once for both commands, with readable names instead of
identifiers (``Double, take``, not ``double_take``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nard_rl.cube.model import CubeDecision
    from nard_rl.search.nply import RankedPlay

CUBE_ACTIONS = {
    "no_double": "No double",
    "double_take": "Double, take",
    "double_pass": "Double, pass",
    "too_good": "Too good to double",
    "unavailable": "Doubling not available",
}
"""The proper cube action of the side on roll, as players name it."""


def play_lines(plays: Sequence[RankedPlay], top: int = 5) -> list[str]:
    """The best ``top`` plays, one line each: notation, equity, loss to the best, win and
    gammon chances, and the ply each was read at."""
    if not plays:
        return ["  no legal play: the roll is forfeited (R16)"]
    lines = [f"  {'#':>2}  {'play':<24} {'equity':>7} {'diff':>7}   win   gam  ply"]
    for i, p in enumerate(plays[:top], start=1):
        lines.append(
            f"  {i:>2}. {p.move:<24} {p.equity:+7.3f} {p.diff:+7.3f}"
            f"  {p.probs[0]:.3f} {p.probs[1]:.3f}  {p.ply}"
        )
    return lines


def _units(match: bool) -> str:
    return "normalised match equity" if match else "equity per current stake"


def cube_lines(decision: CubeDecision, ply: int, *, match: bool = False) -> list[str]:
    """The cube analysis of the side on roll before it rolls: the three cubeful equities
    and the proper action (what to do now: double or roll)."""
    lines = [f"  cube analysis at {ply}-ply ({_units(match)}), cubeless {decision.cubeless:+.3f}:"]
    rows = (
        ("No double", decision.no_double),
        ("Double, take", decision.double_take),
        ("Double, pass", decision.double_pass),
    )
    lines += [f"    {label:<14} {value:+.3f}" for label, value in rows if value is not None]
    action = CUBE_ACTIONS.get(decision.decision, decision.decision)
    if decision.take is not None and decision.decision in ("double_take", "double_pass"):
        verdict = "double"
    elif decision.decision == "too_good":
        verdict = "roll on for the gammon (too good to double)"
    else:
        verdict = "roll"
    lines.append(f"  proper action: {action}: {verdict}")
    return lines


def take_lines(decision: CubeDecision, *, match: bool = False) -> list[str]:
    """The receiver's side of a double: ``decision`` is the doubler's cube decision (from
    the doubler's view, see ``nard_rl.cube.model.take_decision``); the equities are turned to the
    receiver's side (the negatives of the doubler's)."""
    take = decision.double_take
    drop = decision.double_pass
    lines = [f"  take or pass ({_units(match)}, your side):"]
    if take is not None:
        lines.append(f"    {'Take':<14} {-take:+.3f}")
    if drop is not None:
        lines.append(f"    {'Pass':<14} {-drop:+.3f}")
    answer = "take" if decision.take else "pass"
    lines.append(f"  proper answer: {answer}")
    return lines
