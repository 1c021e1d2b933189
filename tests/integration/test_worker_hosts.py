"""Worker hosts (--worker-listen, --worker-connect; docs/scale-out.md): a
front that runs no pool call itself (--workers 0) and rapidrpcd worker hosts
connected to it over ZeroMQ on 127.0.0.1, each test with daemons of its
own. Pool calls are test.spin and load; the hosts' deaths are SIGKILL and
SIGTERM of their process groups, and a hung host is SIGSTOP of its process.
tests/faults/test_worker_hosts.py runs the same faults under a continuous
load."""

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import xmlrpc.client

import zmq

from harness import (HOST, Daemon, RawClient, daemon_path, fib_str, http_request, main, make_proxy,
                     parse_result, raw_call_body, wait_until)

ENDPOINT_RE = re.compile(rb"worker hosts connect at (\S+)")
ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on (\S+)")

# A host the front hears nothing from for 2 s is dropped (src/worker/remote.hpp),
# checked every half second; its last heartbeat came up to half a second
# before it died: docs/scale-out.md promises the drop within 2.5 s, and it
# comes no sooner than 1.5 s.
DROP_DEADLINE = 2.5
DROP_EARLIEST = 1.5


def printed(daemon, pattern):
    for line in daemon._stdout_lines:
        m = pattern.search(line)
        if m:
            return m.group(1).decode()
    raise AssertionError(f"rapidrpcd printed no line matching {pattern.pattern}\n"
                         f"{daemon.diagnostics()}")


