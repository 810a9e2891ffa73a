"""``/v1/rollout``: rollouts as bounded background jobs that a client polls or cancels.

* ``POST /v1/rollout`` starts a job: ``{"id": ..., "status": "queued"}`` (202).  The body
  holds a position as ``/v1/hint`` reads it (``board``, ``position_id``, ``xgid`` or
  ``gnubg_id``; ``dice``, ``cube``, ``match``, ``jacoby``, ``rules``) and the rollout:
  ``mode`` (``position``, ``plays`` or ``cube``; default ``plays`` with dice, else
  ``position``), ``trials``, ``seed``, ``truncation`` (plies, null: to the end),
  ``ply`` (checker play inside the rollout, 0 or 1), ``variance_reduction`` (true,
  false or ``"auto"``), ``stop_at_race``, ``candidates`` (plays mode);
* ``GET /v1/rollout/{id}``: status, progress and, once done, the result (the JSON of
  ``nard rollout --json``, ``nard_rl.search.jobs.answer``);
* ``DELETE /v1/rollout/{id}``: cancels a queued or running job (it stops before the
  next ply of its trials); a finished job is forgotten.

Bounds, so that no client can occupy the server: a job's work (trials times the
positions it rolls out: the candidates of a play, the two branches of a cube rollout)
is limited (400 with the limit in the message beyond it), so is the number of jobs
queued or running at once (429 beyond), and finished jobs are kept for a while and
then dropped.  Jobs run on their
own thread pool, never on the event loop; the evaluator is the server's, whose calls
are serialised one forward pass at a time, so hints and games interleave with a
rollout's passes instead of waiting for the whole rollout.

The limits are the server settings ``rollout_max_trials``, ``rollout_max_jobs``,
``rollout_threads`` and ``rollout_keep_s`` where the configuration has them, else the
defaults below; ``app.state.rollout_limits`` (a ``RolloutLimits``) overrides both.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from nard_rl.search.jobs import (
    DEFAULT_CANDIDATES,
    MODES,
    Cancelled,
    RolloutTask,
    answer,
    plan,
    resolve_variance_reduction,
    run,
)
from nard_rl.search.rollout import RolloutSettings
from nard_rl.server.state import POSITION_FIELDS, state_from_request

router = APIRouter(tags=["rollout"])

ROLLOUT_FIELDS = (
    "mode",
    "trials",
    "seed",
    "truncation",
    "ply",
    "variance_reduction",
    "stop_at_race",
    "candidates",
)
STATE_FIELDS = (*POSITION_FIELDS, "dice", "cube", "match", "jacoby", "rules")


def task_from_request(
    request: Any,
    default_rules: str = "standard",
    defaults: RolloutSettings | None = None,
) -> RolloutTask:
    """One rollout request (the fields of ``nard_rl.server.state`` plus
    ``ROLLOUT_FIELDS``) as a task; ``ValueError`` names what is wrong.  ``defaults``
    supplies the settings a request leaves out.  Other fields are ignored, as ``nard
    hint --jsonl`` ignores them, and listed in the answer (``"ignored_fields"``), so a
    misspelt setting does not pass unnoticed."""
    if not isinstance(request, dict):
        raise ValueError("the request must be a JSON object")
    # other fields (a caller's own "id", hint's "top", a typo) are named in the answer
    ignored = tuple(sorted(set(request) - set(ROLLOUT_FIELDS) - set(STATE_FIELDS)))
    state = state_from_request(
        {k: v for k, v in request.items() if k in STATE_FIELDS}, default_rules
    )
    base = defaults or RolloutSettings()
    mode = request.get("mode")
    if mode is None:
        mode = "plays" if state.dice is not None else "position"
    if mode not in MODES:
        raise ValueError(f'"mode" must be one of {", ".join(MODES)}, got {mode!r}')
    board = state.position.array()
    vr = request.get("variance_reduction", "auto")
    if mode == "cube":  # a cubeful rollout: 0-ply play to the end or the truncation
        for key, plain in (("variance_reduction", (False, "auto")), ("stop_at_race", (False,))):
            if request.get(key, plain[0]) not in plain:
                raise ValueError(f'"{key}" is not available in a cube rollout')
        if request.get("ply", base.ply) != 0:
            raise ValueError('a cube rollout plays at 0-ply: "ply" must be 0')
        vr = False
    settings = RolloutSettings(
        trials=request.get("trials", base.trials),
        seed=request.get("seed", base.seed),
        truncation=request.get("truncation", base.truncation),
        stop_at_race=request.get("stop_at_race", base.stop_at_race),
        variance_reduction=resolve_variance_reduction(vr, board),
        stratify=base.stratify,
        ply=request.get("ply", base.ply),
    )
    return RolloutTask(
        board=state.position.board,
        rules=state.rules,
        mode=mode,
        dice=state.dice,
        cube=state.cube,
        match=state.match,
        settings=settings,
        candidates=request.get("candidates", DEFAULT_CANDIDATES),
        ignored=ignored,
    )


# --------------------------------------------------------------------------------------
# jobs


@dataclass(frozen=True)
class RolloutLimits:
    max_trials: int = 46_656
    """Most trials one job plays: trials times the positions it rolls out (36 x 1,296)."""
    max_jobs: int = 4
    """Jobs queued or running at once (429 beyond)."""
    threads: int = 1
    """Jobs running at once (the others wait in order)."""
    keep_s: float = 600.0
    """Seconds a finished job's result stays available."""
    max_kept: int = 256
    """Finished jobs kept at most (the oldest are dropped first)."""


