"""The generation loop: label with the current net, fit, gate, repeat.

On-disk layout of a run (``<out_dir>/<name>/``), which is also its resume state:

* ``best.pt``: the current accepted net (generation 0 is a copy of ``init``); it labels
  and is gated against by the next generation;
* ``gen_NNN/shards/shard_*.npz``: the generation's labelled positions;
* ``gen_NNN/candidate.pt``: the fitted candidate;
* ``gen_NNN/gate.json``: the gate match and its verdict, written last: a generation with
  this file is finished (an accepted candidate has been copied to ``best.pt`` and to
  ``gen_NNN.pt`` before it).

Every stage skips what is already on disk, so a killed run is resumed by running the
same command again with ``resume=auto`` (without it, ``stage=all`` refuses a name that
holds a run; ``nard_rl.util.runlock`` also stops two processes sharing one).
``stage=label shard=k num_shards=K`` only labels shard k of K of the current generation
(for several processes or ranks); ``stage=fit`` and ``stage=gate`` then finish it.  Under
``torchrun``, ``stage=label`` gives each rank its shards and ``stage=fit`` fits
data-parallel on all ranks (rank 0 writes the candidate); the gate runs in one process.
Each stage appends an entry to the checkpoint's ``extra.history`` (the
same list TD training keeps its run configs in), so a shipped net tells how it was made.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nard_rl.nets.evaluator import load_evaluator
from nard_rl.nets.network import NetSpec, load_network, resolve_device, save_checkpoint
from nard_rl.training.config import RulesConfig
from nard_rl.training.distributed import DistContext, init_distributed, torchrun_env, weights_digest
from nard_rl.training.supervised.dataset import load_dataset, merge_rows
from nard_rl.training.supervised.fit import FitConfig, fit, grow_net, load_rows
from nard_rl.training.supervised.gate import (
    GateConfig,
    commit_verdict,
    finish_verdict,
    gate,
    holds_entry,
)
from nard_rl.training.supervised.label import (
    AnchorConfig,
    LabelConfig,
    anchor_rows,
    label_shard,
    read_shard,
    shard_path,
)
from nard_rl.util.runlock import RunLock, refuse_existing

BEST = "best.pt"
CANDIDATE = "candidate.pt"
GATE = "gate.json"
STAGES = ("all", "label", "fit", "gate", "promote")


@dataclass
class StudentConfig:
    """Shape of the nets the pipeline fits; unset fields keep the teacher's."""

    encoding: str | None = None
    """Input encoding (must extend the teacher's to start from it, e.g. contact)."""
    hidden: list[int] | None = None
    """Hidden layer widths."""
    activation: str | None = None
    """Hidden activation."""
    head: str | None = None
    """Output head: sigmoid5 (five chained sigmoids) or softmax6 (six outcome classes);
    another head than the teacher's needs fit.init=scratch."""


@dataclass
class PipelineConfig:
    label: LabelConfig = field(default_factory=LabelConfig)
    """Collection and labelling of each generation's positions."""
    fit: FitConfig = field(default_factory=FitConfig)
    """Supervised fitting."""
    anchors: AnchorConfig = field(default_factory=AnchorConfig)
    """Rows of the plays labels skip, labelled by the teacher at fit time (see
    ``nard_rl.training.supervised.label.anchor_rows``)."""
    gate: GateConfig = field(default_factory=GateConfig)
    """Acceptance match against the previous generation."""
    student: StudentConfig = field(default_factory=StudentConfig)
    """Network shape of the fitted generations."""
    name: str = "supervised"
    """Run name: everything goes to <out_dir>/<name>/."""
    out_dir: str = "runs"
    """Folder holding the runs."""
    init: str = "default"
    """Generation 0: a checkpoint path, or default (the shipped net)."""
    generations: int = 1
    """Generation number to stop after (a resumed run continues up to it)."""
    stage: str = "all"
    """all, or one stage of the current generation: label, fit or gate; or promote (accept
    the last gated generation's rejected candidate by hand, with a ``note``)."""
    note: str | None = None
    """With stage=promote: why the rejected candidate is accepted (kept in its history)."""
    shard: int = 0
    """With stage=label: which worker this is (labels shards i with i % num_shards == shard)."""
    num_shards: int = 1
    """With stage=label: how many workers share the labelling."""
    rules: RulesConfig = field(default_factory=RulesConfig)
    """Rule set of the games and equities (the group ``rules=mars``, as in ``nard train``)."""
    seed: int = 0
    """Seed of collection dice, noise and fitting; the same seed repeats a run."""
    device: str = "cpu"
    """Torch device of the labelling teacher's net and of fitting: auto, cpu, cuda or
    cuda:N (move generation, the race net and the gate stay on the CPU)."""
    threads: int = 0
    """torch CPU threads (0: leave torch's default)."""
    progress: bool = True
    """Progress bars on stderr (only shown on a terminal)."""
    resume: str | None = None
    """auto: continue the run under ``name`` where it stopped; without it, ``stage=all``
    on a name that already holds a run (a ``best.pt``) is refused."""
    dataset: str | None = None
    """The lasting dataset folder (``datasets`` in a checkout; see
    ``nard_rl.training.supervised.dataset``): each generation's shards are kept there once labelled,
    and fitting uses every row it holds for the rule set; null: the run's shards only."""


