"""`from rapidrpc import SimpleXMLRPCServer` (python/rapidrpc, docs/python.md):
SimpleXMLRPCServer scripts with rapidrpcd in front, relaying each request to
the standard library's own request handling in the script.

- The standard library documentation's three server examples, with only
  their import lines changed, answer their documented client calls; Ctrl-C
  runs the script's own `except KeyboardInterrupt`.
- What the standard library does, it does: the same response bytes (faults,
  introspection, encodings, the documentation page) as
  xmlrpc.server's server given the same requests; a request handler
  subclass's do_POST and parse_request run on the real headers (Basic
  credentials) over a client's keep-alive connection, with the client's
  real address; _dispatch, ThreadingMixIn's shared state, handle_request()
  one connection at a time, handle_timeout(), shutdown() from a registered
  function, encode_threshold=0, MultiPathXMLRPCServer.
- rapidrpc's keywords: workers=N (processes forked from the script, calls
  at once, a crashed one replaced, Ctrl-C lets calls in flight finish),
  method_timeout (the runaway process is killed, not the script),
  fault_details=False; workers with a mixin is refused.
- No process is left after a stop or a SIGKILL of the script, and a
  SIGKILL of rapidrpcd makes serve_forever() raise.
- rapidrpcd is found through RAPIDRPCD, then the build tree, then PATH, and
  the constructor says clearly when it is not.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import base64
import contextlib
import datetime
import errno
import gzip
import http.client
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock
import urllib.error
import urllib.request
import xmlrpc.client
import xmlrpc.server

import procs
from harness import daemon_path, main, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "python_server")
SOURCE_PYTHON = os.path.abspath(os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, SOURCE_PYTHON)
import rapidrpc  # noqa: E402

INTERNAL_ERROR = -32603
TIMEOUT = -32001
DOCS_PORT = 8000  # the examples' own
ZERO_DIVISION = (1, "<class 'ZeroDivisionError'>:division by zero")


def not_supported(name):
    return 1, f"<class 'Exception'>:method \"{name}\" is not supported"


def script_env(**extra):
    env = dict(os.environ, PYTHONPATH=SOURCE_PYTHON, RAPIDRPCD=daemon_path())
    env.update(extra)
    return env


def port_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_listening(port, proc, deadline_s=10):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the script exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


def tree_gone(root, deadline_s):
    """True once no process below `root` is alive (`root` reaped or not)."""
    return procs.wait_for(lambda: not procs.live_children(root),
                          time.monotonic() + deadline_s)


def rapidrpcd_below(root):
    return [p for p in procs.live_children(root) if b"--relay\0" in procs.cmdline(p)]


class Script:
    """A SimpleXMLRPCServer script run as a new user would: python3 SCRIPT."""

    def __init__(self, path, *args, env=None):
        self.proc = subprocess.Popen(
            [sys.executable, path, *args], cwd=os.path.dirname(path), env=env or script_env(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        self.err = []
        self.reader = threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True)
        self.reader.start()

    def read_port(self):
        line = self.proc.stdout.readline()
        assert line.startswith("port "), f"expected 'port N', got {line!r}; stderr: {self.stderr()}"
        return int(line.split()[1])

    def stderr(self):
        return "".join(self.err)

    def interrupt(self, timeout=15):
        """Ctrl-C (SIGINT to the script and the processes it forked, as a
        terminal sends it to the foreground process group); its output
        and exit status."""
        for pid in [self.pid] + [p for p in procs.live_children(self.pid)
                                 if procs.cmdline(p) == procs.cmdline(self.pid)]:
            os.kill(pid, signal.SIGINT)
        out, _ = self.proc.communicate(timeout=timeout)
        self.reader.join(5)
        return out, self.proc.returncode

    def close(self):
        """Kills the script and every process below it, then reaps it. The
        processes go before the wait: a worker still running (a test that
        failed before its runaway was killed) holds the script's output
        pipes open, and communicate() would wait on them in vain."""
        tree = procs.live_children(self.pid)
        if self.proc.poll() is None:
            self.proc.kill()
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.communicate(timeout=15)


def proxy(port, path="/RPC2"):
    return xmlrpc.client.ServerProxy(f"http://127.0.0.1:{port}{path}", allow_none=True)


def call(port, method, *params):
    """One call on a proxy of its own, closed after it."""
    with proxy(port) as p:
        return getattr(p, method)(*params)


def post(port, path, body=None, headers=None):
    body = body or xmlrpc.client.dumps((2, 3), "sample.add").encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                 headers={"Content-Type": "text/xml", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def exchange(port, method, path, body=b"", headers=()):
    """One request on a connection of its own: (status, headers (an
    http.client.HTTPMessage), body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=dict(headers))
        r = conn.getresponse()
        return r.status, r.msg, r.read()
    finally:
        conn.close()


