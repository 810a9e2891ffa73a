"""Learning: TD self-play training, distribution across processes, the supervised pipeline."""