def _plain(cfg: Any) -> dict[str, Any]:
    if isinstance(cfg, dict):
        return cfg
    if isinstance(cfg, PipelineConfig):
        return asdict(cfg)
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def _rules(conf: dict[str, Any]) -> str:
    """The rule set's name; a plain string is accepted too (configs built in Python)."""
    rules = conf["rules"]
    return str(rules["name"] if isinstance(rules, dict) else rules)


def _history(ckpt: dict[str, Any]) -> list[dict[str, Any]]:
    extra = ckpt.get("extra", {})
    return list(extra.get("history", [{"from_games": 0, "config": ckpt.get("config", {})}]))


def _copy_checkpoint(src: Path, dst: Path, entry: dict[str, Any]) -> None:
    """``src``'s weights and counts at ``dst``, its history extended by ``entry``."""
    net, spec, ckpt = load_network(src)
    save_checkpoint(
        dst,
        net,
        spec,
        games=int(ckpt["games"]),
        step=int(ckpt["step"]),
        config=ckpt.get("config", {}),
        extra={"history": [*_history(ckpt), entry]},
    )


def _student_spec(teacher: NetSpec, student: dict[str, Any], rules: str) -> NetSpec:
    """The fitted net's spec: ``student``'s shape over the teacher's, and the run's rule
    set (a standard teacher fitted under ``rules=mars`` yields a mars net)."""
    from nard_rl.nets.encoding import get_encoding

    enc = get_encoding(student.get("encoding") or teacher.encoding)
    hidden = student.get("hidden")
    return NetSpec(
        encoding=enc.name,
        encoding_version=enc.version,
        inputs=enc.size,
        hidden=tuple(int(h) for h in hidden) if hidden else teacher.hidden,
        activation=student.get("activation") or teacher.activation,
        rules=rules,
        head=student.get("head") or teacher.head,
    )


def generation_dir(run: Path, g: int) -> Path:
    return run / f"gen_{g:03d}"


def current_generation(run: Path) -> int:
    """The first generation without a gate verdict."""
    g = 1
    while (generation_dir(run, g) / GATE).exists():
        g += 1
    return g


def _bars(conf: dict[str, Any]) -> bool:
    """Progress bars when the config allows them: live on a terminal, a line a minute in a
    log (``nard_rl.util.progress``), so a fit in the background shows it is moving."""
    return bool(conf["progress"])


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def claim_run(run: Path, conf: Mapping[str, Any]) -> RunLock | None:
    """Make ``run`` this process's (``nard_rl.util.runlock``): ``stage=all`` over a run that
    has begun needs ``resume=auto``; then the run's lock, except for labelling workers
    (``stage=label`` of several shards or ranks), which share a generation by design and
    write their own shard files.  Returns the lock to release (None: none taken)."""
    resume = conf.get("resume")
    if resume not in (None, "auto"):
        raise ValueError(f"resume must be auto or unset, got {resume!r}")
    stage = conf.get("stage", "all")
    if stage == "all" and not resume:
        refuse_existing(run, run / BEST, how_to_resume="resume=auto")
    rank, world, _, _ = torchrun_env()
    if rank != 0 or (stage == "label" and (world > 1 or int(conf.get("num_shards", 1)) > 1)):
        return None
    return RunLock(run).acquire()


