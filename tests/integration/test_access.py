"""Access control and the access log: HTTP Basic authentication (--auth-file,
--hash-password), the address allowlist (--allow), the authorization hook
(--deny-method, multicall entries included), and --access-log with SIGHUP."""

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import xmlrpc.client

import harness
from harness import (DaemonTestCase, Daemon, RawClient, call_body, exchange, http_request,
                     make_proxy, parse_result, skip_in_modes)

NOT_AUTHORIZED = -32002
ITERATIONS = 1000  # the smallest count the server takes: keeps the tests quick


def ab64(data):
    """passlib's adapted base64: '.' for '+', no padding."""
    return base64.b64encode(data).decode().rstrip("=").replace("+", ".")


def python_hash(password, iterations=ITERATIONS):
    """A users-file hash made by Python's hashlib, not by rapidrpc."""
    salt = os.urandom(16)
    dk = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"$pbkdf2-sha256${iterations}${ab64(salt)}${ab64(dk)}"


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def settled_count(path, quiet=0.3, timeout=5.0):
    """The number of lines in the log once no line has arrived for `quiet`
    seconds: the lines of earlier requests may still be on their way (a
    process-mode child writes its lines after its answer has gone out)."""
    deadline = time.monotonic() + timeout
    count = len(log_lines(path))
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = len(log_lines(path))
        if now == count:
            break
        count = now
    return count


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except FileNotFoundError:
        return ""


# A log line: TIME PEER USER METHOD STATUS FAULT REQUEST_BYTES RESPONSE_BYTES MICROSECONDS
LINE_RE = re.compile(
    r'^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z) (\S+) (\S+) ("[^"\s]*"(?:\.\.\.)?|-) '
    r"(\d{3}) (-?\d+) (\d+) (\d+) (\d+)$")


def log_lines(path):
    out = []
    for line in read(path).splitlines():
        m = LINE_RE.match(line)
        if m is None:
            raise AssertionError(f"malformed access-log line: {line!r}")
        out.append(m.groups())
    return out


class TempDirMixin:
    @classmethod
    def make_dir(cls):
        cls.dir = tempfile.mkdtemp(prefix="rapidrpc-access-")

    @classmethod
    def remove_dir(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)


class HashPasswordTool(unittest.TestCase):

    def test_prints_a_users_line_that_python_can_verify(self):
        r = subprocess.run([harness.daemon_path(), "--hash-password", "carol",
                            "--hash-iterations", "1000"],
                           input=b"open sesame\n", capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        line = r.stdout.decode().strip()
        user, _, hashed = line.partition(":")
        self.assertEqual(user, "carol")
        scheme, iterations, salt, dk = hashed.split("$")[1:]
        self.assertEqual((scheme, iterations), ("pbkdf2-sha256", "1000"))
        unab64 = lambda s: base64.b64decode(s.replace(".", "+") + "=" * (-len(s) % 4))
        self.assertEqual(hashlib.pbkdf2_hmac("sha256", b"open sesame", unab64(salt), 1000), unab64(dk))

    def test_refuses_a_bad_user_name(self):
        r = subprocess.run([harness.daemon_path(), "--hash-password", "a:b"],
                           input=b"x\n", capture_output=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stdout, b"")

    def test_a_malformed_users_file_stops_the_daemon_with_its_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".users") as f:
            f.write("# users\nalice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n")
            f.flush()
            r = subprocess.run([harness.daemon_path(), "--port", "0", "--auth-file", f.name],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"line 2: bad password hash", r.stderr)
        self.assertNotIn(b"W6ph5", r.stderr)


