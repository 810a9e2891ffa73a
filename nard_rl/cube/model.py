"""Doubling-cube decisions from the five cubeless outcome probabilities.

The networks estimate cubeless outcome probabilities (``PROB_NAMES``, from the view of the
player on roll, a gammon also counts as a win).  This module turns them into cube actions
for money play (R22-R24, R32) and for matches (R33, R34).  It is numpy-only: it takes
probabilities, never a network, so servers, the CLI and benchmarks share one model.

Model (Janowski's cube-efficiency interpolation, generalised to gammons and to matches)
---------------------------------------------------------------------------------------
All values are in a *utility* ``u(points)``: points themselves in money play, the match
winning chance after winning (``points > 0``) or losing that many points in a match (MET,
``nard_rl.cube.met``; capped at the match, R33).  With ``p`` the chance of winning and the
gammon/backgammon shares of wins and losses held fixed, two limits are computed:

* **dead cube**: nobody will ever double again, so the value is the cubeless one,
  ``p * W(c) + (1 - p) * L(c)``, where ``W(c)``/``L(c)`` are the mean utilities of a win
  /loss at cube ``c`` (single, gammon x2, backgammon x3 by the rule set, R25/R26);
* **fully live cube**: the game drifts continuously, so a player with cube access doubles
  exactly at the opponent's take point, where the opponent passes and the doubler cashes
  ``u(+c)``.  The value is then piecewise linear in ``p`` through ``(0, L(c))``, the
  opponent's cash point ``(q_opp, u(-c))`` if the opponent has access, our cash point
  ``(q_me, u(+c))`` if we have access, and ``(1, W(c))``.  A cash point at cube ``c`` is
  the receiver's take point, the ``p`` where the receiver's own live value after taking at
  ``2c`` (the receiver then owns the cube, with the recube vig) equals passing.  The take
  points are computed from the highest cube down: the cube stops at 64 (R1, R24) and in a
  match a player's cube is dead once ``c`` reaches the points that player needs.

The cubeful value is ``x * live + (1 - x) * dead`` with the cube efficiency ``x``.  For
money this is Janowski's model (the 64 cap of R24 moves take points by less than 0.001
from his closed form, which assumes an endless cube): the take point of a gammonless position is
``(L - 1/2) / (W + L + x/2)`` with ``W = L = 1``: 25% at ``x = 0``, 20% at ``x = 1``,
about 21.4% at the usual ``x = 0.68``.  The efficiency is a property of the position,
not of the probabilities (``cube_efficiency``): 0.68 for positions with contact, the value
commonly used since Janowski's work; in races it grows with the race length from 0.6 to
0.7 (``0.55 + 0.00125 * pips`` of the player on roll, clipped), because long races leave
many rolls for efficient doubling while short races are decided by big swings (market
losers) that a cube cannot catch, the same calibration GNU Backgammon publishes.

In a match, a cube at which one side's win ends the match (that side needs no more
points than the cube: its gammons are worth nothing more, it never doubles again) gets
the efficiency ``MATCH_ENDING_X`` = 0.9 instead (at least; for the values at that cube:
no double at the current cube, double/take at twice it).  The number is measured, not
assumed: solving the model for the ``x`` that reproduces GNU Backgammon 2-ply's cubeful
equities on the 1,200 match decisions of the shared cube reference file gives a median
of 0.68 (interquartile 0.65-0.73, 818 values) wherever both sides can still use the cube,
the constant above, but 0.96 (mean 0.90, interquartile 0.80-1.00, 229 values) where a
win at the cube ends the match.  With one constant the model lost 0.67 millipoints per
match decision on gnubg's own probabilities, almost all of it wrong passes of such
positions (a side at 2-away far ahead with many gammons: its gammons are dead once
doubled, and the taker's redouble is for the match); with 0.9, 0.20, no wrong take or pass.
That first measurement used the shared file, which is a test, not a fitting set; the
project's own set (``validation/cube_gnubg_own.jsonl.gz``: 10,000 positions of its own
self-play, 3,972 of them in matches, judged by gnubg 2-ply) confirms the value on its own:
``python scripts/bench_cube.py --data validation/cube_gnubg_own.jsonl.gz
--match-ending-x 0.6 0.68 0.75 0.8 0.85 0.9 0.95 1.0`` loses 0.914, 0.914, 0.853, 0.688,
0.622, **0.571**, 0.645 and 1.892 mp per match decision on gnubg's own probabilities.

Decisions (``cube_decision``), all equities from the view of the player on roll and
normalised to the current cube (money: per point of the current stake; match: the match
equity mapped linearly so that losing/winning the current cube value is -1/+1):
``no_double`` (ND), ``double_take`` (DT), ``double_pass`` (DP = +1).  The receiver takes
when DT <= DP; the doubler then doubles when DT > ND, else holds (``too_good`` when even
ND > DP: playing on for the gammon is worth more than cashing).  When the receiver passes
the doubler doubles unless ND > DP (``too_good``).  ``unavailable`` when the rules forbid
a double: the opponent owns the cube (R23), the cube is at 64 (R1, R24), the Crawford
game (R34), or a rule set without cube (R28).

Approximations: the gammon shares are held constant along the live-cube curve, the
position is assumed to move continuously (no market losers beyond what ``x`` absorbs),
and ``x`` is one number per position class.  A deeper search (averaging cubeful values
over the next rolls) would remove most of the error; this is the 0-ply cube model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal

import numpy as np

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.engine.position import Position
from nard_rl.engine.rules import (  # noqa: F401  (equity helpers re-exported: one home)
    PROB_NAMES,
    RuleSet,
    cubeless_equity,
    get_rules,
    result_increments,
    swap_sides,
)

Owner = Literal["centered", "mover", "opponent"]
OWNERS: tuple[Owner, ...] = ("centered", "mover", "opponent")

NO_DOUBLE = "no_double"
DOUBLE_TAKE = "double_take"
DOUBLE_PASS = "double_pass"
TOO_GOOD = "too_good"
UNAVAILABLE = "unavailable"
DECISIONS = (NO_DOUBLE, DOUBLE_TAKE, DOUBLE_PASS, TOO_GOOD, UNAVAILABLE)

CONTACT_X = 0.68
"""Cube efficiency of positions with contact."""
RACE_X_BASE = 0.55
RACE_X_PER_PIP = 0.00125
RACE_X_MIN = 0.6
RACE_X_MAX = 0.7

MATCH_ENDING_X = 0.9
"""Cube efficiency in a match wherever a win at the cube in question ends the match for
one side (it needs no more points than the cube): measured, see the module docstring
(the best of a sweep on the own validation set; 0.9 is also the mean efficiency gnubg's
equities imply on the shared file)."""

_EPS = 1e-9


def cube_efficiency(board: Sequence[int] | Position) -> float:
    """Janowski's cube efficiency ``x`` for a position (see the module docstring)."""
    pos = board if isinstance(board, Position) else Position(board)
    if not pos.is_race():
        return CONTACT_X
    pips = pos.pip_counts()[0]
    return float(min(RACE_X_MAX, max(RACE_X_MIN, RACE_X_BASE + RACE_X_PER_PIP * pips)))


