"""Shared pieces of the fault tests (see README.md).

Every test here injects one fault into a running rapidrpcd while a
continuous load runs against it (`rapidrpc bench`, a subprocess, whose JSON
summary says how many calls were made, answered as expected, and failed and
how), then checks what the load saw, and that afterwards a normal call on a
NEW connection is answered within SERVE_DEADLINE seconds.

The daemon and its helpers come from tests/integration/harness.py; the
small /proc readers and the normal call from tests/hostile/hostile.py (the
same checks the hostile tier makes after each hostile request). The load
tool is RAPIDRPC if set, else the `rapidrpc` next to the daemon under test
(RAPIDRPCD).
"""

import json
import os
import signal
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "integration"))
sys.path.insert(0, os.path.join(_HERE, "..", "hostile"))

import harness  # noqa: E402
import hostile  # noqa: E402

# How long the normal call after a fault may take, connect to reply.
SERVE_DEADLINE = hostile.SERVE_DEADLINE

# A sanitizer build (set by CMakeLists.txt).
SANITIZED = os.environ.get("RAPIDRPCD_SANITIZED") == "1"

cpu_seconds = hostile.cpu_seconds
open_fds = hostile.open_fds


def normal_call(port, deadline=SERVE_DEADLINE):
    """sample.add(20, 22) on a new connection, answered within `deadline`
    (connect to reply); returns the seconds it took."""
    return hostile.normal_call(port, deadline)


def bench_path():
    """The `rapidrpc` tool: the RAPIDRPC environment variable (what ctest
    sets, as for tests/cli), else the one beside the daemon under test."""
    path = os.environ.get("RAPIDRPC") or os.path.join(
        os.path.dirname(harness.daemon_path()), "rapidrpc")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(f"rapidrpc not found or not executable: {path} "
                           "(set RAPIDRPC=/path/to/rapidrpc)")
    return path


def _die_with_parent():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, Linux only
        pass


class Bench:
    """`rapidrpc bench --json` against the daemon, as a subprocess: start(),
    then result() waits for its summary (a dict: calls, ok, unfinished,
    errors{total, connect, io, timeout, http_status, bad_response, fault,
    mismatch}, first_error, elapsed_s, latency_us{p50, p99, max, ...},
    timeline{slot_s, ok[], errors[]})."""

    def __init__(self, port, method, *args, connections=4, duration=4.0, requests=None,
                 options=()):
        """A run of `duration` seconds, or of `requests` calls (then every
        call is answered before it ends, and `duration` is how long it is
        expected to take)."""
        self.duration = duration
        length = ["-n", str(requests)] if requests else ["-d", str(duration)]
        self.args = [bench_path(), "bench", "--json", "-c", str(connections),
                     *length, *map(str, options),
                     f"http://{harness.HOST}:{port}/RPC2", method, *map(str, args)]
        self.proc = None
        self.started = None

    def start(self):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        return self

    def running(self):
        return self.proc.poll() is None

    def result(self, grace=15.0):
        """The summary, once the run is over (its duration plus `grace`)."""
        left = self.duration + grace - (time.monotonic() - self.started)
        try:
            out, err = self.proc.communicate(timeout=max(1.0, left))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"rapidrpc bench did not end within {self.duration + grace} s: "
                                 f"{err.decode('utf-8', 'replace')[-2000:]}") from None
        # 0: every call as expected, 1: some failed; 2: it could not start.
        if self.proc.returncode not in (0, 1):
            raise AssertionError(f"rapidrpc bench exited with {self.proc.returncode}: "
                                 f"{err.decode('utf-8', 'replace')[-2000:]}\n{' '.join(self.args[:8])}")
        try:
            return json.loads(out)
        except ValueError:
            raise AssertionError(f"rapidrpc bench printed no JSON summary: {out[:500]!r} "
                                 f"{err[-1000:]!r}") from None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def describe(r):
    """One line of a bench summary, for messages."""
    lat = r.get("latency_us", {})
    return (f"{r['calls']} calls, {r['ok']} ok, {r['unfinished']} unfinished, "
            f"errors {r['errors']}, first error {r['first_error']!r}, in {r['elapsed_s']:.2f} s, "
            f"latency p50 {lat.get('p50')} us, p99 {lat.get('p99')} us, max {lat.get('max')} us")


def ok_in_last(r, seconds):
    """Calls answered as expected in the last `seconds` of the run."""
    slot = r["timeline"]["slot_s"] or 0.1
    n = max(1, int(round(seconds / slot)))
    return sum(r["timeline"]["ok"][-n:])


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def children(pid, cmdline_has=None):
    """{pid: start time in clock ticks} of the live (not zombie) children of
    `pid`, those whose command line contains `cmdline_has` if given."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = _stat(name)
            if int(fields[1]) != pid or fields[0] in ("Z", "X"):
                continue
            if cmdline_has is not None:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if cmdline_has.encode() not in f.read().split(b"\0"):
                        continue
            out[int(name)] = int(fields[19])
        except (OSError, IndexError, ValueError):
            continue
    return out
