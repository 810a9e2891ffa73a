"""Rollouts: the mean outcome of many games played on from a position by 0-ply play.

Search looks a few rolls ahead and then trusts the net; a rollout plays the game on.  It
is what fixes the net's blind spots, the positions decided many rolls later (a checker
on the bar against a closed board, a containment game), where the net's winning chances
can be 0.1 to 0.3 too high at any ply while rolling the same net's plays out comes close
to the truth.  The price is time and noise, which the options below trade:

* ``horizon``: plies played before the evaluator judges the position (None: to the end).
* ``stop_at_race``: a game that reaches a no-contact race is judged there by the
  evaluator (the race net or the exact bear-off database): cheaper, and the race's
  luck is replaced by its expectation, so less noisy.
* ``stratify``: the first two rolls of the trials are spread evenly over the 36 rolls
  instead of drawn (quasi-random dice, as gnubg's rollouts use): in every block of 36
  trials each first roll occurs once, and each first roll's trials meet evenly spaced
  second rolls.  Most of a rollout's noise is in its first rolls.
* common random numbers: every position of one ``group`` is rolled out on the same dice
  streams, a pure function of ``(seed, group, trial, ply)``, so the luck that would blur
  the difference between two candidates of one decision cancels in that difference.

Play inside a rollout is each side's 0-ply best play by cubeless money equity of the
evaluator's rule set (the mover's own R29 plays under mars).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nard_rl.cube.met import MatchEquityTable, MatchScore
from nard_rl.cube.model import CubeState
from nard_rl.engine.batch import (
    ROLL_WEIGHTS,
    ROLLS,
    DiceSource,
    GameBatch,
    gather_slices,
    with_passes,
)
from nard_rl.engine.classify import race_flags
from nard_rl.engine.dice import pair_dice
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import RuleSet, result_increments, swap_sides
from nard_rl.nets.evaluator import Evaluator, check_afterstates, exact_finished, greedy_choice
from nard_rl.search.nply import Search

__all__ = [
    "Estimate",
    "RolloutCancelled",
    "RolloutSettings",
    "board_groups",
    "cubeful_trial_values",
    "greedy_plays",
    "pre_roll_rollout",
    "rollout",
    "rollout_values",
]


class RolloutCancelled(Exception):
    """A rollout stopped because its ``stop`` callback asked it to."""


_MAX_PLIES = 1000
"""No game lasts this long; the bound only guards the loop (0-ply play always finishes)."""


def greedy_plays(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray, waste_rule: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Each position's 0-ply best afterstate and its probabilities (mover's view).

    A position without a legal play keeps its board (R16)."""
    afters, offsets = legal_afterstates_batch(boards, dice, waste_rule)
    afters, offsets = with_passes(afters, offsets, boards)
    local, probs = greedy_choice(evaluator, afters, offsets)
    rows = offsets[:-1] + local
    return afters[rows], probs[rows]


def board_groups(boards: np.ndarray) -> np.ndarray:
    """A 48-bit dice-stream id per board, a pure function of its bytes: a position's
    rollout then does not depend on the batch it came in or its place there."""
    arr = np.ascontiguousarray(np.asarray(boards, dtype=np.int8).reshape(-1, 26))
    return np.array(
        [int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=6).digest()) for row in arr],
        dtype=np.uint64,
    )


