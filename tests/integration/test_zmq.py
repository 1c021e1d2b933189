"""JSON-RPC over ZeroMQ against the real daemon, with pyzmq (Debian's
python3-zmq) as the client.

rapidrpcd --zmq binds a ROUTER socket; a DEALER sends one frame holding a
JSON-RPC request (or batch) and gets one frame back. The same calls over
HTTP must give the same results; several calls may be in flight on one
socket and come back in any order; bad messages get an error reply or are
dropped with a log line, and the endpoint keeps serving.

The ZeroMQ endpoint exists in the thread modes (async-pool, with or without
--isolate, and async); in the others the daemon must refuse --zmq."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import zmq

import harness
from harness import DaemonTestCase

ZMQ_MODES = ("async-pool", "async-pool-isolate", "async")
NOT_ZMQ_MODES = tuple(m for m in harness.MODES if m not in ZMQ_MODES)
# A bound on any single reply in these tests (the daemon may run under a
# sanitizer).
REPLY_TIMEOUT_MS = 10_000


def report(msg):
    """Figures for the log (unittest -v shows stderr)."""
    print(f"\n  {msg}", file=sys.stderr, flush=True)


def request(method, params=None, id=1):
    r = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        r["params"] = params
    return r


class Dealer:
    """A DEALER socket connected to an endpoint; closed on exit."""

    def __init__(self, endpoint, context=None):
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.socket.close(0)

    def send(self, payload, *envelope):
        """Sends `payload` (a dict/list as JSON, or bytes as they are)."""
        if not isinstance(payload, bytes):
            payload = json.dumps(payload).encode()
        self.socket.send_multipart([*envelope, payload])

    def recv_frames(self, timeout_ms=REPLY_TIMEOUT_MS):
        if not self.socket.poll(timeout_ms):
            raise AssertionError(f"no reply within {timeout_ms} ms")
        return self.socket.recv_multipart()

    def recv(self, timeout_ms=REPLY_TIMEOUT_MS):
        frames = self.recv_frames(timeout_ms)
        assert len(frames) == 1, f"expected one frame, got {frames!r}"
        return json.loads(frames[0])

    def nothing_within(self, timeout_ms):
        return self.socket.poll(timeout_ms) == 0

    def call(self, method, params=None, id=1, timeout_ms=REPLY_TIMEOUT_MS):
        self.send(request(method, params, id))
        return self.recv(timeout_ms)


@harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode (test_refused_in_this_mode)")
class ZmqTestCase(DaemonTestCase):
    daemon_args = ("--zmq", "tcp://127.0.0.1:*", "--max-body-bytes", "65536", "--enable-test-methods")

    @property
    def endpoint(self):
        return self.daemon.zmq_endpoints[0]

    def dealer(self):
        return Dealer(self.endpoint)

    def post_json(self, payload):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        req = urllib.request.Request(f"http://{harness.HOST}:{self.daemon.port}/jsonrpc", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=harness.CALL_TIMEOUT) as r:
            return json.loads(r.read())

    def assert_still_serving(self):
        """A normal call on a new DEALER is answered within 1 s."""
        self.daemon.assert_alive()
        with self.dealer() as d:
            d.send(request("sample.add", [20, 22], "check"))
            self.assertEqual(d.recv(timeout_ms=1000), {"jsonrpc": "2.0", "result": 42, "id": "check"})


class SameResults(ZmqTestCase):
    """Acceptance 1: sample.add, echo and load give what HTTP gives."""

    def test_sample_add(self):
        with self.dealer() as d:
            self.assertEqual(d.call("sample.add", [3, 5]), {"jsonrpc": "2.0", "result": 8, "id": 1})
            self.assertEqual(d.call("sample.add", {"a": 40, "b": 2}, id="named")["result"], 42)
        with self.proxy() as p:
            self.assertEqual(p.sample.add(3, 5), 8)

    def test_echo_every_type_as_over_http(self):
        values = [
            0, -2**31, 2**31 - 1, 2**63 - 1, -2**63, 2.5, -0.0, 1e300, True, False, None, "",
            "<&> \"quotes\" \u00e9\u4e2d\U0001F600 \r\n\t",
            [1, [2, [3, []]]], {"a": [1, 2.5, "x", None], "": {}, "k\u00e9y": {"n": None}},
            {"$base64": "aGVsbG8="}, {"$datetime": "2024-05-01T12:00:00"},
            list(range(1000)),
        ]
        with self.dealer() as d:
            for i, v in enumerate(values):
                over_zmq = d.call("echo", [v], id=i)
                over_http = self.post_json(request("echo", [v], id=i))
                self.assertEqual(over_zmq, over_http, f"echo({v!r})")
                self.assertEqual(over_zmq["result"], v)

    def test_load_as_over_http(self):
        with self.dealer() as d:
            reply = d.call("load", [150000], id=9)
        self.assertEqual(reply["id"], 9)
        self.assertEqual(reply["result"], harness.fib_str(150000))
        with self.proxy() as p:
            self.assertEqual(p.load(150000), reply["result"])

    def test_faults_are_error_objects(self):
        with self.dealer() as d:
            self.assertEqual(d.call("no.such.method", [], id=2),
                             {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": 2})
            wrong = d.call("sample.add", ["3", 5], id=3)
            self.assertEqual(wrong["error"]["code"], -32602)
            self.assertEqual(wrong, self.post_json(request("sample.add", ["3", 5], id=3)))
            thrown = d.call("test.throw", [], id=4)
            self.assertEqual(thrown["error"]["code"], -32603)
            self.assertNotIn("std::", json.dumps(thrown))

    def test_batch_and_notifications(self):
        with self.dealer() as d:
            d.send([request("sample.add", [1, 2], id="a"),
                    {"jsonrpc": "2.0", "method": "echo", "params": [1]},  # a notification
                    {"foo": "bar"},
                    request("echo", ["x"], id="b")])
            reply = d.recv()
            self.assertEqual(len(reply), 3, reply)
            self.assertEqual(reply[0], {"jsonrpc": "2.0", "result": 3, "id": "a"})
            self.assertEqual(reply[1]["error"]["code"], -32600)
            self.assertIsNone(reply[1]["id"])
            self.assertEqual(reply[2], {"jsonrpc": "2.0", "result": "x", "id": "b"})
            # Notifications alone get nothing: the next reply is the next call's.
            d.send({"jsonrpc": "2.0", "method": "echo", "params": [1]})
            d.send([{"jsonrpc": "2.0", "method": "echo", "params": [2]}])
            self.assertEqual(d.call("echo", ["after"], id=5)["result"], "after")

    def test_req_socket_and_routing_frames(self):
        # A REQ socket adds an empty delimiter frame; frames before the
        # payload come back in front of the reply.
        req = zmq.Context.instance().socket(zmq.REQ)
        req.setsockopt(zmq.LINGER, 0)
        try:
            req.connect(self.endpoint)
            req.send(json.dumps(request("sample.add", [1, 2], 7)).encode())
            self.assertTrue(req.poll(REPLY_TIMEOUT_MS))
            self.assertEqual(json.loads(req.recv()), {"jsonrpc": "2.0", "result": 3, "id": 7})
        finally:
            req.close(0)
        with self.dealer() as d:
            d.send(request("echo", ["routed"], 8), b"hop-1", b"")
            frames = d.recv_frames()
            self.assertEqual(frames[:2], [b"hop-1", b""])
            self.assertEqual(json.loads(frames[2]), {"jsonrpc": "2.0", "result": "routed", "id": 8})

    def test_several_clients_at_once(self):
        errors = []

        def client(k):
            try:
                with self.dealer() as d:
                    for i in range(200):
                        r = d.call("sample.add", [k, i], id=i)
                        if r != {"jsonrpc": "2.0", "result": k + i, "id": i}:
                            errors.append(r)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])


class OutOfOrder(ZmqTestCase):
    """Acceptance 2: 64 calls in flight from one DEALER, sleep(0.2) and echo
    mixed: the echo replies come first, every call is answered once."""

    def test_64_in_flight_mixed(self):
        with self.dealer() as d:
            t0 = time.monotonic()
            for i in range(64):
                if i % 2:
                    d.send(request("sleep", [0.2], id=i))
                else:
                    d.send(request("echo", [f"e{i}"], id=i))
            replies = [d.recv() for _ in range(64)]
            elapsed = time.monotonic() - t0
            self.assertTrue(d.nothing_within(300), "a call was answered twice")
        ids = [r["id"] for r in replies]
        self.assertEqual(sorted(ids), list(range(64)), "every call answered exactly once")
        kinds = ["echo" if i % 2 == 0 else "sleep" for i in ids]
        self.assertEqual(kinds, ["echo"] * 32 + ["sleep"] * 32, f"reply order: {ids}")
        for r in replies:
            expected = f"e{r['id']}" if r["id"] % 2 == 0 else True
            self.assertEqual(r["result"], expected)
        # The sleeps hold no thread: all 32 end together.
        self.assertLess(elapsed, 2.0)
        report(f"{harness.MODE}: 64 in flight (32 echo, 32 sleep(0.2)): all answered in "
                       f"{elapsed * 1000:.0f} ms, echoes first")

    @harness.skip_in_modes("async", "pool methods run on the one loop thread in this mode")
    def test_pool_calls_do_not_block_the_endpoint(self):
        # test.spin(2) holds a pool thread (or worker process) for 2 s of wall
        # time whatever the machine's load. Had the ZeroMQ thread run it
        # inline, the first echo would wait for it: every echo must be
        # answered while the spin is still unanswered, in well under its 2 s.
        spin = 2.0
        with self.dealer() as slow, self.dealer() as fast:
            t_slow = time.monotonic()
            slow.send(request("test.spin", [spin], id="slow"))
            time.sleep(0.1)  # the spin has reached the pool
            t0 = time.monotonic()
            for i in range(20):
                self.assertEqual(fast.call("echo", [i], id=i, timeout_ms=int(spin * 2000))["result"], i)
            echoes = time.monotonic() - t0
            self.assertTrue(slow.nothing_within(0),
                            f"the spin was answered before the 20 echoes ({echoes:.2f} s): "
                            "they waited for it")
            self.assertEqual(slow.recv(), {"jsonrpc": "2.0", "result": True, "id": "slow"})
            spun = time.monotonic() - t_slow
        report(f"{harness.MODE}: 20 echoes in {echoes * 1000:.0f} ms beside test.spin({spin}), "
               f"which took {spun:.2f} s")
        self.assertGreaterEqual(spun, spin - 0.05)
        self.assertLess(echoes, spin / 2, "echo calls waited for the pool call")


class Hostile(ZmqTestCase):
    """Acceptance 4: malformed frames, non-JSON payloads and oversize
    messages get error replies or are dropped with a log line."""

    def tearDown(self):
        self.assert_still_serving()
        super().tearDown()

    def expect_error(self, payload, code, id=None):
        with self.dealer() as d:
            d.send(payload)
            reply = d.recv()
        self.assertEqual(reply["error"]["code"], code, reply)
        self.assertEqual(reply["id"], id)
        self.assertEqual(reply["jsonrpc"], "2.0")
        self.assertEqual(reply, self.post_json(payload), "the same text over HTTP")
        return reply

    def test_not_json(self):
        self.expect_error(b"garbage", -32700)
        self.expect_error(b"", -32700)
        self.expect_error(b"\x00\xff\xfe binary", -32700)
        self.expect_error(b'{"jsonrpc":"2.0","method":"echo","params":["\xc3\x28"],"id":1}', -32700)
        self.expect_error(b'{"jsonrpc":"2.0","method":"echo","params":[1],"id":1', -32700)

    def test_not_a_request(self):
        self.expect_error(b"42", -32600)
        self.expect_error(b"[]", -32600)
        self.expect_error(b'{"jsonrpc":"1.0","method":"echo","id":3}', -32600, id=3)
        self.expect_error(b'{"jsonrpc":"2.0","method":"a\\u0000b","id":4}', -32600, id=4)

    def test_deep_nesting_and_big_batches(self):
        deep = b"[" * 60_000  # under --max-body-bytes
        self.expect_error(b'{"jsonrpc":"2.0","method":"echo","params":[' + b"[" * 100 + b"]" * 100
                          + b'],"id":1}', -32600)
        self.expect_error(deep, -32600)
        batch = [request("e", None, i) for i in range(1001)]
        self.expect_error(json.dumps(batch, separators=(",", ":")).encode(), -32600)

    def test_oversize_message_is_dropped_and_the_sender_reconnects(self):
        # --max-body-bytes 65536: libzmq drops the connection of a peer that
        # sends more, before storing it. The DEALER reconnects by itself.
        big = json.dumps(request("echo", ["x" * 100_000], 1)).encode()
        with self.dealer() as d, self.dealer() as other:
            self.assertEqual(other.call("echo", ["before"])["result"], "before")
            d.send(big)
            self.assertTrue(d.nothing_within(500), "an oversize message was answered")
            self.assertEqual(other.call("echo", ["during"])["result"], "during")
            deadline = time.monotonic() + 5
            while True:  # the call just under the limit, once reconnected
                d.send(request("echo", ["x" * 60_000], 2))
                if not d.nothing_within(500):
                    self.assertEqual(d.recv()["result"], "x" * 60_000)
                    break
                self.assertLess(time.monotonic(), deadline, "the sender was not served again")

    def test_too_many_frames_is_dropped_with_a_log_line(self):
        with self.dealer() as d:
            d.send(request("echo", [1]), *[b"f"] * 40)
            self.assertTrue(d.nothing_within(300))
        deadline = time.monotonic() + 5
        while "ZeroMQ endpoint dropped" not in self.daemon.stderr_text():
            self.assertLess(time.monotonic(), deadline, "no log line for the dropped message")
            time.sleep(0.05)

    def test_a_client_that_vanishes_with_calls_in_flight(self):
        with self.dealer() as d:
            for i in range(16):
                d.send(request("sleep", [0.2], id=i))
            for i in range(4):
                d.send(request("test.spin", [0.1], id=100 + i))
        time.sleep(0.6)  # the replies go to a peer that is gone
        # The pool calls of the vanished peer are done and their workers free.
        with self.dealer() as d:
            t0 = time.monotonic()
            self.assertEqual(d.call("load", [2000], id="after", timeout_ms=2000)["result"],
                             harness.fib_str(2000))
            self.assertLess(time.monotonic() - t0, 1.0, "the pool was still busy")

    def test_valid_calls_beside_a_stream_of_bad_messages(self):
        bad = [b"garbage", b"", b"[" * 1000, b'{"jsonrpc":"2.0","method":1,"id":1}', b"\xff" * 100]
        stop = threading.Event()
        sent = [0]

        def flood():
            with self.dealer() as d:
                while not stop.is_set():
                    d.send(bad[sent[0] % len(bad)])
                    if sent[0] % 7 == 0:
                        d.send(b"x", *[b"f"] * 40)  # too many frames: dropped
                    sent[0] += 1
                    while d.socket.poll(0):
                        d.socket.recv_multipart()

        t = threading.Thread(target=flood)
        t.start()
        try:
            with self.dealer() as d:
                for i in range(500):
                    self.assertEqual(d.call("sample.add", [i, 1], id=i), {"jsonrpc": "2.0", "result": i + 1, "id": i})
        finally:
            stop.set()
            t.join(30)
        self.assertGreater(sent[0], 100)

    def test_many_messages_without_reading_replies(self):
        # 5000 replies of 10 KB (50 MB) to a peer that reads none: those past
        # the socket's queue are dropped, not kept, and the queue goes with
        # the peer.
        before = self.daemon.rss_kib()
        payload = "x" * 10_000
        with self.dealer() as d:
            for i in range(5000):
                d.send(request("echo", [payload], id=i))
            # The last one has been answered (into the void) once a call
            # from another peer sent after it is.
            with self.dealer() as other:
                self.assertEqual(other.call("echo", ["after"], id="after")["result"], "after")
            time.sleep(0.2)
        time.sleep(0.3)
        grown = self.daemon.rss_kib() - before
        report(f"{harness.MODE}: RSS after 5000 unread 10 KB replies: {grown:+d} KiB")
        if not self.daemon.sanitized():
            self.assertLess(grown, 24 * 1024, "the unread replies are kept in memory")


class Addresses(unittest.TestCase):
    """ipc:// and the allowlist; the modes and options that refuse --zmq."""

    @harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode")
    def test_ipc(self):
        with tempfile.TemporaryDirectory() as tmp:
            address = f"ipc://{tmp}/rapidrpc.sock"
            with harness.running_daemon("--zmq", address) as d:
                self.assertEqual(d.zmq_endpoints, [address])
                with Dealer(address) as c:
                    self.assertEqual(c.call("sample.add", [3, 5])["result"], 8)
            self.assertFalse(os.path.exists(f"{tmp}/rapidrpc.sock"), "the stopped daemon left its socket file")

    @harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode")
    def test_allowlist(self):
        with harness.running_daemon("--zmq", "tcp://127.0.0.1:*", "--allow", "10.0.0.0/8") as d:
            with Dealer(d.zmq_endpoints[0]) as c:
                reply = c.call("sample.add", [3, 5])
            self.assertEqual(reply["error"]["code"], -32002)
        with harness.running_daemon("--zmq", "tcp://127.0.0.1:*", "--allow", "127.0.0.0/8") as d:
            with Dealer(d.zmq_endpoints[0]) as c:
                self.assertEqual(c.call("sample.add", [3, 5])["result"], 8)

    @harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode")
    def test_access_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "access.log")
            with harness.running_daemon("--zmq", "tcp://127.0.0.1:*", "--access-log", log) as d:
                with Dealer(d.zmq_endpoints[0]) as c:
                    self.assertEqual(c.call("sample.add", [3, 5])["result"], 8)
                    self.assertEqual(c.call("nope", [])["error"]["code"], -32601)
            with open(log) as f:
                lines = f.read().splitlines()
        self.assertEqual(len(lines), 2, lines)
        fields = [ln.split(" ") for ln in lines]
        self.assertEqual([f[1:6] for f in fields], [["127.0.0.1", "-", '"sample.add"', "200", "0"],
                                                    ["127.0.0.1", "-", '"nope"', "200", "-32601"]])

    def refused(self, *args):
        r = subprocess.run([harness.daemon_path(), "--host", harness.HOST, "--port", "0", *args],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        return r.stderr.decode()

    @harness.skip_in_modes(ZMQ_MODES, "this mode serves ZeroMQ")
    def test_refused_in_this_mode(self):
        err = self.refused(*harness.EXTRA_ARGS, "--zmq", "tcp://127.0.0.1:*")
        self.assertIn("ZeroMQ endpoints (--zmq) need --mode async-pool or async", err)

    def test_refused_with_passwords(self):
        with tempfile.TemporaryDirectory() as tmp:
            users = os.path.join(tmp, "users")
            line = subprocess.run([harness.daemon_path(), "--hash-password", "alice", "--hash-iterations", "1000"],
                                  input=b"secret\n", capture_output=True, check=True, timeout=30).stdout
            with open(users, "wb") as f:
                f.write(line)
            err = self.refused("--zmq", "tcp://127.0.0.1:*", "--auth-file", users)
        self.assertIn("ZeroMQ", err)

    def test_bad_address(self):
        err = self.refused("--zmq", "tcp://no-such-interface-name:1")
        self.assertIn("cannot bind the ZeroMQ endpoint", err)


@harness.skip_in_modes(NOT_ZMQ_MODES, "no ZeroMQ endpoint in this mode")
class Shutdown(unittest.TestCase):

    def test_sigterm_answers_the_calls_in_flight(self):
        d = harness.Daemon("--zmq", "tcp://127.0.0.1:*").start()
        try:
            with Dealer(d.zmq_endpoints[0]) as c:
                for i in range(20):
                    c.send(request("sleep", [0.5], id=i))
                time.sleep(0.2)
                d.send_signal(signal.SIGTERM)
                ids = sorted(c.recv()["id"] for _ in range(20))
            self.assertEqual(ids, list(range(20)))
            self.assertEqual(d.wait(15), 0)
        finally:
            d.stop()


if __name__ == "__main__":
    harness.main()
