"""Test harness for the rapidrpcd end-to-end tests.

Starts the real daemon on 127.0.0.1 with port 0, waits for its
`listening on HOST:PORT` line, and stops it with SIGTERM on teardown,
asserting a clean exit (status 0) within STOP_TIMEOUT seconds that leaves none
of its processes (prefork/fork children, --isolate workers) behind. Each
daemon runs in a process group of its own, so a kill takes them all; a stop
that times out reports the daemon's thread stacks (if gdb is installed).

Extra daemon arguments come from the RAPIDRPCD_ARGS environment variable
(shell-split, appended to every daemon the harness starts; an option a test
passes itself wins over the same option there). MODE names the serving mode
they select: "async-pool" (the default), "async-pool-isolate", "async",
"sequential", "fork" or "prefork". A test that does not apply to a mode says
so with skip_in_modes() or only_in_modes(), and why: ctest leaves it out of
that mode's run (tests/run_unittest.py); run by hand, it skips.

The daemon binary comes from, in order:
  1. the RAPIDRPCD environment variable (what ctest sets),
  2. a first command-line argument when a test file is run directly
     (`python3 test_http.py /path/to/rapidrpcd`, see main()),
  3. ../../build/bin/rapidrpcd relative to this file.

Everything here is bounded: every socket has a timeout, every wait has a
deadline. Python 3 standard library only.
"""

import contextlib
import gzip
import http.client
import os
import random
import re
import selectors
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xmlrpc.client

# load(150000) has 31,348 digits; Python 3.11 refuses int<->str conversions
# beyond 4300 digits unless told otherwise.
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

# A backstop: no socket created by these tests may block forever.
socket.setdefaulttimeout(60)

HOST = "127.0.0.1"
START_TIMEOUT = 10.0  # seconds to wait for the listening line
STOP_TIMEOUT = 10.0  # seconds to wait for exit after SIGTERM
CALL_TIMEOUT = 60.0  # generous per-call timeout for a noisy 2-core VM
RAW_TIMEOUT = 15.0  # per-operation timeout on raw sockets

_LISTENING_RE = re.compile(rb"listening on \S+:(\d+)")
_ZMQ_RE = re.compile(rb"JSON-RPC over ZeroMQ at (\S+)")
_ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on (\S+)")
_HERE = os.path.dirname(os.path.abspath(__file__))


# -- serving modes ---------------------------------------------------------------

def _env_args():
    try:
        return shlex.split(os.environ.get("RAPIDRPCD_ARGS", ""))
    except ValueError as err:
        raise RuntimeError(f"RAPIDRPCD_ARGS cannot be split: {err}") from None


def _option_name(token):
    return token.split("=", 1)[0] if token.startswith("--") else None


def _options(args):
    """[(name, tokens)] for a daemon argument list: an option and its value
    (`--x=v`, `--x v`, or a bare flag)."""
    out, i = [], 0
    while i < len(args):
        tok = str(args[i])
        name = _option_name(tok)
        if name is not None and "=" not in tok and i + 1 < len(args) \
                and not str(args[i + 1]).startswith("--"):
            out.append((name, [tok, str(args[i + 1])]))
            i += 2
        else:
            out.append((name, [tok]))
            i += 1
    return out


def mode_of(args):
    """The serving mode an argument list selects (see the module docstring)."""
    mode, isolate = "async-pool", False
    for name, tokens in _options(args):
        if name == "--mode":
            mode = tokens[0].split("=", 1)[1] if "=" in tokens[0] else tokens[-1]
        elif name == "--isolate":
            isolate = True
    return "async-pool-isolate" if mode == "async-pool" and isolate else mode


EXTRA_ARGS = _env_args()
MODE = mode_of(EXTRA_ARGS)
MODES = ("async-pool", "async-pool-isolate", "async", "sequential", "fork", "prefork")
if MODE not in MODES:
    raise RuntimeError(f"RAPIDRPCD_ARGS selects an unknown mode {MODE!r} (one of {MODES})")
# Modes in which a pool method (load) runs on the one loop, blocking it.
INLINE_MODES = ("async", "sequential")
# Modes in which every connection is served by a process of its own, one
# connection per process at a time (at most --processes of them).
PROCESS_MODES = ("fork", "prefork")
# Modes that answer one request per connection, then close it.
CLOSE_AFTER_RESPONSE_MODES = ("sequential",)


