"""Training the race net (``nard_rl.nets.race``).

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

from nard_rl.engine.batch import GameBatch, roll_dice, segment_argmax
from nard_rl.engine.bearoff import (
    MAX_CHECKERS,
    all_placements,
    bearoff_index,
    get_bearoff_database,
    race_probabilities,
)
from nard_rl.engine.classify import BEAROFF, RACE, classify
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.rules import cubeless_equity, get_rules
from nard_rl.nets.evaluator import NetEvaluator, exact_finished, greedy_choice
from nard_rl.nets.network import load_checkpoint
from nard_rl.nets.paths import default_checkpoint_path
from nard_rl.nets.race import (
    BINS,
    HEADS,
    RaceEvaluator,
    RaceNet,
    one_sided_inputs,
    save_race_net,
    side_placements,
)
from nard_rl.util.io import atomic_write

__all__ = ["RaceConfig", "collect_race_positions", "race_errors", "train_race_net"]


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


def collect_race_positions(
    contact: Any, games: int, rng: np.random.Generator, explore: float = 0.1
) -> np.ndarray:
    """Distinct no-contact afterstates (race and bear-off, unfinished) reached in
    ``games`` self-play games of ``contact`` (an evaluator, 0-ply; a random play with
    chance ``explore``), all games stepping together on the engine's batch stepper
    (``GameBatch``; a roll without a legal play is a null play, R16)."""

    batch = GameBatch(games, contact.rules, rng, autoreset=False, pass_as_play=True)
    batch.reset()
    found: list[np.ndarray] = []
    while not batch.over.all():
        afters, offsets = batch.afters, batch.offsets
        counts = batch.counts
        local, _ = greedy_choice(contact, afters, offsets)
        wild = (rng.random(games) < explore) & (counts > 0)
        local[wild] = (rng.random(int(wild.sum())) * counts[wild]).astype(np.int64)
        live = np.flatnonzero(~batch.over)
        chosen = afters[offsets[live] + local[live]]
        done, _ = exact_finished(chosen)
        cls = classify(chosen)
        found.append(chosen[~done & ((cls == RACE) | (cls == BEAROFF))])
        batch.step(local)
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
    leave 19..24.  One side alone, no opponent: not a game of ``GameBatch``."""
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
