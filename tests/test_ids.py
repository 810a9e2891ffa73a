"""Position ID, Match ID and XGID: GNU Backgammon's own strings, round trips, bad input.

Expected strings come from GNU Backgammon 1.07 (literals below were printed by it,
``tests/data/gnubg_ids.jsonl`` was written by ``scripts/make_id_reference.py``), never
from the code under test.
"""

from __future__ import annotations

import base64
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from boards import board
from hypothesis import given
from hypothesis import strategies as st

from nard_rl.engine.ids import (
    GameState,
    MatchInfo,
    XGIDInfo,
    decode_gnubg_id,
    decode_match_id,
    decode_position_id,
    decode_xgid,
    encode_gnubg_id,
    encode_match_id,
    encode_position_id,
    encode_xgid,
    position_id_of,
)
from nard_rl.engine.position import START_BOARD, Position, PositionError

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]
GNUBG = "/usr/games/gnubg"
BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _records(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open() as fh:
        return [json.loads(line) for line in fh]


GNUBG_RECORDS = _records("gnubg_ids.jsonl")


def _flip(board: list[int] | tuple[int, ...]) -> list[int]:
    return [-board[25 - i] for i in range(26)]


# --------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------
@st.composite
def boards(draw: st.DrawFn) -> list[int]:
    """Any valid board: each point owned by one side or empty, 0..15 checkers a side."""
    owner = draw(st.lists(st.sampled_from([0, 1, -1]), min_size=24, max_size=24))
    board = [0] * 26
    for sign, bar_index in ((1, 25), (-1, 0)):
        slots = [p + 1 for p in range(24) if owner[p] == sign] + [bar_index, None]
        for slot in draw(st.lists(st.sampled_from(slots), max_size=15)):
            if slot is not None:  # None: borne off
                board[slot] += sign
    if all(v == 0 for v in board):
        board[6] = 1
    return board


match_infos = st.builds(
    MatchInfo,
    cube_value=st.integers(0, 15).map(lambda k: 1 << k),
    cube_owner=st.sampled_from(["centered", "mover", "opponent"]),
    player_on_roll=st.integers(0, 1),
    crawford=st.just(False),
    game_state=st.sampled_from(list(GameState)),
    turn=st.integers(0, 1),
    double_offered=st.booleans(),
    resignation=st.integers(0, 3),
    dice=st.one_of(st.just((0, 0)), st.tuples(st.integers(1, 6), st.integers(1, 6))),
    match_length=st.just(0),
    score=st.tuples(st.integers(0, 32767), st.integers(0, 32767)),
    jacoby=st.booleans(),
)


@st.composite
def any_match_info(draw: st.DrawFn) -> MatchInfo:
    info = draw(match_infos)
    length = draw(st.integers(0, 64))
    if not length:
        return info
    score = (draw(st.integers(0, length)), draw(st.integers(0, length)))
    return MatchInfo(
        **{**info.__dict__, "match_length": length, "score": score, "crawford": draw(st.booleans())}
    )


@st.composite
def xgid_infos(draw: st.DrawFn) -> XGIDInfo:
    length = draw(st.integers(0, 25))
    action = draw(st.sampled_from(["", "", "D", "B", "R"]))
    dice = (0, 0) if action else draw(st.tuples(st.integers(0, 6), st.integers(1, 6)))
    if dice[0] == 0:
        dice = (0, 0)
    return XGIDInfo(
        board=tuple(draw(boards())),
        cube_value=1 << draw(st.integers(0, 12)),
        cube_owner=draw(st.sampled_from(["centered", "mover", "opponent"])),
        turn=draw(st.sampled_from([1, -1])),
        dice=dice,
        cube_action=action,
        score=(draw(st.integers(0, 30)), draw(st.integers(0, 30))),
        match_length=length,
        crawford=bool(length) and draw(st.booleans()),
        jacoby=not length and draw(st.booleans()),
        beaver=not length and draw(st.booleans()),
        max_cube=1 << draw(st.integers(0, 15)),
    )


# --------------------------------------------------------------------------------------
# Position ID
# --------------------------------------------------------------------------------------
def test_start_position_id() -> None:
    assert encode_position_id(START_BOARD) == "4HPwATDgc/ABMA"
    assert decode_position_id("4HPwATDgc/ABMA") == list(START_BOARD)
    assert decode_position_id(" 4HPwATDgc/ABMA\n") == list(START_BOARD)  # pasted text
    assert Position.start().position_id() == "4HPwATDgc/ABMA"
    assert Position.from_id("4HPwATDgc/ABMA") == Position.start()
    assert position_id_of(Position.start()) == position_id_of(START_BOARD) == "4HPwATDgc/ABMA"


@pytest.mark.parametrize(
    ("board", "pid"),
    [
        # gnubg.positionid(((1, 0, ...), (0, ...))): the side NOT on roll comes first.
        (board("opp: 24:1"), "AQAAAAAAAAAAAA"),
        (board("mover: 1:1"), "AAAAAgAAAAAAAA"),
        # `set xgid c-----B-------------a----A:...` with turn 1 and with turn -1.
        (board("mover: 6:2 bar:1; opp: 20:1 bar:3"), "EAAADgwAgAAAAA"),
        (_flip(board("mover: 6:2 bar:1; opp: 20:1 bar:3")), "YAAABAEA4AAAAA"),
        # gnubg after `new game` and its opening 24/23 13/8, the other side on roll.
        (_flip([0, -2, 0, 0, 0, 0, 5, 0, 4, 0, 0, 0, -5, 4, 0, 0, 0, -3, 0, -5, 0, 0, 0, 1, 1, 0]),
         "4PPgASjgc/ABMA"),
    ],
)  # fmt: skip
def test_known_position_ids(board: Sequence[int], pid: str) -> None:
    assert encode_position_id(board) == pid
    assert decode_position_id(pid) == list(board)


def test_movegen_reference_ids() -> None:
    for rec in _records("movegen_gnubg_public.jsonl"):
        assert decode_position_id(rec["position_id"]) == rec["board"], rec["id"]
        assert encode_position_id(rec["board"]) == rec["position_id"], rec["id"]


def test_gnubg_reference_positions() -> None:
    recs = [r for r in GNUBG_RECORDS if r["kind"] == "position"]
    assert len(recs) >= 200
    for rec in recs:
        assert encode_position_id(rec["board"]) == rec["position_id"], rec
        assert decode_position_id(rec["position_id"]) == rec["board"], rec


@given(boards())
def test_position_id_round_trip(board: list[int]) -> None:
    pid = encode_position_id(board)
    assert len(pid) == 14
    assert decode_position_id(pid) == board


@given(st.text(alphabet=BASE64, min_size=14, max_size=14))
def test_position_id_decoding_is_canonical(pid: str) -> None:
    """Any string either fails loudly or is the one ID of its board."""
    try:
        board = decode_position_id(pid)
    except PositionError:
        return
    assert encode_position_id(board) == pid


def _pack(counts: list[int], extra_bits: int = 0) -> str:
    """Hand-made position key: the test's own writer, to build IDs gnubg never would."""
    key, bit = 0, 0
    for n in counts:
        key |= ((1 << n) - 1) << bit
        bit += n + 1
    key |= extra_bits
    return base64.b64encode(key.to_bytes(10, "little")).decode()[:14]


def _counts(opponent: dict[int, int], mover: dict[int, int]) -> list[int]:
    """50 counts, 0-based slot (24 = bar) from each side's own view."""
    return [opponent.get(i, 0) for i in range(25)] + [mover.get(i, 0) for i in range(25)]


def test_pack_helper_agrees_with_gnubg() -> None:
    assert _pack(_counts({0: 1}, {})) == "AQAAAAAAAAAAAA"
    assert _pack(_counts({}, {0: 1})) == "AAAAAgAAAAAAAA"


@pytest.mark.parametrize(
    ("pid", "message"),
    [
        ("4HPwATDgc/ABM", "14 characters, got 13"),
        ("4HPwATDgc/ABMAA", "14 characters, got 15"),
        ("", "14 characters, got 0"),
        ("4HPwATDgc/AB!A", "outside base64"),
        ("4HPwATDgc-ABMA", "outside base64"),
        ("4HPwATDgc/ABM=", "outside base64"),
        ("AQAAAAAAAAAAAB", "padding bits"),
        ("/////////////w", "too many checkers"),
        ("AAAAAAAAAAAAAA", "borne off all"),
        (_pack(_counts({}, {5: 16})), "player on roll 16 checkers"),
        (_pack(_counts({3: 16}, {})), "player not on roll 16 checkers"),
        # opponent's point 19 (0-based 18) is the mover's point 6
        (_pack(_counts({18: 1}, {5: 1})), "both players on point 6"),
        (_pack(_counts({}, {0: 2}), extra_bits=1 << 70), "stray bits"),
    ],
)
def test_bad_position_ids(pid: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        decode_position_id(pid)


def test_bad_position_id_type() -> None:
    with pytest.raises(PositionError, match="must be a string"):
        decode_position_id(12345)  # type: ignore[arg-type]


def test_encode_rejects_invalid_board() -> None:
    with pytest.raises(PositionError, match="more than 15"):
        encode_position_id(board("mover: 6:16"))
    with pytest.raises(PositionError, match="26 entries"):
        encode_position_id([0] * 25)


# --------------------------------------------------------------------------------------
# Match ID
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mid", "expected"),
    [
        # gnubg's documented "no game yet" ID (Jacoby on, gnubg's default).
        ("cAgAAAAAAAAA", MatchInfo(game_state=GameState.NONE, jacoby=True)),
        # money game, Jacoby off, root (player 1) to play 5-1.
        ("cIkGAAAAAAAE", MatchInfo(dice=(5, 1))),
        # money session with Jacoby on, gnubg (player 0) to play 6-5.
        ("MAEXAAAAAAAA", MatchInfo(player_on_roll=0, dice=(6, 5), jacoby=True)),
        # `new match 7` then `set score 3 2` (gnubg 3, root 2), root to play 4-1.
        ("cAnmADAAEAAE", MatchInfo(match_length=7, score=(2, 3), dice=(4, 1))),
        # ... `set cube value 4`, then `set cube owner 0` / `1` / `set cube centre`
        ("QgnmADAAEAAE", MatchInfo(cube_value=4, cube_owner="opponent", match_length=7,
                                   score=(2, 3), dice=(4, 1))),
        ("UgnmADAAEAAE", MatchInfo(cube_value=4, cube_owner="mover", match_length=7,
                                   score=(2, 3), dice=(4, 1))),
        ("cgnmADAAEAAE", MatchInfo(cube_value=4, match_length=7, score=(2, 3), dice=(4, 1))),
        # ... `set turn 0`: gnubg on roll, dice cleared
        ("MgHgADAAEAAE", MatchInfo(cube_value=4, player_on_roll=0, match_length=7, score=(3, 2))),
        # ... `set score 6 2`, `set crawford on`, root on roll
        ("8gngAGAAEAAE", MatchInfo(cube_value=4, match_length=7, score=(2, 6), crawford=True)),
        # gnubg.matchid() with resigned=3 / doubled=1 / gamestate=4, player 0 on roll
        ("MGHgAAAAAAAE", MatchInfo(player_on_roll=0, match_length=7, resignation=3)),
        ("MBHgAAAAAAAE", MatchInfo(player_on_roll=0, match_length=7, double_offered=True)),
        ("MATgAAAAAAAE", MatchInfo(player_on_roll=0, match_length=7,
                                   game_state=GameState.DROPPED)),
        ("MAngAAAAAAAE", MatchInfo(player_on_roll=0, turn=1, match_length=7)),
        ("AwHrAAAAAAAE", MatchInfo(cube_value=8, cube_owner="mover", player_on_roll=0,
                                   match_length=7, dice=(6, 2))),
    ],
)  # fmt: skip
def test_known_match_ids(mid: str, expected: MatchInfo) -> None:
    assert decode_match_id(mid) == expected
    assert encode_match_id(expected) == mid


def _expected_match(state: dict[str, Any]) -> MatchInfo:
    me = state["on_roll"]
    owner = state["cube_owner"]
    return MatchInfo(
        cube_value=state["cube"],
        cube_owner="centered" if owner == -1 else "mover" if owner == me else "opponent",
        player_on_roll=me,
        crawford=bool(state["crawford"]),
        game_state=GameState(state["game_state"]),
        turn=state["turn"],
        double_offered=bool(state["double_offered"]),
        resignation=state["resignation"],
        dice=tuple(state["dice"]),
        match_length=state["match_length"],
        score=(state["score"][me], state["score"][1 - me]),
        jacoby=bool(state["jacoby"]),
    )


def test_gnubg_reference_match_ids() -> None:
    recs = [r for r in GNUBG_RECORDS if r["kind"] == "match"]
    assert len(recs) >= 100
    for rec in recs:
        expected = _expected_match(rec["state"])
        assert decode_match_id(rec["match_id"]) == expected, rec
        assert encode_match_id(expected) == rec["match_id"], rec


def test_dice_are_kept_higher_first() -> None:
    """gnubg writes the higher die first; an ID in roll order still reads."""
    assert MatchInfo(dice=(1, 6)).dice == (6, 1)
    assert encode_match_id(MatchInfo(dice=(1, 6))) == encode_match_id(MatchInfo(dice=(6, 1)))
    key = int.from_bytes(base64.b64decode("cAkFAAAAAAAE"), "little")  # gnubg: 2 and 1
    swapped = (key & ~(0b111111 << 15)) | (1 << 15) | (2 << 18)  # die 1 = 1, die 2 = 2
    low_first = base64.b64encode(swapped.to_bytes(9, "little")).decode()
    assert decode_match_id(low_first).dice == (2, 1)
    assert encode_match_id(decode_match_id(low_first)) == "cAkFAAAAAAAE"


@given(any_match_info())
def test_match_id_round_trip(info: MatchInfo) -> None:
    assert decode_match_id(encode_match_id(info)) == info


@given(st.integers(0, (1 << 72) - 1))
def test_match_id_decoding_is_canonical(key: int) -> None:
    mid = base64.b64encode(key.to_bytes(9, "little")).decode()
    try:
        info = decode_match_id(mid)
    except PositionError:
        return
    die1, die2 = key >> 15 & 7, key >> 18 & 7
    if die1 >= die2:
        assert encode_match_id(info) == mid
    else:
        assert decode_match_id(encode_match_id(info)) == info


def _match_key(owner: int = 3, **fields: int) -> str:
    """Hand-made Match ID (centred cube by default) with chosen raw bit fields."""
    first_bit = {"crawford": 7, "state": 8, "die1": 15, "die2": 18, "length": 21,
                 "score0": 36, "score1": 51, "spare": 67}  # fmt: skip
    key = owner << 4
    for name, value in fields.items():
        key |= value << first_bit[name]
    return base64.b64encode(key.to_bytes(9, "little")).decode()


@pytest.mark.parametrize(
    ("mid", "message"),
    [
        ("cAgAAAAAAAA", "12 characters, got 11"),
        ("cAgAAAAAAAAA=", "12 characters, got 13"),
        ("cAgAAAAAAA.A", "outside base64"),
        (_match_key(owner=2), "cube owner 2"),
        (_match_key(state=5), "game state 5"),
        (_match_key(die1=7, die2=1), "impossible dice"),
        (_match_key(die1=3, die2=0), "impossible dice"),
        (_match_key(spare=1), "stray bits"),
        (_match_key(length=65), "match_length must be 0 .money. to 64"),
        (_match_key(length=7, score0=8), "0..7 .the match length."),
        (_match_key(crawford=1), "Crawford rule exists only in match play"),
    ],
)
def test_bad_match_ids(mid: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        decode_match_id(mid)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cube_value": 3}, "power of two"),
        ({"cube_owner": "left"}, "cube_owner"),
        ({"player_on_roll": 2}, "player_on_roll"),
        ({"resignation": 4}, "resignation"),
        ({"dice": (0, 3)}, "dice"),
        ({"game_state": 9}, "game_state"),
        ({"match_length": 5, "score": (6, 0)}, "score"),
    ],
)
def test_bad_match_info(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PositionError, match=message):
        MatchInfo(**kwargs)


