"""Chouette (R35-R37): the roll-off, the captain and the team's suggestions, unanimous team
doubles, individual takes, the settlement ledger and the rotation, game by game."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from boards import board

from nard_rl.engine.chouette import (
    Chouette,
    ChouetteGame,
    ChouettePhase,
    drive,
    player_names,
)
from nard_rl.engine.game import EndReason, IllegalActionError, ResultKind
from nard_rl.engine.position import START_BOARD
from nard_rl.players import make_player

NAMES4 = player_names(4)
NARD = (sys.executable, "-m", "nard_rl")


# A short race: the box (on roll) has four checkers on its 6 point, the team two on its ace
# point, so one team roll ends the game; nobody can be gammoned.
SHORT_RACE = board("mover: 6:4; opp: 24:2")


def _game(start: Sequence[int] | None = None, dice: list[tuple[int, int]] | None = None, **kw):
    return ChouetteGame(NAMES4, 0, [1, 2, 3], start=start, dice=dice, **kw)


def _only_play(game: ChouetteGame) -> tuple[int, ...]:
    return game.game.legal_plays()[0].board


# R35 --------------------------------------------------------------------------------------
def test_r35_roll_off_orders_box_captain_and_team_ties_throw_again() -> None:
    session = Chouette(4)
    box, team = session.roll_off([5, 3, 5, 1, 2, 6])  # P1 and P3 tie on 5 and throw again
    assert (box, team) == (2, [0, 1, 3])
    assert [r.throws for r in session.roll_offs] == [{0: 5, 1: 3, 2: 5, 3: 1}, {0: 2, 2: 6}]
    game = session.new_game()
    assert (game.box, game.team, game.captain) == (2, (0, 1, 3), 0)
    with pytest.raises(IllegalActionError, match="roll-off has been made"):
        session.roll_off()


def test_r35_seeded_roll_off_is_reproducible_and_a_permutation() -> None:
    orders = {Chouette(5, seed=s).roll_off()[0] for s in range(30)}
    assert len(orders) > 1  # the box depends on the dice
    a, b = Chouette(5, seed=7).roll_off(), Chouette(5, seed=7).roll_off()
    assert a == b and sorted([a[0], *a[1]]) == list(range(5))


def test_r35_captain_commits_members_suggest_and_everything_is_on_record() -> None:
    game = _game(START_BOARD, dice=[(3, 1)], box_on_roll=False)
    assert game.phase is ChouettePhase.ROLL_OR_DOUBLE and game.captain == 1
    game.roll()
    game.suggest(2, "8/5 6/5")
    game.suggest(3, "24/21 24/23")
    with pytest.raises(IllegalActionError, match="P1 is not an active member"):
        game.suggest(0, "8/5 6/5")  # the box is no member
    with pytest.raises(IllegalActionError, match="not a legal play"):
        game.suggest(2, "8/3")
    with pytest.raises(IllegalActionError, match="captain"):
        game.play("8/5 6/5", by=2)  # only the captain commits (R35)
    game.play("13/10 6/5", by=1)  # the captain decides against both suggestions
    [turn] = game.plays
    assert turn.captain == 1 and turn.dice == (3, 1) and turn.move == "13/10 6/5"
    assert turn.suggestions == {2: "8/5 6/5", 3: "24/23 24/21", 1: "13/10 6/5"}  # as recorded
    assert game.box_on_roll and game.suggestions == {}


# R37 --------------------------------------------------------------------------------------
def test_r37_a_team_double_that_one_member_vetoes_does_not_happen() -> None:
    game = _game(START_BOARD, box_on_roll=False)
    game.double(2)  # any member may propose
    assert game.phase is ChouettePhase.TEAM_VOTE and game.awaiting() == [1, 3]
    game.vote(1, True)
    with pytest.raises(IllegalActionError, match="does not vote now"):
        game.vote(1, True)
    game.vote(3, False)
    [action] = game.doubles
    assert action.vetoed and action.votes == {2: True, 1: True, 3: False}
    assert action.responses == {}
    assert game.game.cube_value == 1 and game.cubes == {1: 1, 2: 1, 3: 1}
    assert game.phase is ChouettePhase.ROLL_OR_DOUBLE
    assert "vetoed" in (game.double_refusal(1) or "")
    with pytest.raises(IllegalActionError, match="vetoed"):
        game.double(3)
    game.roll()  # the team must roll now


def test_r37_unanimous_team_double_dropped_by_the_box_pays_every_member() -> None:
    game = _game(START_BOARD, box_on_roll=False)
    game.double(1)
    game.vote(2, True)
    game.vote(3, True)
    assert game.phase is ChouettePhase.BOX_ANSWER and game.awaiting() == [0]
    with pytest.raises(IllegalActionError, match="does not answer now"):
        game.take(1)
    game.drop(0)
    assert game.is_over and game.winner == "team"
    assert game.result is not None and game.result.reason is EndReason.DROP
    assert game.settlement == {0: -3, 1: 1, 2: 1, 3: 1}
    assert game.next_order() == (1, [2, 3, 0])  # R36: the captain becomes the box


def test_r37_team_double_taken_by_the_box_doubles_every_members_cube() -> None:
    game = _game(START_BOARD, box_on_roll=False)
    game.double(3)
    game.vote(1, True)
    game.vote(2, True)
    game.take(0)
    assert game.cubes == {1: 2, 2: 2, 3: 2} and game.game.cube_owner == 0
    assert game.doubles[0].responses == {0: True}
    game.roll()
    assert game.phase is ChouettePhase.MOVE


def test_r37_every_member_passes_the_box_wins_and_collects_from_each() -> None:
    game = _game(START_BOARD)
    game.double(0)
    assert game.phase is ChouettePhase.MEMBER_ANSWERS and game.awaiting() == [1, 2, 3]
    for m in (1, 2, 3):
        game.drop(m)
    assert game.is_over and game.winner == "box"
    assert game.settlement == {0: 3, 1: -1, 2: -1, 3: -1}
    assert game.passed == [1, 2, 3]
    assert game.next_order() == (0, [2, 3, 1])  # R36: the team lost, the captain goes back


def test_r37_box_wins_a_gammon_against_members_at_different_stakes() -> None:
    # the box bears its last checker off; the team has borne off none: a gammon (R25)
    game = _game(board("mover: 2:1; opp: 24:15"), dice=[(2, 1)])
    game.double(0)
    game.take(1)
    game.drop(2)  # pays the stake before the double and leaves (R37)
    game.take(3)
    assert game.settlement == {0: 1, 1: 0, 2: -1, 3: 0}
    assert game.active == [1, 3] and game.cubes == {1: 2, 2: 1, 3: 2}
    assert [game.stake_of(m) for m in (1, 2, 3)] == [2, 1, 2]
    game.roll()
    game.play(_only_play(game))
    assert game.result is not None and game.result.kind is ResultKind.GAMMON
    # 2 (gammon) x 2 (cube) from each taker, 1 from the passer
    assert game.settlement == {0: 9, 1: -4, 2: -1, 3: -4}
    assert sum(game.settlement.values()) == 0
    summary = game.summary()
    assert summary["stakes"] == {"P2": 2, "P3": 1, "P4": 2}
    assert summary["doubles"] == [
        {
            "side": "box",
            "by": "P1",
            "cube": 2,
            "responses": {"P2": "take", "P3": "pass", "P4": "take"},
        }
    ]


def test_r37_a_member_who_passed_earlier_is_out_of_the_rest_of_the_game() -> None:
    game = _game(SHORT_RACE, dice=[(2, 1), (1, 1)], stake=3)
    game.double(0)
    game.take(1)
    game.drop(2)
    game.take(3)
    game.roll()
    game.play("6/4 6/5")
    # the team's turn: the passer may not propose, vote, suggest or be waited for
    assert game.double_refusal(2) == "P3 is not an active member of the team"
    game.double(1)
    assert game.awaiting() == [3]
    with pytest.raises(IllegalActionError, match="does not vote now"):
        game.vote(2, True)
    game.vote(3, True)
    game.take(0)
    assert game.cubes == {1: 4, 2: 1, 3: 4}
    game.roll()
    with pytest.raises(IllegalActionError, match="not an active member"):
        game.suggest(2, _only_play(game))
    game.suggest(3, _only_play(game))
    game.play(_only_play(game), by=1)
    assert game.winner == "team" and game.result is not None
    assert game.result.kind is ResultKind.SINGLE
    # stake 3 per cube unit: the passer paid 1 x 3 and nothing more; takers win 4 x 3
    assert game.settlement == {0: 3 - 24, 1: 12, 2: -3, 3: 12}
    assert game.next_order() == (1, [2, 3, 0])


def test_r37_captain_who_passes_hands_the_checkers_to_the_first_taker() -> None:
    game = _game(SHORT_RACE, dice=[(2, 1), (1, 1)])
    game.double(0)
    game.drop(1)  # the captain passes, the others take
    game.take(2)
    game.take(3)
    assert game.captain == 2 and game.line == [2, 3, 1]
    game.roll()
    game.play("6/4 6/5", by=0)
    game.roll()
    with pytest.raises(IllegalActionError, match="P2 cannot commit the play"):
        game.play(_only_play(game), by=1)
    game.play(_only_play(game), by=2)
    assert game.settlement == {0: -1 - 2 - 2 + 2, 1: -1, 2: 2, 3: 2}
    assert game.summary()["final_captain"] == "P3"
    # R36 with the captain at the end; the old captain went to the back when he passed
    assert game.next_order() == (2, [3, 1, 0])


class ScriptedSeat:
    """Doubles as soon as its side may (``side`` says whose doubles happen), agrees to
    team doubles, passes every double, plays the first legal play."""

    def __init__(self, script: dict[str, str]) -> None:
        self.script = script

    def choose_play(self, game: ChouetteGame, p: int) -> tuple[int, ...]:
        return _only_play(game)

    def wants_double(self, game: ChouetteGame, p: int) -> bool:
        return (p == game.box) == (self.script["side"] == "box")

    def agrees_double(self, game: ChouetteGame, p: int) -> bool:
        return True

    def takes(self, game: ChouetteGame, p: int) -> bool:
        return False


def test_r36_rotation_game_by_game() -> None:
    script = {"side": "box"}
    session = Chouette(4)
    session.roll_off([6, 5, 4, 3])
    seats = [ScriptedSeat(script) for _ in range(4)]
    orders, winners, settlements = [], [], []
    for side in ("box", "team", "box", "team"):
        script["side"] = side  # whose double the others pass: that side wins
        game = drive(session.new_game(), seats)
        orders.append((game.box, list(game.team)))
        winners.append(game.winner)
        settlements.append(game.settlement)
    assert winners == ["box", "team", "box", "team"]
    assert orders == [
        (0, [1, 2, 3]),  # the roll-off: P1 box, P2 captain
        (0, [2, 3, 1]),  # the team lost: the captain goes to the back, the box stays
        (2, [3, 1, 0]),  # the team won: the captain becomes the box, the box goes back
        (2, [1, 0, 3]),  # the team lost again
    ]
    assert settlements == [  # every double passed: one point between the box and each member
        {0: 3, 1: -1, 2: -1, 3: -1},
        {0: -3, 1: 1, 2: 1, 3: 1},
        {0: -1, 1: -1, 2: 3, 3: -1},
        {0: 1, 1: 1, 2: -3, 3: 1},
    ]


def test_doubling_is_refused_with_reasons() -> None:
    game = _game(START_BOARD)
    assert game.double_refusal(1) == "the box (P1) is on roll"
    with pytest.raises(IllegalActionError, match="no seat 9"):
        game.double(9)
    game.double(0)
    with pytest.raises(IllegalActionError, match="only possible at the start of a turn"):
        game.double(0)
    with pytest.raises(IllegalActionError, match="no team double is being voted on"):
        game.vote(1, True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": 2}, "3 to 16 players"),
        ({"players": ["a", "b", "a"]}, "must differ"),
        ({"players": 4, "rules": "mars"}, "R28"),
    ],
)
def test_invalid_sessions_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Chouette(**kwargs)


def test_invalid_games_are_refused() -> None:
    with pytest.raises(ValueError, match="every seat"):
        ChouetteGame(NAMES4, 0, [1, 2, 2])
    with pytest.raises(ValueError, match="stake"):
        ChouetteGame(NAMES4, 0, [1, 2, 3], stake=0)


# whole sessions -------------------------------------------------------------------------------
class RandomCubeSeat:
    """Checker play from a benchmark player; cube actions at random, so that vetoes,
    partial passes and passing captains all happen within a few games."""

    def __init__(self, player, rng: np.random.Generator) -> None:
        self.player = player
        self.rng = rng

    def choose_play(self, game: ChouetteGame, p: int) -> tuple[int, ...]:
        g = game.game
        plays = g.legal_plays()
        afters = np.array([x.board for x in plays], dtype=np.int8)
        return plays[self.player.choose(np.array(g.position.board), np.array(g.dice), afters)].board

    def wants_double(self, game: ChouetteGame, p: int) -> bool:
        return bool(self.rng.random() < 0.08)

    def agrees_double(self, game: ChouetteGame, p: int) -> bool:
        return bool(self.rng.random() < 0.7)

    def takes(self, game: ChouetteGame, p: int) -> bool:
        return bool(self.rng.random() < 0.65)


def check_session(lines: list[dict]) -> None:
    """Re-derive every rule from the JSON lines alone: zero-sum settlements (R37), each
    double (R37), the settlement from the doubles and the result, and the rotation (R36)."""
    multipliers = {"single": 1, "gammon": 2, "backgammon": 3}
    expected = None
    for game in lines:
        box, team = game["box"], game["team"]
        assert game["captain"] == team[0] and sorted([box, *team]) == sorted(game["settlement"])
        assert sum(game["settlement"].values()) == 0
        if expected is not None:
            assert (box, team) == expected  # R36
        active, cube, paid = list(team), 1, dict.fromkeys(game["settlement"], 0)
        line = list(team)
        owner = None
        for d in game["doubles"]:  # R37
            assert d["cube"] == 2 * cube
            if d["side"] == "team":
                assert owner in (None, "team") and d["by"] in active
                assert next(iter(d["votes"])) == d["by"] and set(d["votes"]) <= set(active)
                if d["vetoed"]:
                    assert list(d["votes"].values())[-1] == "veto" and d["responses"] == {}
                    assert all(v == "agree" for v in list(d["votes"].values())[:-1])
                    continue
                assert set(d["votes"]) == set(active)
                assert set(d["votes"].values()) == {"agree"} and list(d["responses"]) == [box]
                if d["responses"][box] == "pass":
                    for m in active:
                        paid[m] += cube
                        paid[box] -= cube
                    break
                cube, owner = d["cube"], "box"
            else:
                assert d["by"] == box and owner in (None, "box")
                assert list(d["responses"]) == active
                passers = [m for m, r in d["responses"].items() if r == "pass"]
                for m in passers:
                    paid[m] -= cube
                    paid[box] += cube
                if len(passers) == len(active):
                    assert game["winner"] == "box" and game["reason"] == "drop"
                    last_captain, active = active[0], []
                    break
                if active[0] in passers:  # a passing captain goes to the back at once
                    line.remove(active[0])
                    line.append(active[0])
                active = [m for m in line if m in active and m not in passers]
                cube, owner = d["cube"], "team"
        if game["reason"] != "drop":
            sign = -1 if game["winner"] == "box" else 1
            for m in active:
                paid[m] += sign * multipliers[game["result"]] * cube
                paid[box] -= sign * multipliers[game["result"]] * cube
        assert paid == game["settlement"], game
        for m in active:
            assert game["stakes"][m] == cube
        acting = active[0] if active else last_captain
        assert game["final_captain"] == acting
        line.remove(acting)
        expected = (box, [*line, acting]) if game["winner"] == "box" else (acting, [*line, box])


@pytest.mark.parametrize("players", [4, 5])
def test_fifty_game_sessions_with_random_cube_bots(players: int) -> None:
    rng = np.random.default_rng(players)
    session = Chouette(players, seed=100 + players)
    seats = [RandomCubeSeat(make_player("pubeval"), rng) for _ in range(players)]
    lines = []
    for _ in range(50):
        lines.append(json.loads(json.dumps(drive(session.new_game(), seats).summary())))
    check_session(lines)
    doubles = [d for g in lines for d in g["doubles"]]
    # the odd cases really happened
    assert any(d["side"] == "team" and d["vetoed"] for d in doubles)
    assert any(
        d["side"] == "box" and {"take", "pass"} <= set(d["responses"].values()) for d in doubles
    )
    assert any(g["final_captain"] != g["captain"] for g in lines)
    assert {g["winner"] for g in lines} == {"box", "team"}
    totals = session.totals()
    assert sum(totals.values()) == 0
    assert totals == {name: sum(g["settlement"][name] for g in lines) for name in session.names}


@pytest.fixture
def one_thread():
    """Bots evaluate one position at a time: one torch thread is much faster there."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _net_session(players: int, games: int) -> list[dict]:
    from nard_rl.commands.chouette import BotSeat, build_advisor

    advisor = build_advisor("default")
    session = Chouette(players, seed=players)
    seats = [BotSeat(advisor) for _ in range(players)]
    return [drive(session.new_game(), seats).summary() for _ in range(games)]


