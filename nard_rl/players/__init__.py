"""Move choosers: benchmark players (random, pubeval), GNU Backgammon, and a registry
through which the network module adds checkpoint players (see ``make_player``)."""

from nard_rl.players.base import (
    Player,
    PlayerFactory,
    PlayerSpec,
    make_player,
    parse_player_spec,
    register_player_factory,
)

__all__ = [
    "Player",
    "PlayerFactory",
    "PlayerSpec",
    "make_player",
    "parse_player_spec",
    "register_player_factory",
]