def _option_value(args, name):
    value = None
    for opt, tokens in _options(args):
        if opt == name:
            value = tokens[0].split("=", 1)[1] if "=" in tokens[0] else tokens[-1]
    return value


def capacity(args=None):
    """How many connections the daemon started with `args` (by default
    EXTRA_ARGS) serves at once, or None if there is no small fixed number:
    1 in sequential, --processes (0: one per core) in fork and prefork.
    Connections beyond it wait in the kernel's accept backlog."""
    args = EXTRA_ARGS if args is None else args
    mode = mode_of(args)
    if mode == "sequential":
        return 1
    if mode in PROCESS_MODES:
        n = int(_option_value(args, "--processes") or 0)
        return n if n > 0 else (os.cpu_count() or 1)
    return None


def not_applicable(condition, reason):
    """Marks a test (or class) that does not apply to this configuration
    (the serving mode, a sanitizer build) when `condition` holds. ctest's
    runner (tests/run_unittest.py) leaves it out, so it is neither run nor
    counted as skipped: what is skipped is what the environment lacks. Run
    by hand (python3 -m unittest), it skips, saying why."""
    def mark(test):
        if not condition:
            return test
        test.__rapidrpc_not_applicable__ = reason
        return unittest.skip(reason)(test)
    return mark


def _modes(modes):
    if isinstance(modes, str):
        modes = (modes,)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}")
    return modes


def skip_in_modes(modes, reason):
    """A test (or class) that does not apply when MODE is one of `modes`
    (not_applicable), saying why."""
    return not_applicable(MODE in _modes(modes), f"not in --mode {MODE}: {reason}")


def only_in_modes(modes, reason):
    """A test (or class) that applies only when MODE is one of `modes`
    (not_applicable), saying why."""
    return not_applicable(MODE not in _modes(modes), f"not in --mode {MODE}: {reason}")


def expected_failure_in_modes(modes, bug):
    """Marks a test as an expected failure in `modes` (a known server bug,
    described by `bug`); elsewhere it must pass. Once the bug is fixed, the
    unexpected success fails the run: remove the marker then."""
    if isinstance(modes, str):
        modes = (modes,)
    if MODE in modes:
        return unittest.expectedFailure
    return lambda test: test





def merge_args(test_args, env_args):
    """`test_args` followed by those options of `env_args` the test does not set."""
    own = {name for name, _ in _options(test_args) if name is not None}
    extra = []
    for name, tokens in _options(env_args):
        if name is None or name not in own:
            extra.extend(tokens)
    return [*map(str, test_args), *extra]


def daemon_path():
    """The rapidrpcd binary under test (see the module docstring)."""
    path = os.environ.get("RAPIDRPCD")
    if not path:
        path = os.path.join(_HERE, "..", "..", "build", "bin", "rapidrpcd")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(
            f"rapidrpcd binary not found or not executable: {path} "
            "(set RAPIDRPCD=/path/to/rapidrpcd)")
    return path


def main():
    """Entry point for running one test file directly, optionally with the
    daemon path as the first argument."""
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-") and os.path.isfile(sys.argv[1]):
        os.environ["RAPIDRPCD"] = sys.argv.pop(1)
    unittest.main(verbosity=2)


def _die_with_parent():
    """In the child before exec: SIGKILL it if the test process dies (for
    example killed by a ctest timeout), so no daemon outlives its test; and
    put it in a process group of its own, so that killing it also kills the
    processes it started (prefork and fork children, --isolate workers)."""
    os.setpgid(0, 0)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, Linux only
        pass


class DaemonError(AssertionError):
    pass


def _process_group(pgid):
    """{pid: command line} of the live processes in process group `pgid`."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid or fields[0] == "Z":
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                out[int(name)] = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (OSError, IndexError, ValueError):
            continue
    return out


def _stacks(pid, timeout=30):
    """Every thread's stack of a live process, with gdb if there is one."""
    try:
        r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt 20"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"(no stacks: {err})"
    lines = [ln for ln in r.stdout.decode("utf-8", "replace").splitlines()
             if ln.startswith(("#", "Thread "))]
    return "\n".join(lines)[-6000:] or "(gdb printed no stacks)"