class BasicAuth(TempDirMixin, DaemonTestCase):
    """--auth-file with one hash made by Python and one by --hash-password,
    plus --deny-method and --access-log."""

    @classmethod
    def setUpClass(cls):
        cls.make_dir()
        made = subprocess.run([harness.daemon_path(), "--hash-password", "carol",
                               "--hash-iterations", str(ITERATIONS)],
                              input=b"tool-made\n", capture_output=True, timeout=30, check=True)
        users = os.path.join(cls.dir, "users")
        with open(users, "w") as f:
            f.write("# name:hash\n")
            f.write(f"alice:{python_hash('wonder land')}\n")
            f.write(made.stdout.decode())
        cls.log = os.path.join(cls.dir, "access.log")
        cls.daemon_args = ("--auth-file", users, "--deny-method", "echo", "--access-log", cls.log)
        try:
            super().setUpClass()
        except BaseException:
            cls.remove_dir()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.remove_dir()

    def proxy_as(self, user, password):
        return make_proxy(f"http://{user}:{password}@{harness.HOST}:{self.daemon.port}/RPC2")

    def assert_401(self, resp):
        self.assertEqual(resp.status, 401, resp)
        self.assertEqual(resp.header_all("WWW-Authenticate"), ['Basic realm="rapidrpc"'])
        self.assertIn("close", resp.connection_tokens())

    def test_good_credentials_work(self):
        with self.proxy_as("alice", "wonder land") as p:
            self.assertEqual(p.sample.add(3, 5), 8)
        with self.proxy_as("carol", "tool-made") as p:
            self.assertEqual(p.sample.add(1, 1), 2)

    @skip_in_modes(harness.CLOSE_AFTER_RESPONSE_MODES, "one request per connection")
    def test_keep_alive_requests_with_the_same_credentials(self):
        with RawClient(self.daemon) as c:
            for i in range(5):
                c.send(http_request(call_body("sample.add", i, 1),
                                    headers=[("Authorization", basic("alice", "wonder land"))]))
                resp = c.read_response()
                self.assertEqual(resp.status, 200)
                self.assertEqual(parse_result(resp.body), i + 1)

    def test_wrong_password_gets_401_with_the_challenge(self):
        with self.assertRaises(xmlrpc.client.ProtocolError) as cm:
            with self.proxy_as("alice", "wonderland") as p:
                p.sample.add(1, 2)
        self.assertEqual(cm.exception.errcode, 401)
        self.assert_401(exchange(self.daemon, http_request(
            call_body("sample.add", 1, 2), headers=[("Authorization", basic("alice", "x"))])))

    def test_unknown_user_missing_and_malformed_credentials_get_401(self):
        for headers in ([("Authorization", basic("mallory", "wonder land"))],
                        [],
                        [("Authorization", "Basic !!!")],
                        [("Authorization", "Bearer abc")],
                        [("Authorization", basic("alice", "wonder land")),
                         ("Authorization", basic("alice", "wonder land"))]):
            with self.subTest(headers=headers):
                self.assert_401(exchange(self.daemon, http_request(call_body("sample.add", 1, 2),
                                                                   headers=headers)))

    def test_401_comes_before_the_body(self):
        # Announces 10 MB and sends none of it: the answer must not wait for
        # the body (nor for the request timeout).
        with RawClient(self.daemon, timeout=5) as c:
            t0 = time.monotonic()
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                   b"Authorization: " + basic("alice", "nope").encode() + b"\r\n"
                   b"Content-Length: 10000000\r\n\r\n")
            resp = c.read_response()
            self.assertLess(time.monotonic() - t0, 3.0)
            self.assert_401(resp)
            self.assertTrue(c.at_eof(5), "the connection stayed open after 401")

    def test_denied_method_gets_not_authorized(self):
        with self.proxy_as("alice", "wonder land") as p:
            with self.assertRaises(xmlrpc.client.Fault) as cm:
                p.echo("hi")
            self.assertEqual(cm.exception.faultCode, NOT_AUTHORIZED)
            self.assertEqual(p.sample.add(2, 2), 4)

    def test_multicall_entries_are_checked_one_by_one(self):
        with self.proxy_as("alice", "wonder land") as p:
            out = p.system.multicall([
                {"methodName": "sample.add", "params": [1, 2]},
                {"methodName": "echo", "params": ["x"]},
                {"methodName": "sample.add", "params": [2, 2]},
            ])
        self.assertEqual(out[0], [3])
        self.assertEqual(out[1]["faultCode"], NOT_AUTHORIZED)
        self.assertEqual(out[2], [4])

    def test_jsonrpc_batch_entries_are_checked_and_logged(self):
        before = settled_count(self.log)
        body = json.dumps([{"jsonrpc": "2.0", "method": "sample.add", "params": [1, 2], "id": 1},
                           {"jsonrpc": "2.0", "method": "echo", "params": ["x"], "id": 2},
                           {"jsonrpc": "2.0", "method": "sample.add", "params": {"a": 2, "b": 2}, "id": 3}])
        headers = [("Authorization", basic("alice", "wonder land")), ("Content-Type", "application/json")]
        resp = exchange(self.daemon, http_request(body.encode(), headers=headers))
        self.assertEqual(resp.status, 200)
        out = json.loads(resp.body)
        self.assertEqual(out[0]["result"], 3)
        self.assertEqual(out[1]["error"]["code"], NOT_AUTHORIZED)
        self.assertEqual(out[1]["id"], 2)
        self.assertEqual(out[2]["result"], 4)
        single = json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["x"], "id": 9})
        resp = exchange(self.daemon, http_request(single.encode(), headers=headers))
        self.assertEqual(json.loads(resp.body)["error"]["code"], NOT_AUTHORIZED)

        def logged():
            lines = [(m, f) for (_, _, user, m, status, f, *_rest) in log_lines(self.log)[before:]]
            return lines if len(lines) >= 2 else None
        lines = wait_for(logged)
        self.assertIsNotNone(lines, read(self.log)[-1000:])
        self.assertIn(('"[batch:3]"', "0"), lines)
        self.assertIn(('"echo"', str(NOT_AUTHORIZED)), lines)

    def test_access_log_has_one_escaped_line_per_request(self):
        marker = "/Marker.%d" % os.getpid()
        before = settled_count(self.log)
        with self.proxy_as("alice", "wonder land") as p:
            self.assertEqual(p.sample.add(20, 22), 42)
            with self.assertRaises(xmlrpc.client.Fault) as cm:
                p.echo(1)
            self.assertEqual(cm.exception.faultCode, NOT_AUTHORIZED)
            p.system.multicall([{"methodName": "sample.add", "params": [1, 2]}])
        # A method name the codec refuses (-32600) is logged without it.
        hostile = (b'<?xml version="1.0"?><methodCall><methodName>a"b\r\nc</methodName>'
                   b"<params/></methodCall>")
        auth = [("Authorization", basic("alice", "wonder land"))]
        self.assertEqual(exchange(self.daemon, http_request(hostile, headers=auth)).status, 200)
        self.assertEqual(exchange(self.daemon, http_request(call_body("x"), path=marker,
                                                            headers=auth)).status, 404)
        self.assertEqual(exchange(self.daemon, http_request(call_body("x"))).status, 401)

        # Six requests: sample.add, echo, multicall, -32600, 404, 401.
        wanted = {('"sample.add"', "200"), ('"echo"', "200"), ('"system.multicall"', "200"),
                  ("-", "200"), ("-", "404"), ("-", "401")}

        def grouped():
            by = {}
            for (_, peer, user, method, status, fault, req, resp, us) in log_lines(self.log)[before:]:
                self.assertRegex(peer, r"^127\.0\.0\.1:\d+$")
                by.setdefault((method, status), []).append((user, fault, int(req), int(resp)))
            return by if wanted <= by.keys() else None

        by_method = wait_for(grouped)
        self.assertIsNotNone(by_method, read(self.log)[-2000:])
        self.assertEqual(by_method[('"sample.add"', "200")][0][:2], ("alice", "0"))
        self.assertGreater(by_method[('"sample.add"', "200")][0][2], 0)
        self.assertGreater(by_method[('"sample.add"', "200")][0][3], 0)
        self.assertIn(("alice", str(NOT_AUTHORIZED)), [x[:2] for x in by_method[('"echo"', "200")]])
        self.assertEqual(len(by_method[('"system.multicall"', "200")]), 1)  # one line per multicall
        self.assertIn(("alice", "-32600"), [x[:2] for x in by_method[("-", "200")]])
        self.assertIn("alice", [x[0] for x in by_method[("-", "404")]])
        self.assertIn("-", [x[0] for x in by_method[("-", "401")]])
        self.assertNotIn('a"b', read(self.log))


