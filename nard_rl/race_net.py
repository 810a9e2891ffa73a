"""The race net: one-sided roll distributions for no-contact positions outside the bear-off
database, combined exactly into the five outcome probabilities.

Without contact the two sides no longer interact: each side's number of rolls to bear
off depends only on its own checkers and dice.  So instead of a two-sided net guessing
five probabilities, the race net answers the same *one-sided* question as the bear-off
database (``nard_rl.engine.bearoff``) for placements anywhere on the 24 points: the
distribution of the number of rolls to bear off all checkers, of rolls to bear off the
first one (for gammons), and of rolls until no checker is left in the other side's home
board, points 19..24 (for backgammons: a race without contact can still leave a straggler
there).  Two such distributions combine exactly
(``nard_rl.engine.bearoff.race_probabilities``), and a side already in its home board
takes its exact distribution from the database, so a race in which one side is home is
half exact, and the database and the net agree by construction at the boundary.

Training (``train_race_net``) is Monte Carlo with the database at the end of every
trajectory, round after round (policy iteration):

1. start from one-sided placements of no-contact positions reached in self-play games of
   the contact net (both sides of each, deduplicated);
2. play each placement forward with random dice until all its checkers are home, each roll
   played to minimise the expected rolls left (the database's mean for a play that brings
   everything home, the current net's mean otherwise, a few random plays for coverage);
3. every placement on the way learns the database distribution of the home placement
   reached, shifted by the rolls it took to get there (cross-entropy), an unbiased and
   low-variance target: the randomness after the checkers come home is integrated out
   exactly;
4. home placements also learn their exact database distributions, so the net is measured
   against the database where both exist.

Each distribution learns under the policy it stands for: "bear off all" from plays that
minimise the expected rolls to bear off all (the database's criterion); "first off" (a
side with 15 checkers, saving the gammon) from separate trajectories that minimise the
expected rolls to the first checker off, as the database's "first" table does; "leave
19..24" (saving the backgammon) from trajectories that run the straggler out first.
Under one shared policy the gammon and backgammon heads came out far too pessimistic.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from nard_rl.engine.batch import roll_dice, segment_argmax, start_boards
from nard_rl.engine.bearoff import (
    MAX_CHECKERS,
    BearoffDatabase,
    bearoff_index,
    get_bearoff_database,
    race_probabilities,
    race_probabilities_of_rows,
)
from nard_rl.engine.classify import BEAROFF, RACE, classify
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import RuleSet, cubeless_equity, get_rules
from nard_rl.io import atomic_write
from nard_rl.network import (
    MAX_WIDTH,
    CheckpointError,
    atomic_torch_save,
    load_checkpoint,
    load_state_checked,
)

__all__ = [
    "RaceConfig",
    "RaceEvaluator",
    "RaceNet",
    "collect_race_positions",
    "load_race_net",
    "one_sided_inputs",
    "side_placements",
    "train_race_net",
]

BINS = 80
"""Roll counts 0..79; a side with 15 checkers on its 24 point needs about 45 at most."""
RACE_ENCODING_VERSION = 1
RACE_KIND = "race-one-sided"
INPUTS = 24 * 4 + 5


def side_placements(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mover, opponent)`` placements ``(N, 24)`` int64 of no-contact boards, each on its
    own points 1..24 (column ``p - 1`` is point ``p``)."""
    a = np.asarray(afterstates, dtype=np.int64)
    return np.maximum(a[:, 1:25], 0), np.maximum(-a[:, 24:0:-1], 0)


def one_sided_inputs(placements: np.ndarray) -> np.ndarray:
    """Race encoding v1 of ``(N, 24)`` placements: per point ``n >= 1``, ``n >= 2``,
    ``n >= 3`` and ``(n - 3) / 4`` beyond; then the pip count / 150, checkers on the board
    / 15, checkers outside the home board / 15, pips still to travel to reach the home board
    / 100 and checkers on the ace point / 15 (the points where wastage starts)."""
    pl = np.asarray(placements, dtype=np.float32)
    n = pl.shape[0]
    out = np.empty((n, INPUTS), dtype=np.float32)
    per = out[:, :96].reshape(n, 24, 4)
    per[:, :, 0] = pl >= 1
    per[:, :, 1] = pl >= 2
    per[:, :, 2] = pl >= 3
    per[:, :, 3] = np.maximum(pl - 3.0, 0.0) / 4.0
    points = np.arange(1, 25, dtype=np.float32)
    out[:, 96] = pl @ points / 150.0
    out[:, 97] = pl.sum(axis=1) / 15.0
    out[:, 98] = pl[:, 6:].sum(axis=1) / 15.0
    out[:, 99] = pl[:, 6:] @ (points[6:] - 6.0) / 100.0
    out[:, 100] = pl[:, 0] / 15.0
    return out