def learned_efficiency(source: str | Path) -> Callable[[Sequence[int] | Position], float]:
    """The cube efficiency per position class fitted from self-play (``contact_x`` for
    positions with contact, ``race_shift`` added to the race formula), read from the JSON
    file ``scripts/fit_cube_efficiency.py`` writes.

    Not the default: fitted on 600 self-play money games it gave contact x = 0.71 +- 0.36
    (the fixed 0.68 is inside) and a race shift of -0.56 +- 0.87, and in 600 duplicate
    cubeful games against the fixed constants +0.003 +- 0.10 points per game, so the fixed
    constants stay (see the script for the procedure).
    """
    data = json.loads(Path(source).read_text())
    contact = float(data["contact_x"])
    shift = float(data["race_shift"])
    if not (0.0 <= contact <= 1.0 and -1.0 < shift < 1.0):
        raise ValueError(f"bad cube efficiencies in {source}: contact {contact}, shift {shift}")

    def efficiency(board: Sequence[int] | Position) -> float:
        pos = board if isinstance(board, Position) else Position(board)
        if not pos.is_race():
            return contact
        return float(min(1.0, max(0.0, cube_efficiency(pos) + shift)))

    return efficiency


# --------------------------------------------------------------------------------------
# cube and decision records


@dataclass(frozen=True)
class CubeState:
    """Cube value and who owns it (``mover`` is the player on roll)."""

    value: int = 1
    owner: Owner = "centered"

    def __post_init__(self) -> None:
        if self.owner not in OWNERS:
            raise ValueError(f"cube owner must be one of {', '.join(OWNERS)}, got {self.owner!r}")
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v > 64 or v & (v - 1):
            raise ValueError(f"cube value must be 1, 2, 4, ..., 64 (R1), got {v!r}")
        if self.owner != "centered" and v < 2:
            raise ValueError("an owned cube has been doubled at least once: value >= 2 (R24)")

    @classmethod
    def from_seats(cls, value: int, owner_seat: int | None, viewer: int) -> CubeState:
        """The cube of a game (owner by seat, None when centered) seen by seat ``viewer``."""
        if owner_seat is None:
            return cls(int(value), "centered")
        return cls(int(value), "mover" if owner_seat == viewer else "opponent")


