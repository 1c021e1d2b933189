"""Shared helpers for the `rapidrpc` command-line tests.

The tool under test comes from the RAPIDRPC environment variable (what ctest
sets) or ../../build/bin/rapidrpc; the daemon it talks to is started by the
integration tests' harness (tests/integration/harness.py, RAPIDRPCD).
Python 3 standard library only; every subprocess has a timeout.
"""

import errno
import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time

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


def run_on_terminal(*args, stdout_terminal=True, stderr_terminal=True, columns=200,
                    term="xterm", timeout=RUN_TIMEOUT):
    """Runs rapidrpc with `args`, its standard output and standard error on
    a pseudo-terminal `columns` wide and of type `term` (TERM; None: unset),
    but for the one of them that `stdout_terminal` or `stderr_terminal`
    puts on a pipe instead. Returns
    (exit status, what the terminal got, what the pipe got) as text; the
    carriage return the terminal puts before each newline is taken out
    again, so that any carriage return left is the program's own. Kills it
    and raises subprocess.TimeoutExpired past `timeout` seconds."""
    cmd = [tool_path(), *map(str, args)]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    try:
        env = {k: v for k, v in os.environ.items() if k != "TERM"}
        if term is not None:
            env["TERM"] = term
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env,
                                stdout=slave if stdout_terminal else subprocess.PIPE,
                                stderr=slave if stderr_terminal else subprocess.PIPE)
    finally:
        os.close(slave)  # the child's copies are the last: their close is the terminal's end
    piped = proc.stdout or proc.stderr
    pipe = piped.fileno() if piped is not None else None
    got = {master: bytearray(), pipe: bytearray()}
    open_fds = {fd for fd in got if fd is not None}
    deadline = time.monotonic() + timeout
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
            for fd in select.select(list(open_fds), [], [], left)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError as e:  # EIO: the terminal's other side is closed
                    if e.errno != errno.EIO:
                        raise
                    data = b""
                if data:
                    got[fd] += data
                else:
                    open_fds.discard(fd)
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if piped is not None:
            piped.close()
    terminal = got[master].decode(errors="replace").replace("\r\n", "\n")
    return status, terminal, got[pipe].decode(errors="replace")


# What `rapidrpc bench` writes before each text of its live line, and once
# at the end: back to the start of the line, then erase to its end.
REWIND = "\r\x1b[K"


def split_terminal(text):
    """What a terminal got from `rapidrpc bench`, in three: what came before
    its live line's first rewind, the texts of the line, and what came after
    the last rewind (the summary)."""
    parts = text.split(REWIND)
    if len(parts) == 1:
        return "", [], text
    return parts[0], parts[1:-1], parts[-1]


def free_port():
    """A port on 127.0.0.1 with nothing listening (it was free a moment ago)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def describe(proc):
    return (f"command: {' '.join(proc.args)}\nexit status {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}")
