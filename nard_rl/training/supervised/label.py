"""Collect decisions by noisy self-play and label their best candidates, in shards.

A *decision* is a position before the move (mover on roll, mover's view) with its roll.
Collection plays the current net against itself at 0-ply with a little noise (Gaussian
noise on each candidate's equity, plus a few uniformly random plays), so the positions
are the ones the net really reaches, with enough variety to correct its own mistakes.
Games are played to their end and the decisions drawn from all of their positions, so the
labels cover openings, middle games and bear-offs as play does (the parallel games all
start at the opening together: the first positions kept would all be openings).

Labelling ranks a decision's candidates at 0-ply and labels the best ``top_k`` of them
(within ``window`` of the best) with a stronger estimate: the current evaluator's n-ply
search (``nard_rl.search.nply.Search.afterstate_probs``), or a truncated rollout.  Labelling
several candidates of one decision is how positions where 0-ply and the search disagree
are found without extra cost: the search's favourite is known once its candidates are
labelled, and such decisions are flagged (``disagree``) so that fitting can over-sample
them.  Every labelled row is an afterstate (mover's view, opponent to roll) with five
cumulative probabilities from the mover's view, the format the evaluators answer in.

Work is split into numbered shards, each a pure function of ``(seed, generation,
shard)``: ``label_shard(k, K)`` does the shards ``i`` with ``i % K == k``, skipping the
ones already on disk, and writes each atomically, so a killed run loses at most the shard
in progress and several processes (or ranks) can share one generation's folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.engine.batch import (
    ROLL_WEIGHTS,
    ROLLS,
    GameBatch,
    outcomes,
    segment_argmax,
    with_passes,
)
from nard_rl.engine.classify import race_flags
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import cubeless_equity, swap_sides
from nard_rl.nets.evaluator import Evaluator, exact_finished, greedy_choice
from nard_rl.search.nply import Search
from nard_rl.search.rollout import rollout
from nard_rl.util.io import atomic_write
from nard_rl.util.progress import progress_bar

SHARD_PATTERN = "shard_{:05d}.npz"
SHARD_FIELDS = ("boards", "probs", "probs0", "decision", "rank0", "disagree")


@dataclass
class LabelConfig:
    """How one generation's positions are collected and labelled (see the module doc)."""

    shards: int = 50
    """Shards per generation; each is collected and labelled independently."""
    decisions_per_shard: int = 2000
    """Decisions (positions with a roll and at least ``min_plays`` plays) per shard."""
    method: str = "ply"
    """ply (the evaluator's n-ply search) or rollout (truncated rollouts)."""
    ply: int = 1
    """Search depth of the labels (method=ply)."""
    top_k: int = 2
    """Best candidates of each decision (by 0-ply equity) that get labelled."""
    window: float = 0.16
    """Only candidates within this equity of the 0-ply best are labelled (the best always)."""
    noise: float = 0.05
    """Standard deviation of the Gaussian noise added to equities during collection."""
    explore: float = 0.02
    """Probability of a uniformly random play during collection."""
    sample: float = 0.25
    """Probability that a self-play decision is kept (decorrelates one game's positions;
    enough whole games are played to keep ``decisions_per_shard``)."""
    min_plays: int = 2
    """Decisions with fewer legal plays are skipped (a forced play teaches no ranking)."""
    parallel_games: int = 256
    """Self-play games in flight during collection (at most; fewer when fewer whole games
    are needed)."""
    chunk: int = 64
    """Decisions labelled per batch (bounds memory: 1-ply expands each by ~21 x 20 rows)."""
    rollout_trials: int = 16
    """Rollouts per candidate (method=rollout)."""
    rollout_horizon: int = 8
    """Plies of each truncated rollout before the evaluator judges the position."""
    outcome_games: int = 0
    """Whole self-play games per shard whose every afterstate is also labelled with the
    game's result (``collect_outcomes``); 0: none."""
    race_net: bool = False
    """Label with the rule set's shipped race net answering no-contact races next to the
    current net (the default player's make-up); false: the current net alone."""
    prune: bool = True
    """Search with the evaluator's pruning net when it has one (``nard_rl.nets.pruning``: the
    default search, about 3 times faster at 2-ply); false: every reply scored in full."""

    def __post_init__(self) -> None:
        positive = ("shards", "top_k", "parallel_games", "chunk")
        bad = [f"{k}={getattr(self, k)}" for k in positive if getattr(self, k) < 1]
        if self.decisions_per_shard < 0 or self.outcome_games < 0:
            bad.append("decisions_per_shard and outcome_games must be >= 0")
        elif self.decisions_per_shard + self.outcome_games == 0:
            bad.append("decisions_per_shard=0 and outcome_games=0 (a shard would be empty)")
        bad += [
            f"{k}={getattr(self, k)}"
            for k in ("sample", "explore")
            if not 0 <= getattr(self, k) <= 1
        ]
        if self.sample == 0:
            bad.append("sample=0 (nothing would be kept)")
        if self.window < 0 or self.noise < 0 or self.ply < 0 or self.min_plays < 1:
            bad.append("window, noise and ply must be >= 0 and min_plays >= 1")
        if self.method not in ("ply", "rollout"):
            bad.append(f"method={self.method!r} (ply or rollout)")
        if self.rollout_trials < 1 or self.rollout_horizon < 0:
            bad.append("rollout_trials must be >= 1 and rollout_horizon >= 0")
        if bad:
            raise ValueError(f"bad label settings: {', '.join(bad)}")


