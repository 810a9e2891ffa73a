"""The training loop: batched TD self-play, checkpoints, TensorBoard, periodic pubeval.

One readable loop in the CleanRL spirit.  The model knows nothing of training; the
self-play core (``nard_rl.training.selfplay``) steps all games one ply and makes one TD update;
this file adds the schedule, the bookkeeping that makes a run resumable (model,
optimiser, RNG state and game count in an atomically written checkpoint), the logs and
the evaluations.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from nard_rl.arena.matches import play_match
from nard_rl.engine.rules import get_rules
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.network import (
    CheckpointError,
    NetSpec,
    check_state_dict,
    checkpoint_spec,
    load_checkpoint,
    save_checkpoint,
)
from nard_rl.training.config import TrainConfig, to_train_config
from nard_rl.training.distributed import (
    DistContext,
    init_distributed,
    rank_rng,
    restore_rngs,
    rng_checkpoint,
    torchrun_env,
    weights_digest,
)
from nard_rl.training.selfplay import SelfPlay
from nard_rl.util.progress import progress_bar
from nard_rl.util.runlock import RunLock, refuse_existing

LAST = "last.pt"


def _plain(cfg: Any) -> dict[str, Any]:
    if isinstance(cfg, DictConfig):
        return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    if is_dataclass(cfg):
        return asdict(cfg)  # type: ignore[arg-type]
    return dict(cfg)


log = logging.getLogger(__name__)


def _say(text: str) -> None:
    """One line of the run's log.  Under Hydra (``nard train``, ``scripts/train.py``) it
    goes through ``logging``, so Hydra's handlers put it on the console and in the run's
    ``train.log``; drawn above the progress bar.  Called as a plain function (no logging
    configured), it is printed."""
    if logging.getLogger().handlers:
        with logging_redirect_tqdm():
            log.info(text)
    else:
        tqdm.write(text)


def _init_weights(net: torch.nn.Module, spec: NetSpec, init: str, verbose: bool) -> None:
    """Start from a trained net's weights (``init``): same encoding and layers, any rule
    set, so a net learnt under one rule set can be carried over to another."""
    from dataclasses import replace

    from nard_rl.nets.paths import resolve_checkpoint

    path = resolve_checkpoint(init, spec.rules)  # default: the rule set's own shipped net
    ckpt = load_checkpoint(path, map_location="cpu")
    other = checkpoint_spec(path, ckpt)
    if replace(other, rules=spec.rules) != spec:
        raise CheckpointError(f"init={init}: {path} is a different network ({ckpt['spec']})")
    check_state_dict(path, spec.build, ckpt["model"])
    net.load_state_dict(ckpt["model"])
    if verbose:
        _say(f"initial weights from {path} ({other.rules} rules, {int(ckpt['games']):,} games)")


def claim_run(run: Path, conf: Mapping[str, Any]) -> RunLock | None:
    """Make ``run`` this job's: refuse a fresh start (no ``resume``) over a run that has a
    checkpoint, then take the run's lock (rank 0 of a torchrun job: the one that writes).

    ``nard train`` calls it before Hydra writes into the run directory, ``train`` again
    (the lock is re-entrant); returns the lock to release, None on the other ranks."""
    if not conf.get("resume"):
        refuse_existing(run, run / "checkpoints" / LAST, how_to_resume="resume=auto")
    if torchrun_env()[0] != 0:
        return None
    return RunLock(run).acquire()


def train(cfg: Any, run_dir: str | Path | None = None) -> Path:
    """Train per ``cfg`` (a ``TrainConfig``, its OmegaConf form or a dict); returns the last
    checkpoint.  The loop reads the typed config (``config.to_train_config``); the plain
    dict form is what checkpoints and logs record.

    The run directory is claimed first (``claim_run``): a run name that already holds a
    checkpoint needs ``resume=auto`` (or a checkpoint path), and a second process on the
    same name is refused while the first runs."""
    c = to_train_config(cfg)
    run = Path(run_dir) if run_dir is not None else Path(c.out_dir) / c.name
    lock = claim_run(run, {"resume": c.resume})
    try:
        run.mkdir(parents=True, exist_ok=True)
        # under torchrun: this rank's device and process group (one process: a no-op)
        ctx = init_distributed(c.device)
        try:
            last = _train(c, run, ctx)
        except BaseException:
            # no collectives on the error path: the peers may wait in another collective
            # or be gone already; leaving the group ends their wait with an error, and
            # torchrun stops the job
            ctx.close(sync=False)
            raise
        ctx.close()
        return last
    finally:
        if lock is not None:
            lock.release()


def _train(c: TrainConfig, run: Path, ctx: DistContext) -> Path:
    conf = _plain(c)
    tr = c.trainer
    ckpt_dir = run / "checkpoints"
    device = ctx.device
    if tr.threads:
        torch.set_num_threads(tr.threads)
    enc = get_encoding(c.encoding.name)
    rules = get_rules(c.rules.name)
    spec = NetSpec(
        encoding=enc.name,
        encoding_version=enc.version,
        inputs=enc.size,
        hidden=tuple(c.model.hidden),
        activation=c.model.activation,
        rules=rules.name,
    )

    seed = c.seed
    torch.manual_seed(seed)
    random.seed(seed)
    rng = rank_rng(seed, ctx.rank)  # each rank its own dice; rank 0 = a one-process run
    net = spec.build().to(device)
    opt: torch.optim.Optimizer
    if tr.optimizer == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=tr.lr)
    else:  # "sgd" (check_train_config refused anything else)
        opt = torch.optim.SGD(net.parameters(), lr=tr.lr)

    games_done = 0
    step = 0
    # every (re)start of the run with its config, so a checkpoint says how it was made
    history: list[dict[str, Any]] = []
    resume = c.resume
    if resume:
        path = ckpt_dir / LAST if resume == "auto" else Path(resume)
        if resume == "auto" and not path.exists():
            if ctx.is_main:
                _say(f"resume=auto: no checkpoint in {ckpt_dir} yet, starting fresh")
        else:
            ckpt = load_checkpoint(path, map_location="cpu")  # states go where they belong
            if checkpoint_spec(path, ckpt) != spec:
                raise CheckpointError(f"{path} has a different network spec: {ckpt['spec']}")
            # shapes checked before loading: a file whose weights and spec disagree is a
            # one-line error, not a traceback from deep inside torch
            check_state_dict(path, spec.build, ckpt["model"])
            net.load_state_dict(ckpt["model"])
            try:
                if "optimizer" in ckpt:
                    opt.load_state_dict(ckpt["optimizer"])
                games_done = int(ckpt["games"])
                step = int(ckpt["step"])
                extra = ckpt.get("extra", {})
                history = list(
                    extra.get("history", [{"from_games": 0, "config": ckpt.get("config", {})}])
                )
                rng = restore_rngs(extra, ctx, seed, games_done)
            except (KeyError, TypeError, ValueError, RuntimeError) as exc:
                raise CheckpointError(
                    f"{path}: its optimizer, counters or random states do not load: {exc}"
                ) from None
            if ctx.is_main:
                _say(f"resumed from {path} at {games_done:,} games")
    if c.init and games_done == 0:
        _init_weights(net, spec, c.init, ctx.is_main)
    ctx.broadcast_module(net)  # every rank starts from rank 0's weights
    history.append({"from_games": games_done, "config": conf, "world_size": ctx.world_size})

    writer = ctx.summary_writer(str(run / "tb"))  # rank 0 logs, the others do not
    writer.add_text("config/resolved", "```\n" + json.dumps(conf, indent=2) + "\n```", step)
    sp = SelfPlay(
        tr.parallel_games,
        enc,
        rules,
        rng,
        device,
        explore=tr.explore,
        loss=tr.loss,
        td_lambda=tr.td_lambda,
        grad_sync=ctx.sync_gradients if ctx.enabled else None,
    )
    total = tr.games

    def lr_at(g: int) -> float:
        frac = min(1.0, g / max(1, total))
        return float(tr.lr + (tr.lr_final - tr.lr) * frac)

    def checkpoint(tag: str | None = None) -> Path:
        # collectives first (every rank), then rank 0 alone writes
        extra = {**rng_checkpoint(ctx, rng), "history": history}
        extra["distributed"] = {
            **ctx.metadata(),
            "weights_digests": ctx.gather_objects(weights_digest(net)),
            # games each rank finished since this (re)start; their sum is in "games"
            "games_by_rank": ctx.gather_objects(sp.games_finished),
        }
        last = ckpt_dir / LAST
        if not ctx.is_main:
            return last
        save_checkpoint(
            last, net, spec, games=games_done, step=step, config=conf, optimizer=opt, extra=extra
        )
        if tag and tr.keep_checkpoints:
            save_checkpoint(
                ckpt_dir / f"games_{games_done:09d}.pt",
                net,
                spec,
                games=games_done,
                step=step,
                config=conf,
                extra={"history": history},
            )
        return last

    def evaluate(n_games: int, tag: str) -> float:
        from nard_rl.players import make_player
        from nard_rl.players.net import NetworkPlayer

        net.eval()
        me = NetworkPlayer(net, spec, rules=rules, device=device, name="net")
        res = play_match(
            me, make_player("pubeval"), n_games, seed=12345, rules=rules, shard=ctx.enabled
        )
        net.train()
        writer.add_scalar(f"eval/{tag}_ppg_vs_pubeval", res.ppg, games_done)
        writer.add_scalar(f"eval/{tag}_ci95", res.ci95, games_done)
        writer.add_scalar(f"eval/{tag}_win_rate", res.win_rate, games_done)
        if ctx.is_main:
            _say(f"[{games_done:,} games] {res.summary()}")
        return res.ppg

    next_ckpt = (games_done // tr.checkpoint_every + 1) * tr.checkpoint_every
    next_eval = (games_done // tr.eval_every + 1) * tr.eval_every if tr.eval_every else None
    bar = progress_bar(total, initial=min(games_done, total), unit="game", disable=not ctx.is_main)
    t_log = time.perf_counter()
    g_log = games_done
    loss_acc, n_acc = 0.0, 0
    net.train()
    failed = True
    try:
        while games_done < total:
            for group in opt.param_groups:
                group["lr"] = lr_at(games_done)
            st = sp.step(net, opt)
            step += 1
            # the game count is global: every rank takes the same checkpoint/eval branches
            finished, loss = ctx.all_sum([st.finished, st.loss])
            finished = int(finished)
            loss_acc += loss / ctx.world_size
            n_acc += 1
            if finished:
                games_done += finished
                bar.update(min(finished, max(0, total - bar.n)))
            if step % tr.log_every == 0:
                now = time.perf_counter()
                gps = (games_done - g_log) / max(1e-9, now - t_log)
                writer.add_scalar("train/td_loss", loss_acc / max(1, n_acc), games_done)
                writer.add_scalar("train/games_per_second", gps, games_done)
                writer.add_scalar("train/lr", lr_at(games_done), games_done)
                writer.add_scalar("train/candidates_per_ply", st.candidates, games_done)
                bar.set_postfix(loss=f"{loss_acc / max(1, n_acc):.4f}")  # the speed: the bar's own
                t_log, g_log, loss_acc, n_acc = now, games_done, 0.0, 0
            if games_done >= next_ckpt:
                checkpoint(tag="periodic")
                next_ckpt += tr.checkpoint_every
            if next_eval is not None and games_done >= next_eval and games_done < total:
                evaluate(tr.eval_games, "periodic")
                next_eval += tr.eval_every
        failed = False
    finally:
        bar.close()
        # one process saves what it has on any exit (an interrupt keeps its games); ranks
        # of a job that failed save nothing: the checkpoint's gathers are collectives
        if not (failed and ctx.enabled):
            last = checkpoint()
    final_ppg = None
    if tr.final_eval_games:
        final_ppg = evaluate(tr.final_eval_games, "final")
    writer.add_hparams(
        {
            "hidden": str(spec.hidden),
            "encoding": spec.encoding,
            "lr": tr.lr,
            "parallel_games": tr.parallel_games,
            "games": games_done,
        },
        {"hparam/ppg_vs_pubeval": final_ppg if final_ppg is not None else float("nan")},
    )
    writer.close()
    if ctx.is_main:
        _say(f"checkpoint: {last}")
    return last