class LoggingDaemonTestCase(TempDirMixin, DaemonTestCase):
    """A daemon logging to cls.log (in a directory of its own), with
    cls.log_args besides --access-log."""

    log_args = ()

    @classmethod
    def setUpClass(cls):
        cls.make_dir()
        cls.log = os.path.join(cls.dir, "access.log")
        cls.daemon_args = ("--access-log", cls.log, *cls.log_args)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.remove_dir()


class AccessLogRotation(LoggingDaemonTestCase):

    def test_sighup_after_a_rename_starts_a_new_file(self):
        self.rotate(signal.SIGHUP, ".1")

    def test_sigusr1_after_a_rename_starts_a_new_file(self):
        """logrotate's signal (debian/rapidrpcd.logrotate): the log alone."""
        self.rotate(signal.SIGUSR1, ".2")

    def rotate(self, sig, suffix):
        with self.proxy() as p:
            self.assertEqual(p.sample.add(1, 1), 2)
        self.assertTrue(wait_for(lambda: len(log_lines(self.log)) >= 1), read(self.log))
        rotated = self.log + suffix
        os.rename(self.log, rotated)
        self.daemon.send_signal(sig)
        # The reopen is asynchronous: call until a line lands in the new file.
        def new_file_has_a_line():
            with self.proxy() as p:
                self.assertEqual(p.sample.add(2, 2), 4)
            return os.path.exists(self.log) and len(log_lines(self.log)) >= 1
        self.assertTrue(wait_for(new_file_has_a_line, 15), self.daemon.stderr_text())
        old = log_lines(rotated)
        self.assertGreaterEqual(len(old), 1)
        self.assertEqual(old[0][3], '"sample.add"')
        self.daemon.assert_alive()


