"""Shared pieces of the hostile-input tests (see README.md).

Every test sends something hostile to the real rapidrpcd, checks that the
answer is a well-formed fault or HTTP error without internal detail (and that
the connection is closed after a framing error), and then, in tearDown, that
a normal call on a NEW connection succeeds within SERVE_DEADLINE seconds, a
pool call (load) answers, and no process of the daemon died from a signal
(harness.DaemonTestCase).

The daemon, its modes and the raw-HTTP helpers come from
tests/integration/harness.py, imported from there.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import harness  # noqa: E402
from harness import (RawClient, RawResponse, call_body, http_request, parse_fault,  # noqa: E402,F401
                     parse_result, raw_call_body)

# A sanitizer build (set by CMakeLists.txt): its memory use is the
# sanitizer's, so RSS checks are skipped.
SANITIZED = os.environ.get("RAPIDRPCD_SANITIZED") == "1"

# How long the normal call after each hostile one may take, connect to reply.
# In a sanitizer build, 3 s: the sanitized suite runs six tests at once on
# two cores, bound by the CPU, and in fork mode each connection forks a
# sanitized child, which takes tenths of a second of CPU to start; a
# clean-clone run saw fork mode's call miss 1 s there.
SERVE_DEADLINE = 3.0 if SANITIZED else 1.0

# What no answer may carry: paths, source names, exception text.
LEAKS = ("/etc/", "/work/", "/home/", "/usr/", ".cpp", ".hpp", "std::", "Traceback",
         "secret", "what()", "0x")


def _status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for pid {pid}")


def rss_kib(pid):
    """The resident set size of a process, in KiB (VmRSS)."""
    return _status_kib(pid, "VmRSS")


def peak_rss_kib(pid):
    """The highest resident set size of a process since it started or since
    reset_peak_rss(), in KiB (VmHWM): catches peaks that sampling misses."""
    return _status_kib(pid, "VmHWM")


def reset_peak_rss(pid):
    """Sets VmHWM back to the current RSS (proc(5), clear_refs)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def descendants(root):
    """The pids of the processes below `root` (any depth), from /proc."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        for pid, ppid in parents.items():
            if ppid == p and pid not in out:
                out.add(pid)
                todo.append(pid)
    return out


class PeakGrowth:
    """The most any one of the daemon's processes grew (VmHWM above its RSS
    before) while the `with` block ran, in KiB: in fork and prefork a child
    does the work of a connection, in the other modes the daemon itself. A
    process that appears meanwhile (a fork-mode child) is measured against
    the daemon's RSS, which it starts as a copy of; since it may end with its
    connection, a thread samples every process every few milliseconds."""

    def __init__(self, root):
        self.root = root
        self.base = {}
        self.peak = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample_once(self):
        for pid in {self.root} | descendants(self.root):
            try:
                hwm = peak_rss_kib(pid)
            except (OSError, AssertionError):
                continue
            self.peak[pid] = max(self.peak.get(pid, 0), hwm)

    def _sample(self):
        while not self._stop.wait(0.002):
            self._sample_once()

    def __enter__(self):
        for pid in {self.root} | descendants(self.root):
            try:
                reset_peak_rss(pid)
                self.base[pid] = rss_kib(pid)
            except (OSError, AssertionError):
                continue
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)
        self._sample_once()

    def grown_kib(self):
        """(KiB, pid) of the process that grew most."""
        start = self.base.get(self.root, 0)
        growth = {pid: hwm - self.base.get(pid, start) for pid, hwm in self.peak.items()}
        pid = max(growth, key=growth.get)
        return growth[pid], pid


def cpu_seconds(pid):
    """User plus system CPU time a process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minor_faults(pid):
    """The page faults a process has taken so far without reading a disk
    (minflt): one for each page of memory it touched fresh."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def normal_call(port, deadline=SERVE_DEADLINE):
    """One sample.add(20, 22) on a new connection; returns the seconds it took
    (connect to complete reply), raising if it failed or took over `deadline`."""
    t0 = time.monotonic()
    with RawClient(port, timeout=deadline) as c:
        c.send(http_request(call_body("sample.add", 20, 22)))
        resp = c.read_response()
    took = time.monotonic() - t0
    if resp.status != 200:
        raise AssertionError(f"the normal call got HTTP {resp.status}: {resp!r}")
    if parse_result(resp.decoded_body()) != 42:
        raise AssertionError(f"the normal call got a wrong result: {resp!r}")
    if took > deadline:
        raise AssertionError(f"the normal call took {took:.2f} s (limit {deadline} s)")
    return took


class HostileTestCase(harness.DaemonTestCase):
    """One daemon per class (daemon_args); after every test a normal call on a
    new connection must succeed within SERVE_DEADLINE, and a pool call too."""

    def tearDown(self):
        self.daemon.assert_alive()
        try:
            normal_call(self.daemon.port)
        except (OSError, AssertionError, harness.IncompleteResponse) as err:
            self.fail(f"no normal call within {SERVE_DEADLINE} s on a new connection after "
                      f"the hostile request: {err!r}\n{self.daemon.diagnostics()}")
        # Nor did it leave a worker thread or process stuck.
        harness.assert_pool_call_answers(self.daemon)
        super().tearDown()

    # -- faults ------------------------------------------------------------------

    def call_raw(self, body, headers=None):
        """POSTs `body` on a new connection; returns the RawResponse."""
        with RawClient(self.daemon) as c:
            c.send(http_request(body, headers=headers))
            return c.read_response()

    def assert_fault(self, body, codes, must_not_echo=()):
        """`body` gets HTTP 200 with a fault whose code is in `codes`, and a
        short message without internal detail or any of `must_not_echo`."""
        resp = self.call_raw(body)
        self.assertEqual(resp.status, 200, resp)
        self.assertTrue((resp.header("Content-Type") or "").startswith("text/xml"), resp)
        fault = parse_fault(resp.decoded_body())
        codes = (codes,) if isinstance(codes, int) else tuple(codes)
        self.assertIn(fault.faultCode, codes, f"{fault.faultString!r} for {body[:200]!r}")
        self.assert_clean_message(fault.faultString, must_not_echo)
        return fault

    def assert_clean_message(self, message, must_not_echo=()):
        self.assertIsInstance(message, str)
        self.assertLess(len(message), 300, message[:400])
        for leak in LEAKS + tuple(must_not_echo):
            self.assertNotIn(leak, message)

    def assert_result(self, body, expected):
        resp = self.call_raw(body)
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), expected)

    # -- HTTP errors -------------------------------------------------------------

    def assert_http_error(self, request, statuses, closes=True, after=b""):
        """Sends `request` (then `after`, say a smuggled request) on a new
        connection: the answer is one of `statuses` with a short text body;
        with `closes`, it says Connection: close, the server closes the
        connection, and nothing else is answered."""
        statuses = (statuses,) if isinstance(statuses, int) else tuple(statuses)
        with RawClient(self.daemon) as c:
            try:
                c.send(request + after)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server may close before reading it all; the answer must be there
            try:
                resp = c.read_response()
            except (harness.IncompleteResponse, ConnectionResetError) as err:
                self.fail(f"no HTTP error for {request[:120]!r}: {err!r}")
            self.assertIn(resp.status, statuses, f"{resp!r} for {request[:120]!r}")
            self.assertLess(len(resp.body), 200, resp)
            self.assert_clean_message(resp.body.decode("utf-8", "replace"))
            if closes:
                self.assertIn("close", resp.connection_tokens(), resp)
                try:
                    closed = c.at_eof(5)
                except ConnectionResetError:
                    closed = True
                self.assertTrue(closed, f"connection left open after {resp.status}")
            return resp
