"""Rule sets: one config object with named presets (``standard``, ``mars``).

Everything that differs between the two rule sets of RULES.md lives here, so the move
generator, the game flow, the networks' equity and the environments all read the same
switches instead of testing a rule-set name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
"""Order of the five cubeless outcome probabilities (the networks' outputs): cumulative,
from one side's view (a backgammon is also a gammon, a gammon also a win)."""

_SWAP = [0, 3, 4, 1, 2]
"""``swap_sides`` column order: the other side's gammons/backgammons trade places."""

ArrayT = TypeVar("ArrayT")


@dataclass(frozen=True)
class RuleSet:
    """Switches of one rule set; presets are ``STANDARD`` and ``MARS``."""

    name: str
    """Preset name, recorded in checkpoints and game records."""
    cube: bool = True
    """Doubling cube in use (R22-R24); the mars rule set has none (R28)."""
    cube_max: int = 64
    """Highest cube value (R1, R24)."""
    gammon_value: int = 2
    """Points for a gammon (R25) or a mars (R28)."""
    backgammon_value: int = 3
    """Points for a backgammon: 3 (R25), 2 with the bg-as-gammon option (R26), 2 under mars
    where there is no x3 result (R28)."""
    waste_rule: bool = False
    """Pip-waste rule in the bear-off (R29)."""
    jacoby: bool = False
    """Jacoby rule for money play (R32): gammons count single until the cube is turned."""
    automatic_doubles: int = 0
    """Automatic doubles on opening ties, at most this many per game (R31); 0 is off."""
    turn_seconds: float | None = None
    """Per-turn time (R30); None means no clock."""
    reserve_seconds: float | None = None
    """Reserve that runs after the turn time is spent (R30)."""
    timeout_value: int = 2
    """What a player whose reserve runs out concedes (R30: a mars)."""

    def with_options(self, **changes: object) -> RuleSet:
        """A copy with some switches changed (e.g. ``jacoby=True``)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def result_value(self, gammon: bool, backgammon: bool) -> int:
        """Points a win is worth before the stake (R25, R26, R28), Jacoby aside."""
        return int(result_points(self, gammon, backgammon, cube_turned=True))


STANDARD = RuleSet(name="standard")
MARS = RuleSet(
    name="mars",
    cube=False,
    gammon_value=2,
    backgammon_value=2,
    waste_rule=True,
    turn_seconds=11.0,
    reserve_seconds=90.0,
)
PRESETS: dict[str, RuleSet] = {"standard": STANDARD, "mars": MARS}


def get_rules(rules: RuleSet | str | None = None) -> RuleSet:
    """Resolve a preset name (or pass a ``RuleSet`` through); unknown names raise."""
    if rules is None:
        return STANDARD
    if isinstance(rules, RuleSet):
        return rules
    try:
        return PRESETS[str(rules).lower()]
    except KeyError:
        raise ValueError(
            f"unknown rule set {rules!r}; choose one of {', '.join(sorted(PRESETS))}"
        ) from None


# --------------------------------------------------------------------------------------
# results and equity: the one place that turns a rule set into points and equity weights


def result_increments(
    rules: RuleSet | str = "standard", *, cube_turned: bool = False
) -> tuple[float, float]:
    """The equity weights: what a gammon adds over a single win, and a backgammon over a
    gammon (per stake).

    R25 (1/2/3), R26 (bg as 2), R28 (mars 1/2), R32 (Jacoby: gammons count single while
    the cube is unturned; cubeless games never turn it).  Matches have no Jacoby rule
    (R33): callers scoring a match game pass ``cube_turned=True``.  Points
    (``result_points``) and equities (``cubeless_equity``) both derive from these two
    numbers, so they cannot disagree.
    """
    r = get_rules(rules)
    if r.jacoby and not cube_turned:
        return 0.0, 0.0
    return float(r.gammon_value - 1), float(r.backgammon_value - r.gammon_value)


def result_points(
    rules: RuleSet | str, gammon: Any, backgammon: Any, *, cube_turned: bool = False
) -> Any:
    """Points of won games before the stake: 1, a gammon or a backgammon (R25, R26, R28),
    every win single under Jacoby while the cube is unturned (R32).

    ``gammon``/``backgammon`` are bools (an ``int`` comes back) or boolean arrays (an
    int8 array comes back), as the batch stepper scores many games at once.
    """
    g, bg = result_increments(rules, cube_turned=cube_turned)
    if isinstance(gammon, np.ndarray) or isinstance(backgammon, np.ndarray):
        gm = np.asarray(gammon, dtype=np.bool_)
        bm = np.asarray(backgammon, dtype=np.bool_) & gm
        return (1 + int(g) * gm + int(bg) * bm).astype(np.int8)
    return 1 + int(g) * bool(gammon) + int(bg) * bool(gammon and backgammon)


def cubeless_equity(
    probs: Any, rules: RuleSet | str = "standard", *, cube_turned: bool = False
) -> Any:
    """Cubeless equity per stake of ``(5,)`` or ``(N, 5)`` probabilities (``PROB_NAMES``).

    A single win or loss counts 1, a gammon and a backgammon what ``result_increments``
    adds.  Works on numpy arrays (float64 result; lists are converted) and, unchanged, on
    torch tensors (a tensor comes back), so training and analysis share one definition.
    """
    g, bg = result_increments(rules, cube_turned=cube_turned)
    p = probs if hasattr(probs, "unbind") else np.asarray(probs, dtype=np.float64)
    return 2.0 * p[..., 0] - 1.0 + g * (p[..., 1] - p[..., 3]) + bg * (p[..., 2] - p[..., 4])


def swap_sides(probs: ArrayT) -> ArrayT:
    """The same outcome probabilities seen by the other player:
    ``[win, wg, wbg, lg, lbg] -> [1 - win, lg, lbg, wg, wbg]``.

    The one swap of the project (the pre-roll convention and TD targets use it); works on
    ``(5,)``/``(N, 5)`` numpy arrays (lists become float64 arrays) and torch tensors.
    """
    p: Any = probs if hasattr(probs, "unbind") else np.asarray(probs, dtype=np.float64)
    out = p[..., _SWAP]
    out[..., 0] = 1.0 - p[..., 0]
    return out  # type: ignore[no-any-return]
