"""Looking ahead: n-ply search, rollouts, and rollout requests."""
