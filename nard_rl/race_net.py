"""Training the race net: the net that answers no-contact positions outside the bear-off
database (``nard_rl.evaluator.CompositeEvaluator``).

Races are where TD self-play of a contact net learns least (few games reach them in any
one shape, and their values hinge on exact pip and wastage arithmetic), and where a better
teacher is cheap: with the bear-off database at the end of every race, a 1-ply lookahead
(``nard_rl.search.Search``) of the current race net is a strictly better label than the
net itself for positions close to the bear-off, and the improvement moves one roll further
back each round.  So the race net is trained by *fitted value iteration*:

1. **collect** race (and some bear-off) afterstates from self-play games of the contact
   net, with exploration, deduplicated; a held-out tenth is kept for measurement;
2. **label** a sample of them with the 1-ply value under the composite evaluator whose race
   part is the current race net (bear-offs take their exact database value);
3. **fit** the race net to the labels (Adam, MSE on the five probabilities), and repeat.

The race net starts as a copy of the contact net (same encoding and shape), so round 0 is
already as good as the contact net in races.  Every round is saved (atomic checkpoint with
the round, the labels seen and the configuration), and a killed run resumes at the last
finished round.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from nard_rl.engine.batch import roll_dice, segment_argmax, start_boards
from nard_rl.engine.bearoff import get_bearoff_database
from nard_rl.engine.classify import BEAROFF, RACE, classify
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.evaluator import CompositeEvaluator, NetEvaluator, exact_finished
from nard_rl.network import cubeless_equity, load_checkpoint, load_network, save_checkpoint

__all__ = ["RaceConfig", "collect_race_positions", "race_errors", "train_race_net"]


@dataclass
class RaceConfig:
    """Knobs of one race-net run (recorded in the checkpoint)."""

    games: int = 3000
    """Self-play games of the contact net from which race positions are collected."""
    explore: float = 0.1
    """Chance of a random play per move during collection (wider coverage of races)."""
    rounds: int = 6
    """Label-and-fit rounds (each moves exact bear-off knowledge about a roll back)."""
    labels_per_round: int = 20000
    """Positions labelled at 1-ply per round."""
    epochs: int = 4
    """Passes over each round's labels."""
    batch: int = 128
    lr: float = 1e-3
    holdout: float = 0.1
    eval_positions: int = 1500
    """Held-out positions measured after every round (1-ply labels cost as much as
    training labels, so this stays small)."""
    seed: int = 1
    rules: str = "standard"


def _play_step(
    ev: NetEvaluator, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator, explore: float
) -> np.ndarray:
    """Each board's chosen afterstate (greedy cubeless equity, random with ``explore``)."""
    afters, offsets = legal_afterstates_batch(boards, dice, ev.rules.waste_rule)
    counts = np.diff(offsets)
    eq = cubeless_equity(torch.from_numpy(ev.probabilities(afters)), ev.rules).numpy()
    local = segment_argmax(eq, offsets)
    wild = (rng.random(boards.shape[0]) < explore) & (counts > 0)
    local[wild] = (rng.random(int(wild.sum())) * counts[wild]).astype(np.int64)
    chosen = boards.copy()  # R16: no legal play leaves the board as it was
    moved = counts > 0
    chosen[moved] = afters[offsets[:-1][moved] + local[moved]]
    return chosen


def collect_race_positions(
    contact: NetEvaluator, games: int, rng: np.random.Generator, explore: float = 0.1
) -> np.ndarray:
    """Distinct no-contact afterstates (race and bear-off, unfinished) reached in
    ``games`` self-play games of ``contact``, all games stepping together."""
    boards = start_boards(games)
    opening = np.ones(games, dtype=bool)
    alive = np.ones(games, dtype=bool)
    found: list[np.ndarray] = []
    while alive.any():
        idx = np.flatnonzero(alive)
        dice = roll_dice(rng, idx.size, opening[idx])
        chosen = _play_step(contact, boards[idx], dice, rng, explore)
        done, _ = exact_finished(chosen)
        cls = classify(chosen)
        found.append(chosen[~done & ((cls == RACE) | (cls == BEAROFF))])
        boards[idx] = flip_boards(chosen)
        opening[idx] = False
        alive[idx[done]] = False
    return np.unique(np.concatenate(found), axis=0)


def _labels(evaluator: CompositeEvaluator, positions: np.ndarray) -> np.ndarray:
    """1-ply probabilities of race afterstates; exact values of bear-offs."""
    from nard_rl.search import Search

    search = Search(evaluator, cache_size=0)
    out = evaluator.probabilities(positions)  # exact for bear-offs
    rows = np.flatnonzero(classify(positions) != BEAROFF)
    chunk = 2000
    for start in range(0, rows.size, chunk):
        part = rows[start : start + chunk]
        out[part] = search.afterstate_probs(positions[part], ply=1)
    return out


