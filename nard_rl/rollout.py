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

import numpy as np

from nard_rl.engine.batch import segment_argmax, with_passes
from nard_rl.engine.classify import race_flags
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import cubeless_equity, swap_sides
from nard_rl.evaluation import pair_dice
from nard_rl.evaluator import Evaluator, check_afterstates, exact_finished

__all__ = ["board_groups", "greedy_plays", "pre_roll_rollout", "rollout"]

_MAX_PLIES = 1000
"""No game lasts this long; the bound only guards the loop (0-ply play always finishes)."""


def greedy_plays(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray, waste_rule: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Each position's 0-ply best afterstate and its probabilities (mover's view).

    A position without a legal play keeps its board (R16)."""
    afters, offsets = legal_afterstates_batch(boards, dice, waste_rule)
    afters, offsets = with_passes(afters, offsets, boards)
    probs = evaluator.probabilities(afters)
    rows = offsets[:-1] + segment_argmax(cubeless_equity(probs, evaluator.rules), offsets)
    return afters[rows], probs[rows]


def board_groups(boards: np.ndarray) -> np.ndarray:
    """A 48-bit dice-stream id per board, a pure function of its bytes: a position's
    rollout then does not depend on the batch it came in or its place there."""
    arr = np.ascontiguousarray(np.asarray(boards, dtype=np.int8).reshape(-1, 26))
    return np.array(
        [int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=6).digest()) for row in arr],
        dtype=np.uint64,
    )


def _stratified_dice(trial: np.ndarray, ply: int, blocks: int) -> np.ndarray:
    """The first (``ply`` 1) or second (``ply`` 2) roll of each trial of a stratified
    block: trial t's first roll is t mod 36; the k trials of one first roll (k = blocks)
    get second rolls 36/k apart, shifted by the first roll so every second roll occurs
    equally often too.  ``blocks``: the number of stratified blocks of 36 trials."""
    first = trial % 36
    r = first if ply == 1 else (first + (trial // 36) * 36 // blocks) % 36
    dice = np.empty((trial.size, 2), dtype=np.int8)
    dice[:, 0] = r // 6 + 1
    dice[:, 1] = r % 6 + 1
    return dice


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
    trials of whole blocks of 36; any remainder draws its dice).
    """
    arr = check_afterstates(afterstates)
    n = arr.shape[0]
    if isinstance(trials, bool) or not isinstance(trials, int | np.integer) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    if horizon is not None and horizon < 0:
        raise ValueError(f"horizon must be >= 0 or None (to the end), got {horizon}")
    groups = board_groups(arr) if groups is None else np.asarray(groups)
    if groups.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {groups.shape}")
    trials = int(trials)
    waste = evaluator.rules.waste_rule
    rows = n * trials
    trial = np.tile(np.arange(trials, dtype=np.int64), n)
    streams = np.repeat(groups.astype(np.uint64), trials) * np.uint64(trials) + trial.astype(
        np.uint64
    )
    stratified = (trial < (trials // 36) * 36) if stratify else np.zeros(rows, dtype=bool)
    last = np.repeat(arr, trials, axis=0)  # the last mover's afterstate
    root_moved = np.ones(rows, dtype=bool)  # did the root's mover make the last move
    result = np.zeros((rows, 5), dtype=np.float32)
    done, p_done = exact_finished(last)
    result[done] = p_done[done]
    alive = ~done
    judge = np.zeros(rows, dtype=bool)  # rows the evaluator answers where they stand
    if stop_at_race:
        judge = alive & race_flags(last)
        alive &= ~judge
    limit = _MAX_PLIES if horizon is None else horizon
    for ply in range(1, limit + 1):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        dice = pair_dice(seed, streams[idx], ply)
        if ply <= 2:
            strat = stratified[idx]
            if strat.any():
                dice[strat] = _stratified_dice(trial[idx[strat]], ply, trials // 36)
        chosen, _ = greedy_plays(evaluator, flip_boards(last[idx]), dice, waste)
        last[idx] = chosen
        root_moved[idx] = ~root_moved[idx]
        over, p_over = exact_finished(chosen)
        if over.any():
            fin = idx[over]
            p = p_over[over]
            result[fin] = np.where(root_moved[fin, None], p, swap_sides(p))
            alive[fin] = False
        if stop_at_race:
            live = idx[~over]
            raced = live[race_flags(last[live])]
            judge[raced] = True
            alive[raced] = False
    judge |= alive  # cut by the horizon
    idx = np.flatnonzero(judge)
    if idx.size:
        p = evaluator.probabilities(last[idx])
        result[idx] = np.where(root_moved[idx, None], p, swap_sides(p))
    return result.reshape(n, trials, 5).mean(axis=1).astype(np.float32)


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
