"""`rapidrpcd --python MODULE[:HOOK]` (docs/python.md): Python methods in
worker processes, the module python_service/service.py.

- Results as Python's own, over XML-RPC, JSON-RPC (positional and named)
  and system.multicall; an XML-RPC call reaches a worker in marshal's form
  and its answer is written once, by the host; every type round-trips
  through echo, i8 and nil included; an int past 64 bits is a fault, and
  the same worker process answers the next call (it neither died nor left).
- Marshal's form: a malformed answer fails its call only; a set, an int
  key, a lone surrogate are faults, logged; a datetime, inf and NaN come
  as Python's XML-RPC marshaller writes them.
- Introspection from docstrings and annotations; faults: Fault(42, "x") is
  42/"x", any other exception -32603 with no detail on the wire.
- Crashes (SIGSEGV, abort) cost their call only; a runaway gets -32001 at
  --method-timeout and its CPU stops; an idle worker's SIGKILL costs
  nothing.
- The warm parent: the workers are forks of the one process that imported
  the module, sharing most of its memory; a killed worker is replaced by
  another fork, a killed parent by another parent with new workers; a
  parent that cannot import fails the call waiting after three deaths; a
  module whose import starts a thread is refused at start-up unless
  --python-spawn-workers.
- An import error stops rapidrpcd within 5 s with the traceback; --python
  outside async-pool is refused; the interpreter is /usr/bin/python3 even
  with another python3 first in PATH; after a stop no worker is left.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import collections
import datetime
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
import xmlrpc.client

import procs
from harness import (HOST, Daemon, IncompleteResponse, RawClient, call_body, daemon_path, fib_str, http_request, main,
                     parse_fault, parse_result, raw_call_body, running_daemon, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
SERVICE_DIR = os.path.join(HERE, "python_service")
INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
TIMEOUT = -32001


PYTHON_ARGS = ("--python-path", SERVICE_DIR, "--workers", "2")


def python_daemon(spec="service:register", *args):
    return running_daemon("--python", spec, *PYTHON_ARGS, *args, env_args=False)


def started_python_daemon(spec="service", *args):
    """A daemon the test stops itself."""
    return Daemon("--python", spec, *PYTHON_ARGS, *args, env_args=False).start()


def raw_call(d, body, timeout=30):
    """One call on a new raw connection (nothing is resent): the response."""
    with RawClient(d, timeout=timeout) as c:
        c.send(http_request(body, headers=[("Connection", "close")]))
        return c.read_response()


def jsonrpc(d, method, params, ident=1):
    req = urllib.request.Request(
        d.url, data=json.dumps({"jsonrpc": "2.0", "method": method, "params": params,
                                "id": ident}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


ADMIN = ("--admin", f"{HOST}:0")


def busy_workers(d):
    """rapidrpc_pool_busy_workers from the admin listener of a daemon
    started with ADMIN: how many worker processes run a call now."""
    return int(d.metric("rapidrpc_pool_busy_workers"))


class Background(threading.Thread):
    """fn() on a thread of its own; join() returns its result, or raises
    in the test's thread what it raised (an exception on a thread of its
    own fails no test)."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.result = self.fn()
        except BaseException as err:  # noqa: BLE001 - raised again by join()
            self.error = err

    def join(self, timeout=30):
        super().join(timeout)
        if self.is_alive():
            raise AssertionError(f"the call on a thread of its own did not end within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


def workers_of(d):
    return sorted(procs.serving(d.proc.pid))


def wait_for_workers(d, n=2):
    procs.wait_for(lambda: len(workers_of(d)) == n, time.monotonic() + 10)
    workers = workers_of(d)
    assert len(workers) == n, f"workers: {workers}\n{d.diagnostics()}"
    return workers


class Serving(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = python_daemon()
        cls.daemon = cls.d.__enter__()
        cls.p = xmlrpc.client.ServerProxy(cls.daemon.url, allow_none=True, use_builtin_types=True)

    @classmethod
    def tearDownClass(cls):
        cls.p("close")()
        cls.d.__exit__(None, None, None)

    def test_results_are_pythons_own(self):
        self.assertEqual(self.p.load(150), fib_str(150))
        self.assertEqual(getattr(self.p, "sample.add")(20, 22), 42)
        self.assertEqual(getattr(self.p, "sample.sum")(1, 2, 3, 4), 10)
        self.assertEqual(self.p.square(12), 144)  # register_instance
        value = {"z": [1, "two", 3.5, True, None], "a": {"nested": {"deep": []}}}
        self.assertEqual(self.p.echo(value), value)

    def test_an_xmlrpc_call_reaches_the_worker_in_marshal_form(self):
        # Once a worker has said it reads marshal (its first frame), the
        # host hands it each call so and writes the answer itself, once, in
        # the client's protocol: rapidrpc's declaration, not the
        # single-quoted one of Python's marshaller.
        getattr(self.p, "sample.add")(1, 2)  # a worker is up
        resp = raw_call(self.daemon, raw_call_body("sample.add", "<value><int>20</int></value>",
                                                   "<value><int>22</int></value>"))
        self.assertTrue(resp.body.startswith(b'<?xml version="1.0"?>\n<methodResponse>'),
                        resp.body)
        self.assertEqual(parse_result(resp.body), 42)
        # A request in ISO-8859-1 is read as any other.
        body = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<methodCall><methodName>echo'
                "</methodName><params><param><value><string>caf\xe9</string></value></param>"
                "</params></methodCall>").encode("latin-1")
        self.assertEqual(parse_result(raw_call(self.daemon, body).body), "caf\xe9")

    def test_jsonrpc_positional_and_named(self):
        self.assertEqual(jsonrpc(self.daemon, "sample.add", [3, 5])["result"], 8)
        self.assertEqual(jsonrpc(self.daemon, "sample.add", {"b": 5, "a": 3})["result"], 8)
        self.assertEqual(jsonrpc(self.daemon, "load", {"n": 90})["result"], fib_str(90))
        self.assertEqual(jsonrpc(self.daemon, "echo", [2**40])["result"], 2**40)

    def test_multicall(self):
        m = xmlrpc.client.MultiCall(self.p)
        getattr(m, "sample.add")(1, 2)
        m.load(20)
        m.fault42()
        results = m()
        self.assertEqual(results[0], 3)
        self.assertEqual(results[1], fib_str(20))
        with self.assertRaises(xmlrpc.client.Fault) as f:
            results[2]
        self.assertEqual((f.exception.faultCode, f.exception.faultString), (42, "x"))

    def test_every_type_round_trips_through_echo(self):
        # i8 (2^40), nil, base64, dateTime and nested structs, written by hand
        # (Python's marshaller refuses ints past 32 bits).
        value = ("<value><struct>"
                 "<member><name>i8</name><value><i8>1099511627776</i8></value></member>"
                 "<member><name>nil</name><value><nil/></value></member>"
                 "<member><name>b64</name><value><base64>AAEC/w==</base64></value></member>"
                 "<member><name>when</name><value><dateTime.iso8601>20261201T10:11:12"
                 "</dateTime.iso8601></value></member>"
                 "<member><name>nested</name><value><struct><member><name>list</name><value>"
                 "<array><data><value><int>-7</int></value><value><double>0.5</double></value>"
                 "<value><boolean>1</boolean></value><value><string>&lt;x&gt;</string></value>"
                 "</data></array></value></member></struct></value></member>"
                 "</struct></value>")
        resp = raw_call(self.daemon, raw_call_body("echo", value))
        self.assertIn(b"<i8>1099511627776</i8>", resp.body)
        got = parse_result(resp.body)
        self.assertEqual(got["i8"], 2**40)
        self.assertIsNone(got["nil"])
        self.assertEqual(got["b64"], b"\x00\x01\x02\xff")
        self.assertEqual(str(got["when"]), "2026-12-01 10:11:12")
        self.assertEqual(got["nested"], {"list": [-7, 0.5, True, "<x>"]})
        self.assertEqual(list(got), ["i8", "nil", "b64", "when", "nested"])

    def test_introspection(self):
        methods = self.p.system.listMethods()
        for name in ("load", "sample.add", "sample.sum", "echo", "square", "system.multicall"):
            self.assertIn(name, methods)
        self.assertEqual(self.p.system.methodHelp("sample.add"), "The sum of two integers.")
        self.assertEqual(self.p.system.methodHelp("echo"), "")
        self.assertEqual(self.p.system.methodSignature("sample.add"), [["int", "int", "int"]])
        self.assertEqual(self.p.system.methodSignature("load"), [["string", "int"]])
        self.assertEqual(self.p.system.methodSignature("echo"), "undef")

    def test_faults(self):
        with self.assertRaises(xmlrpc.client.Fault) as f:
            self.p.nosuch()
        self.assertEqual(f.exception.faultCode, METHOD_NOT_FOUND)
        # Counted on the host: the worker is not asked.
        with self.assertRaises(xmlrpc.client.Fault) as f:
            getattr(self.p, "sample.add")(1)
        self.assertEqual(f.exception.faultCode, INVALID_PARAMS)
        self.assertIn("expected 2 parameters, got 1", f.exception.faultString)


class Faults(unittest.TestCase):
    def test_an_int_past_64_bits_is_a_fault_and_the_worker_lives_on(self):
        # One worker: the process that answers before and after huge() is
        # the one that ran it. A worker that died or left after answering
        # would be replaced by a process of another pid.
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "1", env_args=False) as d:
            (worker,) = wait_for_workers(d, 1)
            self.assertEqual(parse_result(raw_call(d, call_body("pid_after", 0)).body), worker)
            f = parse_fault(raw_call(d, call_body("huge")).body)
            self.assertEqual((f.faultCode, f.faultString),
                             (INTERNAL_ERROR, "internal error: the result cannot be encoded"))
            self.assertEqual(parse_result(raw_call(d, call_body("pid_after", 0)).body), worker,
                             f"huge() cost its worker process\n{d.diagnostics()}")
            self.assertEqual(workers_of(d), [worker])
            for death in ("died from signal", "exited with status"):
                self.assertNotIn(death, d.stderr_text())

    def test_fault_and_exception(self):
        with python_daemon("service") as d:
            body = raw_call(d, call_body("fault42")).body
            f = parse_fault(body)
            self.assertEqual((f.faultCode, f.faultString), (42, "x"))
            body = raw_call(d, call_body("divide", 1, 0)).body
            f = parse_fault(body)
            self.assertEqual(f.faultCode, INTERNAL_ERROR)
            self.assertEqual(f.faultString, "internal error")
            self.assertNotIn(b"ZeroDivision", body)
            procs.wait_for(lambda: "ZeroDivisionError" in d.stderr_text(), time.monotonic() + 2)
            self.assertIn("ZeroDivisionError", d.stderr_text(), "no traceback on stderr")
            # Public functions only, without a hook.
            body = raw_call(d, call_body("_private")).body
            self.assertEqual(parse_fault(body).faultCode, METHOD_NOT_FOUND)