@dataclass(frozen=True)
class CubeDecision:
    """The cube action of the player on roll, with its equities (see module docstring).

    ``take`` is the receiver's right answer to a double (None when doubling is
    unavailable).  ``cubeless`` is the cubeless equity in the same units as the others
    (money: per current stake, Jacoby applied while centered; match: normalised match
    equity).  ``match_equities`` are the raw match-winning chances behind the normalised
    equities (match play only).  ``x`` is the cube efficiency that was used.
    """

    decision: str
    take: bool | None
    no_double: float
    double_take: float | None
    double_pass: float | None
    optimal: float
    cubeless: float
    x: float
    match_equities: dict[str, float | None] | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


# --------------------------------------------------------------------------------------
# the model


def _check_probs(probs: Sequence[float] | np.ndarray) -> tuple[float, float, float, float, float]:
    p = np.asarray(probs, dtype=np.float64).reshape(-1)
    tol = 1e-4
    if p.shape != (5,) or not np.all(np.isfinite(p)):
        raise ValueError(f"expected five finite probabilities {PROB_NAMES}, got {probs!r}")
    win, wg, wbg, lg, lbg = p
    if (
        min(p) < -tol
        or win > 1 + tol
        or wg > win + tol
        or wbg > wg + tol
        or lg > 1 - win + tol
        or lbg > lg + tol
    ):
        raise ValueError(
            "inconsistent probabilities: need 0 <= win <= 1, win_backgammon <= win_gammon"
            " <= win and lose_backgammon <= lose_gammon <= 1 - win, got "
            + ", ".join(f"{k}={v:.4g}" for k, v in zip(PROB_NAMES, p, strict=True))
        )
    win = min(max(win, 0.0), 1.0)
    wg = min(max(wg, 0.0), win)
    wbg = min(max(wbg, 0.0), wg)
    lg = min(max(lg, 0.0), 1.0 - win)
    lbg = min(max(lbg, 0.0), lg)
    return float(win), float(wg), float(wbg), float(lg), float(lbg)


def _shares(total: float, gammon: float, backgammon: float) -> tuple[float, float, float]:
    """Single/gammon/backgammon shares of a win (or loss); all single when it never happens."""
    if total <= _EPS:
        return 1.0, 0.0, 0.0
    return (total - gammon) / total, (gammon - backgammon) / total, backgammon / total


Knots = list[tuple[float, float]]


def _interp(knots: Knots, p: float) -> float:
    """Value of a piecewise-linear curve; at a jump (equal abscissas) the later knot wins."""
    for (x0, v0), (x1, v1) in pairwise(knots):
        if p <= x1:
            if x1 - x0 <= _EPS:
                return v1
            return v0 + (v1 - v0) * (p - x0) / (x1 - x0)
    return knots[-1][1]


def _inverse(knots: Knots, value: float) -> float:
    """Smallest ``p`` where a nondecreasing piecewise-linear curve reaches ``value``."""
    if value <= knots[0][1]:
        return knots[0][0]
    for (x0, v0), (x1, v1) in pairwise(knots):
        if value <= v1:
            return x0 + (x1 - x0) * (value - v0) / (v1 - v0)
    return knots[-1][0]


