"""Supervised training on search-labelled positions: the stage after TD self-play.

TD(0) self-play plateaus because every target is the net's own one-step guess.  The
stronger bots (gnubg, wildbg, Open Sage) went further the same way: play the current net
against itself, label the positions it reaches with something better than the net itself
(its n-ply lookahead, or rollouts), fit the net to those labels, keep the new generation
only when it wins, and repeat.  The four stages live in their own modules:

* ``nard_rl.training.supervised.label``: collect decisions by noisy self-play and label the best
  candidates of each in resumable shards (``label_shard(k, K)`` does shard k of K);
* ``nard_rl.training.supervised.fit``: fit a net to the labels (Adam, held-out loss, early stop);
* ``nard_rl.training.supervised.gate``: accept a generation only if it beats the previous one by
  more than two standard errors in duplicate-dice games;
* ``nard_rl.training.supervised.pipeline``: the generation loop and its on-disk layout.
"""
