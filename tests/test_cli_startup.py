"""The CLI starts without torch: ``nard --help`` imports no command module, ``nard moves``
no network code, and no command module imports torch at import time (each does inside
``run``).  Start-up times themselves are measured by ``scripts/bench_cli.py``."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

from nard_rl import cli


def _python(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object as its last line."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


_LOADED = (
    "import json, sys\n"
    "def loaded():\n"
    "    return sorted(m for m in ('torch', 'numba', 'hydra', 'fastapi') if m in sys.modules)\n"
)


def test_nard_help_imports_no_command_and_no_torch() -> None:
    got = _python(
        _LOADED + "import contextlib, io\n"
        "from nard_rl.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "commands = sorted(m for m in sys.modules if m.startswith('nard_rl.commands.'))\n"
        "print(json.dumps({'heavy': loaded(), 'commands': commands, 'help': out.getvalue()}))\n"
    )
    assert got["heavy"] == []
    assert got["commands"] == []
    for name, (_, text) in cli.command_summaries().items():
        assert name in got["help"]  # type: ignore[operator]
        assert text.split()[0] in got["help"]  # type: ignore[operator]


def test_nard_moves_runs_without_torch() -> None:
    got = _python(
        _LOADED + "import contextlib, io\n"
        "from nard_rl.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    status = main(['moves', '--dice', '3', '1'])\n"
        "print(json.dumps({'heavy': loaded(), 'status': status, 'out': out.getvalue()}))\n"
    )
    assert got["status"] == 0
    assert "16 legal plays" in got["out"]  # type: ignore[operator]  (3-1 from the start)
    assert "torch" not in got["heavy"]  # type: ignore[operator]
    assert "hydra" not in got["heavy"] and "fastapi" not in got["heavy"]  # type: ignore[operator]


def test_no_command_module_imports_torch_at_import_time() -> None:
    modules = [m for m in cli.COMMAND_MODULES if importlib.util.find_spec(m) is not None]
    got = _python(
        "import importlib, json, sys\n"
        f"modules = {modules!r}\n"
        "offender = None\n"
        "for name in modules:\n"
        "    importlib.import_module(name)\n"
        "    if 'torch' in sys.modules:\n"
        "        offender = name\n"
        "        break\n"
        "print(json.dumps({'offender': offender}))\n"
    )
    assert got["offender"] is None, f"{got['offender']} imports torch at import time"


def test_the_static_help_lines_are_the_modules_own() -> None:
    summaries = cli.command_summaries()
    assert "moves" in summaries and "play" in summaries
    for name, (module_name, text) in summaries.items():
        module = importlib.import_module(module_name)
        assert (name, text) == (module.NAME, module.HELP)


def test_a_reader_that_closes_the_pipe_gets_a_quiet_exit() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "nard_rl", "moves", "--dice", "1", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -0`: nothing will ever be read
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == cli.BROKEN_PIPE_STATUS
    assert "Traceback" not in err and "BrokenPipe" not in err, err