def fault_of(call, *args):
    try:
        call(*args)
    except xmlrpc.client.Fault as f:
        return f.faultCode, f.faultString
    raise AssertionError("no fault")


class DocsExamples(unittest.TestCase):
    """The standard library documentation's SimpleXMLRPCServer examples."""

    def run_example(self, name):
        """The example on its own port, 8000, if that is free; else a copy
        with only the port changed."""
        path = os.path.join(SCRIPTS, name)
        port = DOCS_PORT
        if not port_free(port):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            tmp = tempfile.mkdtemp()
            self.addCleanup(shutil.rmtree, tmp)
            with open(path) as f:
                text = f.read().replace(str(DOCS_PORT), str(port))
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
        script = Script(path)
        self.addCleanup(script.close)
        wait_listening(port, script.proc)
        s = xmlrpc.client.ServerProxy(f"http://localhost:{port}")
        self.addCleanup(s("close"))
        return script, s

    def test_first_example_answers_its_client(self):
        _, s = self.run_example("docs_example.py")
        self.assertEqual(s.pow(2, 3), 8)
        self.assertEqual(s.add(2, 3), 5)
        self.assertEqual(s.mul(5, 2), 10)
        self.assertEqual(set(s.system.listMethods()),
                         {"add", "mul", "pow", "system.listMethods", "system.methodHelp",
                          "system.methodSignature"})
        # rpc_paths = ('/RPC2',): another path is 404, as documented.
        port = int(s._ServerProxy__host.rsplit(":", 1)[1])
        self.assertEqual(post(port, "/RPC2", xmlrpc.client.dumps((2, 3), "add").encode())[0], 200)
        self.assertEqual(post(port, "/", xmlrpc.client.dumps((2, 3), "add").encode())[0], 404)

    def test_decorator_example_answers_its_client(self):
        _, s = self.run_example("docs_decorator_example.py")
        self.assertEqual(s.pow(2, 3), 8)
        self.assertEqual(s.add(2, 3), 5)
        self.assertEqual(s.mul(5, 2), 10)

    def test_dotted_names_example_and_ctrl_c(self):
        script, s = self.run_example("docs_dotted_example.py")
        now = s.currentTime.getCurrentTime()
        self.assertIsInstance(now, xmlrpc.client.DateTime)
        seen = datetime.datetime.strptime(now.value, "%Y%m%dT%H:%M:%S")
        self.assertLess(abs((seen - datetime.datetime.now()).total_seconds()), 60)
        multi = xmlrpc.client.MultiCall(s)
        multi.getData()
        multi.pow(2, 9)
        multi.add(1, 2)
        self.assertEqual(list(multi()), ["42", 512, 3])
        # Ctrl-C: the script's own except KeyboardInterrupt runs, and
        # nothing it started is left.
        out, status = script.interrupt()
        self.assertIn("Keyboard interrupt received, exiting.", out)
        self.assertEqual(status, 0, script.stderr())
        self.assertTrue(tree_gone(script.pid, 1), procs.live_children(script.pid))


