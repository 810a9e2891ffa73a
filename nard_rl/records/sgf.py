"""Reading GNU Backgammon's ``.sgf`` match files (SGF FF[4], ``GM[6]``).

What gnubg writes, as far as a replay needs it:

* one game tree ``(;...)`` per game; its root node holds ``MI[length:N][game:G][ws:S0]
  [bs:S1]`` (match length, 0 for money, and the score before the game), ``PW``/``PB``
  the names of White (player 0, the left column of its ``.mat`` export) and Black
  (player 1), ``RU`` the rules (``Crawford``, ``Jacoby``), ``RE[W+2]`` the result
  (``R`` appended for a resignation);
* then one node per action: ``W[...]`` or ``B[...]`` holding ``double``, ``take`` or
  ``drop``, or a move: the two dice and then two letters a step, ``a``..``x`` the points
  (White counts ``a`` as its point 1, Black as its point 24), ``y`` the bar and ``z``
  off.  Analysis properties (``A``, ``DA``, ``MR``, ...) are ignored.

Setup properties (``AE``, ``AW``, ``AB``, ``CV``, ``CO``, ``DI``, ``PL``: a game from an
edited position) are refused with a message: a replay needs the game from its start.
"""

from __future__ import annotations

import re

from nard_rl.records.model import Action, GameRecord, MatchRecord, MoveNumbers, RecordError

_SETUP = ("AE", "AW", "AB", "CV", "CO", "DI", "PL")
_PROP = re.compile(r"\s*([A-Za-z]+)((?:\s*\[(?:\\.|[^\]\\])*\])+)", re.S)
_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.S)


def _trees(text: str, source: str) -> list[list[dict[str, list[str]]]]:
    """The game trees of an SGF text, each as its main line of nodes (property -> values)."""
    trees: list[list[dict[str, list[str]]]] = []
    i, n = 0, len(text)
    depth = 0
    nodes: list[dict[str, list[str]]] = []
    while i < n:
        c = text[i]
        if c == "(":
            depth += 1
            if depth == 1:
                nodes = []
            i += 1
        elif c == ")":
            if depth == 0:
                raise RecordError(f"{source}: unbalanced ')' at character {i}")
            depth -= 1
            if depth == 0:
                trees.append(nodes)
            i += 1
        elif c == ";":
            if depth == 0:
                raise RecordError(f"{source}: a node outside a game tree at character {i}")
            node: dict[str, list[str]] = {}
            i += 1
            while True:
                m = _PROP.match(text, i)
                if not m:
                    rest = text[i:].lstrip()
                    if rest[:1].isalpha():  # a property whose value does not close
                        if "]" not in rest:
                            raise RecordError(
                                f"{source}: the file ends inside a property (truncated?)"
                            )
                        raise RecordError(
                            f"{source}: unreadable property at character {i}: {rest[:40]!r}"
                        )
                    break
                values = [
                    v.replace("\\]", "]").replace("\\\\", "\\") for v in _VALUE.findall(m.group(2))
                ]
                node.setdefault(m.group(1), []).extend(values)
                i = m.end()
            if depth == 1:  # variations (depth > 1) are not the game played
                nodes.append(node)
        elif c.isspace():
            i += 1
        else:
            raise RecordError(f"{source}: unexpected {c!r} at character {i}: not SGF")
    if depth:
        raise RecordError(f"{source}: the file ends inside a game tree (truncated?)")
    return trees


def _point(letter: str, player: int) -> int:
    """A move letter as a point of the mover's numbering (25 bar, 0 off)."""
    if letter == "y":
        return 25
    if letter == "z":
        return 0
    index = ord(letter) - ord("a")
    if not 0 <= index < 24:
        raise ValueError(letter)
    return index + 1 if player == 0 else 24 - index


def _info(root: dict[str, list[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in root.get("MI", []):
        key, _, val = value.partition(":")
        out[key.strip()] = val.strip()
    return out


def parse_sgf(text: str, source: str = "<text>") -> MatchRecord:
    """A gnubg ``.sgf`` text as a ``MatchRecord`` (actions as written; ``replay`` checks)."""
    trees = _trees(text, source)
    if not trees:
        raise RecordError(f"{source}: no game tree '(;...)' in the file")
    games: list[GameRecord] = []
    names: tuple[str, str] | None = None
    length: int | None = None
    jacoby: bool | None = None
    for index, nodes in enumerate(trees, start=1):
        where = f"{source}: game {index}"
        if not nodes:
            raise RecordError(f"{where}: an empty game tree")
        root = nodes[0]
        if root.get("GM", ["6"])[0] != "6":
            raise RecordError(f"{where}: GM[{root['GM'][0]}] is not backgammon (GM[6])")
        info = _info(root)
        try:
            g_length = int(info.get("length", "0"))
            score = (int(info.get("ws", "0")), int(info.get("bs", "0")))
        except ValueError:
            raise RecordError(
                f"{where}: unreadable MI[...] match information {root['MI']}"
            ) from None
        if length is None:
            length = g_length
        elif g_length != length:
            raise RecordError(f"{where}: match length {g_length} differs from game 1's {length}")
        pair = (root.get("PW", ["White"])[0], root.get("PB", ["Black"])[0])
        if names is None:
            names = pair
        elif pair != names:
            raise RecordError(f"{where}: players {pair} differ from game 1's {names}")
        rules = " ".join(root.get("RU", [])).lower()
        if "jacoby" in rules:
            jacoby = True
        elif g_length == 0 and root.get("RU") is not None:
            jacoby = False if jacoby is None else jacoby
        game = GameRecord(index, score=score)
        numbers = MoveNumbers()
        for node in nodes:
            bad = [p for p in _SETUP if p in node]
            if bad:
                raise RecordError(
                    f"{where}: setup properties {', '.join(bad)} (a game from an edited "
                    "position) cannot be replayed"
                )
            for colour, player in (("W", 0), ("B", 1)):
                for value in node.get(colour, []):
                    game.actions.append(_action(value.strip(), player, numbers, where))
        result = root.get("RE", [""])[0].strip()
        if m := re.match(r"^([WB])\+(\d+)", result):
            player = 0 if m.group(1) == "W" else 1
            number = numbers.next(player)
            game.actions.append(Action("win", player, number, result, value=int(m.group(2))))
        games.append(game)
    assert names is not None and length is not None
    return MatchRecord(length, names, games, source, "sgf", jacoby)


def _action(value: str, player: int, numbers: MoveNumbers, where: str) -> Action:
    low = value.lower()
    if low in ("double", "take", "drop"):
        kind = {"double": "double", "take": "take", "drop": "drop"}[low]
        return Action(kind, player, numbers.next(player), value)  # type: ignore[arg-type]
    number = numbers.next(player)
    m = re.fullmatch(r"([1-6])([1-6])([a-z]*)", low)
    if not m or len(m.group(3)) % 2 or len(m.group(3)) > 8:
        raise RecordError(f"{where}, move {number}: cannot read the move {value!r}")
    letters = m.group(3)
    try:
        steps = tuple(
            (_point(letters[k], player), _point(letters[k + 1], player))
            for k in range(0, len(letters), 2)
        )
    except ValueError:
        raise RecordError(f"{where}, move {number}: a point out of range in {value!r}") from None
    dice = (int(m.group(1)), int(m.group(2)))
    shown = f"{dice[0]}{dice[1]}: " + " ".join(f"{a}/{b}" for a, b in steps)
    return Action("move", player, number, shown.strip(), dice, steps)
