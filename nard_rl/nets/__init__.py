"""Encodings, nets and their checkpoints, the fast forward pass, the pruning and race nets,
and the evaluators that put them together."""
