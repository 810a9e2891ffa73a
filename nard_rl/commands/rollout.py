"""``nard rollout``: roll out a position, its candidate plays for a roll, or its cube
decision, with standard errors (``nard_rl.search.jobs``, ``nard_rl.search.rollout``).

``--jsonl`` answers request lines on stdin, one answer line each in the input order,
whatever a line holds (``{"error": ...}`` for one that cannot be rolled out): the fields
of ``nard hint --jsonl`` plus ``mode``, ``trials``, ``seed``, ``truncation``, ``ply``,
``variance_reduction``, ``stop_at_race`` and ``candidates``; the options give the
defaults.  ``--workers N`` shares the trials among N processes: the dice of a trial
depend only on the seed, the position and the trial number, so the answers are the
same for any N.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from typing import Any, TextIO

from nard_rl.commands.common import add_cube_arguments, add_position_arguments

NAME = "rollout"
HELP = "Roll out a position, its candidate plays or its cube decision (with standard errors)."

_WORKER: dict[str, Any] = {}


def _truncation(text: str) -> int | None:
    if text.lower() in ("none", "end", "off"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"truncation must be a number of plies or 'none', got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"truncation must be >= 0 plies, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_position_arguments(parser)
    parser.add_argument("--dice", nargs=2, type=int, metavar=("D1", "D2"), help="the roll")
    add_cube_arguments(parser)
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--net", default="default", help="checkpoint path or 'default'")
    parser.add_argument(
        "--mode",
        choices=("position", "plays", "cube"),
        default=None,
        help="what to roll out: the position, the candidate plays of --dice, or the cube "
        "decision (default: plays with --dice, else position)",
    )
    parser.add_argument("--trials", type=int, default=1296, help="games per position")
    parser.add_argument("--seed", type=int, default=0, help="dice seed (default 0)")
    parser.add_argument(
        "--truncation",
        type=_truncation,
        default=None,
        metavar="PLIES|none",
        help="plies played before the net judges the position (default none: to the end)",
    )
    parser.add_argument(
        "--ply", type=int, default=0, choices=(0, 1), help="checker play inside the rollout"
    )
    parser.add_argument(
        "--vr",
        choices=("auto", "on", "off"),
        default="auto",
        help="luck-based variance reduction (auto: on with contact, off in races)",
    )
    parser.add_argument(
        "--stop-at-race",
        action="store_true",
        help="judge a trial at the first no-contact race (bear-off database, race net)",
    )
    parser.add_argument(
        "--candidates", type=int, default=5, help="plays rolled out in plays mode (best first)"
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--jsonl", action="store_true", help="answer JSON request lines on stdin")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _defaults(args: argparse.Namespace) -> Any:
    from nard_rl.search.rollout import RolloutSettings

    return RolloutSettings(
        trials=args.trials,
        seed=args.seed,
        truncation=args.truncation,
        stop_at_race=args.stop_at_race,
        ply=args.ply,
    )


def _request_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options as one request, so the command line and --jsonl read alike."""
    from nard_rl.commands.common import match_from_args, position_from_args

    position = position_from_args(args)
    match = match_from_args(args)
    req: dict[str, Any] = {
        "board": list(position.board),
        "rules": args.rules,
        "cube": {"value": args.cube, "owner": args.owner},
        "jacoby": bool(args.jacoby),
        "candidates": args.candidates,
        "variance_reduction": {"auto": "auto", "on": True, "off": False}[args.vr],
    }
    if args.dice is not None:
        req["dice"] = list(args.dice)
    if args.mode is not None:
        req["mode"] = args.mode
    if match is not None:
        req.pop("jacoby")
        req["match"] = {
            "length": match.length,
            "score": [match.score_me, match.score_opp],
            "crawford": match.crawford,
        }
    return req


# --------------------------------------------------------------------------------------
# running plans in this process or in workers


def _init_worker(net: str) -> None:
    import torch

    torch.set_num_threads(1)
    _WORKER["net"] = net
    _WORKER["evaluators"] = {}
    _WORKER["searches"] = {}


def _evaluator(name: str) -> Any:
    from nard_rl.nets.evaluator import load_evaluator

    evs = _WORKER["evaluators"]
    if name not in evs:
        evs[name] = load_evaluator(_WORKER["net"], rules=name)
    return evs[name]


def _work(rollout_plan: Any, lo: int, hi: int) -> Any:
    """One chunk of trials of one plan (in a worker process, or here); a failure comes
    back as its message, so that its line is answered and the others go on."""
    try:
        return _chunk(rollout_plan, lo, hi)
    except Exception as exc:  # every line gets an answer, even an unforeseen failure
        return f"{type(exc).__name__}: {exc}"


