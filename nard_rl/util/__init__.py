"""Foundation helpers every layer shares: atomic writes, progress bars, run locks, sharded work."""