def run_pipeline(cfg: Any) -> Path:
    """Run (or resume, with ``resume=auto``) the pipeline per ``cfg``; returns the path of
    the accepted net."""
    conf = _plain(cfg)
    if conf["stage"] not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {conf['stage']!r}")
    rank, world, _, _ = torchrun_env()
    if world > 1 and conf["stage"] not in ("label", "fit"):
        raise ValueError(
            "under torchrun only stage=label and stage=fit are shared between ranks; "
            "run stage=gate in one process afterwards"
        )
    lock = claim_run(Path(conf["out_dir"]) / conf["name"], conf)
    try:
        return _run_claimed(conf, rank, world)
    finally:
        if lock is not None:
            lock.release()


def _run_claimed(conf: dict[str, Any], rank: int, world: int) -> Path:
    ctx: DistContext | None = None
    if world > 1:
        if conf["stage"] == "label":
            # each rank labels shards i % WORLD_SIZE == RANK; shards are files and pure
            # functions of (seed, generation, i), so no process group is needed and the
            # labels equal one process's
            conf = {**conf, "shard": rank, "num_shards": world}
        else:
            ctx = init_distributed(conf["device"])  # data-parallel fit
    done = False
    try:
        out = _run_stages(conf, ctx)
        done = True
        return out
    finally:
        if ctx is not None:
            ctx.close(sync=done)


def _run_stages(conf: dict[str, Any], ctx: DistContext | None) -> Path:
    if conf["threads"]:
        torch.set_num_threads(int(conf["threads"]))
    run = Path(conf["out_dir"]) / conf["name"]
    run.mkdir(parents=True, exist_ok=True)
    best = run / BEST
    if conf["stage"] == "promote":  # acts on a finished gate; never starts a run
        return promote(run, conf.get("note"))
    if not best.exists():
        init = _init_path(conf["init"], _rules(conf))
        # the spec as given (``default`` or the user's path), not where it resolved to
        _copy_checkpoint(init, best, {"stage": "init", "from": conf["init"], "config": conf})
        _log(f"generation 0: {init}")
    last = current_generation(run) - 1
    if last >= 1:  # a crash between the last verdict and its copies: make them first
        gdir = generation_dir(run, last)
        finish_verdict(gdir / GATE, gdir / CANDIDATE, _gate_targets(run, last), _copy_checkpoint)
    label_cfg = LabelConfig(**conf["label"])
    fit_cfg = FitConfig(**conf["fit"])
    AnchorConfig(**conf.get("anchors", {}))  # bad settings stop the run now, not at its fit
    gate_cfg = GateConfig(**conf["gate"])
    while (g := current_generation(run)) <= int(conf["generations"]):
        gdir = generation_dir(run, g)
        shards = gdir / "shards"
        if conf["stage"] in ("all", "label"):
            evaluator = load_evaluator(
                str(best),
                rules=_rules(conf),
                race_net=label_cfg.race_net,
                device=str(resolve_device(conf["device"])),
            )
            _log(f"generation {g}: labelling shard {conf['shard']} of {conf['num_shards']}")
            label_shard(
                evaluator,
                shards,
                label_cfg,
                k=int(conf["shard"]),
                num=int(conf["num_shards"]),
                seed=int(conf["seed"]),
                generation=g,
                progress=None if conf["progress"] else False,
            )
            if conf["stage"] == "label":
                return best
        missing = [i for i in range(label_cfg.shards) if not shard_path(shards, i).exists()]
        if missing:
            raise RuntimeError(
                f"generation {g}: {len(missing)} of {label_cfg.shards} shards not labelled "
                f"yet (first missing: {shard_path(shards, missing[0])})"
            )
        cand = gdir / CANDIDATE
        if conf.get("dataset") and (not ctx or ctx.is_main):
            _deposit(run, g, best, shards, conf)
        if conf["stage"] in ("all", "fit") and not cand.exists():
            _fit_generation(run, g, best, cand, conf, fit_cfg, label_cfg, ctx)
            if conf["stage"] == "fit":
                return cand
        if conf["stage"] in ("all", "gate"):
            if not cand.exists():
                raise RuntimeError(f"generation {g}: no candidate at {cand}; run stage=fit")
            _gate_generation(run, g, best, cand, conf, gate_cfg)
            if conf["stage"] == "gate":
                return best
        if conf["stage"] != "all":
            return best
    return best


