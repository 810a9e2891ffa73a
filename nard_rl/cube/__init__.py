"""The doubling cube: the cube model, match equity, cubeful lookahead."""