HEADS = 3


class RaceNet(nn.Module):
    """Placement inputs -> log-probabilities of the three roll distributions
    ``(N, 3, BINS)``: rolls to bear off all, to bear off the first, to leave 19..24."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.hidden = int(hidden)
        self.body = nn.Sequential(
            nn.Linear(INPUTS, self.hidden),
            nn.SiLU(),
            nn.Linear(self.hidden, self.hidden),
            nn.SiLU(),
        )
        self.head = nn.Linear(self.hidden, HEADS * BINS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.head(self.body(x)).view(-1, HEADS, BINS)
        # a side with checkers left needs at least one roll to bear off (all or the first):
        # no mass at 0, by construction (finite, so that zero targets there give zero loss)
        zero = torch.zeros_like(logits)
        zero[:, :2, 0] = -1e4
        return F.log_softmax(logits + zero, dim=2)


def _pad(dist: np.ndarray) -> np.ndarray:
    out = np.zeros((dist.shape[0], BINS))
    out[:, : dist.shape[1]] = dist
    return out


class RaceEvaluator:
    """One-sided distributions (database at home, race net elsewhere) combined exactly."""

    def __init__(
        self,
        net: RaceNet,
        bearoff: BearoffDatabase,
        *,
        rules: RuleSet | str | None = None,
        name: str = "race",
        step: int = 0,
    ) -> None:
        self.net = net.eval()
        self.bearoff = bearoff
        self.rules = get_rules(rules)
        self.name = name
        self.step = step

    def distributions(self, placements: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rolls, first, escape)`` ``(N, BINS)`` of ``(N, 24)`` placements."""
        pl = np.asarray(placements, dtype=np.int64)
        rolls = np.zeros((pl.shape[0], BINS))
        first = np.zeros((pl.shape[0], BINS))
        escape = np.zeros((pl.shape[0], BINS))
        home = pl[:, 6:].sum(axis=1) == 0
        if home.any():
            idx = bearoff_index(pl[home, :6])
            rolls[home] = _pad(self.bearoff.rolls[idx])
            first[home] = _pad(self.bearoff.first[idx])
        away = np.flatnonzero(~home)
        if away.size:
            with torch.no_grad():
                logp = self.net(torch.from_numpy(one_sided_inputs(pl[away])))
            p = logp.exp().double().numpy()
            rolls[away] = p[:, 0]
            first[away] = p[:, 1]
            escape[away] = p[:, 2]
        some_off = pl.sum(axis=1) < MAX_CHECKERS
        first[some_off] = 0.0
        first[some_off, 0] = 1.0
        clear = pl[:, 18:].sum(axis=1) == 0
        escape[clear] = 0.0
        escape[clear, 0] = 1.0
        return rolls, first, escape

    def mean_rolls(self, placements: np.ndarray, head: int = 0) -> np.ndarray:
        """Mean of one distribution: rolls to bear off all (``head=0``), the first
        (``head=1``) or to leave the other side's home board (``head=2``)."""
        return self.distributions(placements)[head] @ np.arange(BINS)

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """``(N, 5)`` probabilities of no-contact afterstates (mover's view, opponent to
        roll); exact where both sides are home."""
        mine, theirs = side_placements(afterstates)
        n = mine.shape[0]
        # one side's placement recurs across a batch (the side not moving is the same in
        # every candidate of a roll, in every reply of a search level): each distinct
        # placement goes through the net once
        both = np.ascontiguousarray(np.concatenate([mine, theirs]).astype(np.int8))
        keys = both.view(np.dtype((np.void, both.shape[1]))).ravel()
        _, first_row, inverse = np.unique(keys, return_index=True, return_inverse=True)
        rolls, first, escape = self.distributions(both[first_row])
        inverse = inverse.ravel()
        full = MAX_CHECKERS
        return race_probabilities_of_rows(
            rolls,
            first,
            escape,
            inverse[:n],
            inverse[n:],
            mine.sum(1) == full,
            theirs.sum(1) == full,
        )


