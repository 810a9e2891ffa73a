"""Whole-game and whole-match analysis (``nard analyze``, ``POST /v1/analyze``): the
figures in ``nard_rl.analysis.core``, the reports (text, JSON, HTML with charts) in
``nard_rl.analysis.report``.  Below the server and the commands, so both use it."""

from nard_rl.analysis.core import (
    MARKS,
    RATINGS,
    Decision,
    MatchAnalyser,
    MatchAnalysis,
    Settings,
    analyse,
    mark,
    rating,
)

__all__ = [
    "MARKS",
    "RATINGS",
    "Decision",
    "MatchAnalyser",
    "MatchAnalysis",
    "Settings",
    "analyse",
    "mark",
    "rating",
]
