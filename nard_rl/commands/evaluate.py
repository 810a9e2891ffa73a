"""``nard evaluate``: duplicate-dice matches between players, or a tournament over a run's
checkpoints.

Two modes:

* ``nard evaluate A B --games N``: one match; prints A's points per game with its 95%
  confidence interval and the win / gammon / backgammon rates (``--json``: one JSON
  object on stdout, the progress bar stays on stderr).
* ``nard evaluate --round-robin DIR --games N --out OUT``: every checkpoint ``*.pt`` in
  DIR plus the ``--include`` baselines play each other once (n(n-1)/2 matches); with
  ``--vs pubeval`` (or any comma list) each checkpoint only plays those references, which
  costs n matches per reference instead and is enough to chart progress over a run.
  Writes ``results.md``, ``results.csv`` and ``strength.png`` to OUT after every match.

Every match uses the same seed, so checkpoints meet the same dice streams.  Players
are spec strings (see ``nard_rl.players.make_player``); network players run on
``--device``.  Setup errors (unknown player, missing checkpoint, gnubg absent, bad
arguments) exit with status 2 and a message on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from nard_rl.arena.matches import MatchResult, match_result, play_match, play_pairs
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.players.base import Player, make_player
from nard_rl.util.progress import progress_bar

NAME = "evaluate"
HELP = "Play duplicate-dice matches between players, or a tournament over checkpoints."
PROG = "nard evaluate"

DEFAULT_GAMES = 1000
DEFAULT_INCLUDE = "pubeval"
TOURNAMENT_SUBDIR = "tournament"
MAX_BATCH_PAIRS = 512
MIN_BATCH_PAIRS = 32
PROGRESS_STEPS = 20
"""Aim for about this many progress-bar updates per match (play_match reports per batch)."""

SETUP_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    RuntimeError,
    OSError,
    EOFError,
    pickle.UnpicklingError,
)
"""What building a player or reading a checkpoint raises for bad input (unknown spec,
missing or corrupt file, gnubg absent): reported as usage errors, not tracebacks."""


class UsageError(Exception):
    """Bad arguments or players: exit status 2 with the message on stderr."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "players",
        nargs="*",
        metavar="PLAYER",
        help="two player specs A B: random, pubeval, gnubg, gnubg:PLY, default (the shipped "
        "net) or a checkpoint path ending in .pt; ppg is reported for A",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=DEFAULT_GAMES,
        help="games per match, rounded up to an even number: each dice stream is played "
        "twice with the sides swapped (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="dice seed (default: %(default)s)")
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--device",
        default="cpu",
        help="torch device for network players: cpu, cuda, cuda:N or auto (default: cpu)",
    )
    parser.add_argument(
        "--batch-pairs",
        type=int,
        default=MAX_BATCH_PAIRS,
        help="most game pairs played side by side (default: %(default)s; smaller for "
        "short matches so the progress bar moves)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="play each match in this many local processes, merged into the same result as "
        "one process (deterministic players; under torchrun the ranks share the pairs "
        "instead) (default: %(default)s)",
    )
    cube = parser.add_argument_group("with the doubling cube (duplicate dice too)")
    cube.add_argument(
        "--cube",
        action="store_true",
        help="money games with the cube: points per game with the stakes (nets decide the "
        "cube with nard_rl.cube.cubeful, gnubg with its own cubeful analysis at its ply)",
    )
    cube.add_argument(
        "--match",
        type=int,
        default=0,
        metavar="L",
        help="play --games matches to L points with the cube: match win rate of A",
    )
    for side in ("a", "b"):
        cube.add_argument(
            f"--cube-by-{side}",
            metavar="NET",
            help=f"player {side.upper()}'s cube decisions by this net ('default' or a "
            f"checkpoint) instead of its own, e.g. to compare cube models behind the same "
            f"checker play",
        )
    cube.add_argument(
        "--cube-ply",
        type=int,
        default=1,
        help="lookahead of the nets' pre-roll probabilities for cube decisions (default: 1)",
    )
    rr = parser.add_argument_group("tournament mode")
    rr.add_argument(
        "--round-robin",
        metavar="DIR",
        help="play every checkpoint *.pt in DIR (e.g. a run's checkpoints/ folder) and the "
        "--include baselines against each other",
    )
    rr.add_argument(
        "--include",
        default=DEFAULT_INCLUDE,
        metavar="SPECS",
        help="comma-separated baseline players joining the tournament (default: "
        "%(default)s; '' for none)",
    )
    rr.add_argument(
        "--vs",
        nargs="?",
        const=DEFAULT_INCLUDE,
        default=None,
        metavar="SPECS",
        help="only play each checkpoint against these comma-separated references (default "
        "when given without a value: pubeval) instead of all pairs: n matches per "
        "reference instead of n(n-1)/2; references are added to --include",
    )
    rr.add_argument(
        "--out",
        metavar="OUTDIR",
        help=f"where results.md, results.csv and strength.png go (default: "
        f"DIR/{TOURNAMENT_SUBDIR})",
    )


