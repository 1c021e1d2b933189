"""Shared helpers for the `rapidrpc` command-line tests.

The tool under test comes from the RAPIDRPC environment variable (what ctest
sets) or ../../build/bin/rapidrpc; the daemon it talks to is started by the
integration tests' harness (tests/integration/harness.py, RAPIDRPCD).
Python 3 standard library only; every subprocess has a timeout.
"""

import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "integration"))

import harness  # noqa: E402,F401  (re-exported for the test files)

RUN_TIMEOUT = 120  # seconds; a generous bound on one rapidrpc run on a busy 2-core VM

# Exit statuses documented in docs/cli.md.
EXIT_OK, EXIT_FAULT, EXIT_TRANSPORT, EXIT_USAGE = 0, 1, 2, 64


def tool_path():
    path = os.environ.get("RAPIDRPC") or os.path.join(_HERE, "..", "..", "build", "bin", "rapidrpc")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(f"rapidrpc binary not found or not executable: {path} "
                           "(set RAPIDRPC=/path/to/rapidrpc)")
    return path


def run_tool(*args, timeout=RUN_TIMEOUT):
    """Runs rapidrpc with `args`; returns the CompletedProcess (text mode)."""
    return subprocess.run([tool_path(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def free_port():
    """A port on 127.0.0.1 with nothing listening (it was free a moment ago)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def describe(proc):
    return (f"command: {' '.join(proc.args)}\nexit status {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}")