def _stratified_dice(
    trial: np.ndarray, ply: int, blocks: int, shift: np.ndarray | None = None
) -> np.ndarray:
    """The first (``ply`` 1) or second (``ply`` 2) roll of each trial of a stratified
    block: trial t's first roll is t mod 36; the k trials of one first roll (k = blocks)
    get second rolls 36/k apart, shifted by the first roll so every second roll occurs
    equally often too.  ``blocks``: the number of stratified blocks of 36 trials;
    ``shift``: a rotation of the second rolls per trial (the same for the trials of one
    first roll)."""
    first = trial % 36
    offset = first if shift is None else shift
    r = first if ply == 1 else (offset + (trial // 36) * 36 // blocks) % 36
    dice = np.empty((trial.size, 2), dtype=np.int8)
    dice[:, 0] = r // 6 + 1
    dice[:, 1] = r % 6 + 1
    return dice


def _dice_codes(dice: np.ndarray) -> np.ndarray:
    """Each roll's index in ``ROLLS`` (the 21 distinct rolls, the smaller die first)."""
    lo = np.minimum(dice[:, 0], dice[:, 1]).astype(np.int64)
    hi = np.maximum(dice[:, 0], dice[:, 1]).astype(np.int64)
    return _ROLL_INDEX[lo - 1, hi - 1]


_ROLL_INDEX = np.full((6, 6), -1, dtype=np.int64)
for _k, (_a, _b) in enumerate(ROLLS.tolist()):
    _ROLL_INDEX[_a - 1, _b - 1] = _k

_SHIFT_PLY = _MAX_PLIES + 1
"""The dice channel (a ply no game reaches) that draws the random rotation of the second
stratified rolls."""


def _swap_delta(d: np.ndarray) -> np.ndarray:
    """A difference of two probability rows seen by the other player (``swap_sides`` is
    affine: its constant cancels in a difference, the sign of the win chance flips)."""
    out = d[:, [0, 3, 4, 1, 2]].copy()
    out[:, 0] = -d[:, 0]
    return out


def _unique_index(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the distinct rows of a 2-D int8 array (in sorted order): the index of each
    one's first occurrence, and each row's index among them."""
    arr = np.ascontiguousarray(rows)
    keys = arr.view(np.dtype((np.void, arr.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D int8 array and each row's index among them."""
    first, inverse = _unique_index(rows)
    return np.ascontiguousarray(rows)[first], inverse


def _all_roll_plays(
    evaluator: Evaluator, boards: np.ndarray, waste_rule: bool
) -> tuple[np.ndarray, np.ndarray]:
    """For each board (side on roll's view): its 0-ply best afterstate for each of the 21
    rolls ``(B, 21, 26)`` and that afterstate's probabilities ``(B, 21, 5)`` (mover's
    view)."""
    b = boards.shape[0]
    k = ROLLS.shape[0]
    chosen, probs = greedy_plays(
        evaluator, np.repeat(boards, k, axis=0), np.tile(ROLLS, (b, 1)), waste_rule
    )
    return chosen.reshape(b, k, 26), np.asarray(probs, dtype=np.float64).reshape(b, k, 5)


def _trial_games(
    evaluator: Evaluator, boards: np.ndarray, seat: int, dice_fn: DiceSource
) -> GameBatch:
    """The trials as games of the engine's batch stepper, each at ``boards`` (the side
    to roll's view, in seat ``seat``; seat 1 is the root's side) with its first roll
    (turn 1) due.  A roll without a legal play is a null play (R16), so every ply of a
    trial is one play of one side, as the dice streams count them."""
    games = GameBatch(
        boards.shape[0],
        evaluator.rules,
        dice_fn=dice_fn,
        autoreset=False,
        pass_as_play=True,
        invalid_action="raise",
    )
    games.reset(boards=boards, seat=np.full(boards.shape[0], seat, dtype=np.int8))
    return games


def _trial_dice(
    seed: int,
    streams: np.ndarray,
    trial: np.ndarray,
    stratified: np.ndarray,
    blocks: int,
    shift: np.ndarray | None,
    rows: np.ndarray,
) -> DiceSource:
    """``GameBatch``'s dice for trial games ``lanes`` (rows ``rows[lanes]``): their streams'
    rolls at ply ``turn``, the first two stratified where asked.  The smaller die comes
    first: the candidates of equal (board, roll) pairs are then the same list, decided
    once."""

    def dice_fn(lanes: np.ndarray, turns: np.ndarray) -> np.ndarray:
        r = rows[lanes]
        dice = pair_dice(seed, streams[r], turns)
        for ply in (1, 2):
            sel = (turns == ply) & stratified[r]
            if sel.any():
                sub = r[sel]
                dice[sel] = _stratified_dice(
                    trial[sub], ply, blocks, None if shift is None else shift[sub]
                )
        return np.sort(dice, axis=1)

    return dice_fn


def _choose(
    evaluator: Evaluator,
    games: GameBatch,
    lanes: np.ndarray,
    search: Search | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The play of each game ``lanes`` (local index): 0-ply best, or the 1-ply search's
    choice when ``search`` is given, and with 0-ply the chosen plays' probabilities.
    Equal (board, roll) pairs, frequent in the first plies and in bear-offs, are decided
    once, on the candidates of the first game that has them."""
    boards, dice = games.boards[lanes], games.dice[lanes]
    first, inverse = _unique_index(np.concatenate([boards, dice], axis=1))
    sub, sub_off = gather_slices(games.afters, games.offsets, lanes[first])
    if search is None:
        local, probs = greedy_choice(evaluator, sub, sub_off)
        chosen = np.asarray(probs[sub_off[:-1] + local], dtype=np.float64)
        return local[inverse], chosen[inverse]
    ub, ud = np.ascontiguousarray(boards[first]), np.ascontiguousarray(dice[first])
    picks = search.choose_batch(ub, ud, sub, sub_off, 1)
    return np.maximum(picks, 0)[inverse], None


def _trial_values(
    evaluator: Evaluator,
    arr: np.ndarray,
    groups: np.ndarray,
    trial: np.ndarray,
    *,
    total: int,
    seed: int,
    horizon: int | None,
    stop_at_race: bool,
    stratify: bool,
    randomize: bool = False,
    variance_reduction: bool = False,
    search: Search | None = None,
    stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """``(N * len(trial), 5)`` float64: the value of each trial (trials ``trial`` of a
    rollout of ``total`` trials) of each afterstate, from its mover's view.

    A trial's dice are a pure function of ``(seed, group, trial)``, so a rollout cut into
    chunks of trials gives what it gives in one piece.  Without variance reduction a
    value is the trial's outcome (or the evaluator's judgment where it was cut); with it
    the luck of every roll is subtracted (see ``RolloutSettings``)."""
    n = arr.shape[0]
    t = trial.size
    rows = n * t
    waste = evaluator.rules.waste_rule
    tr = np.tile(trial.astype(np.int64), n)
    grp = np.repeat(groups.astype(np.uint64), t)
    streams = grp * np.uint64(total) + tr.astype(np.uint64)
    blocks = total // 36
    stratified = (tr < blocks * 36) if stratify else np.zeros(rows, dtype=bool)
    shift = None
    if randomize and stratify:
        # a random rotation of each first roll's second rolls: every second roll is then
        # equally likely for every trial, so the stratified mean stays unbiased
        code = pair_dice(seed, grp * np.uint64(36) + (tr % 36).astype(np.uint64), _SHIFT_PLY)
        shift = (code[:, 0].astype(np.int64) - 1) * 6 + code[:, 1] - 1
    last = np.repeat(arr, t, axis=0)  # the last mover's afterstate
    root_moved = np.ones(rows, dtype=bool)  # did the root's mover make the last move
    result = np.zeros((rows, 5), dtype=np.float64)
    luck = np.zeros((rows, 5), dtype=np.float64)  # the root's luck so far (its view)
    done, p_done = exact_finished(last)
    result[done] = p_done[done]
    alive = ~done
    judge = np.zeros(rows, dtype=bool)  # rows the evaluator answers where they stand
    if stop_at_race:
        judge = alive & race_flags(last)
        alive &= ~judge
    limit = _MAX_PLIES if horizon is None else horizon
    live = np.flatnonzero(alive)  # the rows played on, one game each (seat 1: the root's)
    if live.size and limit > 0:
        dice_fn = _trial_dice(seed, streams, tr, stratified, blocks, shift, live)
        games = _trial_games(evaluator, flip_boards(last[live]), 0, dice_fn)
        actions = np.zeros(live.size, dtype=np.int64)
        for _ply in range(limit):
            lanes = np.flatnonzero(~games.over)
            if lanes.size == 0:
                break
            if stop is not None and stop():
                raise RolloutCancelled
            idx = live[lanes]
            if variance_reduction:
                boards, dice = games.boards[lanes], games.dice[lanes]
                uniq, inverse = _unique_rows(boards)
                plays, probs = _all_roll_plays(evaluator, uniq, waste)
                mean = np.einsum("bkf,k->bf", probs, ROLL_WEIGHTS)
                code = _dice_codes(dice)
                delta = probs[inverse, code] - mean[inverse]  # the roller's luck, its view
                roller_is_root = games.seat[lanes] == 1
                luck[idx] += np.where(roller_is_root[:, None], delta, _swap_delta(delta))
                if search is None:
                    actions[lanes] = games.index_of(plays[inverse, code], lanes)
                else:
                    actions[lanes] = _choose(evaluator, games, lanes, search)[0]
            else:
                actions[lanes] = _choose(evaluator, games, lanes, search)[0]
            outcome = games.step(actions)
            fin = np.flatnonzero(outcome.finished)
            if fin.size:
                p = np.zeros((fin.size, 5), dtype=np.float64)
                p[:, 0] = 1.0
                p[:, 1] = outcome.gammon[fin]
                p[:, 2] = outcome.backgammon[fin]
                result[live[fin]] = np.where(outcome.winner[fin, None] == 1, p, swap_sides(p))
            if stop_at_race:
                going = np.flatnonzero(~games.over)
                raced = going[race_flags(flip_boards(games.boards[going]))]
                if raced.size:
                    games.end(raced)
                    judge[live[raced]] = True
        # the trials judged where they stand: cut at a race (ended) or by the horizon
        going = np.flatnonzero(~games.over)
        judge[live[going]] = True
        stood = np.flatnonzero(judge[live])
        last[live[stood]] = flip_boards(games.boards[stood])
        root_moved[live[stood]] = games.seat[stood] == 0
    else:
        judge |= alive  # cut by the horizon
    idx = np.flatnonzero(judge)
    if idx.size:
        p = np.asarray(evaluator.probabilities(last[idx]), dtype=np.float64)
        result[idx] = np.where(root_moved[idx, None], p, swap_sides(p))
    return result - luck


def _check_groups(groups: np.ndarray | None, arr: np.ndarray) -> np.ndarray:
    groups = board_groups(arr) if groups is None else np.asarray(groups)
    if groups.shape != (arr.shape[0],):
        raise ValueError(f"groups must have shape ({arr.shape[0]},), got {groups.shape}")
    return groups


def _check_trials(trials: object) -> int:
    if isinstance(trials, bool) or not isinstance(trials, int | np.integer) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    return int(trials)


def rollout(
    evaluator: Evaluator,
    afterstates: np.ndarray,
    *,
    trials: int,
    seed: int,
    groups: np.ndarray | None = None,
    horizon: int | None = None,
    stop_at_race: bool = False,
    stratify: bool = False,
) -> np.ndarray:
    """``(N, 5)``: the mean outcome of ``trials`` games played on by 0-ply play from
    each afterstate (mover's view, opponent to roll), as cumulative probabilities.

    ``groups`` (default: ``board_groups``) names each row's dice streams; see the module
    docstring for ``horizon``, ``stop_at_race`` and ``stratify`` (which stratifies the
    trials of whole blocks of 36; any remainder draws its dice).  ``rollout_values``
    gives each trial's value, with standard errors, variance reduction and 1-ply play.
    """
    arr = check_afterstates(afterstates)
    n = arr.shape[0]
    trials = _check_trials(trials)
    if horizon is not None and horizon < 0:
        raise ValueError(f"horizon must be >= 0 or None (to the end), got {horizon}")
    groups = _check_groups(groups, arr)
    values = _trial_values(
        evaluator,
        arr,
        groups,
        np.arange(trials, dtype=np.int64),
        total=trials,
        seed=seed,
        horizon=horizon,
        stop_at_race=stop_at_race,
        stratify=stratify,
    )
    return values.reshape(n, trials, 5).mean(axis=1).astype(np.float32)


# --------------------------------------------------------------------------------------
# rollouts with standard errors: settings, per-trial values, estimates


VARIANCE_REDUCTION_METHOD = (
    "luck: every roll's luck (the 0-ply value of the rolled position after its best "
    "play minus the mean over the 21 rolls) is subtracted from the trial's result"
)
PLAY_PLIES = (0, 1)
"""Checker-play depths inside a rollout (2-ply play would cost seconds per trial)."""


@dataclass(frozen=True)
class RolloutSettings:
    """How a rollout is played; stated in every answer (``to_dict``).

    * ``trials``, ``seed``: games per position and the dice seed (a trial's dice are a
      pure function of seed, position and trial number, so results are reproducible and
      independent of chunking and workers);
    * ``truncation``: plies played before the evaluator judges the position (None: to
      the end of the game);
    * ``stop_at_race``: a trial that reaches a no-contact race is judged there by the
      evaluator (the bear-off database where it applies, else the race net);
    * ``variance_reduction``: luck-based variance reduction.  Before every roll the
      0-ply value of each of the 21 rolls (its best play) is computed; the rolled one
      minus their mean is that roll's luck, and the trial's value is its result minus
      the sum of all its luck (from the root's view).  Each luck term has mean zero
      given everything before it (the roll is uniform, or its stratum is balanced), so
      the mean stays unbiased whatever the evaluator's errors; only the variance shrinks
      (to nothing where the evaluator is exact);
    * ``stratify``: the first two rolls are stratified over blocks of 36 trials (see
      ``rollout``), the second rolls rotated at random per first roll so that the mean
      stays unbiased.  Standard errors are the plain ones over trials: stratification
      only lowers the true error, so they err on the safe side;
    * ``ply``: checker play inside the rollout, 0-ply or 1-ply (``nard_rl.search.nply``).
    """

    trials: int = 1296
    seed: int = 0
    truncation: int | None = None
    stop_at_race: bool = False
    variance_reduction: bool = True
    stratify: bool = True
    ply: int = 0

    def __post_init__(self) -> None:
        _check_trials(self.trials)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        t = self.truncation
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t < 0):
            raise ValueError(f"truncation must be an integer >= 0 or null (to the end), got {t!r}")
        for name in ("stop_at_race", "variance_reduction", "stratify"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if isinstance(self.ply, bool) or self.ply not in PLAY_PLIES:
            raise ValueError(f"rollout ply must be 0 or 1, got {self.ply!r}")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "trials": self.trials,
            "seed": self.seed,
            "truncation": self.truncation,
            "stop_at_race": self.stop_at_race,
            "variance_reduction": self.variance_reduction,
            "stratified": self.stratify,
            "ply": self.ply,
        }
        if self.variance_reduction:
            out["variance_reduction_method"] = VARIANCE_REDUCTION_METHOD
        return out


def rollout_values(
    evaluator: Evaluator,
    afterstates: np.ndarray,
    settings: RolloutSettings,
    *,
    groups: np.ndarray | None = None,
    trials: slice | None = None,
    search: Search | None = None,
    stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """``(N, T, 5)`` float64: each trial's value for each afterstate (mover's view,
    opponent to roll): the trials ``trials`` (default: all) of the rollout ``settings``
    describes.  ``search`` is the 1-ply search for ``settings.ply`` 1 (built when not
    given; pass one to keep its cache between chunks); ``stop``: asked before every ply,
    ``RolloutCancelled`` once it answers true."""
    arr = check_afterstates(afterstates)
    groups = _check_groups(groups, arr)
    lo, hi, _ = (trials or slice(0, settings.trials)).indices(settings.trials)
    ids = np.arange(lo, max(lo, hi), dtype=np.int64)
    if settings.ply == 1 and search is None:
        search = Search(evaluator)
    values = _trial_values(
        evaluator,
        arr,
        groups,
        ids,
        total=settings.trials,
        seed=settings.seed,
        horizon=settings.truncation,
        stop_at_race=settings.stop_at_race,
        stratify=settings.stratify,
        randomize=True,
        variance_reduction=settings.variance_reduction,
        search=search if settings.ply == 1 else None,
        stop=stop,
    )
    return values.reshape(arr.shape[0], ids.size, 5)


@dataclass(frozen=True)
class Estimate:
    """A rollout's mean and its standard error (None with a single trial)."""

    mean: float
    se: float | None

    @classmethod
    def of(cls, samples: np.ndarray, *, probability: bool = False) -> Estimate:
        """The mean of ``samples`` and its plain standard error over trials.

        ``probability``: the samples are chances in [0, 1] (one outcome probability).
        Where every trial gave the same certain outcome (all 0 or all 1) the sample has
        no spread, but that only says the other outcome is rarer than about 1 in the
        number of trials, not that it never happens (a bear-off lost only to two small
        doubles in a row, 1 in 6,000, wins all of 1,296 trials four times in five).  The
        standard error is then that of a binomial proportion with half an observation of
        the unseen outcome (Jeffreys' prior): ``sqrt(q (1 - q) / n)``, ``q = 0.5 / (n +
        1)``, about 0.7 / n, instead of a claim of certainty."""
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        if x.size < 2:
            return cls(float(x.mean()), None)
        se = float(x.std(ddof=1) / np.sqrt(x.size))
        if probability and se == 0.0 and x[0] in (0.0, 1.0):
            q = 0.5 / (x.size + 1)
            se = float(np.sqrt(q * (1.0 - q) / x.size))
        return cls(float(x.mean()), se)


def pre_roll_rollout(
    evaluator: Evaluator,
    boards: np.ndarray,
    *,
    trials: int,
    seed: int = 0,
    stop_at_race: bool = True,
    stratify: bool = True,
) -> np.ndarray:
    """``(N, 5)`` rollout probabilities of positions *before* the roll (side on roll's
    view), played to the end (or to a race): each board is the opponent's afterstate, so
    the first stratified roll is the roller's own."""
    arr = check_afterstates(np.asarray(boards).reshape(-1, 26))
    probs = rollout(
        evaluator,
        flip_boards(arr),
        trials=trials,
        seed=seed,
        groups=board_groups(arr),
        stop_at_race=stop_at_race,
        stratify=stratify,
    )
    return swap_sides(probs).astype(np.float64)


# --------------------------------------------------------------------------------------
# cubeful rollouts of a cube decision


CUBE_WINDOW = 0.4
"""Cubeful rollouts ask the cube model only of players on roll with at least this
winning chance at 0-ply (it costs a model evaluation per player and turn): in money play
the doubling window opens near 0.65, at match scores not much earlier.  Post-Crawford
every player with access is asked, as the trailer should double at once."""


def cubeful_trial_values(
    evaluator: Evaluator,
    board: np.ndarray,
    cube: CubeState,
    match: MatchScore | None,
    settings: RolloutSettings,
    *,
    rules: RuleSet | None = None,
    met: MatchEquityTable | None = None,
    trials: slice | None = None,
    stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """``(2, T, 1)``: the cubeful value of each trial of the side on roll of ``board``
    (before the roll) after not doubling (row 0) and after doubling and being taken
    (row 1; NaN where no double is possible), normalised as ``cube_decision`` does
    (money: points per current cube; match: the match equity mapped so that losing /
    winning the current cube is -1 / +1).

    Both branches are played on the same dice (common random numbers).  Inside the
    trials every player on roll with access to the cube asks the cube model
    (``nard_rl.cube.model.cube_decision`` on its 0-ply pre-roll probabilities, at the cube and
    the score) whether to double, and the receiver whether to take; a pass ends the
    game for the cube's value.  Checker play is 0-ply by cubeless equity, as in every
    rollout; a trial cut by ``settings.truncation`` is judged by the cube model's
    cubeful value for the player on roll.  No variance reduction."""
    from nard_rl.cube.model import DOUBLE_PASS, DOUBLE_TAKE, cube_decision, cube_efficiency

    r = rules or evaluator.rules
    table = met or MatchEquityTable.default()
    root = np.asarray(board, dtype=np.int8).reshape(1, 26)
    lo, hi, _ = (trials or slice(0, settings.trials)).indices(settings.trials)
    ids = np.arange(lo, max(lo, hi), dtype=np.int64)
    t = ids.size
    total = settings.trials
    group = board_groups(root)[0]
    c0 = cube.value
    owner0 = {"centered": 0, "mover": 1, "opponent": 2}[cube.owner]
    can_double_root = (
        r.cube
        and owner0 != 2
        and 2 * c0 <= r.cube_max
        and (match is None or match.doubling_allowed)
    )
    # row i < t: no double; row t + i: doubled, taken, the opponent owns the cube
    rows = 2 * t
    tr = np.tile(ids, 2)
    streams = np.uint64(group) * np.uint64(total) + tr.astype(np.uint64)
    blocks = total // 36
    stratified = (tr < blocks * 36) if settings.stratify else np.zeros(rows, dtype=bool)
    code = pair_dice(
        settings.seed, np.uint64(group) * np.uint64(36) + (tr % 36).astype(np.uint64), _SHIFT_PLY
    )
    shift = (code[:, 0].astype(np.int64) - 1) * 6 + code[:, 1] - 1
    value = np.where(np.arange(rows) < t, c0, 2 * c0).astype(np.int64)
    owner = np.where(np.arange(rows) < t, owner0, 2).astype(np.int8)  # 0 centered, 1 root, 2 opp
    # the chances of each row's last afterstate (its mover's view), the cube's 0-ply input
    probs_last = np.repeat(
        np.asarray(evaluator.probabilities(flip_boards(root)), np.float64), rows, 0
    )
    result = np.full(rows, np.nan)
    alive = np.ones(rows, dtype=bool)
    if not can_double_root:
        alive[t:] = False

    def raw(points_root: int) -> float:
        if match is None:
            return float(points_root)
        return table.after_game(match.away_me, match.away_opp, int(points_root))

    def views(i: int, roller_root: bool) -> tuple[CubeState, MatchScore | None]:
        o = int(owner[i])
        own = "centered" if o == 0 else ("mover" if (o == 1) == roller_root else "opponent")
        m = match
        if m is not None and not roller_root:
            m = MatchScore(m.length, m.score_opp, m.score_me, m.crawford)
        return CubeState(int(value[i]), own), m  # type: ignore[arg-type]

    limit = _MAX_PLIES if settings.truncation is None else settings.truncation
    live = np.flatnonzero(alive)  # the rows played, one game each (seat 1: the root's side)
    # the rows cut by the truncation, the boards their player on roll sees, is it the root
    cut, cut_boards, cut_root = live, np.repeat(root, live.size, axis=0), np.ones(live.size, bool)
    if live.size and limit > 0:
        dice_fn = _trial_dice(settings.seed, streams, tr, stratified, blocks, shift, live)
        games = _trial_games(evaluator, np.repeat(root, live.size, axis=0), 1, dice_fn)
        actions = np.zeros(live.size, dtype=np.int64)
        for ply in range(1, limit + 1):
            lanes = np.flatnonzero(~games.over)
            if lanes.size == 0:
                break
            if stop is not None and stop():
                raise RolloutCancelled
            if ply >= 2 and r.cube and (match is None or match.doubling_allowed):
                idx = live[lanes]
                roller_root = games.seat[lanes] == 1
                pre = swap_sides(probs_last[idx])  # the roller's pre-roll chances, 0-ply
                access = (owner[idx] == 0) | ((owner[idx] == 1) == roller_root) & (owner[idx] != 0)
                access &= 2 * value[idx] <= r.cube_max
                if match is None:
                    access &= pre[:, 0] >= CUBE_WINDOW
                else:
                    away = np.where(roller_root, match.away_me, match.away_opp)
                    access &= value[idx] < away
                    post = min(match.away_me, match.away_opp) == 1
                    if not post:
                        access &= pre[:, 0] >= CUBE_WINDOW
                passed: list[int] = []
                for j in np.flatnonzero(access):
                    i = int(idx[j])
                    cube_i, match_i = views(i, bool(roller_root[j]))
                    x = cube_efficiency(games.boards[lanes[j]].tolist())
                    d = cube_decision(
                        np.clip(pre[j], 0.0, 1.0), cube_i, match_i, x=x, rules=r, met=table
                    )
                    if d.decision not in (DOUBLE_TAKE, DOUBLE_PASS):
                        continue
                    if not d.take:  # a pass: the roller wins the cube as it stands
                        pts = int(value[i]) if roller_root[j] else -int(value[i])
                        result[i] = raw(pts)
                        passed.append(int(lanes[j]))
                    else:
                        value[i] *= 2
                        owner[i] = 2 if roller_root[j] else 1
                if passed:
                    games.end(np.array(passed, dtype=np.int64))
                    lanes = np.flatnonzero(~games.over)
                    if lanes.size == 0:
                        break
            local, probs = _choose(evaluator, games, lanes, None)
            assert probs is not None
            actions[lanes] = local
            probs_last[live[lanes]] = probs
            outcome = games.step(actions)
            for lane in np.flatnonzero(outcome.finished):
                i = int(live[lane])
                turned = match is not None or owner[i] != 0
                g, bg = result_increments(r, cube_turned=turned)
                pts = value[i] * (1.0 + g * outcome.gammon[lane] + bg * outcome.backgammon[lane])
                result[i] = raw(round(pts) if outcome.winner[lane] == 1 else -round(pts))
        going = np.flatnonzero(~games.over)
        cut, cut_boards, cut_root = live[going], games.boards[going], games.seat[going] == 1
    # cut by the truncation: the cube model's value for the player on roll
    for i, on_roll, roller_root in zip(cut.tolist(), cut_boards, cut_root.tolist(), strict=True):
        cube_i, match_i = views(i, roller_root)
        x = cube_efficiency(on_roll.tolist())
        pre = np.clip(swap_sides(probs_last[i : i + 1])[0], 0.0, 1.0)
        d = cube_decision(pre, cube_i, match_i, x=x, rules=r, met=table)
        if match is None:
            v = d.optimal * value[i]
            result[i] = v if roller_root else -v
        else:
            assert d.match_equities is not None
            mwc = float(d.match_equities["optimal"])  # type: ignore[arg-type]
            result[i] = mwc if roller_root else 1.0 - mwc
    if match is None:
        norm = result / c0
    else:
        win_c = table.after_game(match.away_me, match.away_opp, c0)
        lose_c = table.after_game(match.away_me, match.away_opp, -c0)
        norm = (2.0 * result - (win_c + lose_c)) / (win_c - lose_c)
    return norm.reshape(2, t, 1)