class _CubeModel:
    """Live-cube curves and cash points of one position at every cube level above ``c0``."""

    def __init__(
        self,
        probs: tuple[float, float, float, float, float],
        utility: Callable[[int], float],
        rules: RuleSet,
        c0: int,
        can_double: Callable[[bool, int], bool],
    ) -> None:
        win, wg, wbg, lg, lbg = probs
        self.p = float(win)
        self.win_shares = _shares(win, wg, wbg)
        self.lose_shares = _shares(1.0 - win, lg, lbg)
        self.values = (1, rules.gammon_value, rules.backgammon_value)
        self.u = utility
        self.can_double = can_double
        # cash points from the top level down: each needs the next level's curves
        self.cash: dict[tuple[bool, int], float | None] = {}
        levels = [c0]
        while levels[-1] * 2 <= rules.cube_max:
            levels.append(levels[-1] * 2)
        for c in reversed(levels):
            for me in (True, False):
                if not self.can_double(me, c):
                    self.cash[me, c] = None
                elif me:  # the opponent takes at 2c, then owns the cube
                    self.cash[me, c] = _inverse(self.owned(2 * c, me=False), self.u(c))
                else:
                    self.cash[me, c] = _inverse(self.owned(2 * c, me=True), self.u(-c))

    def ends(self, c: int, *, single_only: bool = False) -> tuple[float, float]:
        """Mean utility of a loss and of a win at cube ``c``."""
        vals = (1, 1, 1) if single_only else self.values
        lose = sum(s * self.u(-c * v) for s, v in zip(self.lose_shares, vals, strict=True))
        win = sum(s * self.u(c * v) for s, v in zip(self.win_shares, vals, strict=True))
        return lose, win

    def dead(self, c: int, *, single_only: bool = False) -> float:
        lose, win = self.ends(c, single_only=single_only)
        return self.p * win + (1.0 - self.p) * lose

    def owned(self, c: int, *, me: bool) -> Knots:
        """Live curve at cube ``c`` when only one side (``me`` or the opponent) has access."""
        lose, win = self.ends(c)
        cash = self.cash.get((me, c))
        if cash is None:
            return [(0.0, lose), (1.0, win)]
        if me:
            return [(0.0, lose), (cash, self.u(c)), (1.0, win)]
        return [(0.0, lose), (cash, self.u(-c)), (1.0, win)]

    def centered(self, c: int, *, single_only: bool = False) -> Knots:
        lose, win = self.ends(c, single_only=single_only)
        mine, theirs = self.cash.get((True, c)), self.cash.get((False, c))
        if mine is not None and theirs is not None and theirs > mine:
            # both would double the other out: no stable region between the cash points
            mine = theirs = 0.5 * (mine + theirs)
        knots = [(0.0, lose)]
        if theirs is not None:
            knots.append((theirs, self.u(-c)))
        if mine is not None:
            knots.append((mine, self.u(c)))
        knots.append((1.0, win))
        return knots


