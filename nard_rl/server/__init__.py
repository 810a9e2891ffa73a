"""nard-rl as a service: HTTP API, gnubg's external-player protocol and a web board.

The command-line batch modes import only ``state`` (request parsing), ``jsonl`` (the one
JSON-lines loop) and, with a net, ``analysis`` and ``lines``; the HTTP parts (``app``,
``routes_*``, ``models``, ``http``) import FastAPI and are loaded by ``nard serve`` alone.
Nothing here imports ``nard_rl.commands``: the CLI is built on the server's parsing.
"""