class CompactForm(unittest.TestCase):
    """Calls and results in marshal's form (src/worker/marshal.hpp), and
    what it cannot carry."""

    @classmethod
    def setUpClass(cls):
        cls.d = python_daemon("service")
        cls.daemon = cls.d.__enter__()
        cls.p = xmlrpc.client.ServerProxy(cls.daemon.url, allow_none=True, use_builtin_types=True)
        cls.p.add(1, 2)  # a worker is up: calls go in marshal's form
        cls.workers = wait_for_workers(cls.daemon)

    @classmethod
    def tearDownClass(cls):
        cls.p("close")()
        cls.d.__exit__(None, None, None)

    def tearDown(self):
        self.assertEqual(workers_of(self.daemon), self.workers,
                         f"a worker was replaced\n{self.daemon.diagnostics()}")

    def fault_of(self, method, *args):
        with self.assertRaises(xmlrpc.client.Fault) as f:
            getattr(self.p, method)(*args)
        return f.exception.faultCode, f.exception.faultString

    def logged(self, text):
        procs.wait_for(lambda: text in self.daemon.stderr_text(), time.monotonic() + 5)
        self.assertIn(text, self.daemon.stderr_text())

    def test_a_malformed_answer_fails_that_call_only(self):
        # Other calls run all the while, on both workers; none fails, and no
        # worker is replaced (tearDown).
        stop = threading.Event()

        def others():
            n = 0
            with xmlrpc.client.ServerProxy(self.daemon.url) as p:
                while not stop.is_set():
                    assert p.add(n, 1) == n + 1
                    n += 1
            return n

        callers = [Background(others) for _ in range(4)]
        try:
            for i in range(3):
                self.assertEqual(self.fault_of("garbled", [i, "x" * i]),
                                 (INTERNAL_ERROR, "internal error"))
                self.assertEqual(self.p.echo([i]), [i])
        finally:
            stop.set()
        self.assertTrue(all(c.join() > 0 for c in callers))
        self.logged("answered garbled with what is not marshal's form (cut short)")

    def test_results_xmlrpc_has_no_type_for_are_faults_and_logged(self):
        cannot = (INTERNAL_ERROR, "internal error: the result cannot be encoded")
        for method, why in (("a_set", "a set"), ("int_keys", "a dict key that is not a string"),
                            ("surrogate", "not valid Unicode"), ("huge", "past 64 bits")):
            self.assertEqual(self.fault_of(method), cannot, method)
            self.logged(f"the result of {method} cannot be encoded: ")
            self.logged(why)
        self.assertEqual(jsonrpc(self.daemon, "a_set", [])["error"]["code"], INTERNAL_ERROR)

    def test_what_marshal_cannot_carry_goes_as_xmlrpc(self):
        # A datetime (marshal has none) and infinities and NaN (which
        # Python's marshaller writes as "inf" and "nan") come as Python
        # writes them; a dateTime parameter reaches the method as a datetime.
        self.assertEqual(self.p.when(), datetime.datetime(2026, 12, 6, 7, 8, 9))
        got = self.p.not_finite()
        self.assertEqual(got[:2], [float("inf"), float("-inf")])
        self.assertTrue(math.isnan(got[2]))
        when = datetime.datetime(2026, 1, 2, 3, 4, 5)
        self.assertEqual(self.p.echo({"at": [when]}), {"at": [when]})

    def test_every_marshal_type_both_ways(self):
        # i8 both ways over JSON-RPC (xmlrpc.client refuses to send one).
        value = [0, -1, 2**31 - 1, -2**31, 2**31, -2**31 - 1, 2**40, 2**63 - 1, -2**63,
                 1.5, -0.0, 1e300, "", "caf\xe9 \U0001f600 <&>", True, False, None,
                 {"a": {"b": []}, "c": [[], {}]}]
        self.assertEqual(jsonrpc(self.daemon, "echo", [value])["result"], value)
        xml = [v for v in value if not isinstance(v, int) or -2**31 <= v < 2**31]
        self.assertEqual(self.p.echo(xml + [b"\x00\xff"]), xml + [b"\x00\xff"])
        self.assertEqual(self.p.echo((1, (2,))), [1, [2]])