def test_gnubg_id_pair() -> None:
    gid = encode_gnubg_id(START_BOARD, MatchInfo(match_length=7, score=(2, 3), dice=(4, 1)))
    assert gid == "4HPwATDgc/ABMA:cAnmADAAEAAE"
    board, info = decode_gnubg_id(gid)
    assert board == list(START_BOARD)
    assert info.score == (2, 3)
    with pytest.raises(PositionError, match="PositionID:MatchID"):
        decode_gnubg_id("4HPwATDgc/ABMA")


# --------------------------------------------------------------------------------------
# XGID
# --------------------------------------------------------------------------------------
XG_START = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def test_xgid_start_position() -> None:
    info = decode_xgid(XG_START)
    assert info.board == START_BOARD
    assert (info.turn, info.dice, info.cube_value, info.cube_owner) == (1, (0, 0), 1, "centered")
    assert info.max_cube == 1024
    assert encode_xgid(info) == XG_START
    assert decode_xgid(XG_START[5:]) == info  # the prefix is optional


def test_xgid_turn_flips_to_the_player_on_roll() -> None:
    """As gnubg reads it: with turn -1 the top player (lower case) is the mover."""
    bottom_view = board("mover: 6:2 bar:1; opp: 20:1 bar:3")
    up = decode_xgid("c-----B-------------a----A:2:1:1:31:4:6:1:7:10")
    down = decode_xgid("c-----B-------------a----A:2:1:-1:31:4:6:1:7:10")
    assert up.board == bottom_view and encode_position_id(up.board) == "EAAADgwAgAAAAA"
    assert list(down.board) == _flip(bottom_view)
    assert encode_position_id(down.board) == "YAAABAEA4AAAAA"
    assert (up.score, up.cube_owner) == ((4, 6), "mover")  # score1 and owner 1: bottom player
    assert (down.score, down.cube_owner) == ((6, 4), "opponent")
    assert up.crawford and down.crawford and not up.jacoby