def save_race_net(
    path: str | Path, net: RaceNet, *, step: int, config: dict[str, Any], history: list[Any]
) -> None:
    atomic_torch_save(
        {
            "format": 1,
            "kind": RACE_KIND,
            "spec": {
                "hidden": net.hidden,
                "bins": BINS,
                "heads": HEADS,
                "encoding_version": RACE_ENCODING_VERSION,
            },
            "model": {k: v.detach().cpu() for k, v in net.state_dict().items()},
            "step": int(step),
            "games": int(config.get("games", 0)),
            "config": config,
            "extra": {"history": history},
        },
        path,
    )


def is_race_checkpoint(path: str | Path) -> bool:
    return load_checkpoint(path).get("kind") == RACE_KIND


def load_race_net(
    path: str | Path, *, rules: RuleSet | str | None = None, bearoff: BearoffDatabase | None = None
) -> RaceEvaluator:
    """A race checkpoint (``weights_only`` load) as an evaluator of the rule set."""
    ckpt = load_checkpoint(path)
    if ckpt.get("kind") != RACE_KIND:
        raise ValueError(f"{path} is not a race-net checkpoint (kind {ckpt.get('kind')!r})")
    spec = ckpt["spec"]
    have = (int(spec["encoding_version"]), int(spec["bins"]), int(spec.get("heads", 2)))
    if have != (RACE_ENCODING_VERSION, BINS, HEADS):
        raise ValueError(
            f"{path} is a race net of (encoding, bins, heads) = {have}; this nard-rl needs "
            f"{(RACE_ENCODING_VERSION, BINS, HEADS)}: retrain it"
        )
    rs = get_rules(rules)
    trained = get_rules(ckpt.get("config", {}).get("rules", "standard"))
    if trained.waste_rule != rs.waste_rule:
        raise ValueError(
            f"{path} was trained under the {trained.name!r} rule set, whose bear-off "
            f"{'follows' if trained.waste_rule else 'ignores'} the pip-waste rule (R29); "
            f"it cannot answer races under {rs.name!r}"
        )
    hidden = spec.get("hidden")
    if isinstance(hidden, bool) or not isinstance(hidden, int) or not 1 <= hidden <= MAX_WIDTH:
        raise CheckpointError(
            f"{path}: race net hidden width must be 1..{MAX_WIDTH}, got {hidden!r}"
        )
    # the weights' shapes are checked on the meta device before anything is allocated
    net = load_state_checked(path, lambda: RaceNet(hidden), ckpt["model"])
    db = bearoff or get_bearoff_database(rs.waste_rule)
    return RaceEvaluator(net, db, rules=rs, name=Path(path).stem, step=int(ckpt["step"]))


# training -------------------------------------------------------------------------------