class CallsQueuedAtAWorker(unittest.TestCase):
    """Quick calls queue at a busy worker process (up to 8, src/worker/
    worker_pool.cpp): behind a call that crashes or times out, they are
    neither lost nor run twice; nothing waits behind a slow call while
    another worker could take it."""

    def quick_calls(self, d, path, tokens):
        """note(path, token) for each token, from 8 threads at once: the
        faults they got, by token."""
        faults = {}

        def caller(part):
            with xmlrpc.client.ServerProxy(d.url) as p:
                for token in part:
                    try:
                        self.assertEqual(p.note(path, token), token)
                    except xmlrpc.client.Fault as f:
                        faults[token] = f.faultCode

        callers = [Background(lambda i=i: caller(tokens[i::8])) for i in range(8)]
        for c in callers:
            c.join(60)
        return faults

    def assert_each_ran_once(self, path, tokens):
        with open(path) as f:
            ran = collections.Counter(f.read().split())
        self.assertEqual({t: n for t, n in ran.items() if n != 1}, {}, "ran more than once")
        self.assertEqual(set(tokens) - set(ran), set(), "never ran")

    def test_calls_behind_a_crash_run_once_on_the_next_worker(self):
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "1", env_args=False) as d, tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ran")
            with xmlrpc.client.ServerProxy(d.url) as p:
                for _ in range(20):  # both methods known to be quick
                    self.assertFalse(p.maybe_crash(False))
                    p.note(os.path.join(tmp, "warm"), "x")
            for round_ in range(3):
                tokens = [f"{round_}-{i}" for i in range(400)]
                crash = Background(lambda: raw_call(d, call_body("maybe_crash", True)).body)
                self.assertEqual(self.quick_calls(d, path, tokens), {})
                self.assertEqual(parse_fault(crash.join()).faultCode, INTERNAL_ERROR)
                self.assert_each_ran_once(path, tokens)
            self.assertEqual(d.stderr_text().count("died from signal 11"), 3)

    def test_calls_behind_a_runaway_run_once_after_its_kill(self):
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "1", "--method-timeout", "0.3", env_args=False) as d, \
                tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ran")
            with xmlrpc.client.ServerProxy(d.url) as p:
                for _ in range(20):
                    self.assertFalse(p.maybe_spin(0))
                    p.note(os.path.join(tmp, "warm"), "x")
            tokens = [f"t{i}" for i in range(400)]
            spin = Background(lambda: raw_call(d, call_body("maybe_spin", 2.0)).body)
            self.assertEqual(self.quick_calls(d, path, tokens), {})
            self.assertEqual(parse_fault(spin.join()).faultCode, TIMEOUT)
            self.assert_each_ran_once(path, tokens)

    def test_calls_queued_at_a_worker_count_as_waiting(self):
        # One worker; maybe_spin is quick by its record, then spins: the
        # calls sent behind it wait, and the queue depth and the wait
        # histogram say so.
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "1", *ADMIN, env_args=False) as d:
            with xmlrpc.client.ServerProxy(d.url) as p:
                for _ in range(20):
                    self.assertFalse(p.maybe_spin(0))
            waits_before = d.metric("rapidrpc_pool_wait_seconds_count")
            spin = Background(lambda: raw_call(d, call_body("maybe_spin", 1.5)).body)
            wait_until(lambda: busy_workers(d) == 1, 10, "the spin running")
            behind = [Background(lambda: raw_call(d, call_body("maybe_spin", 0)).body)
                      for _ in range(3)]
            wait_until(lambda: d.metric("rapidrpc_pool_queue_depth") == 3, 10,
                       "3 calls waiting")
            self.assertTrue(spin.is_alive(), "the spin ended first: the test proves nothing")
            # Counted when they begin, not when they were sent.
            self.assertEqual(d.metric("rapidrpc_pool_wait_seconds_count"), waits_before + 1)
            for c in behind:
                self.assertFalse(parse_result(c.join()))
            self.assertEqual(d.metric("rapidrpc_pool_wait_seconds_count"), waits_before + 4)
            self.assertEqual(d.metric("rapidrpc_pool_queue_depth"), 0)
            spin.join()

    def test_nothing_waits_behind_a_slow_call(self):
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "2", *ADMIN, env_args=False) as d:
            with xmlrpc.client.ServerProxy(d.url) as p:
                for _ in range(20):
                    p.pid_after(0)  # quick
            spin = Background(lambda: raw_call(d, call_body("spin", 2.0)).body)
            wait_until(lambda: busy_workers(d) == 1, 10, "the spin running on a worker")
            answered_by = collections.Counter()

            def caller():
                with xmlrpc.client.ServerProxy(d.url) as p:
                    for _ in range(50):
                        answered_by[p.pid_after(0)] += 1

            callers = [Background(caller) for _ in range(8)]
            for c in callers:
                c.join(60)
            # All 400 answered while the spin ran, by the other worker.
            self.assertTrue(spin.is_alive(), "the spin ended first: the test proves nothing")
            self.assertEqual(len(answered_by), 1, answered_by)
            self.assertEqual(sum(answered_by.values()), 400)
            self.assertEqual(parse_result(spin.join()), True)