def test_xgid_double_offered() -> None:
    """``D``: the player on roll (turn) has doubled; the cube field is the old value."""
    info = decode_xgid("c-----B-------------a----A:1:0:-1:D:0:0:3:0:10")
    assert info.cube_action == "D" and info.dice == (0, 0) and info.cube_value == 2
    assert info.jacoby and info.beaver
    assert encode_position_id(info.board) == "YAAABAEA4AAAAA"
    match = info.to_match_info()
    assert match.double_offered and match.turn != match.player_on_roll
    assert XGIDInfo.from_match_info(info.board, match, max_cube=1024) == XGIDInfo(
        **{**info.__dict__, "turn": 1, "beaver": False}
    )
    for action in ("B", "R"):
        beavered = decode_xgid(f"c-----B-------------a----A:1:0:-1:{action}:0:0:3:0:10")
        assert beavered.cube_action == action
        with pytest.raises(PositionError, match="beaver or a raccoon"):
            beavered.to_match_info()


def test_xgid_without_max_cube_field() -> None:
    info = decode_xgid(XG_START.rsplit(":", 1)[0])
    assert info.max_cube == 64
    assert encode_xgid(info) == XG_START.rsplit(":", 1)[0] + ":6"


def test_gnubg_reference_xgids() -> None:
    """gnubg's `set xgid` reading: same board, same match state, and exact re-encoding."""
    recs = [r for r in GNUBG_RECORDS if r["kind"] == "xgid"]
    assert len(recs) >= 100
    assert {decode_xgid(r["xgid"]).turn for r in recs} == {1, -1}
    for rec in recs:
        info = decode_xgid(rec["xgid"])
        assert list(info.board) == decode_position_id(rec["position_id"]), rec
        assert encode_match_id(info.to_match_info()) == rec["match_id"], rec
        assert encode_xgid(info) == rec["xgid"], rec