def _chunk(rollout_plan: Any, lo: int, hi: int) -> Any:
    from nard_rl.search.jobs import chunk_values
    from nard_rl.search.nply import Search

    name = rollout_plan.task.rules.name
    ev = _evaluator(name)
    search = None
    if rollout_plan.task.settings.ply == 1:
        search = _WORKER["searches"].setdefault(name, Search(ev))
    return chunk_values(ev, rollout_plan, lo, hi, search)


def run_plans(
    plans: list[Any], workers: int, net: str, *, quiet: bool = False, on_done: Any = None
) -> dict[int, Any]:
    """Every plan's trials ``(M, T, 5)`` by its index (``None`` entries are skipped; a
    plan whose rollout failed has its error message instead); ``on_done(i, values)`` as
    each plan completes, in index order."""
    import numpy as np

    from nard_rl.search.jobs import CHUNK_TRIALS, chunks
    from nard_rl.util.progress import progress_bar

    live = [i for i, p in enumerate(plans) if p is not None]
    # workers take whole requests when there are enough to go round (a chunk of a fast
    # bear-off costs less than sending it to a process), else chunks of trials
    size = CHUNK_TRIALS if workers <= 1 or len(live) < 2 * workers else None
    cut = {i: chunks(plans[i].trials, size or plans[i].trials) for i in live}
    units = [(i, lo, hi) for i in live for lo, hi in cut[i]]
    parts: dict[int, dict[int, Any]] = {i: {} for i in live}
    need = {i: len(cut[i]) for i in live}
    finished: dict[int, Any] = {}
    nxt = 0
    total = sum(p.work for p in plans if p is not None)
    bar = progress_bar(total, desc="rollout", unit="trial", disable=quiet)

    def flush() -> None:
        nonlocal nxt
        while nxt < len(plans):
            if plans[nxt] is not None and nxt not in finished:
                break
            if on_done is not None:
                on_done(nxt, finished.get(nxt))
            nxt += 1

    def store(i: int, lo: int, values: Any) -> None:
        if i not in parts:  # an earlier chunk of this plan failed
            return
        if isinstance(values, str):
            finished[i] = values
            del parts[i]
            flush()
            return
        parts[i][lo] = values
        bar.update(values.shape[0] * values.shape[1])
        if len(parts[i]) == need[i]:
            finished[i] = np.concatenate([parts[i][k] for k in sorted(parts[i])], axis=1)
            del parts[i]
        flush()

    try:
        flush()  # lines before the first one to roll out (errors) are answered at once
        if workers <= 1 or len(units) <= 1:
            if _WORKER.get("net") != net:
                _WORKER.update(net=net, evaluators={}, searches={})
            for i, lo, hi in units:
                store(i, lo, _work(plans[i], lo, hi))
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(
                max_workers=workers,
                mp_context=mp.get_context("spawn"),
                initializer=_init_worker,
                initargs=(net,),
            ) as pool:
                futures = {pool.submit(_work, plans[i], lo, hi): (i, lo) for i, lo, hi in units}
                for fut in as_completed(futures):
                    i, lo = futures[fut]
                    store(i, lo, fut.result())
        flush()
    finally:
        bar.close()
    return finished


# --------------------------------------------------------------------------------------
# front ends


def _plan_request(request: Any, args: argparse.Namespace, evaluators: dict[str, Any]) -> Any:
    from nard_rl.nets.evaluator import load_evaluator
    from nard_rl.search.jobs import plan
    from nard_rl.server.routes_rollout import task_from_request

    task = task_from_request(request, args.rules, _defaults(args))
    name = task.rules.name
    if name not in evaluators:
        evaluators[name] = load_evaluator(args.net, rules=name)
    return plan(task, evaluators[name])