def cube_decision(
    probs: Sequence[float] | np.ndarray,
    cube: CubeState | None = None,
    match: MatchScore | None = None,
    *,
    x: float = CONTACT_X,
    rules: RuleSet | str = "standard",
    met: MatchEquityTable | None = None,
) -> CubeDecision:
    """The cube action of the player on roll before rolling, from cubeless ``probs``.

    ``match`` None (or length 0 upstream) is money play; ``x`` is the cube efficiency
    (``cube_efficiency(board)``); ``met`` defaults to Kazaross-XG2.  See the module
    docstring for the model and the decision rules.
    """
    r = get_rules(rules)
    cube = cube or CubeState()
    p = _check_probs(probs)
    if match is not None and cube.owner == "centered" and cube.value > 1:
        raise ValueError(
            "a centered cube above 1 needs automatic doubles (R31), not used in matches (R33)"
        )
    x = float(x)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"cube efficiency must be in [0, 1], got {x}")
    c0 = cube.value

    if match is None:
        jacoby = r.jacoby

        def utility(points: int) -> float:
            return float(points)

        def can_double(me: bool, c: int) -> bool:
            return r.cube and 2 * c <= r.cube_max

    else:
        jacoby = False  # R33: no Jacoby rule in matches
        table = met or MatchEquityTable.default()
        a_me, a_opp = match.away_me, match.away_opp

        def utility(points: int) -> float:
            return table.after_game(a_me, a_opp, points)

        def can_double(me: bool, c: int) -> bool:
            # a player whose win at this cube already takes the match gains nothing by doubling
            return (
                r.cube
                and match.doubling_allowed
                and 2 * c <= r.cube_max
                and c < (a_me if me else a_opp)
            )

    model = _CubeModel(p, utility, r, c0, can_double)
    win_c, lose_c = utility(c0), utility(-c0)

    def norm(v: float) -> float:
        if match is None:
            return v / c0
        return (2.0 * v - (win_c + lose_c)) / (win_c - lose_c)

    def cubeful(knots: Knots, dead: float, c: int) -> float:
        xc = x
        if match is not None and min(match.away_me, match.away_opp) <= c:
            xc = max(x, MATCH_ENDING_X)  # a win at this cube ends the match for someone
        return xc * _interp(knots, model.p) + (1.0 - xc) * dead

    single = jacoby and cube.owner == "centered"
    if cube.owner == "centered":
        nd = cubeful(model.centered(c0, single_only=single), model.dead(c0, single_only=single), c0)
    else:
        nd = cubeful(model.owned(c0, me=cube.owner == "mover"), model.dead(c0), c0)
    cubeless = float(norm(model.dead(c0, single_only=single)))

    allowed = (
        r.cube
        and cube.owner != "opponent"
        and 2 * c0 <= r.cube_max
        and (match is None or match.doubling_allowed)
    )
    if not allowed:
        mwc = {"no_double": nd, "double_take": None, "double_pass": None, "optimal": nd}
        return CubeDecision(
            UNAVAILABLE,
            None,
            norm(nd),
            None,
            None,
            norm(nd),
            cubeless,
            x,
            mwc if match is not None else None,
        )

    dt = cubeful(model.owned(2 * c0, me=False), model.dead(2 * c0), 2 * c0)
    dp = win_c
    e_nd, e_dt, e_dp = norm(nd), norm(dt), norm(dp)
    take = e_dt <= e_dp + _EPS
    if take:
        decision = DOUBLE_TAKE if e_dt > e_nd + _EPS else NO_DOUBLE
        if decision == NO_DOUBLE and e_nd > e_dp + _EPS:
            decision = TOO_GOOD
    else:
        decision = TOO_GOOD if e_nd > e_dp + _EPS else DOUBLE_PASS
    optimal = max(nd, min(dt, dp))
    mwc = {"no_double": nd, "double_take": dt, "double_pass": dp, "optimal": optimal}
    return CubeDecision(
        decision,
        take,
        e_nd,
        e_dt,
        e_dp,
        norm(optimal),
        cubeless,
        x,
        mwc if match is not None else None,
    )


# --------------------------------------------------------------------------------------
# the receiver's answer, and score-aware utilities for checker play


def take_decision(
    doubler_probs: Sequence[float] | np.ndarray,
    cube: CubeState,
    match: MatchScore | None = None,
    *,
    x: float = CONTACT_X,
    rules: RuleSet | str = "standard",
    met: MatchEquityTable | None = None,
) -> bool:
    """Whether the receiver of a double should take: the one shared answer to a double.

    Everything is seen from the **doubler** (the player on roll who offers the double):
    ``doubler_probs`` are its pre-roll probabilities, ``cube`` the cube before the double
    from its view (``centered`` or ``mover``), ``match`` the score from its view, ``x``
    the position's cube efficiency.  The receiver takes when the doubled, redoubleable
    game is worth no more to the doubler than the points of a pass (``cube_decision``'s
    ``take``).  Answering a double with the receiver's own cube decision, as if the
    receiver were on roll, asks the wrong question: it is the take point of a double the
    receiver has not been offered.
    """
    if cube.owner == "opponent":
        raise ValueError("the receiver owns the cube (R23): there is no double to answer")
    d = cube_decision(doubler_probs, cube, match, x=x, rules=rules, met=met)
    if d.take is None:
        raise ValueError(f"no double can be offered here ({d.decision}): nothing to answer")
    return d.take


Utility = Callable[[np.ndarray], np.ndarray]
"""``(N, 5)`` probabilities from the mover's view -> ``(N,)`` value the mover maximises
(the same type as ``nard_rl.search.nply.Utility``)."""