@dataclass
class RolloutJob:
    id: str
    task: RolloutTask
    total: int
    status: str = "queued"
    done: int = 0
    result: dict[str, Any] | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")

    def stopped(self) -> bool:
        """Cancelled, or the server is exiting (its main thread has ended: a job's
        thread must not keep the process alive until its rollout is done)."""
        return self.cancel.is_set() or not threading.main_thread().is_alive()

    def view(self) -> dict[str, Any]:
        end = self.finished or time.time()
        status = self.status
        if status == "running" and self.cancel.is_set():
            status = "cancelling"  # it stops before the next ply of its trials
        out: dict[str, Any] = {
            "id": self.id,
            "status": status,
            "mode": self.task.mode,
            "settings": self.task.settings.to_dict(),
            "progress": {
                "trials_done": self.done,
                "trials_total": self.total,
                "fraction": round(self.done / self.total, 4) if self.total else 1.0,
            },
            "elapsed_s": round(end - self.started, 3) if self.started else 0.0,
        }
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


class RolloutJobs:
    """The rollout jobs of one app and the threads that run them."""

    def __init__(self, analyzer: Any, limits: RolloutLimits) -> None:
        self.analyzer = analyzer
        self.limits = limits
        self.jobs: dict[str, RolloutJob] = {}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(
            max_workers=max(1, limits.threads), thread_name_prefix="nard-rollout"
        )

    def _prune(self) -> None:
        now = time.time()
        finished = sorted(
            (j for j in self.jobs.values() if not j.active), key=lambda j: j.finished or 0.0
        )
        for j in finished:
            if now - (j.finished or now) > self.limits.keep_s:
                del self.jobs[j.id]
        finished = [j for j in finished if j.id in self.jobs]
        for j in finished[: max(0, len(finished) - self.limits.max_kept)]:
            del self.jobs[j.id]

    def submit(self, task: RolloutTask) -> RolloutJob:
        evaluator = self.analyzer.evaluator(task.rules)
        rollout_plan = plan(task, evaluator)
        if rollout_plan.work > self.limits.max_trials:
            raise HTTPException(
                400,
                f"this rollout plays {rollout_plan.work} trials "
                f"({rollout_plan.afters.shape[0]} position(s) x {task.settings.trials}); "
                f"this server allows at most {self.limits.max_trials} per job",
            )
        with self.lock:
            self._prune()
            active = sum(j.active for j in self.jobs.values())
            if active >= self.limits.max_jobs:
                raise HTTPException(
                    429,
                    f"{active} rollout jobs are queued or running, the most this server "
                    "runs at once: wait for one to finish or cancel one",
                )
            job = RolloutJob(uuid.uuid4().hex[:16], task, rollout_plan.work)
            self.jobs[job.id] = job
        self.pool.submit(self._run, job, evaluator, rollout_plan)
        return job

    def _run(self, job: RolloutJob, evaluator: Any, rollout_plan: Any) -> None:
        if job.cancel.is_set():
            return
        job.status = "running"
        job.started = time.time()

        def progress(n: int) -> None:
            job.done += n

        try:
            values = run(evaluator, rollout_plan, progress=progress, stop=job.stopped)
            result = answer(rollout_plan, values)
            result["seconds"] = round(time.time() - job.started, 3)
            job.result = result
            job.status = "done"
        except Cancelled:
            job.status = "cancelled"
        except Exception as exc:  # a job's failure is reported by its job, not raised
            job.error = f"{type(exc).__name__}: {exc}"
            job.status = "failed"
        finally:
            job.finished = time.time()

    def get(self, job_id: str) -> RolloutJob:
        with self.lock:
            job = self.jobs.get(job_id)
        if job is None:
            raise HTTPException(404, f"no rollout job {job_id!r} (unknown, or expired)")
        return job

    def cancel(self, job_id: str) -> RolloutJob:
        job = self.get(job_id)
        if job.active:
            job.cancel.set()
            if job.status == "queued":
                job.status = "cancelled"
                job.finished = time.time()
        else:
            with self.lock:
                self.jobs.pop(job_id, None)
        return job

    def close(self) -> None:
        for job in list(self.jobs.values()):
            job.cancel.set()
        self.pool.shutdown(wait=False, cancel_futures=True)