def race_errors(
    race: NetEvaluator, evaluator: CompositeEvaluator, positions: np.ndarray
) -> dict[str, float]:
    """Mean absolute cubeless-equity error of ``race`` at 0-ply against ``evaluator``'s
    1-ply labels (races) and the exact database (bear-offs), separately."""
    labels = _labels(evaluator, positions)
    pred = race.net_probabilities(positions)
    rules = evaluator.rules
    err = np.abs(
        cubeless_equity(torch.from_numpy(pred), rules).numpy()
        - cubeless_equity(torch.from_numpy(labels), rules).numpy()
    )
    bo = classify(positions) == BEAROFF
    return {
        "race_mae": float(err[~bo].mean()) if (~bo).any() else float("nan"),
        "bearoff_mae": float(err[bo].mean()) if bo.any() else float("nan"),
        "race_n": int((~bo).sum()),
        "bearoff_n": int(bo.sum()),
    }


def _fit(
    race: NetEvaluator,
    x: np.ndarray,
    y: np.ndarray,
    cfg: RaceConfig,
    opt: torch.optim.Optimizer,
    rng: np.random.Generator,
) -> float:
    net = race.net
    net.train()
    xs = torch.from_numpy(race.enc.encode(x))
    ys = torch.from_numpy(y)
    total = 0.0
    steps = 0
    for _ in range(cfg.epochs):
        order = torch.from_numpy(rng.permutation(x.shape[0]))
        for s in range(0, x.shape[0], cfg.batch):
            b = order[s : s + cfg.batch]
            loss = F.mse_loss(net(xs[b]), ys[b], reduction="sum") / b.numel()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach())
            steps += 1
    net.eval()
    return total / max(steps, 1)


def train_race_net(
    contact_path: str | Path,
    out: str | Path,
    cfg: RaceConfig,
    *,
    log: Any = print,
) -> dict[str, Any]:
    """Run (or resume) a race-net training into ``out`` (checkpoint) with ``out``'s sibling
    ``<stem>.positions.npz`` holding the collected positions.  Returns the last history
    entry."""
    out = Path(out)
    rules: RuleSet = get_rules(cfg.rules)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    contact = NetEvaluator.from_checkpoint(contact_path, rules=rules)
    pos_path = out.with_suffix(".positions.npz")
    if pos_path.is_file():
        with np.load(pos_path) as data:
            train_pos, held = data["train"], data["held"]
    else:
        t0 = time.time()
        allpos = collect_race_positions(contact, cfg.games, rng, cfg.explore)
        perm = rng.permutation(allpos.shape[0])
        n_held = int(allpos.shape[0] * cfg.holdout)
        held, train_pos = allpos[perm[:n_held]], allpos[perm[n_held:]]
        pos_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = pos_path.with_name(pos_path.name + ".tmp.npz")
        np.savez_compressed(tmp, train=train_pos, held=held)
        tmp.replace(pos_path)
        log(f"collected {allpos.shape[0]} race/bear-off positions in {time.time() - t0:.0f}s")

    history: list[dict[str, Any]] = []
    start_round = 0
    if out.is_file():
        race = NetEvaluator.from_checkpoint(out, rules=rules)
        ckpt = load_checkpoint(out)
        history = list(ckpt.get("extra", {}).get("history", []))
        start_round = int(ckpt["step"])
    else:
        net, _, _ = load_network(contact_path)
        race = NetEvaluator(net, contact.spec, rules=rules, name="race")
    opt = torch.optim.Adam(race.net.parameters(), lr=cfg.lr)
    db = get_bearoff_database(rules.waste_rule)
    composite = CompositeEvaluator(contact, race=race, bearoff=db, rules=rules)
    eval_held = held[: min(held.shape[0], cfg.eval_positions)]
    if start_round == 0 and not history:
        errs = race_errors(race, composite, eval_held)
        history.append({"round": 0, **errs})
        log(f"round 0 (contact net copy): {errs}")
    for rnd in range(start_round + 1, cfg.rounds + 1):
        t0 = time.time()
        sample = train_pos[rng.choice(train_pos.shape[0], cfg.labels_per_round, replace=False)]
        labels = _labels(composite, sample)
        t_label = time.time() - t0
        loss = _fit(race, sample, labels, cfg, opt, rng)
        errs = race_errors(race, composite, eval_held)
        entry = {
            "round": rnd,
            "labels": int(sample.shape[0]),
            "loss": loss,
            "label_s": round(t_label, 1),
            "round_s": round(time.time() - t0, 1),
            **errs,
        }
        history.append(entry)
        save_checkpoint(
            out,
            race.net,
            race.spec,
            games=cfg.games,
            step=rnd,
            config={"race": asdict(cfg), "contact": str(contact_path)},
            extra={"history": history, "kind": "race"},
        )
        log(f"round {rnd}: {entry}")
    return history[-1]
