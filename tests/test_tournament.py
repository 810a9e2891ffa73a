"""Tournament bookkeeping: who plays whom, orientation of scores, standings and writers.

Results here are hand-made ``MatchResult``s, so the tables are checked against numbers
chosen in the test, not against anything the code under test computed.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from nard_rl.arena.matches import MatchResult
from nard_rl.arena.tournament import (
    CSV_COLUMNS,
    Entrant,
    find_checkpoints,
    make_entrants,
    markdown_report,
    pair_score,
    parse_spec_list,
    plot_strength,
    reference_name,
    schedule,
    standings,
    strength_points,
    write_csv,
    write_outputs,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def result(a: str, b: str, ppg: float, ci: float = 0.1, games: int = 100) -> MatchResult:
    return MatchResult(
        player_a=a,
        player_b=b,
        games=games,
        ppg=ppg,
        ci95=ci,
        win_rate=0.5,
        gammon_rate=0.1,
        backgammon_rate=0.01,
        lose_gammon_rate=0.1,
        lose_backgammon_rate=0.01,
        games_per_second=100.0,
        seed=0,
        rules="standard",
    )


def ck(name: str, games: int) -> Entrant:
    return Entrant(name=name, spec=f"{name}.pt", train_games=games, train_step=games // 10)


def test_parse_spec_list() -> None:
    assert parse_spec_list("pubeval, random,,gnubg:0,random") == ["pubeval", "random", "gnubg:0"]
    assert parse_spec_list("") == []
    assert parse_spec_list(None) == []


def test_checkpoints_are_ordered_by_recorded_games_not_by_name(tmp_path: Path) -> None:
    progress = {
        "games_000000900.pt": (100, 5),  # the name lies: the file is what counts
        "games_000000100.pt": (900, 50),
        "last.pt": (900, 50),  # the trainer's copy of the newest: left out
        "zeta.pt": (400, 20),
    }
    for name in progress:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    found = find_checkpoints(tmp_path, read_progress=lambda p: progress[p.name])
    assert [e.name for e in found] == ["games_000000900", "zeta", "games_000000100"]
    assert [e.train_games for e in found] == [100, 400, 900]
    assert all(e.is_checkpoint and Path(e.spec).is_file() for e in found)


def test_last_checkpoint_kept_when_it_is_the_only_copy(tmp_path: Path) -> None:
    progress = {"games_000000100.pt": (100, 5), "last.pt": (250, 12)}
    for name in progress:
        (tmp_path / name).write_bytes(b"")
    found = find_checkpoints(tmp_path, read_progress=lambda p: progress[p.name])
    assert [e.name for e in found] == ["games_000000100", "last"]


def test_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        find_checkpoints(tmp_path / "nope")


def test_entrant_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="pubeval"):
        make_entrants([ck("pubeval", 10)], ["pubeval"])


def test_round_robin_plays_every_pair_once_checkpoints_first() -> None:
    entrants = make_entrants([ck("c1", 1), ck("c2", 2), ck("c3", 3)], ["pubeval", "random"])
    pairs = schedule(entrants)
    n = len(entrants)
    assert len(pairs) == n * (n - 1) // 2
    played = {frozenset((a.name, b.name)) for a, b in pairs}
    assert played == {frozenset(p) for p in itertools.combinations([e.name for e in entrants], 2)}
    for a, b in pairs:
        assert a.name != b.name
        if b.is_checkpoint:
            assert a.is_checkpoint and a.train_games < b.train_games
        if not a.is_checkpoint:
            assert not b.is_checkpoint  # a baseline is never A against a checkpoint


def test_vs_mode_plays_only_checkpoints_against_the_references() -> None:
    entrants = make_entrants([ck("c1", 1), ck("c2", 2)], ["pubeval", "random"])
    pairs = [(a.name, b.name) for a, b in schedule(entrants, ["pubeval"])]
    assert pairs == [("c1", "pubeval"), ("c2", "pubeval")]
    two = [(a.name, b.name) for a, b in schedule(entrants, ["pubeval", "random"])]
    assert sorted(two) == [("c1", "pubeval"), ("c1", "random"), ("c2", "pubeval"), ("c2", "random")]
    # a checkpoint may be the reference; it does not play itself
    assert [(a.name, b.name) for a, b in schedule(entrants, ["c1"])] == [("c2", "c1")]
    with pytest.raises(ValueError, match="gnubg"):
        schedule(entrants, ["gnubg"])


def test_pair_score_reads_either_orientation() -> None:
    results = [result("a", "b", 0.4, 0.1)]
    assert pair_score(results, "a", "b") == (0.4, 0.1)
    assert pair_score(results, "b", "a") == (-0.4, 0.1)
    assert pair_score(results, "a", "c") is None


def test_standings_average_each_match_from_the_players_side() -> None:
    entrants = make_entrants([ck("c1", 1), ck("c2", 2)], ["pubeval"])
    results = [
        result("c1", "c2", -0.2, 0.1),  # c2 clearly better
        result("c1", "pubeval", -1.0, 0.2),
        result("c2", "pubeval", 0.05, 0.3),  # not clear either way
    ]
    rows = {s.name: s for s in standings(entrants, results)}
    assert rows["c1"].mean_ppg == pytest.approx((-0.2 - 1.0) / 2)
    assert rows["c2"].mean_ppg == pytest.approx((0.2 + 0.05) / 2)
    assert rows["pubeval"].mean_ppg == pytest.approx((1.0 - 0.05) / 2)
    assert (rows["c1"].clear_wins, rows["c1"].clear_losses) == (0, 2)
    assert (rows["c2"].clear_wins, rows["c2"].clear_losses) == (1, 0)
    assert (rows["pubeval"].clear_wins, rows["pubeval"].clear_losses) == (1, 0)
    order = [s.name for s in standings(entrants, results)]
    assert order == ["pubeval", "c2", "c1"]
    assert rows["c2"].train_games == 2 and rows["pubeval"].train_games is None


def test_reference_choice() -> None:
    entrants = make_entrants([ck("c1", 1)], ["random", "pubeval"])
    assert reference_name(entrants) == "pubeval"
    assert reference_name(entrants, ["random"]) == "random"
    assert reference_name(make_entrants([ck("c1", 1)], ["random", "gnubg"])) == "random"
    assert reference_name(make_entrants([ck("c1", 1), ck("c2", 2)], [])) == "c1"
    assert reference_name([]) is None


def test_strength_points_follow_training_order() -> None:
    entrants = make_entrants([ck("c1", 100), ck("c2", 200), ck("c3", 300)], ["pubeval"])
    results = [result("pubeval", "c2", 0.5, 0.2), result("c1", "pubeval", -0.9, 0.1)]
    pts = strength_points(entrants, results, "pubeval")
    assert [(p.name, p.train_games, p.ppg, p.ci95) for p in pts] == [
        ("c1", 100, -0.9, 0.1),
        ("c2", 200, -0.5, 0.2),
    ]  # c3 has not played pubeval yet
    self_ref = strength_points(entrants, [result("c2", "c1", 0.3)], "c1")
    assert [(p.name, p.ppg) for p in self_ref] == [("c1", 0.0), ("c2", 0.3)]


def test_csv_has_one_row_per_pair(tmp_path: Path) -> None:
    entrants = make_entrants([ck("c1", 100)], ["pubeval", "random"])
    results = [result("c1", "pubeval", -0.5, 0.2, games=40), result("pubeval", "random", 2.5)]
    path = tmp_path / "r.csv"
    write_csv(path, entrants, results)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [(r["a"], r["b"]) for r in rows] == [("c1", "pubeval"), ("pubeval", "random")]
    assert rows[0]["a_train_games"] == "100" and rows[0]["b_train_games"] == ""
    assert float(rows[0]["ppg"]) == -0.5 and float(rows[0]["ci95"]) == 0.2
    assert int(rows[0]["games"]) == 40
    for col in ("win_rate", "gammon_rate", "backgammon_rate", "lose_gammon_rate", "rules"):
        assert col in rows[1]


def test_markdown_tables() -> None:
    entrants = make_entrants([ck("c1", 1000)], ["pubeval", "random"])
    results = [
        result("c1", "pubeval", -0.25, 0.125),
        result("c1", "random", 1.5, 0.25),
        result("pubeval", "random", 2.5, 0.5),
    ]
    md = markdown_report(entrants, results, settings={"games per match": 100})
    assert "- games per match: 100" in md
    lines = md.splitlines()
    c1_row = next(line for line in lines if line.startswith("| **c1**"))
    assert c1_row == "| **c1** | — | -0.250 ± 0.125 | +1.500 ± 0.250 |"
    pub_row = next(line for line in lines if line.startswith("| **pubeval**"))
    assert pub_row == "| **pubeval** | +0.250 ± 0.125 | — | +2.500 ± 0.500 |"
    # standings, best first: pubeval (2.75/2), c1 (1.25/2), random
    ranks = [line.split("|")[2].strip() for line in lines if line[:4] in ("| 1 ", "| 2 ", "| 3 ")]
    assert ranks == ["pubeval", "c1", "random"]
    vs_md = markdown_report(entrants, results[:2], vs=["pubeval", "random"])
    assert "|  | pubeval | random |" in vs_md
    assert "| **c1** | -0.250 ± 0.125 | +1.500 ± 0.250 |" in vs_md


def test_plot_and_outputs_are_written(tmp_path: Path) -> None:
    entrants = make_entrants([ck("c1", 100), ck("c2", 200)], ["pubeval"])
    results = [result("c1", "pubeval", -0.9, 0.1), result("c2", "pubeval", -0.4, 0.1)]
    paths = write_outputs(tmp_path / "out", entrants, results, vs=["pubeval"])
    assert {p.name for p in paths.values()} == {"results.md", "results.csv", "strength.png"}
    assert all(p.is_file() for p in paths.values())
    assert paths["plot"].read_bytes()[:8] == PNG_MAGIC
    empty = tmp_path / "empty.png"
    plot_strength(empty, [], "pubeval")  # nothing played yet still gives a picture
    assert empty.read_bytes()[:8] == PNG_MAGIC