@dataclass
class AnchorConfig:
    """Anchor rows added to each fit (``anchor_rows``): other plays of fresh self-play
    decisions labelled by the teacher's own shallow search, made at fit time, not kept."""

    rows: int = 0
    """Anchor rows per fit (0: none; the labels alone)."""
    per_decision: int = 4
    """Plays drawn from each decision (at random among all its legal plays)."""
    ply: int = 0
    """Search depth of the anchors' labels: 0 (the teacher's net itself, free) held 1-ply
    play better than 1-ply labels did (about 2,000 rows a CPU-second) in the measured fits."""
    replies: float = 0.0
    """Share of the anchor rows that are the opponent's best reply to one roll after an
    anchor play (``best_replies``): the afterstates a 1-ply search scores, dances (the
    mover left on the bar) included, which self-play decisions never show a net."""

    def __post_init__(self) -> None:
        if (
            self.rows < 0
            or self.per_decision < 1
            or not 0 <= self.ply <= 2
            or not 0.0 <= self.replies < 1.0
        ):
            raise ValueError(
                f"bad anchor settings: rows={self.rows} (>= 0), per_decision="
                f"{self.per_decision} (>= 1), ply={self.ply} (0..2), replies="
                f"{self.replies} (0 <= replies < 1)"
            )


# ---------------------------------------------------------------------------------------
# labels


