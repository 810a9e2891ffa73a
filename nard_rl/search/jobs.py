"""Rollout requests: a position, its candidate plays for a roll, or its cube decision,
rolled out in chunks of trials and answered as JSON-ready dicts.

``nard rollout`` and ``POST /v1/rollout`` share this layer; the rolling out itself is
``nard_rl.search.rollout`` (``rollout_values``).  A request is planned (``plan``: which
afterstates to roll out, on which dice streams), rolled out chunk by chunk (``run``, or
the CLI's worker processes calling ``chunk_values``), and summarised (``answer``).
Because a trial's dice depend only on the seed, the position and the trial number, the
answer is the same whatever the chunking and however many workers share the work.

Modes:

* ``position``: the side on roll's cubeless outcome before the roll (its afterstate
  rolled out from the opponent's view, the first roll the side on roll's own);
* ``plays``: the legal plays of the roll, ranked at 0-ply by the cube and score
  (``nard_rl.cube.model.score_utility``), the ``candidates`` best rolled out on common dice
  (every candidate meets the same dice, so the luck cancels in their differences, which
  come with their own standard errors);
* ``cube``: the position rolled out as in ``position``, and its cube decision (no
  double, double/take, double/pass) at the cube and score from those probabilities
  through the cube model of ``nard_rl.cube.model`` (Janowski's cube efficiency, the MET in a
  match): a cubeless rollout made cubeful by the model, as ``nard cube --rollout`` does
  for close decisions.  Its equities' standard errors come from the trials' covariance
  through the model's gradient (the delta method).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import (
    PROB_NAMES,
    CubeState,
    score_utility,
)
from nard_rl.engine.classify import race_flags
from nard_rl.engine.position import Position, PositionError, flip_boards
from nard_rl.engine.rules import RuleSet, cubeless_equity
from nard_rl.nets.evaluator import Evaluator
from nard_rl.search.nply import Search
from nard_rl.search.rollout import (
    Estimate,
    RolloutCancelled,
    RolloutSettings,
    board_groups,
    cubeful_trial_values,
    rollout_values,
)

MODES = ("position", "plays", "cube")
DEFAULT_CANDIDATES = 5
"""Plays rolled out in ``plays`` mode (the best by 0-ply ranking)."""
MAX_CANDIDATES = 32
CHUNK_TRIALS = 144
"""Trials per chunk: progress and cancellation are checked between chunks."""

VR_AUTO = "auto"


def resolve_variance_reduction(value: bool | str | None, board: np.ndarray) -> bool:
    """``auto`` (the default): on for positions with contact, off for no-contact races.

    In a race the rollout plays with the exact bear-off database and the race net, and
    the luck they measure is nearly all there is: variance reduction then drives the
    standard error far below the rollout's own bias (the one-sided database's plays are
    not always the two-sided best), to 0.00001 against a bias of up to 0.00006 in winning
    chance on small two-sided bear-offs, so the error bar would claim a precision the
    estimate does not have.  Without it a race's standard error is the plain one
    (0.006 for 1,296 trials) and covers that bias many times over."""
    if value is None or value == VR_AUTO:
        return not bool(race_flags(np.asarray(board, dtype=np.int8).reshape(1, 26))[0])
    if isinstance(value, bool):
        return value
    raise ValueError(f'variance reduction must be true, false or "auto", got {value!r}')


@dataclass(frozen=True)
class RolloutTask:
    """One request, from the side on roll's view (``board`` before the roll)."""

    board: tuple[int, ...]
    rules: RuleSet
    mode: str = "position"
    dice: tuple[int, int] | None = None
    cube: CubeState = field(default_factory=CubeState)
    match: MatchScore | None = None
    settings: RolloutSettings = field(default_factory=RolloutSettings)
    candidates: int = DEFAULT_CANDIDATES
    ignored: tuple[str, ...] = ()
    """Fields of the request that were not read (named in the answer)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f'"mode" must be one of {", ".join(MODES)}, got {self.mode!r}')
        if self.mode == "plays" and self.dice is None:
            raise PositionError('mode "plays" needs "dice"')
        if self.mode != "plays" and self.dice is not None:
            raise PositionError(
                f'mode "{self.mode}" is about the position before the roll: leave out "dice"'
            )
        c = self.candidates
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_CANDIDATES:
            raise ValueError(f'"candidates" must be an integer in 1..{MAX_CANDIDATES}, got {c!r}')
        if Position(self.board).winner() is not None:
            raise PositionError("the game in this position is already over")


@dataclass
class RolloutPlan:
    """What a task rolls out: afterstates (mover's view), their dice streams, and
    whether their values are seen from the opponent of the side on roll."""

    task: RolloutTask
    afters: np.ndarray
    groups: np.ndarray
    opponent_view: bool
    moves: list[str] = field(default_factory=list)

    @property
    def trials(self) -> int:
        return self.task.settings.trials

    @property
    def work(self) -> int:
        """Trials to play in all: afterstates times trials."""
        return self.afters.shape[0] * self.trials


def plan(task: RolloutTask, evaluator: Evaluator) -> RolloutPlan:
    """The afterstates a task rolls out (the candidates' need a 0-ply ranking)."""
    board = np.asarray(task.board, dtype=np.int8).reshape(1, 26)
    group = board_groups(board)
    if task.mode == "cube":  # two branches (no double; double, take) on common dice
        return RolloutPlan(task, np.repeat(flip_boards(board), 2, 0), np.repeat(group, 2), False)
    if task.mode != "plays":
        return RolloutPlan(task, flip_boards(board), group, opponent_view=True)
    assert task.dice is not None
    utility = score_utility(task.rules, task.cube, task.match)
    ranked = Search(evaluator).rank(board[0], task.dice, 0, utility=utility)
    if not ranked:  # no legal play (R16): the roll passes, the position stands
        afters = board.copy()
        moves = ["(no legal play)"]
    else:
        top = ranked[: task.candidates]
        afters = np.array([p.board for p in top], dtype=np.int8)
        moves = [p.move for p in top]
    # one dice stream per trial for every candidate: common random numbers
    groups = np.repeat(group, afters.shape[0])
    return RolloutPlan(task, afters, groups, opponent_view=False, moves=moves)


def chunk_values(
    evaluator: Evaluator,
    rollout_plan: RolloutPlan,
    lo: int,
    hi: int,
    search: Search | None = None,
    stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """``(M, hi - lo, 5)``: trials ``lo..hi`` of each planned afterstate, from the side
    on roll's view; in cube mode ``(2, hi - lo, 1)``, the cubeful values of not
    doubling and of doubling (``nard_rl.search.rollout.cubeful_trial_values``)."""
    task = rollout_plan.task
    if task.mode == "cube":
        return cubeful_trial_values(
            evaluator,
            np.asarray(task.board, dtype=np.int8),
            task.cube,
            task.match,
            task.settings,
            rules=task.rules,
            trials=slice(lo, hi),
            stop=stop,
        )
    values = rollout_values(
        evaluator,
        rollout_plan.afters,
        rollout_plan.task.settings,
        groups=rollout_plan.groups,
        trials=slice(lo, hi),
        search=search,
        stop=stop,
    )
    if rollout_plan.opponent_view:
        values = values[..., [0, 3, 4, 1, 2]]
        values[..., 0] = 1.0 - values[..., 0]
    return values


def chunks(trials: int, size: int = CHUNK_TRIALS) -> list[tuple[int, int]]:
    return [(lo, min(trials, lo + size)) for lo in range(0, trials, size)]


Cancelled = RolloutCancelled
"""The job was cancelled (between two plies of its trials)."""


def run(
    evaluator: Evaluator,
    rollout_plan: RolloutPlan,
    *,
    progress: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
    stop: Callable[[], bool] | None = None,
    chunk: int = CHUNK_TRIALS,
) -> np.ndarray:
    """All trials of a plan ``(M, T, 5)``, chunk by chunk: ``progress(trials)`` after
    each chunk (trials of all afterstates), ``Cancelled`` soon after ``cancel`` is set
    (it is looked at before every ply), or once ``stop()`` answers true."""
    search = Search(evaluator) if rollout_plan.task.settings.ply == 1 else None
    if stop is None and cancel is not None:
        stop = cancel.is_set
    parts = []
    m = rollout_plan.afters.shape[0]
    for lo, hi in chunks(rollout_plan.trials, chunk):
        if stop is not None and stop():
            raise Cancelled
        parts.append(chunk_values(evaluator, rollout_plan, lo, hi, search, stop))
        if progress is not None:
            progress(m * (hi - lo))
    return np.concatenate(parts, axis=1)


# --------------------------------------------------------------------------------------
# answers


def _num(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), digits)


def _summary(values: np.ndarray, task: RolloutTask) -> dict[str, Any]:
    """Probabilities, equities and their standard errors of one afterstate's trials."""
    probs = [Estimate.of(values[:, i], probability=True) for i in range(5)]
    turned = task.cube.owner != "centered"
    eq = Estimate.of(cubeless_equity(values, task.rules, cube_turned=turned))
    win_se = probs[0].se
    if eq.se is not None and win_se is not None and np.ptp(values[:, 0]) == 0.0:
        # an unseen outcome's chance (see Estimate.of) moves the equity twice as much
        eq = Estimate(eq.mean, max(eq.se, 2.0 * win_se))
    out: dict[str, Any] = {
        "probs": {k: _num(e.mean) for k, e in zip(PROB_NAMES, probs, strict=True)},
        "probs_se": {k: _num(e.se) for k, e in zip(PROB_NAMES, probs, strict=True)},
        "win": _num(probs[0].mean),
        "win_se": _num(probs[0].se),
        "equity": _num(eq.mean),
        "equity_se": _num(eq.se),
    }
    if task.match is not None:
        mwc = Estimate.of(score_utility(task.rules, task.cube, task.match)(values))
        out["match_equity"] = _num(mwc.mean)
        out["match_equity_se"] = _num(mwc.se)
    return out


def _header(task: RolloutTask) -> dict[str, Any]:
    pos = Position(task.board)
    m = task.match
    return {
        "mode": task.mode,
        "position_id": pos.position_id(),
        "board": list(task.board),
        "dice": list(task.dice) if task.dice else None,
        "rules": task.rules.name,
        "cube": {"value": task.cube.value, "owner": task.cube.owner},
        "match": None
        if m is None
        else {"length": m.length, "score": [m.score_me, m.score_opp], "crawford": m.crawford},
        "settings": task.settings.to_dict(),
        **({"ignored_fields": list(task.ignored)} if task.ignored else {}),
    }


def _cube_answer(task: RolloutTask, nd: np.ndarray, dt: np.ndarray) -> dict[str, Any]:
    """The cube decision from the two branches' trials (normalised equities, the side
    on roll's view): the receiver takes when double/take is worth no more to the doubler
    than the pass (+1); the doubler doubles when double (taken or passed) beats no
    double, as ``nard_rl.cube.model.cube_decision`` decides on model equities."""
    e_nd = Estimate.of(nd)
    names = ("no_double", "double_take", "double_pass", "optimal")
    method = (
        "cubeful rollout: both branches played on the same dice, every later cube action "
        "by the cube model on 0-ply chances at the cube and score, checker play at 0-ply"
    )
    if np.isnan(dt).all():
        eqs = {"no_double": _num(e_nd.mean), "double_take": None, "double_pass": None}
        eqs["optimal"] = eqs["no_double"]
        ses = {"no_double": _num(e_nd.se), "double_take": None, "double_pass": None}
        ses["optimal"] = ses["no_double"]
        return {
            "decision": "unavailable",
            "take": None,
            "equities": eqs,
            "equities_se": ses,
            "method": method,
        }
    e_dt = Estimate.of(dt)
    diff = Estimate.of(dt - nd)  # paired: the branches share their dice
    take = e_dt.mean <= 1.0
    double_value = min(e_dt.mean, 1.0)
    if take:
        decision = "double_take" if e_dt.mean > e_nd.mean else "no_double"
        if decision == "no_double" and e_nd.mean > 1.0:
            decision = "too_good"
    else:
        decision = "too_good" if e_nd.mean > 1.0 else "double_pass"
    if e_nd.mean >= double_value:
        best, best_se = e_nd.mean, e_nd.se
    else:
        best, best_se = double_value, (e_dt.se if take else 0.0)
    vals = (e_nd.mean, e_dt.mean, 1.0, best)
    errs = (e_nd.se, e_dt.se, 0.0, best_se)
    return {
        "decision": decision,
        "take": bool(take),
        "equities": {k: _num(v) for k, v in zip(names, vals, strict=True)},
        "equities_se": {k: _num(v) for k, v in zip(names, errs, strict=True)},
        "double_take_minus_no_double": _num(diff.mean),
        "double_take_minus_no_double_se": _num(diff.se),
        "method": method,
    }


def answer(rollout_plan: RolloutPlan, values: np.ndarray) -> dict[str, Any]:
    """The JSON answer of a finished plan (``values`` from ``run``)."""
    task = rollout_plan.task
    out = _header(task)
    out["trials"] = int(values.shape[1])
    if task.mode == "cube":
        out["cube_decision"] = _cube_answer(task, values[0, :, 0], values[1, :, 0])
        return out
    if task.mode == "position":
        out.update(_summary(values[0], task))
        return out
    utility = score_utility(task.rules, task.cube, task.match)
    per_trial = np.asarray(utility(values))  # (M, T): what the plays are ranked by
    order = np.argsort(-per_trial.mean(axis=1), kind="stable")
    best = per_trial[order[0]]
    plays = []
    for i in order:
        row: dict[str, Any] = {
            "move": rollout_plan.moves[i],
            "board": [int(v) for v in rollout_plan.afters[i]],
        }
        row.update(_summary(values[i], task))
        diff = Estimate.of(per_trial[i] - best)  # paired: the same dice for every play
        row["diff"] = _num(diff.mean)
        row["diff_se"] = _num(diff.se) if i != order[0] else 0.0
        plays.append(row)
    out["ranked_by"] = "match_equity" if task.match is not None else "equity"
    # the position with this roll is worth its best play: its figures at the top level
    out.update({k: v for k, v in plays[0].items() if k not in ("move", "board", "diff", "diff_se")})
    out["plays"] = plays
    return out
