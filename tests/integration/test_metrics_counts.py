"""Counts on /metrics that move by exactly what was provoked
(docs/operations.md, "The metrics"):

- rapidrpc_rejections_total{reason}: every one of the 14 reasons is
  provoked over 127.0.0.1 a known number of times, and each reason's
  counter moves by exactly that number while every other reason stays put
  (so no rejection is counted twice, or under another reason);
- rapidrpc_worker_restarts_total{cause}: idle_death (an idle worker
  SIGKILLed), timeout (a call past --method-timeout), protocol (a worker
  that answers one call twice), max_requests (--max-requests),
  max_lifetime (--max-worker-lifetime) and max_memory (a method that
  leaks, under --max-worker-memory), each exactly once or as often as
  provoked, the others at 0, for Python workers (--python) and, where a
  C++ worker can be made to, for --isolate's;
- rapidrpc_pool_wait_seconds: with one worker (a thread, or a Python
  worker process) busy for 2.5 s, a second call waits for it: the
  histogram counts both calls, the second above 1 s and the first below,
  and its sum grows by 1 s at least;
- rapidrpc_worker_memory_bytes: a Python worker's own memory, which grows
  by what a method keeps (48 MiB in three calls);
- rapidrpc_worker_hosts_up on a front (--worker-listen): 0 without hosts,
  1 and 2 as hosts connect, and back to 1 and 0 as one stops (SIGTERM) and
  the other is killed (SIGKILL).

The reasons and causes exposed, and those docs/operations.md lists, are
the ones this file provokes. Counters are read with prometheus_client's
parser; a count that comes
about in its own time (a worker replaced, a host dropped) is polled for
with a deadline, then every figure is checked exactly.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import base64
import json
import os
import re
import signal
import subprocess
import tempfile
import textwrap
import threading
import time
import unittest
import urllib.request
import xmlrpc.client

import procs
from harness import (HOST, Daemon, RawClient, call_body, daemon_path, http_request, main,
                     parse_fault, raw_call_body, wait_until)

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as err:  # a requirement: without it nothing here is parsed
    raise ImportError("test_metrics_counts needs python3-prometheus-client "
                      "(scripts/setup.sh --tests installs it)") from err

ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on \S+:(\d+)")
ENDPOINT_RE = re.compile(rb"worker hosts connect at (\S+)")
REASONS = ("bad_request", "auth", "allowlist", "not_found", "method_not_allowed",
           "request_timeout", "body_too_large", "request_line_too_large",
           "unsupported_encoding", "expectation_failed", "header_too_large", "connections",
           "method_denied", "invalid_request")
CAUSES = ("crash", "idle_death", "timeout", "protocol", "max_requests", "max_lifetime",
          "max_memory", "reload")


OPERATIONS_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                             "operations.md")


def documented_labels(metric):
    """The label values docs/operations.md's table of metrics lists for
    `metric`: the plain lower-case words in backquotes on its row."""
    with open(OPERATIONS_MD) as f:
        row = next(line for line in f if line.startswith(f"| `{metric}`"))
    words = re.findall(r"`([a-z_]+)`", row)
    return set(words) - {metric, "reason", "cause"}


def start(*args):
    """A daemon with an admin listener on a free port; returns (daemon, admin port)."""
    d = Daemon("--admin", f"{HOST}:0", *args, env_args=False).start()
    for line in list(d._stdout_lines):
        m = ADMIN_RE.search(line)
        if m:
            return d, int(m.group(1))
    d.stop()
    raise AssertionError("rapidrpcd printed no admin line")


def scrape(admin):
    """{(sample name, frozenset(labels)): value} of one scrape."""
    with urllib.request.urlopen(f"http://{HOST}:{admin}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def by_label(samples, name, label, names):
    return {n: int(value(samples, name, **{label: n})) for n in names}


def rejections(admin):
    return by_label(scrape(admin), "rapidrpc_rejections_total", "reason", REASONS)


def restarts(admin):
    return by_label(scrape(admin), "rapidrpc_worker_restarts_total", "cause", CAUSES)


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


def expected(names, **moved):
    return {n: moved.get(n, 0) for n in names}


def settled(read, want, timeout):
    """Polls `read()` until it returns `want` or `timeout` seconds pass;
    returns what it returned last (for an exact assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if got == want or time.monotonic() >= deadline:
            return got
        time.sleep(0.02)


def answer(d, data, timeout=15):
    """Sends raw bytes on a new connection and returns the response."""
    with RawClient(d, timeout) as c:
        c.send(data)
        return c.read_response()


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# -- rejections ----------------------------------------------------------------

class Labels(unittest.TestCase):
    def test_the_labels_exposed_are_the_documented_ones_and_all_tested_here(self):
        d, admin = start()
        try:
            samples = scrape(admin)
        finally:
            d.stop()

        def exposed(name, label):
            return {dict(k[1])[label] for k in samples if k[0] == name}

        self.assertEqual(exposed("rapidrpc_rejections_total", "reason"), set(REASONS))
        self.assertEqual(documented_labels("rapidrpc_rejections_total"), set(REASONS))
        self.assertEqual(exposed("rapidrpc_worker_restarts_total", "cause"), set(CAUSES))
        self.assertEqual(documented_labels("rapidrpc_worker_restarts_total"), set(CAUSES))


class Rejections(unittest.TestCase):
    maxDiff = None

    def assert_moved(self, admin, before, **moved):
        self.assertEqual(delta(rejections(admin), before), expected(REASONS, **moved))

    def test_http_and_document_reasons(self):
        d, admin = start("--max-body-bytes", "4096", "--max-request-line-bytes", "512",
                         "--max-header-bytes", "2048", "--max-header-fields", "20",
                         "--request-timeout", "1", "--deny-method", "sample.sum",
                         "--max-depth", "8")
        try:
            before = rejections(admin)
            ok = call_body("sample.add", 1, 2)
            close = [("Connection", "close")]
            statuses = []

            def expect(status, data):
                r = answer(d, data)
                self.assertEqual(r.status, status, f"{data[:200]!r} -> {r!r}")
                statuses.append(status)

            # bad_request (400): three framings
            expect(400, http_request(ok, headers=[("Content-Length", str(len(ok)))] + close))
            expect(400, b"POST /RPC2 HTTP/1.1\r\nContent-Length: 4\r\n\r\n<x/>")  # no Host
            expect(400, http_request(b"\x1f\x8b not gzip", headers=[
                ("Content-Encoding", "gzip")] + close))
            # not_found (404)
            expect(404, http_request(ok, path="/no/such/path", headers=close))
            # method_not_allowed (405): two verbs
            expect(405, http_request(ok, method="PUT", headers=close))
            expect(405, http_request(b"", method="GET", content_length=False, headers=close))
            # body_too_large (413)
            expect(413, http_request(b"x" * 5000, headers=close))
            # request_line_too_large (414)
            expect(414, http_request(ok, path="/RPC2?" + "q" * 600, headers=close))
            # unsupported_encoding (415): two codings
            expect(415, http_request(ok, headers=[("Content-Encoding", "br")] + close))
            expect(415, http_request(ok, headers=[("Content-Encoding", "deflate")] + close))
            # expectation_failed (417)
            expect(417, http_request(ok, headers=[("Expect", "200-ok")] + close))
            # header_too_large (431): too many bytes, and too many fields
            expect(431, http_request(ok, headers=[("X-Big", "b" * 3000)] + close))
            expect(431, http_request(ok, headers=[(f"X-F{i}", "v") for i in range(25)] + close))
            # method_denied (fault -32002)
            r = answer(d, http_request(call_body("sample.sum", [1, 2]), headers=close))
            self.assertEqual(parse_fault(r.body).faultCode, -32002)
            # invalid_request (fault -32600): not a call (XML), not a request
            # (JSON-RPC), and past the nesting limit
            r = answer(d, http_request(b"<?xml version='1.0'?><methodCall><x/></methodCall>",
                                       headers=close))
            self.assertEqual(parse_fault(r.body).faultCode, -32600)
            r = answer(d, http_request(b'{"jsonrpc": "2.0", "id": 1}', headers=[
                ("Content-Type", "application/json")] + close))
            self.assertEqual(json.loads(r.body)["error"]["code"], -32600)
            deep = "<value><array><data>" * 10 + "<value><int>1</int></value>" + \
                "</data></array></value>" * 10
            r = answer(d, http_request(raw_call_body("echo", deep), headers=close))
            self.assertEqual(parse_fault(r.body).faultCode, -32600)
            # Answered calls count nothing.
            r = answer(d, http_request(ok, headers=close))
            self.assertEqual(r.status, 200)
            self.assert_moved(admin, before, bad_request=3, not_found=1, method_not_allowed=2,
                              body_too_large=1, request_line_too_large=1,
                              unsupported_encoding=2, expectation_failed=1, header_too_large=2,
                              method_denied=1, invalid_request=3)

            # request_timeout (408): a head that never ends, answered 408 at
            # --request-timeout (1 s)
            before = rejections(admin)
            with RawClient(d, timeout=15) as c:
                c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n")
                self.assertEqual(c.read_response().status, 408)
            self.assert_moved(admin, before, request_timeout=1)
        finally:
            d.stop()

    def test_auth(self):
        r = subprocess.run([daemon_path(), "--hash-password", "alice", "--hash-iterations", "1000"],
                           input=b"wonder land\n", capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with tempfile.NamedTemporaryFile("wb", suffix=".users") as users:
            users.write(r.stdout)
            users.flush()
            d, admin = start("--auth-file", users.name)
            try:
                before = rejections(admin)
                ok = call_body("sample.add", 1, 2)
                for headers in ([], [("Authorization", basic("alice", "wrong"))],
                                [("Authorization", basic("bob", "wonder land"))]):
                    resp = answer(d, http_request(ok, headers=headers))
                    self.assertEqual(resp.status, 401, headers)
                resp = answer(d, http_request(ok, headers=[
                    ("Authorization", basic("alice", "wonder land")), ("Connection", "close")]))
                self.assertEqual(resp.status, 200)
                self.assert_moved(admin, before, auth=3)
            finally:
                d.stop()

    def test_allowlist_http_and_zeromq(self):
        try:
            import zmq
        except ImportError:
            zmq = None
        args = ["--allow", "10.0.0.0/8"]
        if zmq is not None:
            args += ["--zmq", f"tcp://{HOST}:*"]
        d, admin = start(*args)
        try:
            before = rejections(admin)
            for _ in range(2):
                resp = answer(d, http_request(call_body("sample.add", 1, 2)))
                self.assertEqual(resp.status, 403)
            moved = {"allowlist": 2}
            if zmq is not None:
                ctx = zmq.Context()
                try:
                    s = ctx.socket(zmq.DEALER)
                    s.setsockopt(zmq.LINGER, 0)
                    s.connect(d.zmq_endpoints[0])
                    for i in range(3):
                        s.send(json.dumps({"jsonrpc": "2.0", "method": "sample.add",
                                           "params": [i, 1], "id": i}).encode())
                        self.assertTrue(s.poll(10000), "no reply over ZeroMQ")
                        self.assertEqual(json.loads(s.recv())["error"]["code"], -32002)
                    s.close()
                finally:
                    ctx.term()
                moved["allowlist"] += 3
            self.assert_moved(admin, before, **moved)
        finally:
            d.stop()

    def test_connections(self):
        d, admin = start("--max-connections", "2")
        held = []
        try:
            before = rejections(admin)
            # Two keep-alive connections, each answered once: both are open.
            for _ in range(2):
                c = RawClient(d)
                held.append(c)
                c.send(http_request(call_body("sample.add", 1, 2)))
                self.assertEqual(c.read_response().status, 200)
            for _ in range(3):
                resp = answer(d, http_request(call_body("sample.add", 1, 2)))
                self.assertEqual(resp.status, 503)
                self.assertEqual(resp.header("Retry-After"), "1")
            self.assert_moved(admin, before, connections=3)
        finally:
            for c in held:
                c.close()
            d.stop()


# -- worker restarts -----------------------------------------------------------

SERVICE = textwrap.dedent('''\
    """Methods that make a worker process be replaced, each its own way."""
    import os
    import struct
    import time
    import xmlrpc.client


    def pid() -> int:
        return os.getpid()


    held = []


    def leak(mib: int) -> int:
        """Keeps `mib` MiB more for good; returns the worker's pid."""
        held.append(bytearray(mib * 1024 * 1024))
        return os.getpid()


    def spin(seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        return True


    def answer_twice() -> int:
        """Writes an answer of its own on the worker socket (fd 3) before the
        worker writes the real one: two answers to one call."""
        body = xmlrpc.client.dumps((1,), methodresponse=True).encode()
        os.write(3, struct.pack(">I", len(body)) + body)
        return 2
    ''')


def call(d, method, *params):
    with xmlrpc.client.ServerProxy(d.url) as p:
        try:
            return getattr(p, method)(*params)
        except xmlrpc.client.Fault as f:
            return f


class ServiceTestCase(unittest.TestCase):
    """A test with SERVICE as the module restarts.py in a folder of its own
    (self.dir.name)."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="rapidrpc-restarts-")
        self.addCleanup(self.dir.cleanup)
        with open(os.path.join(self.dir.name, "restarts.py"), "w") as f:
            f.write(SERVICE)


class WorkerRestarts(ServiceTestCase):
    """One worker process, so that every restart is of the one we provoke."""

    def python(self, *args):
        d, admin = start("--python", "restarts", "--python-path", self.dir.name,
                         "--workers", "1", *args)
        self.addCleanup(d.stop)
        return d, admin

    def isolate(self, *args):
        d, admin = start("--isolate", "--workers", "1", "--enable-test-methods", *args)
        self.addCleanup(d.stop)
        return d, admin

    def one_worker(self, d):
        """The pid of the one worker process, once it is up."""
        def the_one():
            pids = procs.serving(d.proc.pid)
            return next(iter(pids)) if len(pids) == 1 else None

        return wait_until(the_one, 10, "one worker process")

    def wait_moved(self, admin, before, **moved):
        """Waits until the counts have moved as given, then checks that every
        cause moved by exactly that (and the worker is up again)."""
        want = expected(CAUSES, **moved)
        self.assertEqual(settled(lambda: delta(restarts(admin), before), want, 10), want)
        wait_until(lambda: value(scrape(admin), "rapidrpc_worker_processes_up") == 1, 10,
                   "the worker process replaced")
        self.assertEqual(delta(restarts(admin), before), want)

    def idle_death(self, d, admin):
        before = restarts(admin)
        victim = self.one_worker(d)
        os.kill(victim, signal.SIGKILL)
        self.wait_moved(admin, before, idle_death=1)
        self.assertNotEqual(self.one_worker(d), victim)
        self.assertIn(f"worker process {victim} died from signal 9 while idle", d.stderr_text())

    def timeout(self, d, admin, spin):
        before = restarts(admin)
        self.one_worker(d)
        f = call(d, spin, 30.0)
        self.assertIsInstance(f, xmlrpc.client.Fault)
        self.assertEqual(f.faultCode, -32001)
        self.wait_moved(admin, before, timeout=1)

    def max_requests(self, d, admin, method, *params):
        """--max-requests 3: replaced after the 3rd call and after the 6th.
        A worker serves on while its successor starts: the test waits for
        each replacement before the next calls, so that they go to the new
        worker."""
        before = restarts(admin)
        pids = []
        for n in (1, 2):
            for _ in range(3):
                pids.append(self.one_worker(d))  # the one that takes the call
                self.assertNotIsInstance(call(d, method, *params), xmlrpc.client.Fault)
            self.wait_moved(admin, before, max_requests=n)
        pids.append(self.one_worker(d))
        return pids

    def test_python_idle_death_timeout_and_protocol(self):
        d, admin = self.python("--method-timeout", "0.5")
        self.assertEqual(restarts(admin), expected(CAUSES))
        self.idle_death(d, admin)
        self.timeout(d, admin, "spin")
        before = restarts(admin)
        worker = self.one_worker(d)
        call(d, "answer_twice")  # its answer is one of the two, or a fault
        self.wait_moved(admin, before, protocol=1)
        self.assertNotEqual(self.one_worker(d), worker)
        self.assertEqual(call(d, "pid"), self.one_worker(d))

    def test_python_max_requests(self):
        d, admin = self.python("--max-requests", "3")
        pids = self.max_requests(d, admin, "pid")
        self.assertEqual(len(set(pids[0:3])), 1, pids)
        self.assertEqual(len(set(pids[3:6])), 1, pids)
        self.assertEqual(len(set(pids)), 3, pids)

    def test_python_max_lifetime(self):
        d, admin = self.python("--max-worker-lifetime", "0.5")
        first = self.one_worker(d)
        before = restarts(admin)
        # Replaced about every 0.5 s, idle or not: twice, the others never.
        wait_until(lambda: delta(restarts(admin), before)["max_lifetime"] >= 2, 10,
                   "two replacements past --max-worker-lifetime")
        moved = delta(restarts(admin), before)
        self.assertEqual(moved, expected(CAUSES, max_lifetime=moved["max_lifetime"]))
        self.assertNotEqual(call(d, "pid"), first)
        self.assertIn(f"worker process {first} has run", d.stderr_text())

    def test_python_max_memory(self):
        d, admin = self.python("--max-worker-memory", "80")
        first = self.one_worker(d)
        before = restarts(admin)
        # 16 MiB more a call; the worker's memory is read after a call, at
        # most once a second: past 80 MiB within a few seconds of calls.
        pids = []
        for _ in range(50):
            pids.append(call(d, "leak", 16))
            self.assertNotIsInstance(pids[-1], xmlrpc.client.Fault)
            if pids[-1] != first:
                break
            time.sleep(0.2)
        self.assertNotEqual(pids[-1], first, "never replaced")
        self.wait_moved(admin, before, max_memory=1)
        self.assertRegex(d.stderr_text(), rf"worker process {first} holds \d+\.\d MiB of its own "
                         r"\(the limit: 80\.0 MiB\)")

    def test_isolate_idle_death_and_timeout(self):
        d, admin = self.isolate("--method-timeout", "0.5")
        self.idle_death(d, admin)
        self.timeout(d, admin, "test.spin")

    def test_isolate_max_requests(self):
        d, admin = self.isolate("--max-requests", "3")
        pids = self.max_requests(d, admin, "load", 20)
        self.assertEqual(len(set(pids)), 3, pids)


# -- waiting for a worker, and each worker's memory ---------------------------

def waits(admin):
    """{le: count} of rapidrpc_pool_wait_seconds's buckets, "count" and "sum"."""
    samples = scrape(admin)
    out = {dict(k[1])["le"]: v for k, v in samples.items()
           if k[0] == "rapidrpc_pool_wait_seconds_bucket"}
    out["count"] = value(samples, "rapidrpc_pool_wait_seconds_count")
    out["sum"] = value(samples, "rapidrpc_pool_wait_seconds_sum")
    return out


class Saturation(ServiceTestCase):
    def second_call_waits(self, d, admin, spin, *quick):
        """One call spins 2.5 s on the one worker; a second one, sent once the
        first is running, waits for it."""
        before = waits(admin)
        first = threading.Thread(target=call, args=(d, spin, 2.5))
        first.start()
        wait_until(lambda: value(scrape(admin), "rapidrpc_pool_busy_workers") == 1, 10,
                   "the first call running")
        self.assertNotIsInstance(call(d, *quick), xmlrpc.client.Fault)
        first.join(10)
        after = waits(admin)
        self.assertEqual(after["count"] - before["count"], 2)
        self.assertEqual(after["+Inf"] - before["+Inf"], 2)
        self.assertEqual(after["1"] - before["1"], 1, "the first call waited, or the second not")
        self.assertGreaterEqual(after["sum"] - before["sum"], 1.0)

    def test_threads(self):
        d, admin = start("--workers", "1", "--enable-test-methods")
        self.addCleanup(d.stop)
        self.second_call_waits(d, admin, "test.spin", "load", 20)

    def test_python_worker_process(self):
        d, admin = start("--python", "restarts", "--python-path", self.dir.name, "--workers", "1")
        self.addCleanup(d.stop)
        wait_until(lambda: value(scrape(admin), "rapidrpc_worker_processes_up") == 1, 30,
                   "the worker up")
        self.second_call_waits(d, admin, "spin", "pid")

    def test_python_worker_memory(self):
        d, admin = start("--python", "restarts", "--python-path", self.dir.name, "--workers", "1")
        self.addCleanup(d.stop)
        wait_until(lambda: value(scrape(admin), "rapidrpc_worker_processes_up") == 1, 30,
                   "the worker up")

        def memory():
            return value(scrape(admin), "rapidrpc_worker_memory_bytes", worker="0")

        before = memory()
        self.assertGreater(before, 64 << 10)  # read: a worker forked from its warm parent holds
        # little of its own
        for _ in range(3):
            self.assertNotIsInstance(call(d, "leak", 16), xmlrpc.client.Fault)
        self.assertGreaterEqual(memory() - before, 48 << 20)


# -- worker hosts --------------------------------------------------------------

class WorkerHostsUp(unittest.TestCase):
    def test_hosts_up_follows_hosts_connecting_and_going(self):
        front, admin = start("--workers", "0", "--worker-listen", f"tcp://{HOST}:*")
        self.addCleanup(front.stop)
        address = next(m.group(1).decode() for m in map(ENDPOINT_RE.search,
                                                          list(front._stdout_lines)) if m)

        def hosts_up():
            return value(scrape(admin), "rapidrpc_worker_hosts_up")

        def host():
            h = Daemon("--worker-connect", address, "--workers", "1", env_args=False).start()
            self.addCleanup(lambda: h.stop() if h.alive() else h.kill())
            return h

        self.assertEqual(hosts_up(), 0)
        first = host()
        self.assertEqual(settled(hosts_up, 1, 5), 1)
        second = host()
        self.assertEqual(settled(hosts_up, 2, 5), 2)
        with xmlrpc.client.ServerProxy(front.url) as p:
            self.assertEqual(p.load(30), "832040")
        first.stop()  # SIGTERM: it says goodbye
        self.assertEqual(settled(hosts_up, 1, 5), 1, "after a host stopped")
        second.kill()  # SIGKILL: dropped once it has been silent for 2 s
        self.assertEqual(settled(hosts_up, 0, 5), 0, "after a host was killed")


if __name__ == "__main__":
    main()