def make_labeller(
    evaluator: Evaluator, cfg: LabelConfig, seed: int = 0
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``label(afterstates, groups) -> (N, 5)``: the configured stronger estimate.

    ``method=ply`` uses ``nard_rl.search.nply.Search`` (depth ``cfg.ply``); ``method=rollout``
    uses ``nard_rl.search.rollout.rollout`` cut after ``rollout_horizon`` plies, whose dice
    depend on ``groups`` (decision ids).
    """
    if cfg.method == "rollout":

        def by_rollout(afters: np.ndarray, groups: np.ndarray) -> np.ndarray:
            return rollout(
                evaluator,
                afters,
                groups=groups,
                trials=cfg.rollout_trials,
                horizon=cfg.rollout_horizon,
                seed=seed,
            )

        return by_rollout
    if cfg.method != "ply":
        raise ValueError(f"label method must be 'ply' or 'rollout', got {cfg.method!r}")
    if cfg.ply < 0:
        raise ValueError(f"label ply must be >= 0, got {cfg.ply}")
    search = Search(evaluator, pruner=None if cfg.prune else False)
    return lambda afters, groups: np.asarray(
        search.afterstate_probs(afters, ply=cfg.ply), dtype=np.float32
    )


# ---------------------------------------------------------------------------------------
# collection


def _noisy_selfplay(
    evaluator: Evaluator, rng: np.random.Generator, cfg: LabelConfig, explore: float, slots: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Endless noisy 0-ply self-play of ``slots`` games, one item per step:
    ``(boards, dice, counts, chosen, over)``, the positions before the play (mover's
    view), their rolls, their numbers of legal plays (0: the mover must pass), the
    chosen afterstates and which of them end the game.  A finished game starts again
    from the opening position at the next step.

    The games run on the engine's batch stepper (``GameBatch``), a roll without a
    legal play as its null play (R16); the items are only valid until the next one."""
    games = GameBatch(slots, evaluator.rules, rng, autoreset=True, pass_as_play=True)
    games.reset()
    while True:
        afters, offsets, counts = games.afters, games.offsets, games.counts
        local, _ = greedy_choice(evaluator, afters, offsets, noise=cfg.noise, rng=rng)
        if explore > 0:
            wild = rng.random(slots) < explore
            local[wild] = (rng.random(int(wild.sum())) * counts[wild]).astype(np.int64)
        chosen = afters[offsets[:-1] + local]
        over, _, _ = outcomes(chosen)
        legal = np.where(games.must_pass, 0, counts)
        yield games.boards, games.dice, legal, chosen, over
        games.step(local)


def _whole_games(
    evaluator: Evaluator, rng: np.random.Generator, cfg: LabelConfig, explore: float, games: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Exactly ``games`` whole games of ``_noisy_selfplay`` on at most
    ``cfg.parallel_games`` slots, each played to its end: its items plus ``game``, each
    slot's game number (-1 once the slot has no game left to play).

    Whatever is drawn from these steps sees every phase of a game as often as it is
    played: all slots start at the opening together, so stopping after a fixed number of
    kept positions instead would see only the first few plies of each game."""
    slots = min(cfg.parallel_games, games)
    slot_game = np.arange(slots, dtype=np.int64)
    started = slots
    for boards, dice, legal, chosen, over in _noisy_selfplay(evaluator, rng, cfg, explore, slots):
        yield boards, dice, legal, chosen, over, np.where(slot_game < games, slot_game, -1)
        for j in np.flatnonzero(over):
            if slot_game[j] < games:
                slot_game[j] = started
                started += 1
        if not (slot_game < games).any():
            return


DECISIONS_PER_GAME = 40.0
"""A first guess of the decisions with a choice in one game (both sides), which sizes the
first batch of games of ``collect_decisions``; later batches use the measured rate."""


def collect_decisions(
    evaluator: Evaluator, n: int, rng: np.random.Generator, cfg: LabelConfig
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` decisions ``(boards (n, 26), dice (n, 2))`` from noisy 0-ply self-play.

    Whole games are played (in batches, until enough positions are kept) and ``n`` of the
    kept positions are drawn at random, so openings, middle games, races and bear-offs
    appear as often as they occur in play; with ``cfg.race_net`` no-contact positions are
    not kept (the race net and the bear-off database answer them, never the net being
    trained).
    """
    if n < 1:
        raise ValueError(f"need at least one decision, got {n}")
    kept_b: list[np.ndarray] = []
    kept_d: list[np.ndarray] = []
    total = 0
    played = 0
    while total < n:
        rate = total / played if total else cfg.sample * DECISIONS_PER_GAME
        games = max(1, int(np.ceil(1.2 * (n - total) / rate)))
        for boards, dice, counts, _, _, game in _whole_games(
            evaluator, rng, cfg, cfg.explore, games
        ):
            keep = (
                (game >= 0) & (counts >= cfg.min_plays) & (rng.random(boards.shape[0]) < cfg.sample)
            )
            if cfg.race_net:
                keep &= ~race_flags(boards)
            if keep.any():
                kept_b.append(boards[keep].copy())
                kept_d.append(dice[keep].copy())
                total += int(keep.sum())
        played += games
    pick = np.sort(rng.choice(total, size=n, replace=False))
    return np.concatenate(kept_b)[pick], np.concatenate(kept_d)[pick]


def collect_outcomes(
    evaluator: Evaluator, games: int, rng: np.random.Generator, cfg: LabelConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every afterstate of ``games`` whole self-play games, labelled with the game's
    result: ``(afterstates (M, 26), probs (M, 5), game (M,))``, each row from the view
    of the side that just moved (a win with its gammon and backgammon flags, or the
    mirror loss).

    These are Monte Carlo labels: one noisy draw each, but unbiased for the self-play
    policy, where n-ply labels inherit the net's own misjudgements of positions whose
    fate is decided many rolls later (containment, a late hit against a closed board).
    The games use the collection noise but no random plays, so the results are those of
    the net's own play.
    """
    if games < 1:
        raise ValueError(f"need at least one game, got {games}")
    trail: dict[int, list[np.ndarray]] = {}
    rows: list[np.ndarray] = []
    probs: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    for _, _, _, chosen, over, game in _whole_games(evaluator, rng, cfg, 0.0, games):
        for j in np.flatnonzero(game >= 0):
            trail.setdefault(int(game[j]), []).append(chosen[j])
        done = over & (game >= 0)
        if done.any():
            _, finished = exact_finished(chosen[done])
            for j, win in zip(np.flatnonzero(done), finished, strict=True):
                path = np.stack(trail.pop(int(game[j])))
                # the last row is the winner's; movers alternate going back
                winner = (np.arange(path.shape[0])[::-1] % 2) == 0
                rows.append(path)
                probs.append(np.where(winner[:, None], win, swap_sides(win[None, :])))
                ids.append(np.full(path.shape[0], int(game[j]), dtype=np.int64))
    order = np.argsort(np.concatenate(ids), kind="stable")
    return (
        np.concatenate(rows).astype(np.int8)[order],
        np.concatenate(probs).astype(np.float32)[order],
        np.concatenate(ids)[order],
    )


# ---------------------------------------------------------------------------------------
# labelling


def label_decisions(
    evaluator: Evaluator,
    labeller: Callable[[np.ndarray, np.ndarray], np.ndarray],
    boards: np.ndarray,
    dice: np.ndarray,
    cfg: LabelConfig,
    first_id: int = 0,
) -> dict[str, np.ndarray]:
    """Label the best candidates of each decision; the rows of a shard (``SHARD_FIELDS``).

    ``decision`` numbers the decisions from ``first_id``; ``rank0`` is a row's 0-ply
    rank within its decision (0 = the 0-ply choice); ``disagree`` flags every row of a
    decision whose labels prefer another candidate than 0-ply does.
    """
    afters, offsets = legal_afterstates_batch(boards, dice, evaluator.rules.waste_rule)
    p0 = evaluator.probabilities(afters)
    eq0 = cubeless_equity(p0, evaluator.rules)
    rows: list[int] = []
    dec: list[int] = []
    rank: list[int] = []
    for i in range(boards.shape[0]):
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        if hi == lo:
            continue
        order = lo + np.argsort(-eq0[lo:hi], kind="stable")[: cfg.top_k]
        order = order[eq0[order] >= eq0[order[0]] - cfg.window]
        rows.extend(order.tolist())
        dec.extend([first_id + i] * order.size)
        rank.extend(range(order.size))
    sel = np.array(rows, dtype=np.int64)
    decision = np.array(dec, dtype=np.int64)
    cand = afters[sel]
    probs = np.asarray(labeller(cand, decision), dtype=np.float32)
    eqn = cubeless_equity(probs, evaluator.rules)
    # per decision: is the labels' best the 0-ply best (rank 0)?
    starts = np.flatnonzero(np.r_[True, decision[1:] != decision[:-1]])
    seg = np.r_[starts, decision.size]
    best_local = segment_argmax(eqn, seg)
    disagree_dec = best_local != 0
    disagree = np.repeat(disagree_dec, np.diff(seg))
    return {
        "boards": cand.astype(np.int8),
        "probs": probs,
        "probs0": p0[sel].astype(np.float32),
        "decision": decision,
        "rank0": np.array(rank, dtype=np.int8),
        "disagree": disagree,
    }


def anchor_rows(
    evaluator: Evaluator,
    rows: int,
    rng: np.random.Generator,
    cfg: LabelConfig,
    *,
    per_decision: int = 4,
    ply: int = 0,
    replies: float = 0.0,
    first_id: int = 0,
    chunk: int = 4096,
) -> dict[str, np.ndarray]:
    """About ``rows`` afterstates of self-play decisions, any of each decision's plays
    (up to ``per_decision`` of them, drawn at random), labelled by ``evaluator``'s own
    ``ply``-ply search: rows in ``SHARD_FIELDS`` that hold a fitted net to its teacher
    on the plays the real labels never show it.

    Labels cover the best few plays of a decision; a net fitted on them alone drifts on
    the rest, and the rest are what a search's inner levels rank (the opponent's best
    reply among all of its plays).  Anchors are cheap (0- or 1-ply, no 2-ply) and a pure
    function of the teacher and ``rng``, so they are made at fit time, not kept.  With
    ``cfg.race_net`` only contact afterstates are drawn (the race net judges the rest).
    ``rank0`` is -1 on every anchor: ``fit`` trains on them but never holds one out.

    A ``replies`` share of the rows are instead the opponent's best replies to those
    plays (``best_replies``), each in the decision of the play it answers: a 1-ply search
    asks the net about them after every roll, and a net fitted without them (a net with
    no self-play history behind it) misjudged the dances among them by 0.6 equity.
    """
    if rows < 1 or per_decision < 1 or ply < 0 or not 0.0 <= replies < 1.0:
        raise ValueError(
            f"anchors need rows >= 1, per_decision >= 1, ply >= 0 and 0 <= replies < 1, "
            f"got {rows}, {per_decision}, {ply}, {replies}"
        )
    n_replies = round(rows * replies)
    plays = rows - n_replies
    boards, dice = collect_decisions(evaluator, int(np.ceil(rows / per_decision * 1.1)), rng, cfg)
    afters, offsets = legal_afterstates_batch(boards, dice, evaluator.rules.waste_rule)
    counts = np.diff(offsets)
    decision = np.repeat(np.arange(boards.shape[0]), counts)
    # a random rank within each decision; the first per_decision of them are drawn
    order = np.lexsort((rng.random(afters.shape[0]), decision))
    rank = np.empty(afters.shape[0], dtype=np.int64)
    rank[order] = np.arange(afters.shape[0]) - np.repeat(offsets[:-1], counts)
    pick = rank < per_decision
    if cfg.race_net:
        pick &= ~race_flags(afters)
    idx = np.flatnonzero(pick)[:plays]
    cand = np.ascontiguousarray(afters[idx])
    of_row, decision = decision, decision[idx]
    if n_replies:
        pool = np.flatnonzero(pick)
        src = pool[rng.integers(0, pool.size, size=n_replies)] if pool.size else pool
        answer = best_replies(evaluator, np.ascontiguousarray(afters[src]), rng)
        keep = ~race_flags(answer) if cfg.race_net else np.ones(answer.shape[0], dtype=bool)
        keep &= ~exact_finished(answer)[0]
        cand = np.concatenate([cand, answer[keep]])
        decision = np.concatenate([decision, of_row[src][keep]])
    search = Search(evaluator, pruner=None if cfg.prune else False, cache_size=0)

    def at(depth: int) -> np.ndarray:
        parts = [search.afterstate_probs(cand[i : i + chunk], depth) for i in starts]
        return np.concatenate(parts).astype(np.float32)

    starts = range(0, max(1, cand.shape[0]), chunk)
    probs = at(ply)
    probs0 = probs if ply == 0 else at(0)
    return {
        "boards": cand.astype(np.int8),
        "probs": probs,
        "probs0": probs0,
        "decision": first_id + decision.astype(np.int64),
        "rank0": np.full(cand.shape[0], -1, dtype=np.int8),
        "disagree": np.zeros(cand.shape[0], dtype=np.bool_),
    }


def best_replies(
    evaluator: Evaluator, afterstates: np.ndarray, rng: np.random.Generator, chunk: int = 2048
) -> np.ndarray:
    """The opponent's best play (0-ply, the rule set's cubeless money equity) to one roll
    of each afterstate, drawn with the dice's odds, in the opponent's view: the positions a
    1-ply search scores.  A roll it cannot play (R16) leaves the board as it is, the
    opponent still on the bar: the dance that self-play decisions never hold."""
    n = afterstates.shape[0]
    if n == 0:
        return np.zeros((0, 26), dtype=np.int8)
    dice = ROLLS[rng.choice(ROLLS.shape[0], size=n, p=ROLL_WEIGHTS / ROLL_WEIGHTS.sum())]
    opp = flip_boards(afterstates)
    out = np.empty_like(opp)
    for lo in range(0, n, chunk):  # a few dozen plays a roll: bounded memory
        part = slice(lo, lo + chunk)
        afters, offsets = legal_afterstates_batch(opp[part], dice[part], evaluator.rules.waste_rule)
        afters, offsets = with_passes(afters, offsets, opp[part])
        eq = cubeless_equity(
            np.asarray(evaluator.probabilities(afters), dtype=np.float64), rules=evaluator.rules
        )
        out[part] = afters[offsets[:-1] + segment_argmax(eq, offsets)]
    return out


def outcome_rows(
    evaluator: Evaluator, games: int, rng: np.random.Generator, cfg: LabelConfig, first_id: int
) -> dict[str, np.ndarray]:
    """``collect_outcomes`` as shard rows: one decision id per game (from ``first_id``, so
    a game's positions stay on one side of the held-out split), ``probs0`` the net's own
    0-ply view, never over-sampled."""
    boards, probs, game = collect_outcomes(evaluator, games, rng, cfg)
    return {
        "boards": boards,
        "probs": probs,
        "probs0": evaluator.probabilities(boards).astype(np.float32),
        "decision": first_id + game,
        "rank0": np.zeros(boards.shape[0], dtype=np.int8),
        "disagree": np.zeros(boards.shape[0], dtype=bool),
    }


OLD_PRUNER = "nard-prune extendedx16 keep 6"
"""The pruning net of shards written before shards named theirs (the first shipped one)."""


def pruner_identity(evaluator: Evaluator, cfg: LabelConfig) -> str | None:
    """Which pruning net the labelling search uses (None: every reply scored)."""
    pruner = getattr(evaluator, "pruner", None) if cfg.prune else None
    return None if pruner is None else pruner.identity()


def teacher_identity(evaluator: Evaluator) -> str | None:
    """The weights digest of the net that labels (the contact net of a composite), as
    ``dataset.teacher_digest`` reads it from a checkpoint: shards record it, so a shard
    cannot be kept in the dataset under another teacher's name.  None: no torch net."""
    from nard_rl.training.distributed import weights_digest

    net = getattr(getattr(evaluator, "contact", evaluator), "net", None)
    return None if net is None else weights_digest(net)


def check_same_job(
    folder: str | Path, cfg: LabelConfig, pruner: str | None = None, teacher: str | None = None
) -> None:
    """Refuse to add shards to a folder whose shards were labelled with other settings:
    resuming must not mix two labelling jobs (only ``shards``, how many there are, may
    change), nor two pruning nets, nor two teachers.  Shards from before a setting
    existed count as its old behaviour (no recorded teacher: not compared)."""
    existing = sorted(Path(folder).glob("shard_*.npz"))
    if not existing:
        return
    _, meta = read_shard(existing[0])
    recorded = meta.get("teacher")
    if recorded is not None and teacher is not None and recorded != teacher:
        raise ValueError(
            f"{folder} holds shards labelled by another teacher (weights {recorded[:12]}, "
            f"not {teacher[:12]}); use another run name or generation"
        )
    old = {"prune": False, **meta.get("label", {})}
    old["pruner"] = meta.get("pruner", OLD_PRUNER if old["prune"] else None)
    new = asdict(cfg) | {"pruner": pruner}
    diff = sorted(k for k in new if k != "shards" and old.get(k, new[k]) != new[k])
    if diff:
        changes = ", ".join(f"{k}: {old.get(k)!r} -> {new[k]!r}" for k in diff)
        raise ValueError(
            f"{folder} holds shards labelled with other settings ({changes}); use another "
            "run name or generation, or remove those shards to relabel"
        )


def shard_path(folder: str | Path, index: int) -> Path:
    return Path(folder) / SHARD_PATTERN.format(index)


def write_shard(path: Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Written atomically (``nard_rl.util.io.atomic_write``): a shard is whole or absent."""
    atomic_write(path, lambda fh: np.savez(fh, meta=np.array(json.dumps(meta)), **data))


def read_shard(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    with np.load(path, allow_pickle=False) as z:
        missing = [f for f in SHARD_FIELDS if f not in z]
        if missing or "meta" not in z:
            raise ValueError(f"{path} is not a label shard (missing {missing or ['meta']})")
        data = {f: z[f] for f in SHARD_FIELDS}
        meta = json.loads(str(z["meta"]))
    return data, meta


def _stream_seed(ss: list[int]) -> int:
    """One 63-bit integer for the counter-based rollout dice of a shard."""
    return int(np.random.SeedSequence(ss).generate_state(1, np.uint64)[0] >> np.uint64(1))


def shard_seed(seed: int, generation: int, index: int) -> list[int]:
    """The seed sequence of one shard: shards never share dice, whoever computes them."""
    return [int(seed), int(generation), int(index)]


def label_shard(
    evaluator: Evaluator,
    folder: str | Path,
    cfg: LabelConfig,
    *,
    k: int = 0,
    num: int = 1,
    seed: int = 0,
    generation: int = 0,
    progress: bool | None = None,
) -> list[Path]:
    """Label shard ``k`` of ``num``: the shards ``i < cfg.shards`` with ``i % num == k``.

    Shards already on disk are kept (resuming), so the call is idempotent.  Returns the
    paths of this worker's shards.
    """
    if num < 1 or not 0 <= k < num:
        raise ValueError(f"need 0 <= k < num, got k={k}, num={num}")
    pruner = pruner_identity(evaluator, cfg)
    teacher = teacher_identity(evaluator)
    check_same_job(folder, cfg, pruner, teacher)
    mine = [i for i in range(cfg.shards) if i % num == k]
    todo = [i for i in mine if not shard_path(folder, i).exists()]
    per = cfg.decisions_per_shard
    work = per + cfg.outcome_games  # progress: decisions plus whole games
    bar = progress_bar(
        len(mine) * work,
        initial=(len(mine) - len(todo)) * work,
        unit="item",
        desc=f"label gen {generation} [{k}/{num}]",
        disable=progress is False,  # None: on, once a minute when stderr is no terminal
    )
    try:
        for i in todo:
            ss = shard_seed(seed, generation, i)
            rng = np.random.default_rng(ss)
            parts: list[dict[str, np.ndarray]] = []
            if per:
                labeller = make_labeller(evaluator, cfg, seed=_stream_seed(ss))
                boards, dice = collect_decisions(evaluator, per, rng, cfg)
                for lo in range(0, per, cfg.chunk):
                    hi = min(per, lo + cfg.chunk)
                    parts.append(
                        label_decisions(
                            evaluator, labeller, boards[lo:hi], dice[lo:hi], cfg, i * per + lo
                        )
                    )
                    bar.update(hi - lo)
            if cfg.outcome_games:
                first = cfg.shards * per + i * cfg.outcome_games
                parts.append(outcome_rows(evaluator, cfg.outcome_games, rng, cfg, first))
                bar.update(cfg.outcome_games)
            data = {f: np.concatenate([p[f] for p in parts]) for f in SHARD_FIELDS}
            meta = {
                "shard": i,
                "generation": generation,
                "seed": ss,
                "rules": evaluator.rules.name,
                "label": asdict(cfg),
                "pruner": pruner,
                "teacher": teacher,
            }
            write_shard(shard_path(folder, i), data, meta)
    finally:
        bar.close()
    return [shard_path(folder, i) for i in mine]