class Daemon:
    """One running rapidrpcd process."""

    def __init__(self, *extra_args, env_args=True, pass_fds=(), env=None):
        """`extra_args` follow --host and --port; with env_args (the default),
        RAPIDRPCD_ARGS (EXTRA_ARGS) follow them, minus the options the test
        sets itself. Tests that choose their own mode pass env_args=False.
        `pass_fds`: descriptors the daemon inherits (--listen-fd); `env`:
        variables added to the daemon's environment."""
        self.pass_fds = tuple(pass_fds)
        self.env = dict(os.environ, **env) if env else None
        own = ["--host", HOST, "--port", "0", *map(str, extra_args)]
        args = merge_args(own, EXTRA_ARGS if env_args else [])
        self.args = [daemon_path(), *args]
        self.proc = None
        self.port = None
        self.zmq_endpoints = []  # printed before the listening line
        self._stderr = tempfile.TemporaryFile()
        self._stdout_lines = []
        self._stdout_thread = None
        self._listening = threading.Event()
        self._group_gone = False

    # -- lifecycle -----------------------------------------------------------

    def start(self):
        self.proc = subprocess.Popen(
            self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=self._stderr, close_fds=True, pass_fds=self.pass_fds, env=self.env,
            preexec_fn=_die_with_parent)
        # Drain stdout for the whole life of the process so the daemon can
        # never block on a full pipe; the first matching line gives the port.
        self._stdout_thread = threading.Thread(
            target=self._drain_stdout, name="rapidrpcd-stdout", daemon=True)
        self._stdout_thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._listening.wait(0.05):
                break
            if self.proc.poll() is not None:
                break
        if self.port is None:
            status = self.proc.poll()
            if status is None:
                self.proc.kill()
                self.wait(10)
            message = (f"rapidrpcd did not print 'listening on HOST:PORT' within "
                       f"{START_TIMEOUT} s (exit status {status})\n{self.diagnostics()}")
            self.kill()
            raise DaemonError(message)
        return self

    def _drain_stdout(self):
        for line in iter(self.proc.stdout.readline, b""):
            self._stdout_lines.append(line)
            if self.port is None:
                z = _ZMQ_RE.search(line)
                if z:
                    self.zmq_endpoints.append(z.group(1).decode())
                m = _LISTENING_RE.search(line)
                if m:
                    self.port = int(m.group(1))
                    self._listening.set()
        self.proc.stdout.close()

    def admin_port(self):
        """The port of the admin listener the daemon printed (--admin)."""
        for line in list(self._stdout_lines):
            m = _ADMIN_RE.search(line)
            if m:
                return int(m.group(1).rsplit(b":", 1)[1])
        raise DaemonError(f"rapidrpcd printed no admin line\n{self.diagnostics()}")

    def metric(self, name, **labels):
        """The value of the sample `name` with `labels` (none: the unlabelled
        one) on the admin listener's /metrics (the daemon started with
        --admin)."""
        c = http.client.HTTPConnection(HOST, self.admin_port(), timeout=RAW_TIMEOUT)
        try:
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
        finally:
            c.close()
        if labels:
            name += "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
        m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
        if m is None:
            raise AssertionError(f"no sample {name} on /metrics:\n{text}")
        return float(m.group(1))

    def wait_for_calls(self, n, timeout=30):
        """Waits until `n` calls have reached the daemon and are not yet
        answered (rapidrpc_calls_in_flight; the daemon started with --admin):
        what a test must know before it signals, not a fixed sleep."""
        wait_until(lambda: self.metric("rapidrpc_calls_in_flight") >= n, timeout,
                   f"{n} calls in flight")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def assert_alive(self):
        if not self.alive():
            raise DaemonError(
                f"rapidrpcd is no longer running (exit status {self.proc.poll()})\n"
                f"{self.diagnostics()}")

    def send_signal(self, signum):
        self.proc.send_signal(signum)

    def wait(self, timeout):
        """Waits for exit; returns the status or None on timeout."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, signum=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """Sends `signum` and asserts the process exits with status 0 within
        `timeout`, leaving none of its processes behind; kills them all with
        SIGKILL otherwise."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        status = self.wait(timeout)
        if status is None:
            group = self.processes()
            stacks = _stacks(self.proc.pid)
            self.proc.kill()
            self.wait(10)
            message = (f"rapidrpcd did not exit within {timeout} s of "
                       f"{signal.Signals(signum).name}; killed\n{self.diagnostics()}\n"
                       f"its processes: {group}\nstacks of pid {self.proc.pid}:\n{stacks}")
            self.kill()
            raise DaemonError(message)
        if status != 0:
            message = (f"rapidrpcd exited with status {status} after "
                       f"{signal.Signals(signum).name}\n{self.diagnostics()}")
            self.kill()
            raise DaemonError(message)
        # A clean exit ends every process the daemon started.
        deadline = time.monotonic() + 2.0
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.02)
        left = self.processes()
        if left:
            message = (f"rapidrpcd exited with status 0 after {signal.Signals(signum).name} but "
                       f"left processes running: {left}\n{self.diagnostics()}")
            self.kill()
            raise DaemonError(message)
        self._group_gone = True  # its process group number may be reused from now on
        self._join_stdout()
        self._stderr.close()

    def sanitized(self):
        """True if the daemon runs under a sanitizer (its memory is then the
        sanitizer's: RSS checks do not apply)."""
        if os.environ.get("RAPIDRPCD_SANITIZED") == "1" or os.environ.get("RAPIDRPCD_TSAN") == "1":
            return True
        try:
            with open(f"/proc/{self.proc.pid}/maps") as f:
                return any(lib in line for line in f for lib in ("libasan", "libtsan", "libubsan"))
        except OSError:
            return False

    def rss_kib(self):
        """The daemon's resident set size (VmRSS), in KiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError(f"no VmRSS for pid {self.proc.pid}")

    def processes(self):
        """{pid: command line} of the daemon and the processes it started
        (its process group), while any is alive."""
        return {} if self.proc is None else _process_group(self.proc.pid)

    def kill(self):
        """SIGKILL to the daemon and every process it started."""
        if self.proc is not None:
            if not self._group_gone:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if self.proc.poll() is None:
                self.proc.kill()
            self.wait(10)
        self._join_stdout()
        self._stderr.close()

    def _join_stdout(self):
        if self._stdout_thread is not None:
            self._stdout_thread.join(5)

    # The daemon writes to the same open file (and so at the same offset):
    # these read with pread, which leaves the offset where it is.

    def stderr_bytes(self):
        """How many bytes the daemon has written to standard error so far."""
        try:
            return os.fstat(self._stderr.fileno()).st_size
        except (OSError, ValueError):
            return 0

    def stderr_since(self, mark):
        """The daemon's standard error from byte `mark` on."""
        try:
            fd = self._stderr.fileno()
            size = os.fstat(fd).st_size
            return os.pread(fd, max(0, size - mark), mark).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def stderr_text(self, limit=8000):
        if self._stderr.closed:
            return "<stderr unavailable>"
        text = self.stderr_since(0)
        if len(text) > limit:
            text = "...\n" + text[-limit:]
        return text

    def diagnostics(self):
        out = b"".join(self._stdout_lines).decode("utf-8", "replace")[-2000:]
        return (f"command: {' '.join(self.args)}\n--- stdout ---\n{out}"
                f"--- stderr ---\n{self.stderr_text()}--- processes ---\n"
                f"{self.process_tree()}--- end ---")

    def process_tree(self):
        """The daemon and its descendants: pid, parent, state, where each
        thread waits in the kernel (wchan), command line; for a failure's
        message."""
        import procs
        lines = []
        if self.proc is None:
            return ""
        for pid in [self.proc.pid] + sorted(procs.children(self.proc.pid)):
            st = procs.stat(pid)
            if st is None:
                continue
            waits = []
            try:
                for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
                    with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                        waits.append(f.read().strip() or "-")
            except OSError:
                pass
            cmd = procs.cmdline(pid).replace(b"\0", b" ").decode("utf-8", "replace")[:160]
            lines.append(f"{pid} ppid {st[0]} {st[1]} waits {','.join(waits)}: {cmd}\n")
        return "".join(lines)

    # -- addresses -----------------------------------------------------------

    @property
    def host(self):
        return HOST

    @property
    def url(self):
        return f"http://{HOST}:{self.port}/RPC2"

    def proxy(self, timeout=CALL_TIMEOUT, path="/RPC2"):
        return make_proxy(f"http://{HOST}:{self.port}{path}", timeout)

    def connection(self, timeout=RAW_TIMEOUT):
        return http.client.HTTPConnection(HOST, self.port, timeout=timeout)

    def socket(self, timeout=RAW_TIMEOUT):
        return socket.create_connection((HOST, self.port), timeout=timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # Do not hide the test's own failure behind a stop failure.
        if exc[0] is None:
            self.stop()
        else:
            try:
                self.stop()
            except DaemonError as err:
                sys.stderr.write(f"\n(also) {err}\n")


@contextlib.contextmanager
def running_daemon(*extra_args, env_args=True):
    """Starts rapidrpcd with `extra_args`, yields the Daemon (its .url is the
    endpoint), and on exit stops it with SIGTERM, asserting exit status 0."""
    daemon = Daemon(*extra_args, env_args=env_args).start()
    with daemon:
        yield daemon


# A process of the daemon that died from a signal (src/server/process_modes.cpp,
# src/worker/worker_pool.cpp), and a sanitizer's report.
DEATH_RE = re.compile(r"(?:prefork worker|worker process) \d+ died from signal \d+")
SANITIZER_RE = re.compile(r"ERROR: (?:Address|Leak|Thread|Memory)Sanitizer|runtime error: ")

# A pool call on an idle daemon answers in milliseconds; a stuck worker never.
POOL_CALL_DEADLINE = 2.0


def assert_pool_call_answers(daemon, deadline=POOL_CALL_DEADLINE):
    """load(2000) on a new connection is answered right within `deadline`
    seconds (connect to reply): the pool (worker thread or process, or the
    serving process in fork and prefork) is free."""
    t0 = time.monotonic()
    try:
        with RawClient(daemon, timeout=deadline) as c:
            c.send(http_request(call_body("load", 2000), headers=[("Connection", "close")]))
            resp = c.read_response()
    except (OSError, IncompleteResponse) as err:
        raise AssertionError(f"no answer to a pool call (load) within {deadline} s: {err!r}\n"
                             f"{daemon.diagnostics()}") from None
    took = time.monotonic() - t0
    try:
        ok = resp.status == 200 and parse_result(resp.decoded_body()) == fib_str(2000)
    except xmlrpc.client.Fault as fault:
        raise AssertionError(f"a pool call (load) got {fault} after {took:.2f} s") from None
    if not ok:
        raise AssertionError(f"a pool call (load) got a wrong answer: {resp!r}")
    if took > deadline:
        raise AssertionError(f"a pool call (load) took {took:.2f} s (limit {deadline} s)")
    return took


class DaemonTestCase(unittest.TestCase):
    """One daemon per test class, started with `daemon_args`. After every test
    the daemon must still be running (a crash fails the test that caused it);
    at the end of the class it must stop cleanly on SIGTERM."""

    daemon_args = ()
    daemon = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.daemon = Daemon(*cls.daemon_args).start()

    @classmethod
    def tearDownClass(cls):
        daemon, cls.daemon = cls.daemon, None
        if daemon is not None:
            daemon.stop()
        super().tearDownClass()

    # How many of the daemon's processes a test expects to die from a signal
    # (a test of test.crash sets it); any other death fails the test.
    expected_deaths = 0

    def setUp(self):
        super().setUp()
        self.daemon.assert_alive()
        self._stderr_mark = self.daemon.stderr_bytes()

    def tearDown(self):
        self.daemon.assert_alive()
        self.assert_no_unexpected_deaths()
        super().tearDown()

    def assert_no_unexpected_deaths(self):
        """The daemon's standard error since setUp names `expected_deaths`
        processes that died from a signal (a prefork worker, an --isolate
        worker) and no sanitizer report. (A fork-mode child that dies is not
        logged: there the test sees its connection fail.)"""
        text = self.daemon.stderr_since(self._stderr_mark)
        deaths = DEATH_RE.findall(text)
        self.assertEqual(len(deaths), self.expected_deaths,
                         f"processes of the daemon died during the test:\n{text[-3000:]}")
        self.assertNotRegex(text, SANITIZER_RE, f"sanitizer report:\n{text[-6000:]}")

    @property
    def url(self):
        return self.daemon.url

    def proxy(self, **kw):
        return self.daemon.proxy(**kw)

    def assert_still_serving(self):
        """A normal call on a fresh connection succeeds, and so does a pool
        call (load) within POOL_CALL_DEADLINE: a worker thread or process
        left stuck by the previous request would hold it."""
        self.daemon.assert_alive()
        with self.proxy(timeout=CALL_TIMEOUT) as p:
            self.assertEqual(p.sample.add(20, 22), 42,
                             "a normal call after the previous request failed")
        assert_pool_call_answers(self.daemon)

    def assertFaultCode(self, code, func, *args):
        with self.assertRaises(xmlrpc.client.Fault) as cm:
            func(*args)
        self.assertEqual(cm.exception.faultCode, code,
                         f"fault string: {cm.exception.faultString!r}")
        self.assertIsInstance(cm.exception.faultString, str)
        return cm.exception


# -- XML-RPC client helpers ----------------------------------------------------

class TimeoutTransport(xmlrpc.client.Transport):
    """xmlrpc.client's transport with a socket timeout."""

    def __init__(self, timeout=CALL_TIMEOUT, **kw):
        super().__init__(**kw)
        self.timeout = timeout

    def make_connection(self, host):
        conn = super().make_connection(host)
        conn.timeout = self.timeout
        return conn


def make_proxy(url, timeout=CALL_TIMEOUT):
    return xmlrpc.client.ServerProxy(
        url, transport=TimeoutTransport(timeout, use_builtin_types=True),
        allow_none=True, use_builtin_types=True)


def call_body(method, *params):
    """A methodCall document built by Python's own marshaller."""
    return xmlrpc.client.dumps(params, method, encoding="utf-8", allow_none=True).encode("utf-8")


def raw_call_body(method, *value_xml):
    """A methodCall document from hand-written <value> elements."""
    params = "".join(f"<param>{v}</param>" for v in value_xml)
    return (f'<?xml version="1.0"?>\n<methodCall><methodName>{method}</methodName>'
            f"<params>{params}</params></methodCall>").encode("utf-8")


def parse_result(body):
    """The single result of a methodResponse body; raises Fault for a fault."""
    params, _ = xmlrpc.client.loads(body, use_builtin_types=True)
    if len(params) != 1:
        raise AssertionError(f"methodResponse carries {len(params)} params: {body[:300]!r}")
    return params[0]


def parse_fault(body):
    """The Fault of a fault methodResponse body (AssertionError if it is not one)."""
    try:
        xmlrpc.client.loads(body, use_builtin_types=True)
    except xmlrpc.client.Fault as fault:
        return fault
    raise AssertionError(f"expected a fault response, got: {body[:500]!r}")


def fib_str(n):
    """Python's own result for load(n): the plain loop of the reference."""
    fib1 = fib2 = 1
    n -= 2
    while n > 0:
        fib1, fib2 = fib2, fib1 + fib2
        n -= 1
    return str(fib2)


def fib_fast(n):
    """The same number as fib_str(n) for n >= 1, by fast doubling (for large n
    where the plain loop would take seconds of test time)."""
    def pair(k):  # (F(k), F(k+1))
        if k == 0:
            return 0, 1
        a, b = pair(k >> 1)
        c = a * (2 * b - a)
        d = a * a + b * b
        return (d, c + d) if k & 1 else (c, d)
    return str(pair(n)[0])


# -- raw HTTP ------------------------------------------------------------------

def http_request(body, path="/RPC2", method="POST", version="HTTP/1.1",
                 headers=None, content_length=True, host="127.0.0.1"):
    """Bytes of one HTTP request. `headers` is a list of (name, value);
    `content_length` adds Content-Length for `body` (an int overrides it)."""
    lines = [f"{method} {path} {version}", f"Host: {host}"]
    if body is None:
        body = b""
    if content_length is True:
        lines.append(f"Content-Length: {len(body)}")
    elif isinstance(content_length, int) and content_length is not False:
        lines.append(f"Content-Length: {content_length}")
    if method == "POST" and not any(k.lower() == "content-type" for k, _ in (headers or [])):
        lines.append("Content-Type: text/xml")
    for k, v in headers or []:
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body, sizes):
    """`body` in chunked transfer coding, cut into chunks of `sizes` (cycled)."""
    out, i, k = [], 0, 0
    while i < len(body):
        n = sizes[k % len(sizes)]
        k += 1
        piece = body[i:i + n]
        i += n
        out.append(b"%x\r\n" % len(piece) + piece + b"\r\n")
    out.append(b"0\r\n\r\n")
    return b"".join(out)


