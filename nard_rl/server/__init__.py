"""nard-rl as a service: HTTP API, gnubg's external-player protocol and a web board.

Only ``analysis`` and ``state`` are imported by the command-line batch modes; the HTTP
parts (``app``, ``models``) import FastAPI and are loaded by ``nard serve`` alone.
"""
