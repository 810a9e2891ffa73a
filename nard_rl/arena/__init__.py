"""Games between players: duplicate-dice matches, cubeful sessions, tournaments."""