class RawResponse:
    def __init__(self, version, status, reason, headers, body, raw_body):
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value) as received
        self.body = body  # after de-chunking (not decompressed)
        self.raw_body = raw_body

    def header(self, name, default=None):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return default

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def connection_tokens(self):
        return {t.strip().lower() for v in self.header_all("Connection") for t in v.split(",")}

    def decoded_body(self):
        if (self.header("Content-Encoding") or "").strip().lower() == "gzip":
            return gzip.decompress(self.body)
        return self.body

    def __repr__(self):
        return (f"<{self.version} {self.status} {self.reason} headers={self.headers} "
                f"body={self.body[:300]!r}>")


class IncompleteResponse(Exception):
    pass


def parse_response(buf, eof=False):
    """Parses one HTTP response at the start of `buf`.

    Returns (RawResponse, bytes consumed), or None if more bytes are needed.
    With eof=True, a response without length ends at the end of `buf`."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if eof:
            raise IncompleteResponse(f"connection closed inside response headers: {buf[:300]!r}")
        return None
    head = buf[:end].decode("latin-1").split("\r\n")
    status_line = head[0].split(" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith("HTTP/"):
        raise AssertionError(f"bad status line: {head[0]!r}")
    version, status = status_line[0], int(status_line[1])
    reason = status_line[2] if len(status_line) > 2 else ""
    headers = []
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers.append((name.strip(), value.strip()))
    pos = end + 4
    hmap = {k.lower(): v for k, v in headers}
    if 100 <= status < 200 or status in (204, 304):
        return RawResponse(version, status, reason, headers, b"", b""), pos
    if "chunked" in hmap.get("transfer-encoding", "").lower():
        body = []
        i = pos
        while True:
            line_end = buf.find(b"\r\n", i)
            if line_end < 0:
                break
            size = int(buf[i:line_end].split(b";")[0].strip(), 16)
            if size == 0:
                # Trailers until an empty line.
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                if buf[line_end:line_end + 4] == b"\r\n\r\n":
                    trailer_end = line_end
                if trailer_end < 0:
                    break
                consumed = trailer_end + 4
                return (RawResponse(version, status, reason, headers, b"".join(body),
                                    buf[pos:consumed]), consumed)
            start = line_end + 2
            if len(buf) < start + size + 2:
                break
            body.append(buf[start:start + size])
            i = start + size + 2
        if eof:
            raise IncompleteResponse(f"connection closed inside chunked body: {buf[:300]!r}")
        return None
    if "content-length" in hmap:
        n = int(hmap["content-length"])
        if len(buf) < pos + n:
            if eof:
                raise IncompleteResponse(
                    f"connection closed after {len(buf) - pos} of {n} body bytes")
            return None
        return RawResponse(version, status, reason, headers, buf[pos:pos + n],
                           buf[pos:pos + n]), pos + n
    # No length: the body runs to the end of the connection.
    if not eof:
        return None
    return RawResponse(version, status, reason, headers, buf[pos:], buf[pos:]), len(buf)


class RawClient:
    """A raw socket speaking HTTP/1.x byte by byte, for tests that need
    control over what goes on the wire."""

    def __init__(self, daemon_or_port, timeout=RAW_TIMEOUT):
        port = daemon_or_port.port if isinstance(daemon_or_port, Daemon) else daemon_or_port
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.eof = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        data = self.sock.recv(1 << 16)
        if not data:
            self.eof = True
        self.buf += data

    def read_response(self):
        """The next response; raises IncompleteResponse if the server closes
        first, socket.timeout after the timeout."""
        while True:
            parsed = parse_response(self.buf, self.eof)
            if parsed is not None:
                resp, used = parsed
                self.buf = self.buf[used:]
                return resp
            if self.eof:
                raise IncompleteResponse(f"connection closed; buffered: {self.buf[:300]!r}")
            self._fill()

    def at_eof(self, timeout=RAW_TIMEOUT):
        """True if the server closes the connection (with nothing more sent)
        within `timeout`; False if it stays open that long. Raises if more
        data arrives."""
        if self.buf:
            raise AssertionError(f"unexpected extra bytes from server: {self.buf[:300]!r}")
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 16)
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        if data:
            raise AssertionError(f"unexpected extra bytes from server: {data[:300]!r}")
        self.eof = True
        return True

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def reset_mid_request_while_stopped(daemon, clients):
    """Each of `clients` (RawClient, plain or TLS: a TLS socket's close sends
    no close_notify) sends part of a request and resets its connection
    (SO_LINGER 0) while `daemon` is stopped (SIGSTOP), so that the bytes and
    the reset reach it together, in one wake-up; then the daemon goes on
    and is given 0.5 s to read them."""
    daemon.send_signal(signal.SIGSTOP)
    try:
        for c in clients:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n<metho")
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()
    finally:
        daemon.send_signal(signal.SIGCONT)
    time.sleep(0.5)


def exchange(daemon, request_bytes, timeout=RAW_TIMEOUT):
    """Sends one raw request on a new connection and returns the response."""
    with RawClient(daemon, timeout) as c:
        c.send(request_bytes)
        return c.read_response()


def call_once(daemon, method, *params, timeout=RAW_TIMEOUT):
    """One XML-RPC call on a new connection, sent exactly once and closed
    after (xmlrpc.client silently sends a call again when its connection is
    reset, which would hide a dropped connection). Returns the result or the
    Fault; raises on anything else (an HTTP error, a closed connection)."""
    with RawClient(daemon, timeout) as c:
        c.send(http_request(call_body(method, *params), headers=[("Connection", "close")]))
        resp = c.read_response()
    if resp.status != 200:
        raise AssertionError(f"HTTP {resp.status} for {method}: {resp!r}")
    try:
        return parse_result(resp.decoded_body())
    except xmlrpc.client.Fault as fault:
        return fault


def concurrent_exchanges(port, requests, deadline_s, on_sent=None):
    """Opens one connection per request, sends them all, and collects every
    response with a selector (one thread, so no client-side bottleneck).

    Returns (responses, done_times, t0) where done_times are monotonic
    seconds; a connection that fails or closes early gets an exception object
    in place of its response. `on_sent()` is called once all are sent."""
    t0 = time.monotonic()
    socks = []
    try:
        for req in requests:
            s = socket.create_connection((HOST, port), timeout=RAW_TIMEOUT)
            s.sendall(req)
            socks.append(s)
        if on_sent is not None:
            on_sent()
        sel = selectors.DefaultSelector()
        bufs = {}
        results = [None] * len(socks)
        done = [None] * len(socks)
        for i, s in enumerate(socks):
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, i)
            bufs[i] = b""
        pending = len(socks)
        end = t0 + deadline_s
        while pending:
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(min(left, 1.0)):
                i = key.data
                s = socks[i]
                try:
                    data = s.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError as err:
                    results[i], done[i] = err, time.monotonic()
                    sel.unregister(s)
                    pending -= 1
                    continue
                bufs[i] += data
                try:
                    parsed = parse_response(bufs[i], eof=not data)
                except Exception as err:  # noqa: BLE001 - reported by the caller
                    parsed = (err, 0)
                if parsed is None:
                    continue
                results[i], done[i] = parsed[0], time.monotonic()
                sel.unregister(s)
                pending -= 1
        sel.close()
        for i in range(len(results)):
            if results[i] is None:
                results[i] = TimeoutError(f"no response within {deadline_s} s")
        return results, done, t0
    finally:
        for s in socks:
            s.close()


def wait_until(predicate, timeout, what, interval=0.02):
    """Polls `predicate()` until it returns a true value, which is returned;
    fails the test (AssertionError naming `what`, and the predicate's last
    value) if it has not within `timeout` seconds. For a state that comes
    about in its own time: a fixed sleep before asserting it races."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {timeout} s: {what} (last: {value!r})")
        time.sleep(interval)


def reserve_port_below_ephemeral():
    """A socket bound (not listening) to a free port of HOST below the
    kernel's ephemeral port range, where no port-0 bind or outgoing
    connection of another process lands. For a port that a program must be
    told before it binds it (one that cannot take port 0 and say which it
    chose): close the socket just before the program binds the port."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    rng = random.Random()
    for _ in range(100):
        s = socket.socket()
        try:
            s.bind((HOST, rng.randrange(max(1024, low - 12000), low)))
            return s
        except OSError:
            s.close()
    raise AssertionError("no free port below the ephemeral range")