class Crashes(unittest.TestCase):
    def crash_costs_one_call(self, method, signum):
        with python_daemon("service", *ADMIN) as d:
            wait_for_workers(d)
            # A spin holds one worker while the other crashes.
            spin = Background(lambda: raw_call(d, call_body("spin", 1.5)).body)
            wait_until(lambda: busy_workers(d) == 1, 10, "the spin running on a worker")
            f = parse_fault(raw_call(d, call_body(method)).body)
            self.assertEqual(f.faultCode, INTERNAL_ERROR)
            self.assertIs(parse_result(spin.join(10)), True, "the call on the other worker failed")
            # Both workers answer again within 1 s: two calls at once, each
            # holding its worker for 0.2 s, answered by two processes.
            start = time.monotonic()
            calls = [Background(lambda: parse_result(raw_call(d, call_body("pid_after", 0.2)).body))
                     for _ in range(2)]
            pids = [c.join(10) for c in calls]
            took = time.monotonic() - start
            self.assertEqual(len(set(pids)), 2, f"answered by {pids}")
            self.assertLess(took, 1.0, f"both workers answered only after {took:.2f} s")
            self.assertIn(f"died from signal {signum}", d.stderr_text())

    def test_a_segfault_costs_its_call_only(self):
        self.crash_costs_one_call("crash", signal.SIGSEGV)

    def test_an_abort_costs_its_call_only(self):
        self.crash_costs_one_call("abort", signal.SIGABRT)

    def test_a_runaway_is_stopped_at_the_method_timeout(self):
        with python_daemon("service", "--method-timeout", "2") as d:
            workers = wait_for_workers(d)
            start = time.monotonic()
            f = parse_fault(raw_call(d, call_body("spin", 60)).body)
            took = time.monotonic() - start
            self.assertEqual(f.faultCode, TIMEOUT)
            self.assertLess(took, 3.0)
            # Its Python stack is logged before it is killed.
            procs.wait_for(lambda: "in spin" in d.stderr_text(), time.monotonic() + 2)
            self.assertRegex(d.stderr_text(), r'service\.py", line \d+ in spin',
                             "no Python stack of the runaway")
            # The runaway is replaced, and the process tree stops using CPU.
            wait_until(lambda: len(set(workers_of(d)) - set(workers)) == 1
                       and len(workers_of(d)) == 2, 5, f"the runaway replaced (was {workers})")
            before = procs.tree_cpu(d.proc.pid)
            time.sleep(1.0)
            used = procs.tree_cpu(d.proc.pid) - before
            self.assertLess(used, 0.2, f"{used:.2f} s of CPU in 1 s after the timeout")

    def test_max_requests_recycles_workers_between_calls(self):
        with running_daemon("--python", "service", "--python-path", SERVICE_DIR, "--workers",
                            "1", "--max-requests", "3", env_args=False) as d:
            first = wait_for_workers(d, 1)
            pids = []
            for _ in range(2):
                pids += [parse_result(raw_call(d, call_body("pid_after", 0)).body)
                         for _ in range(3)]
                # The successor starts while the worker serves on; once it
                # is ready, the worker leaves: one worker again, a new one.
                procs.wait_for(lambda: workers_of(d) not in ([], [pids[-1]]),
                               time.monotonic() + 10)
                wait_for_workers(d, 1)
            pids.append(parse_result(raw_call(d, call_body("pid_after", 0)).body))
            self.assertEqual(pids[0], first[0])
            self.assertEqual(len(set(pids[0:3])), 1, pids)
            self.assertEqual(len(set(pids[3:6])), 1, pids)
            self.assertEqual(len(set(pids)), 3, f"not replaced after 3 calls each: {pids}")
            # The retired processes left and were reaped: no zombie, no death.
            retired = set(pids[:6])
            procs.wait_for(lambda: not retired & set(procs.children(d.proc.pid)),
                           time.monotonic() + 3)
            self.assertFalse(retired & set(procs.children(d.proc.pid)), "retired workers linger")
            self.assertNotIn("died from signal", d.stderr_text())
            self.assertNotIn("exited with status", d.stderr_text())

    def test_sigkill_of_an_idle_worker_then_ten_calls_all_succeed(self):
        with python_daemon("service") as d:
            workers = wait_for_workers(d)
            os.kill(workers[0], signal.SIGKILL)
            for i in range(10):
                self.assertEqual(parse_result(raw_call(d, call_body("add", i, 1)).body), i + 1)


