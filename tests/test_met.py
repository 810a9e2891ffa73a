"""Match equity table: loading, symmetry, Crawford bookkeeping (R34), capping (R33)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nard_rl.cube.met import MatchEquityTable, MatchScore


@pytest.fixture(scope="module")
def met() -> MatchEquityTable:
    return MatchEquityTable.default()


def test_shipped_table_is_kazaross_25_points(met: MatchEquityTable) -> None:
    assert met.size == 25
    assert "Kazaross" in met.name


def test_symmetry_pre_crawford(met: MatchEquityTable) -> None:
    for a in range(1, 26):
        for b in range(1, 26):
            assert met.equity(a, b) + met.equity(b, a) == pytest.approx(1.0, abs=1e-9)


def test_even_scores_are_even(met: MatchEquityTable) -> None:
    for a in range(1, 26):
        assert met.equity(a, a) == pytest.approx(0.5, abs=1e-9)
    assert met.equity(1, 1) == 0.5
    assert met.equity(1, 1, post_crawford=True) == 0.5


def test_needing_fewer_points_is_better(met: MatchEquityTable) -> None:
    for a in range(1, 25):
        for b in range(1, 26):
            assert met.equity(a, b) > met.equity(a + 1, b)
            assert met.equity(b, a) < met.equity(b, a + 1)


def test_post_crawford_row_is_used_only_after_the_crawford_game(met: MatchEquityTable) -> None:
    # the trailer's chances post-Crawford come from the post-Crawford row ...
    for b in range(2, 26):
        trailer = met.post_crawford_equity(b)
        assert met.equity(b, 1, post_crawford=True) == trailer
        assert met.equity(1, b, post_crawford=True) == pytest.approx(1.0 - trailer)
        # ... and are better than in the Crawford game, where the trailer cannot double
        assert trailer > met.equity(b, 1)
    # the flag changes nothing when nobody is 1-away
    assert met.equity(3, 4, post_crawford=True) == met.equity(3, 4)


def test_results_are_capped_at_the_match(met: MatchEquityTable) -> None:
    """R33: a cube larger than needed scores no more than the points needed."""
    assert met.after_game(3, 5, 3) == 1.0
    assert met.after_game(3, 5, 8) == 1.0
    assert met.after_game(3, 5, -5) == 0.0
    assert met.after_game(3, 5, -64) == 0.0
    assert met.win_equity(3, 5, 2) == met.after_game(3, 5, 2)
    assert met.lose_equity(3, 5, 2) == met.after_game(3, 5, -2)


def test_crawford_transitions(met: MatchEquityTable) -> None:
    """R34: first reaching 1-away makes the next game the Crawford game; later ones are post."""
    # 3-away/5-away (no one at N-1): winning 2 leads to the Crawford game
    assert met.after_game(3, 5, 2) == met.equity(1, 5, post_crawford=False)
    assert met.after_game(5, 3, -2) == met.equity(5, 1, post_crawford=False)
    # in the Crawford game (1-away/5-away) losing 1: the next game is post-Crawford
    assert met.after_game(1, 5, -1) == pytest.approx(1.0 - met.post_crawford_equity(4))
    # post-Crawford: the trailer winning 2 from 3-away reaches the double match point
    assert met.after_game(3, 1, 2) == 0.5


def test_match_score_state() -> None:
    s = MatchScore(7, 2, 6, crawford=True)
    assert (s.away_me, s.away_opp) == (5, 1)
    assert not s.doubling_allowed and not s.post_crawford
    post = MatchScore(7, 2, 6)
    assert post.post_crawford and post.doubling_allowed
    assert not MatchScore(7, 2, 4).post_crawford
    with pytest.raises(ValueError, match="Crawford"):
        MatchScore(7, 2, 4, crawford=True)
    with pytest.raises(ValueError, match="Crawford"):
        MatchScore(7, 6, 6, crawford=True)
    with pytest.raises(ValueError, match="scores"):
        MatchScore(7, 7, 0)
    with pytest.raises(ValueError, match="length"):
        MatchScore(0)


def test_matches_longer_than_the_table_are_refused(met: MatchEquityTable) -> None:
    with pytest.raises(ValueError, match="25"):
        met.equity(26, 3)


_SMALL = """<?xml version="1.0"?>
<met>
  <info><name>tiny</name><length>2</length></info>
  <pre-crawford-table type="explicit">
    <row><me>0.5</me><me>0.7</me></row>
    <row><me>0.3</me><me>0.5</me></row>
  </pre-crawford-table>
  <post-crawford-table type="explicit" player="both">
    <row><me>0.5</me><me>0.45</me></row>
  </post-crawford-table>
</met>
"""


def test_reads_the_gnubg_xml_format(tmp_path: Path) -> None:
    path = tmp_path / "tiny.xml"
    path.write_text(_SMALL)
    met = MatchEquityTable.from_xml(path)
    assert met.name == "tiny" and met.size == 2
    assert met.equity(1, 2) == 0.7 and met.equity(2, 1) == 0.3
    assert met.equity(2, 1, post_crawford=True) == 0.45


@pytest.mark.parametrize(
    "change",
    [
        ('type="explicit" player="both"', 'type="explicit" player="0"'),
        ('<pre-crawford-table type="explicit">', '<pre-crawford-table type="zadeh">'),
        ("<row><me>0.3</me><me>0.5</me></row>", "<row><me>0.3</me></row>"),
        ("<me>0.45</me>", "<me>1.45</me>"),
    ],
)
def test_unsupported_or_broken_tables_are_refused(tmp_path: Path, change: tuple[str, str]) -> None:
    path = tmp_path / "bad.xml"
    text = _SMALL.replace(*change)
    assert text != _SMALL
    path.write_text(text)
    with pytest.raises(ValueError):
        MatchEquityTable.from_xml(path)