@given(xgid_infos())
def test_xgid_round_trip(info: XGIDInfo) -> None:
    text = encode_xgid(info)
    assert decode_xgid(text) == info
    assert text.startswith("XGID=") and len(text.split(":")[0]) == 31


@given(boards(), any_match_info())
def test_match_info_through_xgid(board: list[int], match: MatchInfo) -> None:
    """An XGID carries the mover's board and the match state a Match ID carries."""
    if match.resignation or (match.double_offered and match.dice != (0, 0)):
        return
    normal = MatchInfo(**{**match.__dict__, "player_on_roll": 1, "game_state": GameState.PLAYING,
                          "turn": 0 if match.double_offered else 1,
                          "jacoby": match.jacoby and not match.match_length})  # fmt: skip
    info = decode_xgid(encode_xgid(XGIDInfo.from_match_info(board, normal)))
    assert list(info.board) == board
    assert info.to_match_info() == normal


@pytest.mark.parametrize(
    ("xgid", "message"),
    [
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0", "8 ':'-separated fields"),
        ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "25 characters"),
        ("XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10", "character 24 .* 'P'"),
        ("XGID=-b----E-C---eE---c-e--*-B-:0:0:1:00:0:0:0:0:10", "character 22"),
        ("XGID=A-b---E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "top player's bar"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "turn must be 1 or -1"),
        ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "cube owner"),
        ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "whole number"),
        ("XGID=-b----E-C---eE---c-e----B-:16:0:1:00:0:0:0:0:10", "cube field"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:70:0:0:0:0:10", "dice must be"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:3:0:0:0:0:10", "dice must be"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:7:10", "rules field 2"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "rules field 4"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:-1:0:0:7:10", "cannot be negative"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:16", "max cube"),
        ("XGID=-b----E-C---eE---c-e---BB-:0:0:1:00:0:0:0:0:10", "more than 15"),
    ],
)
def test_bad_xgids(xgid: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        decode_xgid(xgid)


def test_bad_xgid_info() -> None:
    with pytest.raises(PositionError, match="Crawford"):
        XGIDInfo(board=START_BOARD, crawford=True)
    with pytest.raises(PositionError, match="Jacoby"):
        XGIDInfo(board=START_BOARD, match_length=5, jacoby=True)
    with pytest.raises(PositionError, match="cube action and rolled dice"):
        XGIDInfo(board=START_BOARD, cube_action="D", dice=(3, 1))
    with pytest.raises(PositionError, match="resignation"):
        XGIDInfo.from_match_info(START_BOARD, MatchInfo(resignation=1))


# --------------------------------------------------------------------------------------
# live gnubg
# --------------------------------------------------------------------------------------
@pytest.mark.gnubg  # skipped by conftest.py where gnubg is not installed
def test_live_gnubg_sample() -> None:
    """A fresh sample (another seed than the stored file) through a real gnubg."""
    spec = importlib.util.spec_from_file_location(
        "make_id_reference", ROOT / "scripts" / "make_id_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    records = module.build_records(seed=7, n_boards=40, n_matches=40, n_xgids=40, gnubg=GNUBG)
    for rec in records:
        if rec["kind"] == "position":
            assert decode_position_id(rec["position_id"]) == rec["board"], rec
            assert encode_position_id(rec["board"]) == rec["position_id"], rec
        elif rec["kind"] == "match":
            assert encode_match_id(_expected_match(rec["state"])) == rec["match_id"], rec
        else:
            info = decode_xgid(rec["xgid"])
            assert list(info.board) == decode_position_id(rec["position_id"]), rec
            assert encode_match_id(info.to_match_info()) == rec["match_id"], rec