# --- players --------------------------------------------------------------------------


def is_network_spec(spec: str) -> bool:
    return spec.endswith(".pt") or spec == "default"


def check_device(device: str) -> str:
    """Fail early on a device this machine lacks (only torch when a GPU is asked for)."""
    if device == "cpu":
        return device
    from nard_rl.nets.network import resolve_device

    return str(resolve_device(device))


def build_player(spec: str, *, rules: RuleSet, seed: int | None, device: str = "cpu") -> Player:
    """``make_player``, except that network players are placed on ``device``."""
    if device == "cpu" or not is_network_spec(spec):
        return make_player(spec, rules=rules, seed=seed)
    from nard_rl.commands.common import load_net_player

    return load_net_player(spec, rules=rules, device=device)


def batch_pairs_for(games: int, limit: int) -> int:
    """Pairs per block: big blocks batch better, but play_match reports progress only
    per block, so short matches use smaller ones."""
    pairs = max(1, math.ceil(games / 2))
    return max(1, min(limit, max(MIN_BATCH_PAIRS, math.ceil(pairs / PROGRESS_STEPS))))


def even_games(games: int) -> int:
    return 2 * max(1, math.ceil(games / 2))


def run_match(
    spec_a: str,
    spec_b: str,
    args: argparse.Namespace,
    rules: RuleSet,
    *,
    name_a: str | None = None,
    name_b: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> MatchResult:
    """Build both players, play, and always close them (gnubg runs as a process).

    Player construction errors surface as ``UsageError``.
    """
    players: list[Player] = []
    try:
        try:
            for k, spec in enumerate((spec_a, spec_b)):
                players.append(
                    build_player(spec, rules=rules, seed=args.seed + k, device=args.device)
                )
        except SETUP_ERRORS as exc:
            raise UsageError(str(exc) or type(exc).__name__) from exc
        batch_pairs = batch_pairs_for(args.games, args.batch_pairs)
        distributed = getattr(args, "distributed", False)
        if getattr(args, "workers", 1) > 1 and not distributed:
            for player in players:  # built above only to fail early; workers build their own
                player.close()
            players = []
            return _match_in_workers(
                spec_a,
                spec_b,
                args,
                rules,
                batch_pairs,
                name_a or spec_a,
                name_b or spec_b,
                progress,
            )
        return play_match(
            players[0],
            players[1],
            args.games,
            seed=args.seed,
            rules=rules,
            batch_pairs=batch_pairs,
            progress=progress,
            name_a=name_a or spec_a,
            name_b=name_b or spec_b,
            shard=distributed,
        )
    finally:
        for player in players:
            player.close()


_WORKER_PLAYERS: dict[tuple[str, str, str, int, str], tuple[Player, Player]] = {}
"""Players of a worker process, built on its first chunk and kept for the next ones."""


def _worker_pairs(
    spec_a: str, spec_b: str, rules: str, seed: int, device: str, batch_pairs: int, lo: int, hi: int
) -> Any:
    """Pairs ``lo..hi-1`` in a worker process (module level, so the pool can pickle it)."""
    key = (spec_a, spec_b, rules, seed, device)
    if key not in _WORKER_PLAYERS:
        from multiprocessing import util

        ruleset = get_rules(rules)
        pair = tuple(
            build_player(spec, rules=ruleset, seed=seed + k, device=device)
            for k, spec in enumerate((spec_a, spec_b))
        )
        _WORKER_PLAYERS[key] = pair  # type: ignore[assignment]
        for player in pair:  # gnubg processes end with the worker
            util.Finalize(player, player.close, exitpriority=10)
    a, b = _WORKER_PLAYERS[key]
    return play_pairs(a, b, lo, hi, seed=seed, rules=rules, batch_pairs=batch_pairs)


def _match_in_workers(
    spec_a: str,
    spec_b: str,
    args: argparse.Namespace,
    rules: RuleSet,
    batch_pairs: int,
    name_a: str,
    name_b: str,
    progress: Callable[[int], None] | None,
) -> MatchResult:
    import functools
    import time

    from nard_rl.arena.matches import play_pairs_sharded

    t0 = time.perf_counter()
    play = functools.partial(
        _worker_pairs, spec_a, spec_b, rules.name, args.seed, args.device, batch_pairs
    )
    points = play_pairs_sharded(
        play,
        even_games(args.games) // 2,
        batch_pairs=batch_pairs,
        workers=args.workers,
        progress=progress,
    )
    elapsed = time.perf_counter() - t0
    return match_result(
        points, name_a=name_a, name_b=name_b, seed=args.seed, rules=rules, elapsed=elapsed
    )


def jsonable(value: Any) -> Any:
    """Strict JSON: a non-finite float (the CI of a single pair) becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def format_result(r: MatchResult) -> str:
    lo, hi = r.ppg - r.ci95, r.ppg + r.ci95
    return "\n".join(
        [
            f"{r.player_a} vs {r.player_b}: {r.games} games, {r.rules} rules, seed {r.seed}",
            f"points per game for {r.player_a}: {r.ppg:+.3f}  (95% CI {lo:+.3f} .. {hi:+.3f})",
            f"  wins              {r.win_rate:7.1%}",
            f"  gammons won       {r.gammon_rate:7.1%}",
            f"  backgammons won   {r.backgammon_rate:7.1%}",
            f"  gammons lost      {r.lose_gammon_rate:7.1%}",
            f"  backgammons lost  {r.lose_backgammon_rate:7.1%}",
            f"speed: {r.games_per_second:,.1f} games/s",
        ]
    )


# --- modes ----------------------------------------------------------------------------


def _progress_bar(total: int, args: argparse.Namespace, desc: str) -> tqdm:
    return progress_bar(total, unit="game", desc=desc, disable=args.no_progress)


def run_single(args: argparse.Namespace, rules: RuleSet) -> int:
    if len(args.players) != 2:
        raise UsageError(
            f"give exactly two players A B (got {len(args.players)}), or --round-robin DIR"
        )
    spec_a, spec_b = args.players
    with _progress_bar(even_games(args.games), args, f"{spec_a} vs {spec_b}") as bar:
        result = run_match(
            spec_a, spec_b, args, rules, progress=lambda done: bar.update(done - bar.n)
        )
    if args.json:
        payload = {"spec_a": spec_a, "spec_b": spec_b, **result.to_dict()}
        print(json.dumps(jsonable(payload), allow_nan=False))
    else:
        print(format_result(result))
    return 0


def run_cubeful(args: argparse.Namespace, rules: RuleSet) -> int:
    """``--cube`` / ``--match L``: ``nard_rl.arena.cubegames.play_cubeful`` between A and B."""
    from nard_rl.arena.cubegames import cube_policy, make_cube_bot, play_cubeful

    if args.round_robin is not None or len(args.players) != 2:
        raise UsageError("--cube and --match take exactly two players A B (no --round-robin)")
    if args.match < 0:
        raise UsageError(f"--match must be a match length >= 1, got {args.match}")
    spec_a, spec_b = args.players
    try:
        bots = [
            make_cube_bot(spec, rules=rules, cube_ply=args.cube_ply, seed=args.seed + k)
            for k, spec in enumerate((spec_a, spec_b))
        ]
        for bot, net in zip(bots, (args.cube_by_a, args.cube_by_b), strict=True):
            if net:
                bot.cube = cube_policy(net, rules=rules, cube_ply=args.cube_ply)
                bot.name = f"{bot.name} (cube: {net})"
    except SETUP_ERRORS as exc:
        raise UsageError(str(exc)) from exc
    try:
        with _progress_bar(even_games(args.games), args, f"{spec_a} vs {spec_b}") as bar:
            result = play_cubeful(
                bots[0],
                bots[1],
                args.games,
                match_length=args.match,
                seed=args.seed,
                rules=rules,
                batch_pairs=min(args.batch_pairs, 128),
                progress=lambda done: bar.update(done - bar.n),
            )
    finally:
        for bot in bots:
            bot.close()
    if args.json:
        print(json.dumps(jsonable({"spec_a": spec_a, "spec_b": spec_b, **result.to_dict()})))
    else:
        print(result.summary())
    return 0


def run_round_robin(args: argparse.Namespace, rules: RuleSet) -> int:
    from nard_rl.arena import tournament as tn

    if args.players:
        raise UsageError("--round-robin takes no player arguments (use --include)")
    folder = Path(args.round_robin)
    out = Path(args.out) if args.out else folder / TOURNAMENT_SUBDIR
    vs = tn.parse_spec_list(args.vs) if args.vs is not None else None
    if vs is not None and not vs:
        raise UsageError("--vs needs at least one reference player")
    try:
        checkpoints = tn.find_checkpoints(folder)
    except SETUP_ERRORS as exc:
        raise UsageError(str(exc) or type(exc).__name__) from exc
    names = {c.name for c in checkpoints}
    baselines = tn.parse_spec_list(args.include)
    baselines += [ref for ref in vs or [] if ref not in names and ref not in baselines]
    try:
        entrants = tn.make_entrants(checkpoints, baselines)
        pairs = tn.schedule(entrants, vs)
        for spec in baselines:  # fail now, not hours into the tournament
            build_player(spec, rules=rules, seed=args.seed, device=args.device).close()
    except SETUP_ERRORS as exc:
        raise UsageError(str(exc) or type(exc).__name__) from exc
    if not pairs:
        raise UsageError(
            f"nothing to play: {len(checkpoints)} checkpoint(s) in {folder} and "
            f"{len(baselines)} baseline(s)"
        )
    settings: dict[str, object] = {
        "checkpoints": str(folder),
        "mode": "round robin" if vs is None else f"checkpoints vs {', '.join(vs)}",
        "games per match": even_games(args.games),
        "rules": rules.name,
        "seed": args.seed,
    }
    per_match = even_games(args.games)
    results: list[MatchResult] = []
    paths: dict[str, Path] = {}
    with _progress_bar(per_match * len(pairs), args, "tournament") as bar:
        for a, b in pairs:
            base = bar.n
            bar.set_postfix_str(f"{a.name} vs {b.name}")
            result = run_match(
                a.spec,
                b.spec,
                args,
                rules,
                name_a=a.name,
                name_b=b.name,
                progress=lambda done, base=base: bar.update(base + done - bar.n),
            )
            results.append(result)
            bar.write(result.summary(), file=sys.stderr)
            if not args.distributed or args.rank == 0:  # one writer per job
                paths = tn.write_outputs(out, entrants, results, vs=vs, settings=settings)
    if args.json:
        payload = {
            "mode": "round-robin" if vs is None else "vs",
            "vs": vs,
            "entrants": [asdict(e) for e in entrants],
            "results": [r.to_dict() for r in results],
            "standings": [asdict(s) for s in tn.standings(entrants, results)],
            "outputs": {k: str(p) for k, p in paths.items()},
        }
        print(json.dumps(jsonable(payload), allow_nan=False))
    else:
        print("\n".join(tn.standings_table(tn.standings(entrants, results))))
        print(f"\nwrote {', '.join(str(p) for p in paths.values())}")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        if args.games < 2:
            raise UsageError(f"--games must be at least 2 (one duplicate pair), got {args.games}")
        if args.batch_pairs < 1:
            raise UsageError(f"--batch-pairs must be at least 1, got {args.batch_pairs}")
        if args.workers < 1:
            raise UsageError(f"--workers must be at least 1, got {args.workers}")
        try:
            rules = get_rules(args.rules)
            args.device = check_device(args.device)
        except SETUP_ERRORS as exc:
            raise UsageError(str(exc)) from exc
        args.distributed, args.rank = False, 0
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # under torchrun: ranks share pairs
            return _run_as_rank(args, rules)
        if args.cube or args.match:
            return run_cubeful(args, rules)
        if args.round_robin is not None:
            return run_round_robin(args, rules)
        return run_single(args, rules)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2


def _run_as_rank(args: argparse.Namespace, rules: RuleSet) -> int:
    """One rank of ``torchrun ... -m nard_rl evaluate``: every rank plays its share of each
    match, rank 0 alone prints and writes."""
    import contextlib
    import io

    from nard_rl.training.distributed import init_distributed

    ctx = init_distributed(args.device)
    args.distributed, args.rank = ctx.enabled, ctx.rank
    args.device = str(ctx.device)
    try:
        if not ctx.is_main:
            args.no_progress = True
        quiet = contextlib.redirect_stdout(io.StringIO()) if not ctx.is_main else None
        with quiet or contextlib.nullcontext():
            if args.round_robin is not None:
                return run_round_robin(args, rules)
            return run_single(args, rules)
    finally:
        ctx.close()


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Stand-alone entry point (``scripts/evaluate.py``): the same arguments as
    ``nard evaluate``."""
    parser = argparse.ArgumentParser(prog=prog, description=HELP)
    add_arguments(parser)
    return run(parser.parse_args(argv))