class AccessLogJson(LoggingDaemonTestCase):
    """--access-log-format json: one JSON object a line."""

    log_args = ("--access-log-format", "json")

    def test_each_line_is_a_json_object(self):
        with self.proxy() as p:
            self.assertEqual(p.sample.add(1, 2), 3)
            with self.assertRaises(xmlrpc.client.Fault):
                p.no.such()
        self.assertEqual(exchange(self.daemon, http_request(call_body("x"),
                                                            path="/nowhere")).status, 404)

        def lines():
            with open(self.log) as f:
                return [json.loads(line) for line in f]  # every line parses
        self.assertTrue(wait_for(lambda: len(lines()) >= 3), read(self.log))
        by_method = {r["method"]: r for r in lines() if r["method"]}
        add = by_method["sample.add"]
        self.assertEqual((add["status"], add["fault"], add["user"]), (200, 0, None))
        self.assertTrue(add["peer"].startswith("127.0.0.1:"))
        self.assertRegex(add["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        self.assertGreater(add["request_bytes"], 0)
        self.assertGreater(add["response_bytes"], 0)
        self.assertGreaterEqual(add["microseconds"], 0)
        self.assertEqual(by_method["no.such"]["fault"], -32601)
        self.assertEqual([r["status"] for r in lines() if r["method"] is None], [404])
        for line in read(self.log).splitlines():
            self.assertTrue(line.isascii(), line)


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Allowlist(unittest.TestCase):

    def start(self, *args, host="127.0.0.1"):
        d = Daemon(*args)
        # Listen where the test says (harness daemons listen on 127.0.0.1).
        d.args[d.args.index("--host") + 1] = host
        return d.start()

    def test_a_peer_outside_the_ranges_gets_403(self):
        with self.start("--allow", "10.0.0.0/8", "--allow", "::1/128") as d:
            with RawClient(d) as c:
                c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n"
                       b"Content-Length: 10000000\r\n\r\n")
                resp = c.read_response()
                self.assertEqual(resp.status, 403, resp)
                self.assertIn("close", resp.connection_tokens())
                self.assertTrue(c.at_eof(5))

    def test_a_peer_inside_a_range_is_served(self):
        with self.start("--allow", "192.0.2.0/24", "--allow", "127.0.0.0/8") as d:
            with d.proxy() as p:
                self.assertEqual(p.sample.add(3, 5), 8)

    @unittest.skipUnless(ipv6_loopback(), "no IPv6 loopback")
    def test_ipv6_loopback_allowed_ipv4_loopback_not(self):
        with self.start("--allow", "::1/128", host="localhost") as d:
            resp = exchange(d, http_request(call_body("sample.add", 1, 2)))
            self.assertEqual(resp.status, 403)
            with make_proxy(f"http://[::1]:{d.port}/RPC2") as p:
                self.assertEqual(p.sample.add(1, 2), 3)

    def test_a_bad_range_stops_the_daemon(self):
        r = subprocess.run([harness.daemon_path(), "--port", "0", "--allow", "127.0.0.1/33"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"127.0.0.1/33", r.stderr)


if __name__ == "__main__":
    harness.main()