class Scripts(unittest.TestCase):
    """python_server/served.py, as a program of its own."""

    def serve(self, *args, env=None):
        script = Script(os.path.join(SCRIPTS, "served.py"), *args, env=env)
        self.addCleanup(script.close)
        port = script.read_port()
        s = proxy(port)
        self.addCleanup(s("close"))
        return script, port, s

    def test_registered_functions_answer(self):
        _, _, s = self.serve()
        self.assertEqual(s.sample.add(2, 3), 5)          # a decorator, with a name
        self.assertEqual(s.scale3(4), 12)                # a closure
        self.assertIsInstance(s.started(), float)        # a lambda over the script's state
        self.assertEqual(s.mul(6, 7), 42)                # an instance's method
        self.assertEqual(fault_of(s._hidden), not_supported("_hidden"))
        self.assertEqual(s.system.methodHelp("scale3"), "x times the closure's k.")
        self.assertEqual(s.system.methodSignature("sample.add"), "signatures not supported")

    def test_workers_are_forked_from_the_script(self):
        script, _, s = self.serve()
        worker = s.pid()
        self.assertNotEqual(worker, script.pid)
        # Forked, not started anew: below the script, its own command line.
        self.assertIn(worker, procs.live_children(script.pid))
        self.assertEqual(procs.cmdline(worker), procs.cmdline(script.pid))
        # Without workers=, the script's own process serves.
        script, _, s = self.serve("--workers", "0")
        self.assertEqual(s.pid(), script.pid)

    def test_calls_run_at_once_one_per_worker(self):
        _, port, s = self.serve("--workers", "2")
        self.assertEqual(s.sample.add(1, 2), 3)  # rapidrpcd has started
        # One after the other they take 2 s at least, whatever the machine
        # does; at once, 1 s and what a busy machine adds (this runs beside
        # other tests).
        results = []
        started = time.monotonic()
        threads = [threading.Thread(target=lambda: results.append(call(port, "sleep", 1.0)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        self.assertEqual(results, [1.0, 1.0])
        self.assertLess(elapsed, 1.9, "two sleep(1.0) calls did not run at once")

    def test_faults_and_a_crashed_worker(self):
        script, port, s = self.serve("--workers", "2")
        self.assertEqual(fault_of(s.fault), (42, "x"))
        self.assertEqual(fault_of(s.fail), ZERO_DIVISION)
        before = set(procs.live_children(script.pid))
        with self.assertRaises(xmlrpc.client.ProtocolError) as crashed:
            s.abort()
        self.assertEqual(crashed.exception.errcode, 502)
        wait_until(lambda: "was killed by signal 6; another replaces it" in script.stderr(), 5,
                   "the supervisor reports the crash")
        pids = set()

        def both_answer():
            threads = [threading.Thread(target=lambda: pids.add(call(port, "pid")))
                       for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return len(pids) == 2 and not pids <= before

        wait_until(both_answer, 5, "two workers, one of them new, answer")

    def test_fault_details_off(self):
        script, _, s = self.serve("--no-fault-details")
        self.assertEqual(fault_of(s.fault), (42, "x"))
        self.assertEqual(fault_of(s.fail), (INTERNAL_ERROR, "internal error"))
        self.assertEqual(fault_of(s.nope), (INTERNAL_ERROR, "internal error"))
        results = s.system.multicall([{"methodName": "fail", "params": []},
                                      {"methodName": "sample.add", "params": [1, 2]}])
        self.assertEqual(results[0], {"faultCode": INTERNAL_ERROR, "faultString": "internal error"})
        self.assertEqual(results[1], [3])
        wait_until(lambda: "ZeroDivisionError" in script.stderr(), 5, "the traceback on stderr")

    def test_method_timeout_kills_the_worker_not_the_script(self):
        script, _, s = self.serve("--workers", "1", "--method-timeout", "1")
        runaway = s.pid()
        started = time.monotonic()
        self.assertEqual(fault_of(s.spin), (TIMEOUT, "the call took too long"))
        self.assertLess(time.monotonic() - started, 2.5)
        wait_until(lambda: not procs.stat(runaway) or procs.stat(runaway)[1] == "Z", 5,
                   "the runaway worker is killed")
        self.assertIsNone(script.proc.poll())
        self.assertEqual(s.sample.add(1, 1), 2)
        self.assertNotEqual(s.pid(), runaway)
        self.assertIn("in spin", script.stderr())  # its Python stack, before the kill

    def test_use_builtin_types_and_allow_none(self):
        _, _, s = self.serve()
        self.assertEqual(s.kind(xmlrpc.client.Binary(b"x")), "Binary")
        self.assertEqual(s.kind(datetime.datetime(2026, 1, 2)), "DateTime")
        self.assertEqual(fault_of(s.none), (
            1, "<class 'TypeError'>:cannot marshal None unless allow_none is enabled"))
        _, _, s = self.serve("--builtin-types", "--allow-none")
        self.assertEqual(s.kind(xmlrpc.client.Binary(b"x")), "bytes")
        self.assertEqual(s.kind(datetime.datetime(2026, 1, 2)), "datetime")
        self.assertIsNone(s.none())

    def test_rpc_paths(self):
        _, port, _ = self.serve("--path", "/api")
        self.assertEqual(post(port, "/api")[0], 200)
        self.assertEqual(post(port, "/RPC2")[0], 404)
        _, port, _ = self.serve("--any-path")  # empty rpc_paths: every path
        self.assertEqual(post(port, "/any/where")[0], 200)

    def test_log_requests_and_encode_threshold(self):
        script, port, s = self.serve("--log-requests", "--encode-threshold", "1000")

        def encoding_of(n):
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/RPC2", data=xmlrpc.client.dumps((n,), "text").encode(),
                headers={"Content-Type": "text/xml", "Accept-Encoding": "gzip"})
            with urllib.request.urlopen(req, timeout=10) as r:
                r.read()
                return r.headers.get("Content-Encoding")

        self.assertIsNone(encoding_of(10))
        self.assertEqual(encoding_of(2000), "gzip")
        self.assertEqual(s.sample.add(1, 2), 3)
        # The standard library's log line, with the client's address.
        wait_until(lambda: '127.0.0.1 - - [' in script.stderr()
                   and '"POST /RPC2 HTTP/1.1" 200 -' in script.stderr(), 5,
                   "the handler's log lines: " + script.stderr())

    def test_shutdown_from_a_registered_function(self):
        for workers in ("0", "2"):
            script, _, s = self.serve("--workers", workers)
            self.assertEqual(s.stop(), "stopping")
            out, _ = script.proc.communicate(timeout=15)
            self.assertEqual(out.strip(), "stopped")
            self.assertEqual(script.proc.returncode, 0, script.stderr())
            self.assertTrue(tree_gone(script.pid, 1), procs.live_children(script.pid))

    def test_ctrl_c_lets_calls_in_flight_finish(self):
        script, port, _ = self.serve()
        result = []
        t = threading.Thread(target=lambda: result.append(call(port, "sleep", 1)))
        t.start()
        wait_until(lambda: "sleeping" in script.stderr(), 5, "the call is in flight")
        out, status = script.interrupt()
        t.join(10)
        self.assertEqual(result, [1])
        self.assertIn("interrupted", out)
        self.assertEqual(status, 0, script.stderr())
        self.assertTrue(tree_gone(script.pid, 1), procs.live_children(script.pid))

    def test_nothing_outlives_a_killed_script(self):
        for workers in ("0", "2"):
            script, _, s = self.serve("--workers", workers)
            s.sample.add(1, 2)
            # One call answered needs one worker: the other may still be
            # starting (a clean-clone run saw it so).
            def everyone(n=1 + int(workers)):
                tree = procs.live_children(script.pid)
                return tree if len(tree) >= n else None

            tree = wait_until(everyone, 5, f"rapidrpcd and {workers} workers running")
            self.assertEqual(len(rapidrpcd_below(script.pid)), 1)
            script.proc.kill()
            script.proc.wait()
            wait_until(lambda: not any(procs.stat(p) and procs.stat(p)[1] != "Z" for p in tree),
                       2, f"no process of the killed script's ({workers} workers) is left")

    def test_serve_forever_raises_when_rapidrpcd_dies(self):
        script, _, s = self.serve()
        s.sample.add(1, 2)
        victims = rapidrpcd_below(script.pid)
        self.assertEqual(len(victims), 1)
        os.kill(victims[0], signal.SIGKILL)
        script.proc.wait(15)
        self.assertNotEqual(script.proc.returncode, 0)
        script.reader.join(5)
        self.assertIn("serving stopped: rapidrpcd exited with status -9", script.stderr())
        self.assertTrue(tree_gone(script.pid, 2), procs.live_children(script.pid))


BASIC = "Basic " + base64.b64encode(b"user:secret").decode()


class PostChecksCredentials(xmlrpc.server.SimpleXMLRPCRequestHandler):
    seen = []  # (client address, Authorization) of each request handled

    def do_POST(self):
        self.seen.append((self.client_address, self.headers.get("Authorization")))
        if self.headers.get("Authorization") != BASIC:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="rpc"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_POST()


class ParseChecksCredentials(xmlrpc.server.SimpleXMLRPCRequestHandler):
    seen = []

    def parse_request(self):
        if not super().parse_request():
            return False
        self.seen.append((self.client_address, self.headers.get("Authorization")))
        if self.headers.get("Authorization") != BASIC:
            self.send_error(401)
            return False
        return True


class InProcess(unittest.TestCase):
    """The server in this test's own process, as a program embedding it."""

    def setUp(self):
        os.environ["RAPIDRPCD"] = daemon_path()

    def serving(self, server, poll_interval=0.05):
        """`server` serving forever in a thread until the test ends."""
        self.addCleanup(server.server_close)
        t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval})
        t.start()

        def stop():
            server.shutdown()
            t.join(10)
            self.assertFalse(t.is_alive())
        self.addCleanup(stop)
        return server.server_address[1]

    def compare_with_the_standard_library(self, make, requests):
        """Each (method, path, body, headers) request, answered by the
        server make(module) makes with module rapidrpc and with module
        xmlrpc.server: the same status, Content-Type, Content-Encoding and
        body."""
        answers = []
        for module in (xmlrpc.server, rapidrpc):
            server = make(module)
            port = self.serving(server)
            answers.append([exchange(port, *r) for r in requests])
        for r, ours, theirs in zip(requests, answers[1], answers[0]):
            with self.subTest(request=r):
                self.assertEqual(ours[0], theirs[0])
                for h in ("Content-Type", "Content-Encoding", "Content-Length"):
                    self.assertEqual(ours[1].get(h), theirs[1].get(h), h)
                self.assertEqual(ours[2], theirs[2])
        return answers[1]

    def test_the_same_bytes_as_the_standard_library(self):
        class Dotted:
            def div(self, x, y):
                """x // y"""
                return x // y

        def make(module, encoding=None):
            server = module.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False,
                                               encoding=encoding)
            server.register_introspection_functions()
            server.register_multicall_functions()
            server.register_function(lambda a, b: a + b, "add")
            server.register_function(lambda: "café ☃", "text")
            server.register_instance(Dotted())
            return server

        def req(method, *params):
            return ("POST", "/RPC2", xmlrpc.client.dumps(params, method).encode(),
                    {"Content-Type": "text/xml"})

        requests = [req("add", 2, 3), req("div", 1, 0), req("nope"), req("text"),
                    req("system.listMethods"), req("system.methodHelp", "div"),
                    req("system.methodSignature", "add"),
                    req("system.multicall", [{"methodName": "div", "params": [1, 0]},
                                             {"methodName": "add", "params": [1, 2]}]),
                    ("POST", "/RPC2", b"<not xml", {"Content-Type": "text/xml"}),
                    ("POST", "/elsewhere", xmlrpc.client.dumps((), "text").encode(), {}),
                    ("GET", "/RPC2", b"", {})]
        ours = self.compare_with_the_standard_library(make, requests)
        self.assertEqual(xmlrpc.client.loads(ours[0][2])[0], (5,))
        with self.assertRaises(xmlrpc.client.Fault) as caught:
            xmlrpc.client.loads(ours[1][2])
        self.assertEqual(caught.exception.faultString,
                         "<class 'ZeroDivisionError'>:integer division or modulo by zero")
        with self.assertRaises(xmlrpc.client.Fault) as caught:
            xmlrpc.client.loads(ours[2][2])
        self.assertEqual(caught.exception.faultString, not_supported("nope")[1])
        self.assertEqual(xmlrpc.client.loads(ours[6][2])[0], ("signatures not supported",))
        # encoding= is written as the standard library writes it.
        latin = self.compare_with_the_standard_library(
            lambda module: make(module, "iso-8859-1"), [req("text")])
        self.assertTrue(latin[0][2].startswith(b"<?xml version='1.0' encoding='iso-8859-1'?>"))
        self.assertIn("café &#9731;".encode("iso-8859-1"), latin[0][2])

    def test_the_fast_way_answers_as_the_whole_way(self):
        # A handler class that keeps the standard library's reading has its
        # POSTs read by rapidrpc (python/rapidrpc/server.py, "the handler's
        # fast way"); one that overrides handle() goes the whole way. Every
        # request here gets the same bytes both ways (the Date field
        # aside), and the same log lines.
        class WholeWay(xmlrpc.server.SimpleXMLRPCRequestHandler):
            def handle(self):
                super().handle()

        class Server(rapidrpc.SimpleXMLRPCServer):
            def _marshaled_dispatch(self, data, dispatch_method=None, path=None):
                if data == b"boom":  # do_POST's own 500, with the traceback fields
                    raise ValueError("boom")
                return super()._marshaled_dispatch(data, dispatch_method, path)

        def make(handler):
            server = Server(("127.0.0.1", 0), handler, logRequests=True)
            server._send_traceback_header = True
            server.register_introspection_functions()
            server.register_multicall_functions()
            server.register_function(lambda a, b: a + b, "add")
            server.register_function(lambda n: "café ☃" * n, "text")
            server.register_function(lambda a, b: a // b, "div")
            return server

        def post(body, fields=b"Content-Type: text/xml\r\n", path=b"/RPC2", version=b"HTTP/1.1"):
            return (b"POST %s %s\r\nHost: h\r\n%sContent-Length: %d\r\nConnection: close\r\n"
                    b"\r\n%s" % (path, version, fields, len(body), body))

        def call(method, *params):
            return xmlrpc.client.dumps(params, method).encode()

        requests = [
            post(call("add", 2, 3)),
            post(call("div", 1, 0)),
            post(call("nope")),
            post(call("system.multicall", [{"methodName": "div", "params": [1, 0]},
                                           {"methodName": "add", "params": [1, 2]}])),
            post(call("system.methodSignature", "add")),
            post(call("text", 2)),  # UTF-8 in the response
            post(xmlrpc.client.dumps(("ünï",), "add", encoding="iso-8859-1").encode("latin-1")),
            post(call("text", 1000), b"Accept-Encoding: gzip\r\n"),  # past encode_threshold
            post(call("text", 1000), b"Accept-Encoding: gzip;q=0\r\n"),
            post(gzip.compress(call("add", 4, 5)), b"Content-Encoding: gzip\r\n"),
            post(call("add", 4, 5), b"Content-Encoding: br\r\n"),  # 501
            post(b"<not xml"),
            post(b""),
            post(b"boom"),
            post(call("add", 2, 3), path=b"/elsewhere"),  # 404
            post(call("add", 2, 3), path=b"/RPC2?q=1"),
            post(call("add", 2, 3), path=b"//RPC2"),
            post(call("add", 2, 3), version=b"HTTP/1.0"),
            post(call("add", 2, 3), b"x-mixed-CASE:   spaced value\r\nX-Empty:\r\nX-Dup: 1\r\n"
                                    b"X-Dup: 2\r\nContent-type: application/xml\r\n"),
            post(call("add", 2, 3), b"Expect: 100-continue\r\n"),
            b"GET /RPC2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
        ]
        taken = []
        answer_plainly = rapidrpc.server._answer_plainly

        def counting(*args):
            taken.append(answer_plainly(*args))
            return taken[-1]

        answers, logs = [], []
        for handler in (xmlrpc.server.SimpleXMLRPCRequestHandler, WholeWay):
            port = self.serving(make(handler))
            log = io.StringIO()
            with unittest.mock.patch.object(rapidrpc.server, "_answer_plainly", counting), \
                    contextlib.redirect_stderr(log):
                answers.append([self.raw_exchange(port, r) for r in requests])
            logs.append(re.sub(r"\[[^]]*\]", "[date]", log.getvalue()))
        # The fast way took every POST the first time (the GET and the one
        # with a path the standard library rewrites went the whole way), and
        # was never asked the second time.
        self.assertEqual(taken.count(True), len(requests) - 2, taken)
        for r, fast, whole in zip(requests, *answers):
            with self.subTest(request=r[:60]):
                self.assertEqual(fast, whole)
        self.assertEqual(logs[0], logs[1])
        self.assertEqual(logs[0].count('"POST /RPC2 HTTP/1.1" 200 -'), 14, logs[0])
        statuses = [a.split(b" ", 2)[1] for a in answers[0]]
        self.assertEqual(statuses, [b"200"] * 10 + [b"501", b"200", b"200", b"500", b"404",
                                                  b"404", b"200", b"200", b"200", b"200", b"501"])
        self.assertIn(b"\r\nX-exception: boom\r\nX-traceback: Traceback", answers[0][13])

    def raw_exchange(self, port, request):
        """`request`'s response as received, to the end of the connection,
        its Date field taken out, and a gzip body's time of compression
        (its header's MTIME, in seconds) zeroed."""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(request)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, blank, body = data.partition(b"\r\n\r\n")
        if body.startswith(b"\x1f\x8b"):
            body = body[:4] + bytes(4) + body[8:]
        return re.sub(rb"\r\nDate: [^\r]*", b"", head) + blank + body

    def test_documentation_page_and_multiple_paths(self):
        def make_doc(module):
            server = module.DocXMLRPCServer(("127.0.0.1", 0), logRequests=False)
            server.set_server_title("Title of the test")
            server.set_server_name("Name of the test")
            server.set_server_documentation("Documentation of the test.")
            server.register_function(lambda a, b: a + b, "add")
            server.register_introspection_functions()
            return server

        page = self.compare_with_the_standard_library(make_doc, [("GET", "/", b"", {})])[0]
        self.assertEqual(page[0], 200)
        self.assertIn(b"<title>Python: Title of the test</title>", page[2])
        self.assertIn(b"Documentation&nbsp;of&nbsp;the&nbsp;test.", page[2])

        class AnyPath(xmlrpc.server.SimpleXMLRPCRequestHandler):
            rpc_paths = ()

        def make_multi(module):
            server = module.MultiPathXMLRPCServer(("127.0.0.1", 0), AnyPath, logRequests=False)
            for path in ("/a", "/b"):
                d = server.add_dispatcher(path, xmlrpc.server.SimpleXMLRPCDispatcher())
                d.register_function(lambda p=path: p, "where")
            return server

        def req(path):
            return "POST", path, xmlrpc.client.dumps((), "where").encode(), {}

        multi = self.compare_with_the_standard_library(make_multi, [req("/a"), req("/b"),
                                                                    req("/c")])
        self.assertEqual(xmlrpc.client.loads(multi[0][2])[0], ("/a",))
        self.assertEqual(xmlrpc.client.loads(multi[1][2])[0], ("/b",))
        self.assertRaises(xmlrpc.client.Fault, xmlrpc.client.loads, multi[2][2])

    def assert_credentials_checked(self, handler):
        handler.seen.clear()
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), handler, logRequests=False)
        server.register_function(lambda a, b: a + b, "add")
        port = self.serving(server)
        body = xmlrpc.client.dumps((2, 3), "add").encode()
        self.assertEqual(exchange(port, "POST", "/RPC2", body)[0], 401)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.addCleanup(conn.close)
        for _ in range(2):
            conn.request("POST", "/RPC2", body, {"Authorization": BASIC,
                                                 "Content-Type": "text/xml"})
            r = conn.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(xmlrpc.client.loads(r.read())[0], (5,))
            self.assertIsNotNone(conn.sock, "the client's connection was not kept")
        client = conn.sock.getsockname()
        # Both on the client's one connection, the handler seeing its address.
        self.assertEqual(handler.seen[-2:], [(client, BASIC)] * 2)
        self.assertEqual(handler.seen[0][1], None)

    def test_do_post_checks_credentials(self):
        self.assert_credentials_checked(PostChecksCredentials)

    def test_parse_request_checks_credentials(self):
        self.assert_credentials_checked(ParseChecksCredentials)

    def test_dispatch_receives_every_name(self):
        class Facade(rapidrpc.SimpleXMLRPCServer):
            def _dispatch(self, method, params):
                return f"{method} of {len(params)}"

        class Dispatched:
            def _dispatch(self, method, params):
                return method.upper()

        facade = Facade(("127.0.0.1", 0), logRequests=False)
        with proxy(self.serving(facade)) as p:
            self.assertEqual(p.any.name.at.all(1, 2), "any.name.at.all of 2")
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False)
        server.register_instance(Dispatched())
        with proxy(self.serving(server)) as p:
            self.assertEqual(p.computed(), "COMPUTED")

    def test_threading_mixin_shares_the_script_state(self):
        class Threaded(rapidrpc.ThreadingMixIn, rapidrpc.SimpleXMLRPCServer):
            pass

        state = {"n": 0}
        both = threading.Barrier(2, timeout=10)

        def bump():
            state["n"] += 1
            return state["n"]

        def meet():
            both.wait()  # only if two calls run at once
            return threading.get_ident() != main and os.getpid()

        main = threading.get_ident()
        server = Threaded(("127.0.0.1", 0), logRequests=False)
        server.register_function(bump)
        server.register_function(meet)
        port = self.serving(server)
        self.assertEqual(call(port, "bump"), 1)
        self.assertEqual(call(port, "bump"), 2)
        self.assertEqual(state["n"], 2)
        results = []
        threads = [threading.Thread(target=lambda: results.append(call(port, "meet")))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        self.assertEqual(results, [os.getpid()] * 2)

    def test_handle_request_serves_one_connection_per_call(self):
        class Counted(rapidrpc.SimpleXMLRPCServer):
            timeouts = 0

            def handle_timeout(self):
                self.timeouts += 1

        server = Counted(("127.0.0.1", 0), logRequests=False)
        self.addCleanup(server.server_close)
        server.timeout = 0.05
        server.register_function(lambda: "hi", "hi")
        port = server.server_address[1]
        handled = []
        stop = threading.Event()

        def loop():
            while not stop.is_set():
                server.handle_request()
                handled.append(server.timeouts)

        t = threading.Thread(target=loop)
        t.start()
        try:
            wait_until(lambda: server.timeouts >= 2, 5, "handle_timeout() when nothing comes")
            for n in range(1, 4):
                self.assertEqual(call(port, "hi"), "hi")
                # One iteration served the call: one more than the timeouts.
                wait_until(lambda: len(handled) - server.timeouts == n, 5,
                           f"{n} calls served, one per handle_request()")
        finally:
            stop.set()
            t.join(10)

    def test_shutdown_from_another_thread_and_serve_again(self):
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False) as server:
            server.register_function(lambda a, b: a + b, "add")
            port = server.server_address[1]
            for _ in range(2):
                t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
                t.start()
                self.assertEqual(call(port, "add", 1, 2), 3)
                server.shutdown()
                t.join(10)
                self.assertFalse(t.is_alive())
        self.assertTrue(tree_gone(os.getpid(), 5), procs.live_children(os.getpid()))

    def test_shutdown_from_a_registered_function(self):
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False)
        self.addCleanup(server.server_close)
        server.register_function(lambda: server.shutdown() or "bye", "stop")
        t = threading.Thread(target=server.serve_forever, daemon=True)  # should it hang
        t.start()
        self.assertEqual(call(server.server_address[1], "stop"), "bye")
        t.join(10)
        self.assertFalse(t.is_alive(), "serve_forever() did not return")

    def test_connections_made_before_serving_are_served(self):
        # The constructor listens, as the standard library's does.
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False) as server:
            server.register_function(lambda: "early", "early")
            body = xmlrpc.client.dumps((), "early").encode()
            early = socket.create_connection(server.server_address, timeout=10)
            self.addCleanup(early.close)
            early.sendall(b"POST /RPC2 HTTP/1.0\r\nContent-Type: text/xml\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(body) + body)
            t = threading.Thread(target=server.serve_forever)
            t.start()
            try:
                answer = b""
                while chunk := early.recv(65536):
                    answer += chunk
            finally:
                server.shutdown()
                t.join(10)
        self.assertTrue(answer.startswith(b"HTTP/1.0 200 "), answer)
        self.assertEqual(xmlrpc.client.loads(answer.split(b"\r\n\r\n", 1)[1])[0], ("early",))

    def test_encode_threshold_zero_gzips_any_response(self):
        class Always(xmlrpc.server.SimpleXMLRPCRequestHandler):
            encode_threshold = 0

        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), Always, logRequests=False)
        server.register_function(lambda: 1, "one")
        port = self.serving(server)
        body = xmlrpc.client.dumps((), "one").encode()
        status, headers, data = exchange(port, "POST", "/RPC2", body,
                                         {"Accept-Encoding": "gzip"})
        self.assertEqual((status, headers.get("Content-Encoding")), (200, "gzip"))
        self.assertEqual(xmlrpc.client.loads(gzip.decompress(data))[0], (1,))
        status, headers, data = exchange(port, "POST", "/RPC2", body)
        self.assertEqual((status, headers.get("Content-Encoding")), (200, None))

    def test_what_cannot_be_honoured_is_refused(self):
        for mixin in (rapidrpc.ThreadingMixIn, rapidrpc.ForkingMixIn):
            cls = type("Mixed", (mixin, rapidrpc.SimpleXMLRPCServer), {})
            with self.assertRaises(ValueError) as caught:
                cls(("127.0.0.1", 0), workers=2)
            self.assertIn(f"workers= and {mixin.__name__} both say how calls run at once",
                          str(caught.exception))
        # A socket replaced (wrapped for TLS, say) is said, not served.
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False)
        self.addCleanup(server.server_close)
        relay = server.socket
        server.socket = socket.socket()
        self.addCleanup(relay.close)
        self.addCleanup(server.socket.close)
        with self.assertRaises(RuntimeError) as caught:
            server.handle_request()
        self.assertIn("server.socket is no longer the socket the constructor made",
                      str(caught.exception))

    def test_address_in_use(self):
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False) as first:
            with self.assertRaises(OSError) as caught:
                rapidrpc.SimpleXMLRPCServer(first.server_address, logRequests=False)
            self.assertEqual(caught.exception.errno, errno.EADDRINUSE)

    def test_bind_and_activate_later(self):
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), bind_and_activate=False)
        try:
            server.server_bind()
            self.assertEqual(server.socket.getsockname(), server.server_address)
            server.server_activate()
            self.assertNotEqual(server.server_address[1], 0)
        finally:
            server.server_close()

    def test_finding_rapidrpcd(self):
        self.addCleanup(os.environ.__setitem__, "RAPIDRPCD", daemon_path())
        os.environ["RAPIDRPCD"] = "/nonexistent/rapidrpcd"
        with self.assertRaises(FileNotFoundError) as caught:
            rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0))
        self.assertIn("RAPIDRPCD=/nonexistent/rapidrpcd", str(caught.exception))
        del os.environ["RAPIDRPCD"]
        built = os.path.join(SOURCE_PYTHON, "..", "build", "bin", "rapidrpcd")
        if os.access(built, os.X_OK):
            self.assertEqual(os.path.realpath(rapidrpc.find_rapidrpcd()), os.path.realpath(built))
        # A copy of the package outside the tree, nothing in PATH: said clearly.
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(os.path.join(SOURCE_PYTHON, "rapidrpc"), os.path.join(tmp, "rapidrpc"))
        r = subprocess.run(
            [sys.executable, "-c", "import rapidrpc; rapidrpc.SimpleXMLRPCServer(('127.0.0.1', 0))"],
            env={"PYTHONPATH": tmp, "PATH": tmp}, capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot find rapidrpcd: set RAPIDRPCD", r.stderr)
        # ... and found in PATH.
        os.symlink(daemon_path(), os.path.join(tmp, "rapidrpcd"))
        r = subprocess.run(
            [sys.executable, "-c", "import rapidrpc; print(rapidrpc.find_rapidrpcd())"],
            env={"PYTHONPATH": tmp, "PATH": tmp}, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.stdout.strip(), os.path.join(tmp, "rapidrpcd"), r.stderr)


if __name__ == "__main__":
    main()
