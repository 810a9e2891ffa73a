"""Typed request and response bodies of the HTTP API (they are also its OpenAPI schema).

Request models only check shapes and ranges (integers strictly: JSON ``true`` is no die
and ``2.0`` no checker count); the meaning (a legal board, a readable ID,
a cube the rules allow) is checked by ``nard_rl.server.state`` so that every front end
gives the same error messages.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from nard_rl.server.state import HINT_EXPECTED, POSITION_EXPECTED

MAX_EVALUATE_POSITIONS = 512
"""Most positions one ``/v1/evaluate`` request may carry."""

Int = StrictInt
"""An integer that is one in JSON: ``true`` is not 1 and ``1.0`` is not 1 (pydantic's
lax mode would take both)."""

Owner = Literal["centered", "mover", "opponent"]
ResignKind = Literal["single", "gammon", "backgammon"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cube(Strict):
    value: Int = Field(1, description="cube value: 1, 2, 4, ..., 64")
    owner: Owner = Field("centered", description="mover = the side whose view the board is")


class MatchState(Strict):
    length: Int = Field(0, ge=0, le=64, description="match length; 0 is money play")
    score: list[Int] = Field([0, 0], min_length=2, max_length=2, description="[mover, opponent]")
    crawford: bool = Field(False, description="this is the Crawford game (R34)")


class PositionIn(Strict):
    """One position (exactly one of board, position_id, xgid, gnubg_id) and its context."""

    EXPECTED: ClassVar[str] = POSITION_EXPECTED

    board: list[Int] | None = Field(
        None, min_length=26, max_length=26, description="26 ints from the mover's view"
    )
    position_id: str | None = Field(None, max_length=64, description="GNUBG Position ID")
    xgid: str | None = Field(None, max_length=128, description="XGID (carries cube and score)")
    gnubg_id: str | None = Field(None, max_length=128, description="'PositionID:MatchID'")
    rules: Literal["standard", "mars"] | None = None
    cube: Cube | None = None
    match: MatchState | None = None
    jacoby: bool | None = Field(None, description="Jacoby rule, money play only (R32)")

    def as_request(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class HintRequest(PositionIn):
    EXPECTED: ClassVar[str] = HINT_EXPECTED

    dice: list[Int] | None = Field(
        None, min_length=2, max_length=2, description="the roll; absent: cube analysis"
    )
    ply: Int | None = Field(
        None, ge=0, le=3, description="lookahead (server default if absent; at most max_ply)"
    )
    top: Int | None = Field(None, ge=1, le=5000, description="list only the best N plays")


class EvaluateRequest(Strict):
    EXPECTED: ClassVar[str] = (
        'a JSON object with "positions": a list of position objects ("board", ...)'
    )

    positions: list[PositionIn] = Field(..., min_length=1, max_length=MAX_EVALUATE_POSITIONS)
    afterstate: bool = Field(
        False,
        description="false: positions before the roll (side on roll's view); true: "
        "afterstates (the side that just moved, opponent to roll)",
    )


class ActionRequest(PositionIn):
    """A game state from the bot's view: what does the bot do now?"""

    EXPECTED: ClassVar[str] = HINT_EXPECTED

    dice: list[Int] | None = Field(None, min_length=2, max_length=2, description="rolled dice")
    doubled: bool = Field(False, description="the opponent (on roll) has doubled the bot")
    resignation: ResignKind | None = Field(None, description="the opponent offers to resign")
    may_double: bool = Field(True, description="false: the bot may only roll (no cube access)")
    ply: Int | None = Field(None, ge=0, le=3, description="at most the server's max_ply")


class Probabilities(BaseModel):
    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float


class PlayOut(BaseModel):
    move: str
    equity: float
    diff: float
    probs: Probabilities
    ply: int
    board: list[int]
    position_id: str | None = Field(
        None, description="the resulting position seen by the next roller (best three plays)"
    )


class HintResponse(BaseModel):
    position_id: str
    dice: list[int] | None
    equity: str | None = Field(None, description="what plays are ranked by")
    ply: int | None = None
    plays: list[PlayOut] | None = None
    cube: dict[str, Any] | None = Field(None, description="cube analysis (no dice given)")


class ActionResponse(BaseModel):
    action: Literal["roll", "double", "take", "pass", "move", "accept", "reject"]
    move: str | None = None
    board: list[int] | None = None
    analysis: dict[str, Any] | None = None


class NewGame(Strict):
    EXPECTED: ClassVar[str] = (
        'a JSON object of optional "rules", "match_length", "first", "seed" and "ply"'
    )

    rules: Literal["standard", "mars"] = "standard"
    match_length: Int = Field(0, ge=0, le=25, description="0: a money session")
    first: Literal["opening", "human", "bot"] = Field(
        "opening", description="who moves first: the opening roll decides (R5), or fixed"
    )
    seed: Int | None = Field(None, ge=0, le=2**63 - 1)
    ply: Int | None = Field(None, ge=0, le=3, description="the bot's lookahead (server default)")


class MoveIn(Strict):
    EXPECTED: ClassVar[str] = (
        'a JSON object with "move" (e.g. "24/18 13/11") or "board" (26 integers)'
    )

    move: str | None = Field(None, max_length=64, description="e.g. '24/18 13/11'")
    board: list[Int] | None = Field(None, min_length=26, max_length=26)
    commit: bool = Field(True, description="false: keep the play pending, changeable (R38)")


class ResignIn(Strict):
    EXPECTED: ClassVar[str] = (
        'a JSON object with an optional "kind": "single", "gammon" or "backgammon"'
    )

    kind: ResignKind | None = None


class WildbgProbabilities(BaseModel):
    win: float
    winG: float  # wildbg's field names
    winBg: float
    loseG: float
    loseBg: float


class WildbgDetail(BaseModel):
    from_: int = Field(alias="from")
    to: int


class WildbgMove(BaseModel):
    play: list[WildbgDetail]
    probabilities: WildbgProbabilities


class WildbgMoveResponse(BaseModel):
    moves: list[WildbgMove]


class WildbgCube(BaseModel):
    double: bool
    accept: bool


class WildbgEvalResponse(BaseModel):
    cube: WildbgCube
    probabilities: WildbgProbabilities
