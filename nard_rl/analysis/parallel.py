"""Analysing many games at once: in this process, or in ``workers`` processes that each
load the evaluator once (a game is the unit of work, so a long match spreads too)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from nard_rl.analysis.core import GameAnalysis, MatchAnalyser, MatchAnalysis, Settings
from nard_rl.records.model import ReplayedGame, ReplayedMatch
from nard_rl.util.progress import progress_bar

_WORKER: MatchAnalyser | None = None


def _init(net: str, settings: Settings) -> None:
    global _WORKER
    import torch

    torch.set_num_threads(1)  # one core per worker: the processes are the parallelism
    _WORKER = MatchAnalyser.load(net, settings)


def _one(game: ReplayedGame, length: int) -> GameAnalysis:
    assert _WORKER is not None
    return _WORKER.analyse_game(game, length)


def analyse_matches(
    matches: Sequence[ReplayedMatch],
    *,
    net: str = "default",
    ply: int = 1,
    cube_ply: int | None = None,
    workers: int = 1,
    analyser: MatchAnalyser | None = None,
    progress: bool = True,
) -> list[MatchAnalysis]:
    """Every game of every match analysed, with a progress bar over the games."""
    settings = Settings(ply, cube_ply)
    jobs = [(m, rg) for m in matches for rg in m.games]
    results: dict[tuple[int, int], GameAnalysis] = {}
    bar = progress_bar(total=len(jobs), desc="analyse", unit="game", disable=not progress)
    try:
        if workers <= 1 or len(jobs) <= 1:
            an = analyser or MatchAnalyser.load(net, settings)
            for mi, m in enumerate(matches):
                for gi, rg in enumerate(m.games):
                    results[mi, gi] = an.analyse_game(rg, m.length)
                    bar.update(1)
        else:
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")  # no torch state forked mid-thread
            with ProcessPoolExecutor(
                min(workers, len(jobs)),
                mp_context=ctx,
                initializer=_init,
                initargs=(net, settings),
            ) as pool:
                futures = {
                    pool.submit(_one, rg, m.length): (mi, gi)
                    for mi, m in enumerate(matches)
                    for gi, rg in enumerate(m.games)
                }
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    return [
        MatchAnalysis(
            m.source,
            m.length,
            m.names,
            [results[mi, gi] for gi in range(len(m.games))],
            settings,
            net,
        )
        for mi, m in enumerate(matches)
    ]
