"""Rule sets: one config object with named presets (``standard``, ``mars``).

Everything that differs between the two rule sets of RULES.md lives here, so the move
generator, the game flow, the networks' equity and the environments all read the same
switches instead of testing a rule-set name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


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
        """Points a win is worth before the stake (R25, R26, R28)."""
        if backgammon:
            return self.backgammon_value
        if gammon:
            return self.gammon_value
        return 1


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
