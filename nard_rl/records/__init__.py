"""Game records: reading GNU Backgammon's ``.sgf`` and Jellyfish ``.mat`` match files
(as gnubg, eXtreme Gammon and this project's own ``nard_rl.engine.matfile`` write them)
and replaying every action through the engine.

``read_match(path)`` (or ``parse_match(text)``) gives a ``MatchRecord``: the actions as
the file states them.  ``replay(record)`` feeds them to ``nard_rl.engine.game.Game`` and
gives a ``ReplayedMatch`` whose games hold the engine's typed records; a move the rules
do not allow, or a line that cannot be read, raises ``RecordError`` naming the game, the
move number and the text.  Nothing here imports torch.
"""

from nard_rl.records.model import (
    Action,
    GameRecord,
    MatchRecord,
    RecordError,
    ReplayedGame,
    ReplayedMatch,
)
from nard_rl.records.reader import parse_match, read_match
from nard_rl.records.replay import from_games, load_match, replay

__all__ = [
    "Action",
    "GameRecord",
    "MatchRecord",
    "RecordError",
    "ReplayedGame",
    "ReplayedMatch",
    "from_games",
    "load_match",
    "parse_match",
    "read_match",
    "replay",
]