def readyz(admin):
    try:
        with urllib.request.urlopen(f"http://{admin}/readyz", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def pool_figures(admin, *names):
    """The front's rapidrpc_pool_NAME figures (whole numbers), in order."""
    with urllib.request.urlopen(f"http://{admin}/metrics", timeout=5) as r:
        text = r.read().decode()
    return tuple(int(re.search(rf"^rapidrpc_pool_{name} (\d+)$", text, re.M).group(1))
                 for name in names)


def busy_workers(admin):
    """rapidrpc_pool_busy_workers of a front: its hosts' places taken."""
    return pool_figures(admin, "busy_workers")[0]


class WorkerHosts(unittest.TestCase):
    def setUp(self):
        self.daemons = []
        self.front = self.start("--workers", "0", "--worker-listen", f"tcp://{HOST}:*",
                                "--admin", f"{HOST}:0")
        self.address = printed(self.front, ENDPOINT_RE)
        self.admin = printed(self.front, ADMIN_RE)

    def tearDown(self):
        for d in reversed(self.daemons):
            if d.alive():
                d.stop()
            else:
                d.kill()

    def start(self, *args):
        d = Daemon("--enable-test-methods", *args, env_args=False).start()
        self.daemons.append(d)
        return d

    def host(self, *args, workers=1):
        h = self.start("--worker-connect", self.address, "--workers", str(workers), *args)
        return h

    def connected(self, count):
        """Waits until the front has `count` hosts connected, by its log."""
        wait_until(lambda: self.front.stderr_since(0).count("connected") >= count, 5,
                 f"{count} worker host(s) connected")

    def call(self, method, *params, timeout=30):
        with make_proxy(self.front.url, timeout) as proxy:
            return getattr(proxy, method)(*params)

    def outcome(self, method, *params):
        """(result or Fault, when it came)."""
        try:
            result = self.call(method, *params)
        except xmlrpc.client.Fault as f:
            result = f
        return result, time.monotonic()

    def assert_two_calls_run_side_by_side(self):
        """Two 1 s calls at once end within 1.9 s: two hosts took them."""
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            t0 = time.monotonic()
            spins = [pool.submit(self.call, "test.spin", 1.0) for _ in range(2)]
            self.assertEqual([s.result() for s in spins], [True, True])
            self.assertLess(time.monotonic() - t0, 1.9)

    def test_a_front_without_hosts_is_not_ready_and_says_why(self):
        status, body = readyz(self.admin)
        self.assertEqual((status, body.strip()), (503, "not ready: no worker host is connected"))
        with self.assertRaises(xmlrpc.client.Fault) as f:
            self.call("load", 10)
        self.assertEqual(f.exception.faultCode, -32603)
        self.assertIn("no worker host is connected", f.exception.faultString)
        # Inline methods run on the front itself.
        self.assertEqual(self.call("sample.add", 2, 3), 5)
        self.host()
        wait_until(lambda: readyz(self.admin)[0] == 200, 5, "ready once a host is connected")
        self.assertEqual(self.call("load", 2000), fib_str(2000))

    def test_calls_go_to_the_least_loaded_host(self):
        # Two hosts of one call each: two calls at once run side by side, one
        # on each; a third waits at the front for the first free one.
        self.host()
        self.host()
        self.connected(2)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            spins = [pool.submit(self.call, "test.spin", 1.0) for _ in range(3)]
            self.assertEqual([s.result() for s in spins], [True] * 3)
        took = time.monotonic() - t0
        self.assertGreaterEqual(took, 2.0)  # the third waited for a free host
        self.assertLess(took, 2.9)           # the first two ran side by side

    def test_the_fronts_own_workers_take_calls_too(self):
        # A front with a worker of its own and one host of one: two calls at
        # once run side by side, a third waits; with the host gone, calls
        # still run, on the front.
        self.front.stop()
        self.front = self.start("--workers", "1", "--worker-listen", f"tcp://{HOST}:*")
        self.address = printed(self.front, ENDPOINT_RE)
        host = self.host()
        self.connected(1)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            spins = [pool.submit(self.call, "test.spin", 1.0) for _ in range(3)]
            self.assertEqual([s.result() for s in spins], [True] * 3)
        took = time.monotonic() - t0
        self.assertGreaterEqual(took, 2.0)
        self.assertLess(took, 2.9)
        host.stop()
        self.assertEqual(self.call("load", 2000), fib_str(2000))

    def test_the_fronts_own_worker_processes_answer_both_protocols(self):
        # They are handed the call's document and answer with theirs, which
        # the front passes on to an XML-RPC client and reads for JSON-RPC.
        self.front.stop()
        self.front = self.start("--workers", "1", "--isolate", "--worker-listen",
                                f"tcp://{HOST}:*")
        self.assertEqual(self.call("load", 2000), fib_str(2000))
        with self.assertRaises(xmlrpc.client.Fault) as f:
            self.call("test.crash")
        self.assertEqual(f.exception.faultCode, -32603)
        request = urllib.request.Request(
            self.front.url, data=b'{"jsonrpc":"2.0","method":"load","params":[30],"id":7}',
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as r:
            self.assertEqual(json.loads(r.read()),
                             {"jsonrpc": "2.0", "result": fib_str(30), "id": 7})

    def test_a_killed_host_fails_only_its_calls_in_flight_and_comes_back(self):
        # Hosts of two places each: the least loaded rule sends two calls
        # one to each (the first host with room would take both).
        doomed = self.host(workers=2)
        self.host(workers=2)
        self.connected(2)
        # Each call spins 3 s: both run when the host is killed, the doomed
        # one's fault comes 1.5 to 2.5 s later, the other's answer at 3 s.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            spins = [pool.submit(self.outcome, "test.spin", 3.0) for _ in range(2)]
            wait_until(lambda: busy_workers(self.admin) == 2, 5, "both calls running")
            killed_at = time.monotonic()
            doomed.kill()
            outcomes = [(o, t - killed_at) for o, t in (s.result() for s in spins)]
        faults = [(o, t) for o, t in outcomes if isinstance(o, xmlrpc.client.Fault)]
        self.assertEqual(len(faults), 1, outcomes)
        f, after = faults[0]
        self.assertEqual(f.faultCode, -32603)
        self.assertIn("the worker host running this call stopped answering", f.faultString)
        self.assertLess(after, DROP_DEADLINE)
        self.assertGreater(after, DROP_EARLIEST)
        self.assertEqual([o for o, _ in outcomes if o is True], [True])
        self.assertIn("stopped answering; 1 call(s) in flight there fail", self.front.stderr_text())
        # The other host takes the calls, and a new one gets them as well.
        self.assertEqual(self.call("load", 2000), fib_str(2000))
        self.host()
        self.connected(3)
        self.assert_two_calls_run_side_by_side()

    def test_an_unreachable_host_is_dropped_then_taken_back_when_it_answers(self):
        # SIGSTOP: the host's connection stays open but nothing comes from
        # it, as when a link or a machine hangs. Only the heartbeat tells.
        frozen = self.host()
        self.host()
        self.connected(2)
        # The calls last 6 s: resumed about 2.5 s in, the frozen host may
        # take up to its own 2 s peer timeout to find the front gone
        # (remote::peer_timeout), and its call must still be running then.
        # With 4 s, a clean-clone run saw the call end first.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            spins = [pool.submit(self.outcome, "test.spin", 6.0) for _ in range(2)]
            wait_until(lambda: busy_workers(self.admin) == 2, 5, "both calls running")
            stopped_at = time.monotonic()
            frozen.send_signal(signal.SIGSTOP)
            try:
                # The frozen host's call fails first (its fault ~2 s in, the
                # other call ends 6 s in); the host goes on as soon as it has.
                first = next(concurrent.futures.as_completed(spins))
            finally:
                frozen.send_signal(signal.SIGCONT)
            fault, at = first.result()
            self.assertIsInstance(fault, xmlrpc.client.Fault)
            self.assertIn("stopped answering", fault.faultString)
            self.assertLess(at - stopped_at, DROP_DEADLINE)
            self.assertGreater(at - stopped_at, DROP_EARLIEST)
            self.assertEqual([s.result()[0] for s in spins if s is not first], [True])
        # Calls go to the host that answers.
        self.assertEqual(self.call("load", 2000), fib_str(2000))
        # Back, the host still runs the call the front failed (its 6 s are
        # not over): it announces itself only once that call has ended, so
        # that its place is free when calls come; its late answer is ignored.
        try:
            wait_until(lambda: "once its 1 call(s) still running end" in frozen.stderr_text(), 5,
                       "the host waiting for its call to end before it announces itself")
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- the host ---\n{frozen.diagnostics()}\n"
                                 f"--- the front ---\n{self.front.diagnostics()}") from None
        self.connected(3)
        self.assert_two_calls_run_side_by_side()

    def test_a_stopped_host_finishes_its_calls_and_takes_no_more(self):
        leaving = self.host()
        self.connected(1)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            spin = pool.submit(self.call, "test.spin", 1.5)
            wait_until(lambda: busy_workers(self.admin) == 1, 5, "the call running")
            leaving.send_signal(signal.SIGTERM)
            self.assertIs(spin.result(), True)  # its call in flight is answered
        self.assertEqual(leaving.wait(10), 0)
        self.assertIn("is leaving", self.front.stderr_text())
        self.assertNotIn("did not answer BYE", leaving.stderr_text())
        # No host is left: calls fail at once rather than wait.
        with self.assertRaises(xmlrpc.client.Fault):
            self.call("load", 10)
        self.host()
        self.connected(2)
        self.assertEqual(self.call("load", 2000), fib_str(2000))

    def test_the_front_answers_a_hosts_bye(self):
        # The host then knows no call follows and leaves (HostLeaving).
        context = zmq.Context()
        try:
            host = context.socket(zmq.DEALER)
            host.setsockopt(zmq.LINGER, 0)
            host.connect(self.address)
            host.send_multipart([b"READY", b"1", b"1"])
            self.connected(1)
            host.send_multipart([b"BYE"])
            frames = None
            while host.poll(5000):
                frames = host.recv_multipart()
                if frames != [b"HB"]:
                    break
            self.assertEqual(frames, [b"BYE"])
        finally:
            context.destroy(linger=0)

    def test_hosts_connect_again_to_a_front_that_started_again(self):
        self.host(workers=2)
        self.connected(1)
        self.assertEqual(self.call("load", 100), fib_str(100))
        port = self.address.rsplit(":", 1)[1]
        self.front.stop()
        self.front = self.start("--workers", "0", "--worker-listen", f"tcp://{HOST}:{port}")
        # The host hears no heartbeat for 2 s and announces itself again.
        self.connected(1)
        self.assertEqual(self.call("load", 2000), fib_str(2000))

    def test_a_call_past_its_timeout_on_a_host_fails_with_a_timeout(self):
        self.front.stop()
        self.front = self.start("--workers", "0", "--worker-listen", f"tcp://{HOST}:*",
                                "--method-timeout", "0.5")
        self.address = printed(self.front, ENDPOINT_RE)
        self.host("--isolate", "--method-timeout", "1")
        self.connected(1)
        t0 = time.monotonic()
        with self.assertRaises(xmlrpc.client.Fault) as f:
            self.call("test.spin", 3.0)
        self.assertEqual(f.exception.faultCode, -32001)
        self.assertLess(time.monotonic() - t0, 1.0)  # the front's timeout, not the host's
        # The host's own timeout kills its worker process at 1 s and frees
        # its place; it serves again. Until then a call waits at the front,
        # and the front's timeout counts that wait.
        wait_until(lambda: self.outcome("load", 100)[0] == fib_str(100), 5, "served again")

    def test_a_host_crash_in_an_isolated_worker_costs_that_call(self):
        self.host("--isolate", workers=2)
        self.connected(1)
        with self.assertRaises(xmlrpc.client.Fault) as f:
            self.call("test.crash")
        self.assertEqual(f.exception.faultCode, -32603)
        self.assertEqual(self.call("load", 2000), fib_str(2000))


class HostLeaving(unittest.TestCase):
    """A host that drains says BYE, but a front may have sent it a call
    before reading that BYE: the host answers such a call before it leaves.
    The front here is a ZeroMQ ROUTER of the test's, so the call arrives
    after the BYE every time, as it does when the race goes that way."""

    def setUp(self):
        self.context = zmq.Context()
        self.front = self.context.socket(zmq.ROUTER)
        self.front.setsockopt(zmq.LINGER, 0)
        port = self.front.bind_to_random_port(f"tcp://{HOST}")
        self.host = Daemon("--enable-test-methods", "--worker-connect", f"tcp://{HOST}:{port}",
                           "--workers", "1", env_args=False).start()
        self.identity = self.receive(b"READY")[0]
        # A heartbeat, as a front sends: a host that has heard from its
        # front lately waits for its BYE, however slowly it started.
        self.front.send_multipart([self.identity, b"HB"])

    def tearDown(self):
        if self.host.alive():
            self.host.kill()
        self.context.destroy(linger=0)

    def receive(self, command, within=5.0):
        """The next message of `command` from the host, heartbeats skipped."""
        deadline = time.monotonic() + within
        while self.front.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            frames = self.front.recv_multipart()
            if frames[1] == command:
                return frames
            self.assertEqual(frames[1], b"HB", frames)
        self.fail(f"no {command!r} from the host in {within} s\n{self.host.diagnostics()}")

    def test_a_call_sent_before_the_front_read_bye_is_answered(self):
        self.host.send_signal(signal.SIGTERM)
        self.receive(b"BYE")
        self.front.send_multipart([self.identity, b"CALL", b"\x01" * 8,
                                   raw_call_body("load", "<value><int>100</int></value>")])
        self.front.send_multipart([self.identity, b"BYE"])  # heard: nothing more comes
        _, _, call_id, document = self.receive(b"REPLY")
        self.assertEqual(call_id, b"\x01" * 8)
        self.assertEqual(parse_result(document), fib_str(100))
        self.assertEqual(self.host.wait(10), 0)

    def test_a_front_that_never_answers_bye_holds_the_host_no_longer_than_its_timeout(self):
        self.host.send_signal(signal.SIGTERM)
        self.receive(b"BYE")
        self.assertEqual(self.host.wait(10), 0)
        self.assertIn("the front did not answer BYE", self.host.stderr_text())

    def test_a_host_whose_front_is_gone_leaves_without_waiting_for_bye(self):
        # No call can come from a front gone silent: stopped after its
        # front went away, the host does not wait for a BYE.
        self.front.close()
        wait_until(lambda: "stopped answering" in self.host.stderr_text(), 10,
                   "the host taking its front for gone")
        self.host.send_signal(signal.SIGTERM)
        self.assertEqual(self.host.wait(10), 0)
        self.assertRegex(self.host.stderr_text(), r"the front at \S+ has said nothing for "
                         r"\d+\.\d s; leaving without waiting for its BYE")
        self.assertNotIn("did not answer BYE", self.host.stderr_text())


class CallsAhead(unittest.TestCase):
    """A front sends a busy host more calls than its places while they are
    expected to be short (src/worker/calls_ahead.hpp), as it sends a busy
    worker process: they wait at the host, not at the front. The host here
    is a ZeroMQ DEALER of the test's with one place, so what the front sends
    it, and when, is seen message by message."""

    def setUp(self):
        self.front = Daemon("--enable-test-methods", "--workers", "0", "--worker-listen",
                            f"tcp://{HOST}:*", "--admin", f"{HOST}:0", env_args=False).start()
        self.admin = printed(self.front, ADMIN_RE)
        self.context = zmq.Context()
        self.host = self.context.socket(zmq.DEALER)
        self.host.setsockopt(zmq.LINGER, 0)
        self.host.connect(printed(self.front, ENDPOINT_RE))
        self.host.send_multipart([b"READY", b"1", b"1"])
        wait_until(lambda: "connected" in self.front.stderr_text(), 5, "the host connected")
        self.clients = concurrent.futures.ThreadPoolExecutor(4)

    def tearDown(self):
        self.clients.shutdown(cancel_futures=True)
        self.context.destroy(linger=0)
        self.front.stop()

    def next_call(self, within):
        """(id, method) of the next CALL, heartbeats skipped; None if none
        comes within `within` seconds."""
        deadline = time.monotonic() + within
        while self.host.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            frames = self.host.recv_multipart()
            if frames[0] == b"CALL":
                method = re.search(rb"<methodName>([^<]*)</methodName>", frames[2]).group(1)
                return frames[1], method.decode()
            self.assertEqual(frames, [b"HB"])
        return None

    def answer(self, call_id, value="1"):
        self.host.send_multipart([b"REPLY", call_id, xmlrpc.client.dumps(
            (value,), methodresponse=True).encode()])

    def calls(self, method, count):
        """`count` calls of `method` from clients at once, as futures."""
        def one():
            with make_proxy(self.front.url, 30) as proxy:
                return getattr(proxy, method)(1)
        return [self.clients.submit(one) for _ in range(count)]

    def calls_sent(self):
        """The CALLs that come until none has for half a second."""
        sent = []
        while (call := self.next_call(0.5)) is not None:
            sent.append(call)
        return sent

    def gauges(self):
        """(places taken, calls waiting)"""
        return pool_figures(self.admin, "busy_workers", "queue_depth")

    def test_short_calls_wait_at_the_busy_host_long_ones_at_the_front(self):
        # A method never timed is expected to fill a place's allowance
        # alone: the second call waits at the front for the first's answer.
        # Answered half a second later, test.spin then takes long: its calls
        # still go one at a time.
        for _ in range(2):
            futures = self.calls("test.spin", 2)
            call_id, method = self.next_call(5)
            self.assertEqual(method, "test.spin")
            self.assertIsNone(self.next_call(0.5))
            wait_until(lambda: self.gauges() == (1, 1), 5, "one place taken, one call waiting")
            self.answer(call_id, True)
            self.answer(self.next_call(5)[0], True)
            self.assertEqual([f.result() for f in futures], [True, True])
        # Answered at once, load's calls take a fraction of a millisecond:
        # with its place taken, the host gets more behind the first (as many
        # as are expected to end within a millisecond). A machine so busy
        # that the answers took longer is given a few more tries.
        for _ in range(5):
            for _ in range(20):
                future = self.calls("load", 1)[0]
                self.answer(self.next_call(5)[0])
                self.assertEqual(future.result(), "1")
            waited = pool_figures(self.admin, "wait_seconds_count")[0]
            futures = self.calls("load", 4)
            sent = self.calls_sent()
            wait_until(lambda: self.gauges() == (1, 3), 5, "one place taken, three calls waiting")
            # The calls waiting, at the host or at the front, have not ended
            # their wait for a worker: each ends it when one before it ends.
            self.assertEqual(pool_figures(self.admin, "wait_seconds_count")[0], waited + 1)
            ahead = len(sent) - 1
            for _ in futures:
                call_id, _ = sent.pop(0) if sent else self.next_call(5)
                self.answer(call_id)
            self.assertEqual([f.result() for f in futures], ["1"] * 4)
            self.assertEqual(pool_figures(self.admin, "wait_seconds_count")[0], waited + 4)
            if ahead > 0:
                break
        self.assertGreater(ahead, 0, "no call went ahead to the busy host")


class PythonHosts(unittest.TestCase):
    """--python on a front and its host: the front learns the module's
    methods, the host runs them in its Python worker processes."""

    def test_python_methods_run_on_the_host(self):
        service = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_service")
        python = ("--python", "service", "--python-path", service)
        front = Daemon(*python, "--workers", "0", "--worker-listen", f"tcp://{HOST}:*",
                       env_args=False).start()
        with front:
            host = Daemon(*python, "--worker-connect", printed(front, ENDPOINT_RE),
                          "--workers", "2", env_args=False).start()
            with host:
                wait_until(lambda: "connected" in front.stderr_text(), 5, "the host connected")
                with make_proxy(front.url) as proxy:
                    self.assertEqual(proxy.add(2, 3), 5)
                    self.assertEqual(proxy.load(2000), fib_str(2000))
                    with self.assertRaises(xmlrpc.client.Fault) as f:
                        proxy.fault42()
                    self.assertEqual(f.exception.faultCode, 42)
                # The front passes the documents on as they came; the host
                # hands its worker the call in marshal's form and writes the
                # answer once: rapidrpc's declaration, not Python's.
                with RawClient(front) as c:
                    c.send(http_request(raw_call_body("add", "<value><int>2</int></value>",
                                                      "<value><int>3</int></value>")))
                    body = c.read_response().body
                self.assertTrue(body.startswith(b'<?xml version="1.0"?>\n'), body)
                self.assertEqual(parse_result(body), 5)


class Curve(unittest.TestCase):
    """CurveZMQ on the link: --curve-keygen's files, a front that lets one
    host's key in, and hosts with another key or none."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.daemons = []
        for name in ("front", "good", "bad"):
            out = subprocess.run([daemon_path(), "--curve-keygen", os.path.join(self.dir.name, name)],
                                 capture_output=True, timeout=10)
            self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(os.stat(self.file("good.key")).st_mode & 0o777, 0o600)

    def tearDown(self):
        for d in reversed(self.daemons):
            if d.alive():
                d.stop()
            else:
                d.kill()
        self.dir.cleanup()

    def file(self, name):
        return os.path.join(self.dir.name, name)

    def start(self, *args):
        d = Daemon(*args, env_args=False).start()
        self.daemons.append(d)
        return d

    def test_only_an_allowed_key_gets_in(self):
        front = self.start("--workers", "0", "--worker-listen", f"tcp://{HOST}:*",
                           "--worker-curve-key", self.file("front.key"),
                           "--worker-curve-allow", self.file("good.pub"))
        address = printed(front, ENDPOINT_RE)
        host = ("--worker-connect", address, "--workers", "1", "--worker-curve-front",
                self.file("front.pub"))
        self.start(*host, "--worker-curve-key", self.file("bad.key"))
        self.start("--worker-connect", address, "--workers", "1")  # no CurveZMQ at all
        wait_until(lambda: "refused" in front.stderr_text(), 5, "the bad key refused")
        time.sleep(0.5)
        with make_proxy(front.url) as proxy, self.assertRaises(xmlrpc.client.Fault):
            proxy.load(10)
        self.assertNotIn("connected", front.stderr_text())
        self.start(*host, "--worker-curve-key", self.file("good.key"))
        wait_until(lambda: "connected" in front.stderr_text(), 5, "the good key let in")
        with make_proxy(front.url) as proxy:
            self.assertEqual(proxy.load(2000), fib_str(2000))

    def test_key_files_are_checked_at_start(self):
        listen = ("--worker-listen", f"tcp://{HOST}:*")
        for args in [(*listen, "--worker-curve-key", self.file("front.key")),  # no hosts' keys
                     (*listen, "--worker-curve-key", self.file("front.pub"),   # not a secret
                      "--worker-curve-allow", self.file("good.pub")),
                     (*listen, "--worker-curve-key", self.file("front.key"),
                      "--worker-curve-allow", self.file("missing.pub")),
                     ("--worker-curve-key", self.file("front.key"))]:          # no link at all
            d = Daemon(*args, env_args=False)
            with self.assertRaises(AssertionError):
                d.start()
            self.assertEqual(d.proc.poll(), 2, args)


class Options(unittest.TestCase):
    def refused(self, *args):
        d = Daemon(*args, env_args=False)
        with self.assertRaises(AssertionError):
            d.start()
        self.assertEqual(d.proc.poll(), 2, d.diagnostics())

    def test_worker_hosts_need_async_pool(self):
        self.refused("--mode", "prefork", "--worker-listen", f"tcp://{HOST}:*")
        self.refused("--mode", "async", "--worker-connect", f"tcp://{HOST}:7000")

    def test_a_front_is_not_also_a_host(self):
        self.refused("--worker-listen", f"tcp://{HOST}:*", "--worker-connect", f"tcp://{HOST}:7000")


if __name__ == "__main__":
    main()