def limits_of(app: Any) -> RolloutLimits:
    """The app's rollout limits: ``app.state.rollout_limits``, else the configuration's
    ``rollout_*`` settings where it has them, else the defaults."""
    given = getattr(app.state, "rollout_limits", None)
    if isinstance(given, RolloutLimits):
        return given
    cfg = getattr(app.state, "config", None)
    d = RolloutLimits()
    return RolloutLimits(
        max_trials=int(getattr(cfg, "rollout_max_trials", d.max_trials)),
        max_jobs=int(getattr(cfg, "rollout_max_jobs", d.max_jobs)),
        threads=int(getattr(cfg, "rollout_threads", d.threads)),
        keep_s=float(getattr(cfg, "rollout_keep_s", d.keep_s)),
    )


_CREATE = threading.Lock()


def jobs_of(request: Request) -> RolloutJobs:
    """The app's job store, made on first use."""
    app = request.app
    with _CREATE:
        store = getattr(app.state, "rollout_jobs", None)
        if store is None:
            store = RolloutJobs(app.state.analyzer, limits_of(app))
            app.state.rollout_jobs = store
    return store


@router.post("/v1/rollout", status_code=202)
async def start_rollout(request: Request) -> JSONResponse:
    """Start a rollout job (see the module docstring for the body)."""
    try:
        body = await request.json()
    except ValueError:
        raise HTTPException(400, "the body must be a JSON object") from None
    cfg = getattr(request.app.state, "config", None)
    task = task_from_request(body, getattr(cfg, "rules", "standard"))
    store = jobs_of(request)
    job = await _off_loop(store.submit, task)
    return JSONResponse({"id": job.id, "status": job.status}, status_code=202)


async def _off_loop(fn: Any, *args: Any) -> Any:
    """Planning ranks the candidate plays with the net: a short call, off the loop."""
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


@router.get("/v1/rollout/{job_id}")
async def rollout_state(job_id: str, request: Request) -> JSONResponse:
    """A job's status and progress, and its result once done."""
    return JSONResponse(jobs_of(request).get(job_id).view())


@router.delete("/v1/rollout/{job_id}")
async def cancel_rollout(job_id: str, request: Request) -> JSONResponse:
    """Cancel a queued or running job; forget a finished one."""
    return JSONResponse(jobs_of(request).cancel(job_id).view())