@dataclass
class RaceConfig:
    """Knobs of one race-net run (recorded in the checkpoint)."""

    games: int = 3000
    """Self-play games of the contact net from which race positions are collected."""
    explore: float = 0.1
    """Chance of a random play per move during collection and rollouts (coverage)."""
    rounds: int = 12
    """Rollout-and-fit rounds (each follows the policy of the previous round's net)."""
    starts_per_round: int = 6000
    """Placements rolled forward per round."""
    epochs: int = 3
    """Passes over each round's samples."""
    home_share: float = 1.0
    """Home placements (exact database targets) added per rollout sample each round."""
    hidden: int = 128
    batch: int = 256
    lr: float = 2e-3
    lr_final: float | None = None
    """Learning rate of the last round (cosine from ``lr``); None keeps ``lr`` throughout.
    The rollout targets are single trajectories, so a falling rate averages their noise."""
    seed: int = 1
    rules: str = "standard"

    def __post_init__(self) -> None:
        for name in ("games", "rounds", "starts_per_round", "epochs", "hidden", "batch"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"RaceConfig.{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.explore <= 1.0 or self.lr <= 0 or self.home_share < 0:
            raise ValueError("RaceConfig needs 0 <= explore <= 1, lr > 0 and home_share >= 0")
        if self.lr_final is not None and not 0 < self.lr_final <= self.lr:
            raise ValueError(f"RaceConfig.lr_final must be in (0, lr], got {self.lr_final}")
        get_rules(self.rules)

    def lr_at(self, rnd: int) -> float:
        """The rate of round ``rnd`` (1-based): cosine from ``lr`` to ``lr_final``."""
        if self.lr_final is None or self.rounds == 1:
            return self.lr
        t = (rnd - 1) / (self.rounds - 1)
        return self.lr_final + 0.5 * (self.lr - self.lr_final) * (1.0 + math.cos(math.pi * t))


def _contact_choice(
    player: Any, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator, explore: float
) -> np.ndarray:
    """Each board's afterstate under the contact player (random with ``explore``)."""
    from nard_rl.evaluator import greedy_choice  # the evaluator imports this module

    afters, offsets = legal_afterstates_batch(boards, dice, player.rules.waste_rule)
    counts = np.diff(offsets)
    local, _ = greedy_choice(player, afters, offsets)
    wild = (rng.random(boards.shape[0]) < explore) & (counts > 0)
    local[wild] = (rng.random(int(wild.sum())) * counts[wild]).astype(np.int64)
    chosen = boards.copy()  # R16: no legal play leaves the board as it was
    moved = counts > 0
    chosen[moved] = afters[offsets[:-1][moved] + local[moved]]
    return chosen


def collect_race_positions(
    contact: Any, games: int, rng: np.random.Generator, explore: float = 0.1
) -> np.ndarray:
    """Distinct no-contact afterstates (race and bear-off, unfinished) reached in
    ``games`` self-play games of ``contact`` (an evaluator), all games stepping together."""
    from nard_rl.evaluator import exact_finished

    boards = start_boards(games)
    opening = np.ones(games, dtype=bool)
    alive = np.ones(games, dtype=bool)
    found: list[np.ndarray] = []
    while alive.any():
        idx = np.flatnonzero(alive)
        dice = roll_dice(rng, idx.size, opening[idx])
        chosen = _contact_choice(contact, boards[idx], dice, rng, explore)
        done, _ = exact_finished(chosen)
        cls = classify(chosen)
        found.append(chosen[~done & ((cls == RACE) | (cls == BEAROFF))])
        boards[idx] = flip_boards(chosen)
        opening[idx] = False
        alive[idx[done]] = False
    return np.unique(np.concatenate(found), axis=0)


def _rollouts(
    ev: RaceEvaluator,
    starts: np.ndarray,
    rng: np.random.Generator,
    explore: float,
    head: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play ``starts`` (placements not all home) until home, each roll minimising the
    expected rolls to bear off all (``head=0``), or for a side saving a gammon the first
    checker (``head=1``: a different race, run to bring the stragglers in at once), or
    for a side saving a backgammon the rolls to leave the other side's home board
    (``head=2``: the straggler runs first).
    Returns every visited placement, the rolls it still took to get home, the database
    index of the home placement its trajectory reached, and the rolls it still took to
    leave 19..24."""
    n = starts.shape[0]
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros((0, 24), dtype=np.int64), empty, empty, empty
    cur = starts.astype(np.int64).copy()
    seen: list[np.ndarray] = []
    traj: list[np.ndarray] = []
    step_of: list[np.ndarray] = []
    steps = np.zeros(n, dtype=np.int64)
    home_idx = np.full(n, -1, dtype=np.int64)
    escaped = np.where(cur[:, 18:].sum(axis=1) == 0, 0, -1)
    active = np.arange(n)
    step = 0
    while active.size:
        seen.append(cur[active].copy())
        traj.append(active.copy())
        step_of.append(np.full(active.size, step))
        boards = np.zeros((active.size, 26), dtype=np.int8)
        boards[:, 1:25] = cur[active]
        dice = roll_dice(rng, active.size)
        afters, offsets = legal_afterstates_batch(boards, dice, ev.rules.waste_rule)
        cand = afters[:, 1:25].astype(np.int64)
        score = ev.mean_rolls(cand, head)
        local = segment_argmax(-score, offsets)
        counts = np.diff(offsets)
        wild = rng.random(active.size) < explore
        local[wild] = (rng.random(int(wild.sum())) * counts[wild]).astype(np.int64)
        cur[active] = cand[offsets[:-1] + local]
        step += 1
        out_now = active[(cur[active, 18:].sum(axis=1) == 0) & (escaped[active] < 0)]
        escaped[out_now] = step
        home = cur[active, 6:].sum(axis=1) == 0
        done = active[home]
        steps[done] = step
        home_idx[done] = bearoff_index(cur[done, :6])
        active = active[~home]
    placements = np.concatenate(seen)
    who = np.concatenate(traj)
    at = np.concatenate(step_of)
    return placements, steps[who] - at, home_idx[who], np.maximum(escaped[who] - at, 0)


def _shifted(table: np.ndarray, idx: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``table[idx]`` moved ``shift`` bins later (tail folded into the last bin)."""
    out = np.zeros((idx.size, BINS), dtype=np.float32)
    width = table.shape[1]
    cols = np.minimum(shift[:, None] + np.arange(width)[None, :], BINS - 1)
    np.add.at(out, (np.repeat(np.arange(idx.size), width), cols.ravel()), table[idx].ravel())
    return out


def _fit(
    net: RaceNet,
    x: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    cfg: RaceConfig,
    opt: torch.optim.Optimizer,
    rng: np.random.Generator,
) -> float:
    """Cross-entropy of each head against its ``(M, HEADS, BINS)`` targets, each sample
    and head weighted by ``(M, HEADS)`` (0 where a head says nothing, e.g. "first off"
    for a side that has borne one off already)."""
    net.train()
    xs, ts = torch.from_numpy(x), torch.from_numpy(targets)
    ws = torch.from_numpy(weights.astype(np.float32))
    total, steps = 0.0, 0
    for _ in range(cfg.epochs):
        order = torch.from_numpy(rng.permutation(x.shape[0]))
        for s in range(0, x.shape[0], cfg.batch):
            b = order[s : s + cfg.batch]
            ce = -(ts[b] * net(xs[b])).sum(dim=2)  # (B, HEADS)
            w = ws[b]
            loss = ((ce * w).sum(dim=0) / w.sum(dim=0).clamp(min=1.0)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach())
            steps += 1
    net.eval()
    return total / max(steps, 1)


def race_errors(ev: RaceEvaluator, held: np.ndarray) -> dict[str, float]:
    """How far the net is from the database where both exist: mean absolute error of the
    mean rolls over all home placements, and of the mover's winning chance over held-out
    no-contact bear-offs when both sides are answered by the net instead of the table."""
    db = ev.bearoff
    from nard_rl.engine.bearoff import all_placements

    place = all_placements().astype(np.int64)[1:]
    pl24 = np.zeros((place.shape[0], 24), dtype=np.int64)
    pl24[:, :6] = place
    with torch.no_grad():
        p = ev.net(torch.from_numpy(one_sided_inputs(pl24))).exp().double().numpy()
    mean_err = np.abs(p[:, 0] @ np.arange(BINS) - db.mean_rolls[1:]).mean()
    bo = held[classify(held) == BEAROFF]
    out = {"mean_rolls_mae": float(mean_err)}
    if bo.shape[0]:
        mine, theirs = side_placements(bo)
        with torch.no_grad():
            pa = ev.net(torch.from_numpy(one_sided_inputs(mine))).exp().double().numpy()
            pb = ev.net(torch.from_numpy(one_sided_inputs(theirs))).exp().double().numpy()
        full = MAX_CHECKERS
        net_p = race_probabilities(
            pa[:, 0], pa[:, 1], pb[:, 0], pb[:, 1], mine.sum(1) == full, theirs.sum(1) == full
        )
        exact = db.probabilities(bo)
        out["bearoff_win_mae"] = float(np.abs(net_p[:, 0] - exact[:, 0]).mean())
        out["bearoff_equity_mae"] = float(
            np.abs(cubeless_equity(net_p, ev.rules) - cubeless_equity(exact, ev.rules)).mean()
        )
    return out


def train_race_net(
    contact_path: str | Path,
    out: str | Path,
    cfg: RaceConfig,
    *,
    log: Any = print,
) -> dict[str, Any]:
    """Run (or resume) a race-net training into ``out``; ``<stem>.positions.npz`` next to
    it keeps the collected positions.  Returns the last history entry."""
    from nard_rl.checkpoint_paths import default_checkpoint_path
    from nard_rl.evaluator import NetEvaluator

    out = Path(out)
    rules = get_rules(cfg.rules)
    # the shipped net is recorded by name, not by where this install keeps it
    shipped = Path(contact_path).resolve() == default_checkpoint_path(rules).resolve()
    contact_label = "default" if shipped else str(contact_path)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    pos_path = out.with_suffix(".positions.npz")
    if pos_path.is_file():
        with np.load(pos_path) as data:
            train_pos, held = data["train"], data["held"]
    else:
        t0 = time.time()
        contact = NetEvaluator.from_checkpoint(contact_path, rules=rules)
        allpos = collect_race_positions(contact, cfg.games, rng, cfg.explore)
        perm = rng.permutation(allpos.shape[0])
        n_held = allpos.shape[0] // 10
        held, train_pos = allpos[perm[:n_held]], allpos[perm[n_held:]]
        atomic_write(pos_path, lambda fh: np.savez_compressed(fh, train=train_pos, held=held))
        log(f"collected {allpos.shape[0]} race/bear-off positions in {time.time() - t0:.0f}s")
    mine, theirs = side_placements(train_pos)
    starts = np.unique(np.concatenate([mine, theirs]), axis=0)
    starts = starts[starts[:, 6:].sum(axis=1) > 0]  # not all home: the database knows those
    db = get_bearoff_database(rules.waste_rule)
    net = RaceNet(cfg.hidden)
    history: list[dict[str, Any]] = []
    start_round = 0
    if out.is_file():
        ckpt = load_checkpoint(out)
        net.load_state_dict(ckpt["model"])
        history = list(ckpt["extra"]["history"])
        start_round = int(ckpt["step"])
    ev = RaceEvaluator(net, db, rules=rules)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    # home placements learn their exact distributions alongside the rollouts
    from nard_rl.engine.bearoff import all_placements

    home = np.zeros((54263, 24), dtype=np.int64)
    home[:, :6] = all_placements()[1:]
    home_t = np.arange(1, 54264)
    for rnd in range(start_round + 1, cfg.rounds + 1):
        t0 = time.time()
        for group in opt.param_groups:
            group["lr"] = cfg.lr_at(rnd)
        pick = starts[
            rng.choice(starts.shape[0], min(cfg.starts_per_round, starts.shape[0]), False)
        ]
        visited, left, idx, esc = _rollouts(ev, pick, rng, cfg.explore)
        # "first off" follows its own policy: a side with all 15 checkers saving the
        # gammon brings its stragglers in first, which a bear-off-all race need not do
        full = pick[pick.sum(axis=1) == MAX_CHECKERS]
        f_vis, f_left, f_idx, _ = _rollouts(ev, full, rng, cfg.explore, head=1)
        # and "leave the other home board" its own: a side saving a backgammon runs the
        # straggler out first, which neither other race need do
        back = pick[(pick.sum(axis=1) == MAX_CHECKERS) & (pick[:, 18:].sum(axis=1) > 0)]
        e_vis, _, _, e_esc = _rollouts(ev, back, rng, cfg.explore, head=2)
        n_home = min(home.shape[0], int(visited.shape[0] * cfg.home_share))
        extra = rng.choice(home.shape[0], n_home, replace=False)
        x = np.concatenate([visited, f_vis, e_vis, home[extra]])
        zeros = np.zeros(extra.size, dtype=np.int64)
        e_zeros = np.zeros(e_vis.shape[0], dtype=np.int64)
        left = np.concatenate([left, f_left, e_zeros, zeros])
        idx = np.concatenate([idx, f_idx, e_zeros, home_t[extra]])
        esc = np.concatenate([esc, np.zeros(f_vis.shape[0], dtype=np.int64), e_esc, zeros])
        targets = np.zeros((x.shape[0], HEADS, BINS), dtype=np.float32)
        targets[:, 0] = _shifted(db.rolls, idx, left)
        targets[:, 1] = _shifted(db.first, idx, left)
        targets[np.arange(x.shape[0]), 2, np.minimum(esc, BINS - 1)] = 1.0
        # each trajectory teaches the heads whose policy it followed; home placements,
        # exact, teach the first two
        source = np.concatenate(
            [
                np.zeros(visited.shape[0], dtype=np.int64),
                np.ones(f_vis.shape[0], dtype=np.int64),
                np.full(e_vis.shape[0], 2, dtype=np.int64),
                np.full(extra.size, -1, dtype=np.int64),
            ]
        )
        home_row = source < 0
        weights = np.stack(
            [
                (source == 0) | home_row,
                ((source == 1) | home_row) & (x.sum(axis=1) == MAX_CHECKERS),
                (source == 2) & (x[:, 18:].sum(axis=1) > 0),  # a straggler still there
            ],
            axis=1,
        )
        loss = _fit(net, one_sided_inputs(x), targets, weights, cfg, opt, rng)
        entry = {
            "round": rnd,
            "samples": int(x.shape[0]),
            "loss": round(loss, 5),
            "round_s": round(time.time() - t0, 1),
            **race_errors(ev, held),
        }
        history.append(entry)
        save_race_net(
            out,
            net,
            step=rnd,
            config={**asdict(cfg), "contact": contact_label},
            history=history,
        )
        log(f"round {rnd}: {entry}")
    return history[-1] if history else {}