def test_a_session_of_net_bots(one_thread: None) -> None:
    lines = _net_session(4, 12)
    check_session(lines)
    assert any(g["doubles"] for g in lines)  # the net does double


@pytest.mark.slow
@pytest.mark.parametrize("players", [4, 5])
def test_fifty_game_sessions_of_net_bots(players: int, one_thread: None) -> None:
    lines = _net_session(players, 50)
    check_session(lines)
    assert any(g["doubles"] for g in lines)


def test_chouette_command_prints_one_json_line_per_game() -> None:
    out = subprocess.run(
        [
            *NARD,
            "chouette",
            "--bots",
            "3",
            "--games",
            "3",
            "--seed",
            "4",
            "--json",
            "--player",
            "pubeval",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert [g["game"] for g in lines] == [1, 2, 3]
    for g in lines:
        assert {"box", "captain", "team", "doubles", "winner", "settlement"} <= set(g)
        assert set(g["settlement"]) == {"P1", "P2", "P3"}
    check_session(lines)


def test_chouette_command_rejects_too_few_players() -> None:
    from nard_rl.cli import main

    assert main(["chouette", "--bots", "2"]) == 2


class PromptAnswerer(io.StringIO):
    """stdin for a human seat: reads the last prompt and answers it like a person would,
    with one illegal move and one hint along the way."""

    def __init__(self, out: io.StringIO, session: Chouette) -> None:
        super().__init__()
        self.out, self.session = out, session
        self.asked: list[str] = []
        self.tried_illegal = False

    def readline(self, *args: object) -> str:
        prompt = self.out.getvalue().rstrip("\n").splitlines()[-1]
        self.asked.append(prompt)
        game = self.session.game
        assert game is not None
        if "play with" in prompt:
            if not self.tried_illegal:
                self.tried_illegal = True
                return "hint\n" if len(self.asked) % 2 else "25/1\n"
            return game.game.legal_plays()[-1].move + "\n"
        if "roll or" in prompt:
            return "double\n" if len(self.asked) % 7 == 0 else "roll\n"
        if "agree?" in prompt:
            return "yes\n"
        if "take or pass?" in prompt:
            return "take\n"
        raise AssertionError(f"unexpected prompt {prompt!r}")


def test_a_human_seat_plays_through_the_prompt() -> None:
    from nard_rl.commands.chouette import HumanSeat

    out = io.StringIO()
    session = Chouette(3, seed=11)
    stdin = PromptAnswerer(out, session)
    human = HumanSeat(stdin, out, None, home="left")
    bots = [RandomCubeSeat(make_player("pubeval"), np.random.default_rng(1)) for _ in range(2)]
    for _ in range(3):  # the human is box, captain or member as the rotation goes
        drive(session.new_game(), [human, *bots], log=lambda text: out.write(text + "\n"))
    text = out.getvalue()
    assert "not possible" in text or "no advice here" in text  # 25/1, or hint without a net
    assert "+-1--2--3--4--5--6-" in text  # home board drawn on the left
    assert any("(box)" in p for p in stdin.asked) or any("(captain)" in p for p in stdin.asked)
    check_session([g.summary() for g in session.games])


def _human_with_a_net(tmp_path, answers: str):  # type: ignore[no-untyped-def]
    from test_play import _tiny

    from nard_rl.commands.chouette import HumanSeat, build_advisor

    out = io.StringIO()
    advisor = build_advisor(str(_tiny(tmp_path / "t.pt")))
    return HumanSeat(io.StringIO(answers), out, advisor), out


def test_a_human_seat_gets_hint_help_and_the_board_at_a_take_or_pass(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a long race with the box on roll, cube centered: the box doubles, member P2 answers
    game = _game(board("mover: 6:5 5:5 4:5; opp: 19:5 20:5 21:5"), box_on_roll=True)
    game.double(0)
    human, out = _human_with_a_net(tmp_path, "hint\nhelp\nboard\nmaybe\ntake\n")
    assert human.takes(game, 1) is True
    text = out.getvalue()
    assert "take or pass (equity per current stake, your side):" in text
    assert "proper answer: " in text and "    Pass           -1.000" in text
    assert "hint (the bots' advice on this decision)" in text  # help
    assert "Doubles to 2" in text and "To take or pass" in text  # the board at the double
    assert "answer take or pass" in text  # 'maybe' is refused with the choices


def test_a_human_box_gets_the_cube_analysis_before_rolling_and_can_quit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from nard_rl.commands.chouette import EndOfInput

    game = _game(board("mover: 6:5 5:5 4:5; opp: 19:5 20:5 21:5"), box_on_roll=True)
    human, out = _human_with_a_net(tmp_path, "hint\nroll\n")
    assert human.wants_double(game, 0) is False
    text = out.getvalue()
    assert "cube analysis at 0-ply" in text and "No double" in text
    assert "proper action: " in text
    human, out = _human_with_a_net(tmp_path, "quit\n")
    with pytest.raises(EndOfInput, match="quit"):
        human.wants_double(game, 0)