def promote(run: Path, note: str | None) -> Path:
    """Accept the last gated generation's candidate although its gate rejected it.

    A gate of two standard errors is a blunt instrument near the top: a candidate a hair
    ahead in play may be clearly better by outside measures (an expert program's
    judgement of its plays on fixed positions).  Promotion is that human override: it
    needs a ``note`` saying why, copies the candidate to ``best.pt`` and ``gen_NNN.pt``
    with a ``promote`` entry (the gate's verdict and the note) in its history, so the
    next generation is labelled by it and gated against it.  The gate's record is left as
    it was."""
    if not note or not note.strip():
        raise ValueError("stage=promote needs note=... saying why the candidate is accepted")
    g = current_generation(run) - 1
    if g < 1:
        raise RuntimeError(f"{run}: no gated generation to promote")
    gdir = generation_dir(run, g)
    verdict = json.loads((gdir / GATE).read_text())
    # both copies are made again unless best.pt holds the promotion: a crash between
    # them is finished by running the same command again
    if verdict.get("accepted") or holds_entry(run / BEST, "promote", g):
        raise RuntimeError(f"generation {g} is already accepted; nothing to promote")
    entry = {
        "stage": "promote",
        "generation": g,
        "note": note.strip(),
        **{k: verdict[k] for k in ("ppg", "se", "margin", "games") if k in verdict},
    }
    _copy_checkpoint(gdir / CANDIDATE, run / f"gen_{g:03d}.pt", entry)
    _copy_checkpoint(gdir / CANDIDATE, run / BEST, entry)
    _log(f"generation {g}: promoted by hand ({note.strip()})")
    return run / BEST


def teacher_name(run: Path, g: int, conf: dict[str, Any]) -> str:
    """A readable name for generation ``g``'s teacher (its hash is recorded beside it)."""
    if g == 1:
        init = str(conf["init"])
        return "nard-default" if init == "default" else Path(init).stem
    return f"{run.name}-gen{g - 1}"


def _deposit(run: Path, g: int, best: Path, shards: Path, conf: dict[str, Any]) -> None:
    """Keep generation ``g``'s shards in the lasting dataset (idempotent)."""
    from nard_rl.training.supervised.dataset import deposit, write_card

    paths = sorted(shards.glob("shard_*.npz"))
    folder = deposit(paths, conf["dataset"], teacher=teacher_name(run, g, conf), teacher_path=best)
    write_card(conf["dataset"])
    _log(f"generation {g}: {len(paths)} shards kept in {folder}")


def _init_path(spec: str, rules: str) -> Path:
    """Generation 0: ``default`` is the run's rule set's shipped net (``nard-mars.pt``
    under ``rules=mars``), anything else a checkpoint path."""
    from nard_rl.nets.paths import resolve_checkpoint

    try:
        return resolve_checkpoint(spec, rules)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"init={spec}: {exc}") from None