def serve_jsonl(stdin: Iterable[str], stdout: TextIO, args: argparse.Namespace) -> int:
    """Answer every non-empty line of ``stdin``, in order."""
    from nard_rl.search.jobs import answer

    evaluators: dict[str, Any] = {}
    plans: list[Any] = []
    errors: dict[int, str] = {}
    for line in stdin:
        if not line.strip():
            continue
        i = len(plans)
        try:
            try:
                request = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"the line is not valid JSON: {exc}") from None
            plans.append(_plan_request(request, args, evaluators))
        except (ValueError, KeyError, TypeError) as exc:
            plans.append(None)
            errors[i] = str(exc) or type(exc).__name__

    def emit(i: int, values: Any) -> None:
        if plans[i] is None:
            out: dict[str, Any] = {"error": errors[i]}
        elif isinstance(values, str):
            out = {"error": f"the rollout failed: {values}"}
        else:
            try:
                out = answer(plans[i], values)
            except (ValueError, ArithmeticError) as exc:  # every line gets an answer
                out = {"error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
        stdout.flush()

    start = time.perf_counter()
    run_plans(plans, args.workers, args.net, quiet=args.quiet, on_done=emit)
    _report_speed(plans, time.perf_counter() - start, args)
    return 0


def _report_speed(plans: list[Any], seconds: float, args: argparse.Namespace) -> None:
    work = sum(p.work for p in plans if p is not None)
    if work and not args.quiet:
        print(
            f"nard rollout: {work} trials in {seconds:.1f} s ({work / max(seconds, 1e-9):.0f}"
            f" trials/s, {args.workers} worker(s))",
            file=sys.stderr,
        )


def _print_text(out: dict[str, Any]) -> None:
    s = out["settings"]
    trunc = "to the end" if s["truncation"] is None else f"truncated after {s['truncation']} plies"
    vr = "on" if s["variance_reduction"] else "off"
    print(
        f"Position ID {out['position_id']}: {out['trials']} trials, seed {s['seed']}, {trunc}, "
        f"{s['ply']}-ply play, variance reduction {vr}"
        + (", judged at the race" if s["stop_at_race"] else "")
    )

    def line(label: str, r: dict[str, Any]) -> str:
        p, e = r["probs"], r["probs_se"]

        def pm(k: str) -> str:
            se = e[k]
            return f"{p[k]:.4f}" + (f"±{se:.4f}" if se is not None else "")

        eq = f"{r['equity']:+.4f}" + (
            f"±{r['equity_se']:.4f}" if r["equity_se"] is not None else ""
        )
        return (
            f"{label:<24} win {pm('win')}  gammon {pm('win_gammon')}  bg {pm('win_backgammon')}"
            f" | lose gammon {pm('lose_gammon')}  bg {pm('lose_backgammon')}  equity {eq}"
        )

    if out["mode"] == "plays":
        print(f"Roll {out['dice'][0]}-{out['dice'][1]}, candidates ranked by {out['ranked_by']}:")
        for i, r in enumerate(out["plays"], start=1):
            diff = "" if i == 1 else f"  diff {r['diff']:+.4f}±{r['diff_se']:.4f}"
            print(f"{i:2d}. " + line(r["move"], r) + diff)
        return
    if out["mode"] == "position":
        print(line("Cubeless", out))
    else:
        c = out["cube_decision"]
        eqs, ses = c["equities"], c["equities_se"]
        for k in ("no_double", "double_take", "double_pass"):
            if eqs[k] is not None:
                se = "" if ses[k] is None else f" ± {ses[k]:.4f}"
                print(f"  {k.replace('_', ' '):<12} {eqs[k]:+.4f}{se}")
        take = "" if c["take"] is None else (", take" if c["take"] else ", pass")
        print(f"Proper cube action: {c['decision'].replace('_', ' ')}{take} (cubeful rollout)")


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        print("nard rollout: error: --workers must be >= 1", file=sys.stderr)
        return 2
    try:
        _defaults(args)  # reject bad options before reading any input
    except ValueError as exc:
        print(f"nard rollout: error: {exc}", file=sys.stderr)
        return 2
    if args.jsonl:
        try:
            return serve_jsonl(sys.stdin, sys.stdout, args)
        except (ValueError, OSError) as exc:
            print(f"nard rollout: error: {exc}", file=sys.stderr)
            return 2
    from nard_rl.search.jobs import answer

    try:
        p = _plan_request(_request_from_args(args), args, {})
        start = time.perf_counter()
        values = run_plans([p], args.workers, args.net, quiet=args.quiet)[0]
        seconds = time.perf_counter() - start
        if isinstance(values, str):
            raise ValueError(f"the rollout failed: {values}")
        out = answer(p, values)
    except (ValueError, OSError, json.JSONDecodeError) as exc:
        print(f"nard rollout: error: {exc}", file=sys.stderr)
        return 2
    out["seconds"] = round(seconds, 3)
    out["trials_per_s"] = round(p.work / max(seconds, 1e-9), 1)
    if args.json:
        print(json.dumps(out))
    else:
        _print_text(out)
    return 0