def memory_kib(pid):
    """{field: KiB} of /proc/PID/smaps_rollup."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


class WarmParent(unittest.TestCase):
    """The module is imported once, in the warm parent, which forks the
    workers: each shares the parent's pages, and a dead worker's
    replacement is another fork of the same parent."""

    def test_workers_are_forks_of_the_one_that_imported_the_module(self):
        with python_daemon("service", *ADMIN) as d:
            workers = wait_for_workers(d)
            (parent,) = procs.warm_parents(d.proc.pid)
            for pid in workers:
                self.assertEqual(procs.stat(pid)[0], parent)
            calls = [Background(lambda: parse_result(raw_call(d, call_body("pid_after", 0.3)).body))
                     for _ in range(2)]
            self.assertEqual(sorted(c.join(10) for c in calls), workers)
            self.assertEqual(parse_result(raw_call(d, call_body("imported_by")).body), parent)
            # What each holds of its own is a small part of what it uses:
            # the rest it shares with its parent (an interpreter started on
            # its own holds most of its memory alone).
            for pid in workers:
                m = memory_kib(pid)
                own = m["Private_Clean"] + m["Private_Dirty"]
                self.assertLess(own, m["Rss"] / 4, f"worker {pid}: {m}")

    def test_a_killed_worker_is_replaced_by_another_fork(self):
        with python_daemon("service", *ADMIN) as d:
            workers = wait_for_workers(d)
            (parent,) = procs.warm_parents(d.proc.pid)
            os.kill(workers[0], signal.SIGKILL)
            wait_until(lambda: len(workers_of(d)) == 2 and workers[0] not in workers_of(d), 10,
                       "the killed worker replaced")
            for pid in workers_of(d):
                self.assertEqual(procs.stat(pid)[0], parent)
            self.assertEqual(procs.warm_parents(d.proc.pid), {parent})
            self.assertIn(f"worker process {workers[0]} died from signal 9 while idle",
                          d.stderr_text())
            self.assertEqual(parse_result(raw_call(d, call_body("add", 2, 3)).body), 5)

    def test_a_killed_warm_parent_takes_its_workers_and_another_forks_new_ones(self):
        with python_daemon("service", *ADMIN) as d:
            workers = wait_for_workers(d)
            (parent,) = procs.warm_parents(d.proc.pid)
            os.kill(parent, signal.SIGKILL)
            wait_until(lambda: len(workers_of(d)) == 2 and not set(workers) & set(workers_of(d))
                       and procs.warm_parents(d.proc.pid) - {parent}, 10,
                       "a new warm parent and two new workers")
            (new_parent,) = procs.warm_parents(d.proc.pid)
            for pid in workers_of(d):
                self.assertEqual(procs.stat(pid)[0], new_parent)
            self.assertIn(f"the warm parent {parent} died from signal 9; starting another",
                          d.stderr_text())
            self.assertEqual(parse_result(raw_call(d, call_body("imported_by")).body), new_parent)

    def test_a_parent_that_cannot_import_fails_the_waiting_call_then_one_that_can_serves(self):
        with tempfile.TemporaryDirectory(prefix="rapidrpc-warm-") as tmp:
            module = os.path.join(tmp, "vanishing.py")
            with open(module, "w") as f:
                f.write("import os\n\ndef pid() -> int:\n    return os.getpid()\n")
            with running_daemon("--python", "vanishing", "--python-path", tmp, "--workers", "1",
                                *ADMIN, env_args=False) as d:
                (worker,) = wait_for_workers(d, 1)
                (parent,) = procs.warm_parents(d.proc.pid)
                os.rename(module, module + ".away")
                shutil.rmtree(os.path.join(tmp, "__pycache__"), ignore_errors=True)
                os.kill(parent, signal.SIGKILL)
                # Its worker dies with it (PR_SET_PDEATHSIG): a call sent
                # before would meet it dying, and fail for that.
                wait_until(lambda: procs.stat(worker) is None or procs.stat(worker)[1] == "Z", 10,
                           "the worker gone with its parent")
                # Each new parent fails its import: after three, the call
                # waiting for a worker hears so rather than wait for ever.
                f = parse_fault(raw_call(d, call_body("pid")).body)
                self.assertEqual(f.faultCode, INTERNAL_ERROR)
                self.assertIn("keep dying", f.faultString)
                self.assertIn("No module named 'vanishing'", d.stderr_text())
                self.assertIn("exited with status 3; starting another", d.stderr_text())
                os.rename(module + ".away", module)
                pid = wait_until(lambda: workers_of(d), 15, "a worker of a parent that imports")
                self.assertEqual(parse_result(raw_call(d, call_body("pid")).body), pid[0])

    def test_a_call_answered_while_the_pool_is_held_up_leaves_the_next_call_its_own_timeout(self):
        # The pool's thread waits for a stopped warm parent (the idle
        # worker's death, then its replacement's fork: 5 s each, then the
        # parent is killed). Meanwhile the busy worker answers, and then
        # its call's deadline passes: the pool sees both at once, the
        # answer first. The timeout is that call's; the call queued behind
        # it must not get it.
        with python_daemon("service", "--method-timeout", "1", *ADMIN) as d:
            workers = wait_for_workers(d)
            (parent,) = procs.warm_parents(d.proc.pid)
            first = Background(lambda: raw_call(d, call_body("spin", 0.6)))
            busy = wait_until(lambda: [p for p in workers if procs.stat(p)[1] == "R"], 5,
                              "a worker running spin")
            (idle,) = set(workers) - set(busy)
            os.kill(parent, signal.SIGSTOP)
            os.kill(idle, signal.SIGKILL)
            time.sleep(1.5)  # spin answered, and its deadline passed
            second = Background(lambda: raw_call(d, call_body("add", 2, 3)))
            first.join(30)
            self.assertEqual(parse_result(second.join(30).body), 5, d.stderr_text())
            self.assertIn(f"the warm parent {parent} did not answer a fork within 5 s",
                          d.stderr_text())


class Lifecycle(unittest.TestCase):
    def test_an_import_error_stops_rapidrpcd_with_the_traceback(self):
        start = time.monotonic()
        r = subprocess.run([daemon_path(), "--port", "0", "--python", "broken",
                            "--python-path", SERVICE_DIR], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30)
        took = time.monotonic() - start
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(took, 5.0)
        self.assertIn(b"Traceback", r.stderr)
        self.assertIn(b"No module named 'no_such_module_here'", r.stderr)
        self.assertNotIn(b"listening on", r.stdout)

    def test_a_module_whose_import_starts_a_thread_is_refused_unless_workers_import_it(self):
        with tempfile.TemporaryDirectory(prefix="rapidrpc-threads-") as tmp:
            with open(os.path.join(tmp, "ticking.py"), "w") as f:
                f.write("import threading, time\n"
                        "threading.Thread(target=time.sleep, args=(60,), name='ticker',\n"
                        "                 daemon=True).start()\n\n"
                        "def alive() -> bool:\n"
                        "    return any(t.name == 'ticker' for t in threading.enumerate())\n")
            r = subprocess.run([daemon_path(), "--port", "0", "--python", "ticking",
                                "--python-path", tmp], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(b"ticking started threads when imported (ticker)", r.stderr)
            self.assertIn(b"--python-spawn-workers", r.stderr)
            self.assertNotIn(b"listening on", r.stdout)
            # Each worker an interpreter of its own: its import's thread runs there.
            with running_daemon("--python", "ticking", "--python-path", tmp, "--workers", "1",
                                "--python-spawn-workers", env_args=False) as d:
                self.assertEqual(procs.warm_parents(d.proc.pid), set())
                self.assertIs(parse_result(raw_call(d, call_body("alive")).body), True)

    def test_python_outside_async_pool_is_refused(self):
        for mode in ("async", "sequential", "fork", "prefork"):
            r = subprocess.run([daemon_path(), "--port", "0", "--mode", mode, "--python",
                                "service", "--python-path", SERVICE_DIR],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(b"--python needs --mode async-pool", r.stderr)

    def test_the_interpreter_is_usr_bin_python3_whatever_path_says(self):
        with tempfile.TemporaryDirectory(prefix="rapidrpc-path-") as tmp:
            fake = os.path.join(tmp, "python3")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho not this python >&2\nexit 99\n")
            os.chmod(fake, stat.S_IRWXU)
            old = os.environ["PATH"]
            os.environ["PATH"] = tmp + os.pathsep + old
            try:
                with python_daemon("service") as d:
                    for pid in wait_for_workers(d):
                        exe = os.readlink(f"/proc/{pid}/exe")
                        self.assertTrue(exe.startswith("/usr/bin/python3"), exe)
                    self.assertEqual(parse_result(raw_call(d, call_body("add", 1, 2)).body), 3)
            finally:
                os.environ["PATH"] = old

    def assert_no_worker_left(self, workers, within):
        def left():
            return [p for p in workers if (procs.stat(p) or (0, "Z"))[1] != "Z"]
        procs.wait_for(lambda: not left(), time.monotonic() + within)
        self.assertEqual(left(), [], f"workers left {within} s after rapidrpcd stopped")

    def test_sigterm_lets_python_calls_finish_and_leaves_no_worker(self):
        d = started_python_daemon("service", *ADMIN)
        try:
            workers = wait_for_workers(d) + list(procs.warm_parents(d.proc.pid))
            calls = [Background(lambda i=i: raw_call(d, call_body("later", 1.0, i)).body)
                     for i in range(2)]
            wait_until(lambda: busy_workers(d) == 2, 10, "both calls running on the workers")
            d.send_signal(signal.SIGTERM)
            results = [c.join(10) for c in calls]
            self.assertEqual(d.wait(10), 0, d.diagnostics())
            for i in range(2):
                self.assertEqual(parse_result(results[i]), i)
            self.assert_no_worker_left(workers, 1.0)
        finally:
            d.kill()

    def test_sigkill_of_rapidrpcd_leaves_no_worker_even_a_busy_one(self):
        d = started_python_daemon("service", *ADMIN)
        try:
            workers = wait_for_workers(d) + list(procs.warm_parents(d.proc.pid))
            spin = Background(lambda: raw_call(d, call_body("spin", 20)))
            wait_until(lambda: busy_workers(d) == 1, 10, "the spin running on a worker")
            d.proc.kill()  # the daemon alone, not its process group
            d.wait(10)
            self.assert_no_worker_left(workers, 1.0)
            # Its caller saw the connection end, with no answer.
            with self.assertRaises((IncompleteResponse, ConnectionError)):
                spin.join(10)
        finally:
            d.kill()


if __name__ == "__main__":
    main()
