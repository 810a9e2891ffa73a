"""Shared fixtures and hypothesis profiles for the test suite.

Hypothesis profiles: ``fast`` (the default, a few dozen examples per property so the
whole suite stays quick) and ``ci`` (hundreds of examples; pick it with
``pytest --hypothesis-profile=ci`` or ``HYPOTHESIS_PROFILE=ci``, typically together
with ``-m slow``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from reference_movegen import random_bearoff_positions, random_game_positions

DATA = Path(__file__).parent / "data"
GNUBG = "/usr/games/gnubg"

settings.register_profile(
    "fast",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``gnubg``-marked tests where GNU Backgammon is not installed."""
    if shutil.which(GNUBG) is not None:
        return
    skip = pytest.mark.skip(reason=f"GNU Backgammon not installed ({GNUBG} missing)")
    for item in items:
        if "gnubg" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gnubg_records() -> list[dict[str, Any]]:
    """The 3,000 positions of ``movegen_gnubg_public.jsonl`` with gnubg's legal results."""
    with open(DATA / "movegen_gnubg_public.jsonl") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def random_play_positions() -> list[tuple[tuple[int, ...], tuple[int, int]]]:
    """Positions and rolls met in seeded random games (played by the reference generator)."""
    return random_game_positions(seed=20240601, count=1500)


@pytest.fixture(scope="session")
def bearoff_positions() -> list[tuple[tuple[int, ...], tuple[int, int]]]:
    """Seeded random bear-off positions (some with contact), where R19, R20 and R29 bite."""
    return random_bearoff_positions(seed=7, count=1500)