def score_utility(
    rules: RuleSet | str = "standard",
    cube: CubeState | None = None,
    match: MatchScore | None = None,
    *,
    met: MatchEquityTable | None = None,
) -> Utility:
    """What a checker play should maximise at this cube and score, from the mover's view.

    Money (``match`` None): the cubeless money equity times the stake, the Jacoby rule
    (R32) applied while the cube is centered (an automatic double, R31, raises the stake
    but leaves the cube centered, so gammons still count single under Jacoby).  The stake
    scales every play alike, so it changes no choice; it is kept so that values read as
    points.  Match: the match-winning chance after the game, each outcome (single,
    gammon, backgammon, won or lost at the current cube) mapped through the MET at the
    score, capped at the points needed (R33), Crawford and post-Crawford (R34).  So a
    gammon the leader cannot use is worth nothing to it, and a gammon that wins the match
    is worth as much as the match.  The cube is treated as dead for the game (its level
    sets the stakes, its owner no recube vig): a play's value is about the game's outcome
    distribution, where the recube vig is second order.

    The mover is the player whose score is ``match.score_me``: for an afterstate that is
    the player who just moved.
    """
    r = get_rules(rules)
    cube = cube or CubeState()
    if match is None:
        turned = cube.owner != "centered"
        stake = float(cube.value)

        def money(probs: np.ndarray) -> np.ndarray:
            return stake * np.asarray(cubeless_equity(probs, r, cube_turned=turned))

        return money
    if cube.owner == "centered" and cube.value > 1:
        raise ValueError("a centered cube above 1 needs automatic doubles (R31), not in matches")
    table = met or MatchEquityTable.default()
    c, a_me, a_opp = cube.value, match.away_me, match.away_opp
    values = (1, r.gammon_value, r.backgammon_value)
    win_u = np.array([table.after_game(a_me, a_opp, c * v) for v in values])
    lose_u = np.array([table.after_game(a_me, a_opp, -c * v) for v in values])

    def match_winning_chance(probs: np.ndarray) -> np.ndarray:
        p = np.asarray(probs, dtype=np.float64)
        win, wg, wbg, lg, lbg = np.moveaxis(p, -1, 0)
        return np.asarray(
            (win - wg) * win_u[0]
            + (wg - wbg) * win_u[1]
            + wbg * win_u[2]
            + (1.0 - win - lg) * lose_u[0]
            + (lg - lbg) * lose_u[1]
            + lbg * lose_u[2]
        )

    return match_winning_chance


@dataclass(frozen=True)
class ResignationAnswer:
    """A bot's answer to a resignation, with the two values it weighed (``score_utility``
    units: points at money, the match-winning chance in a match)."""

    accept: bool
    offered: float
    """The value of the resignation to the bot (a certain win of the offered kind)."""
    expected: float
    """The value of playing on: the bot's probabilities through the same utility."""


def resignation_answer(
    probs: Sequence[float] | np.ndarray,
    gammon: bool,
    backgammon: bool,
    rules: RuleSet | str = "standard",
    cube: CubeState | None = None,
    match: MatchScore | None = None,
) -> ResignationAnswer:
    """The one answer to a resignation, for every bot (``nard play``, the server, ``nard
    agent``): accept when the offered win is worth at least playing on, both valued by
    ``score_utility`` at the cube and score.  So at money it weighs points, and in a match
    the match-winning chance: a gammon resignation the leader cannot use is worth what a
    single win is, and one that wins the match is taken however well the game goes.

    ``probs`` are the bot's cubeless probabilities (its view, the resigner to roll: the
    bot's afterstate); ``gammon``/``backgammon`` the kind offered (a mars, R28, is a
    gammon).
    """
    row = np.asarray(probs, dtype=np.float64).reshape(1, -1)
    if row.shape != (1, 5) or not np.all(np.isfinite(row)):
        raise ValueError(f"expected five finite probabilities {PROB_NAMES}, got {probs!r}")
    utility = score_utility(rules, cube, match)
    offer = np.array([[1.0, float(gammon or backgammon), float(backgammon), 0.0, 0.0]])
    offered = float(np.asarray(utility(offer))[0])
    expected = float(np.asarray(utility(row))[0])
    return ResignationAnswer(offered >= expected - 1e-9, offered, expected)