def _fit_generation(
    run: Path,
    g: int,
    best: Path,
    cand: Path,
    conf: dict[str, Any],
    fit_cfg: FitConfig,
    label_cfg: LabelConfig,
    ctx: DistContext | None = None,
) -> None:
    """Fit generation ``g``'s candidate: in this process, or on every rank of ``ctx``
    (each rank loads the rows and takes its part of each batch; rank 0 writes)."""
    if ctx is None:
        ctx = DistContext(device=resolve_device(conf["device"]))
    teacher_net, teacher_spec, ckpt = load_network(best)
    spec = _student_spec(teacher_spec, conf["student"], _rules(conf))
    seed = int(conf["seed"]) * 1000 + g
    if fit_cfg.init == "previous":
        net = grow_net(teacher_net, teacher_spec, spec, seed=seed)
    elif fit_cfg.init == "scratch":
        torch.manual_seed(seed)
        net = spec.build()
    else:  # a checkpoint: refit a net of another run (grown to the student's shape)
        start = Path(fit_cfg.init)
        if not start.is_file():
            raise ValueError(
                f"fit.init must be previous, scratch or a checkpoint file, got {fit_cfg.init!r}"
            )
        start_net, start_spec, _ = load_network(start)
        net = grow_net(start_net, start_spec, spec, seed=seed)
    first = max(1, g - fit_cfg.data_generations + 1)
    folders = [generation_dir(run, h) / "shards" for h in range(first, g + 1)]
    rows = load_rows(folders, rules=_rules(conf))
    if conf.get("dataset"):
        rows = merge_rows(rows, load_dataset(conf["dataset"], _rules(conf), first_id=len(folders)))
    anchor_cfg = AnchorConfig(**conf.get("anchors", {}))
    anchors = 0
    if anchor_cfg.rows:
        teacher = load_evaluator(str(best), rules=_rules(conf), race_net=label_cfg.race_net)
        made = anchor_rows(
            teacher,
            anchor_cfg.rows,
            np.random.default_rng([seed, 1]),
            label_cfg,
            per_decision=anchor_cfg.per_decision,
            ply=anchor_cfg.ply,
            replies=anchor_cfg.replies,
        )
        made["generation"] = np.full(
            made["boards"].shape[0], int(rows["generation"].max(initial=0)) + 1
        )
        anchors = made["boards"].shape[0]
        rows = merge_rows(rows, made)  # a labelled board keeps its label
    log = _log if ctx.is_main else lambda msg: None
    ranks = f" on {ctx.world_size} ranks" if ctx.enabled else ""
    log(
        f"generation {g}: fitting {spec.hidden} {spec.encoding} on "
        f"{len(rows['boards']):,} rows ({anchors:,} anchors){ranks}"
    )
    net, result = fit(
        net,
        spec,
        rows,
        fit_cfg,
        device=ctx.device,
        seed=seed,
        progress=_bars(conf),
        ctx=ctx,
    )
    log(
        f"generation {g}: held-out loss {result.initial_heldout_loss:.5f} -> "
        f"{result.best_heldout_loss:.5f} (equity rmse {result.heldout_equity_rmse:.4f}) "
        f"after {result.epochs:.1f} epochs, {result.seconds:.0f} s"
    )
    _, meta = read_shard(shard_path(folders[-1], 0))
    history = [
        *_history(ckpt),
        {
            "stage": "label",
            "generation": g,
            "teacher": str(best),
            "rows": len(rows["boards"]),
            "anchors": {**asdict(anchor_cfg), "made": anchors},
            "decisions": int(np.unique(rows["decision"] * 1000 + rows["generation"]).size),
            "disagree_rate": float(rows["disagree"].mean()),
            "data_generations": [str(f) for f in folders],
            "config": meta["label"],
        },
        {
            "stage": "fit",
            "generation": g,
            "world_size": ctx.world_size,
            "result": result.to_dict(),
            "config": asdict(fit_cfg),
        },
    ]
    # a collective: every rank's digest, all equal unless the ranks drifted apart
    distributed = {**ctx.metadata(), "weights_digests": ctx.gather_objects(weights_digest(net))}
    if ctx.is_main:
        save_checkpoint(
            cand,
            net,
            spec,
            games=int(ckpt["games"]),
            step=int(ckpt["step"]) + result.steps,
            config=conf,
            extra={"history": history, "generation": g, "distributed": distributed},
        )
    ctx.barrier()  # the other ranks return once the candidate exists


def _gate_generation(
    run: Path, g: int, best: Path, cand: Path, conf: dict[str, Any], gate_cfg: GateConfig
) -> None:
    _log(f"generation {g}: gate, {gate_cfg.games:,} games against the previous generation")
    verdict = gate(
        cand,
        best,
        gate_cfg,
        rules=_rules(conf),
        generation=g,
        progress=_bars(conf),
        race_net=bool(conf["label"]["race_net"]),
    )
    verdict["generation"] = g
    _log(
        f"generation {g}: {verdict['ppg']:+.4f} ppg +- {verdict['se']:.4f} (1 se) -> "
        + ("accepted" if verdict["accepted"] else "rejected")
    )
    # the verdict first, then the copies (gen_NNN.pt, best.pt): see gate.commit_verdict
    commit_verdict(
        generation_dir(run, g) / GATE, verdict, cand, _gate_targets(run, g), _copy_checkpoint
    )


def _gate_targets(run: Path, g: int) -> list[Path]:
    """Where an accepted generation ``g`` is copied, in order: its archive, then best.pt."""
    return [run / f"gen_{g:03d}.pt", run / BEST]
