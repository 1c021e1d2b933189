"""`from rapidrpc import SimpleXMLRPCServer` (python/rapidrpc, docs/python.md):
SimpleXMLRPCServer scripts served by rapidrpcd.

- The standard library documentation's three server examples, with only
  their import lines changed, answer their documented client calls; Ctrl-C
  runs the script's own `except KeyboardInterrupt`.
- Registered functions (a decorator, a closure, a lambda, an instance) run
  in Python workers forked from the script after registration; calls run at
  once, one per worker; rpc_paths, allow_none and use_builtin_types behave as
  the standard library's; faults, crashes and method_timeout as with
  rapidrpcd --python.
- shutdown() from another thread ends serve_forever(), which can serve
  again; no process is left after a stop, a SIGKILL of the script, or a
  SIGKILL of rapidrpcd (serve_forever() then raises).
- rapidrpcd is found through RAPIDRPCD, then the build tree, then PATH, and
  the constructor says clearly when it is not.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import datetime
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import xmlrpc.client

import procs
from harness import daemon_path, main

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "python_server")
SOURCE_PYTHON = os.path.abspath(os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, SOURCE_PYTHON)
import rapidrpc  # noqa: E402

INTERNAL_ERROR = -32603
METHOD_NOT_FOUND = -32601
TIMEOUT = -32001
DOCS_PORT = 8000  # the examples' own


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
        """Ctrl-C (SIGINT to the script); its output and exit status."""
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=timeout)
        self.reader.join(5)
        return out, self.proc.returncode

    def close(self):
        tree = procs.live_children(self.pid)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=15)
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def proxy(port, path="/RPC2"):
    return xmlrpc.client.ServerProxy(f"http://127.0.0.1:{port}{path}", allow_none=True)


def call(port, method, *params):
    """One call on a proxy of its own, closed after it."""
    with proxy(port) as p:
        return getattr(p, method)(*params)


def post(port, path, body=None):
    body = body or xmlrpc.client.dumps((2, 3), "sample.add").encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                 headers={"Content-Type": "text/xml"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


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
        self.assertTrue({"add", "mul", "pow", "system.listMethods", "system.methodHelp",
                         "system.methodSignature"} <= set(s.system.listMethods()))
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


class DropIn(unittest.TestCase):
    """python_server/served.py: what the standard library documents, and
    what rapidrpcd adds."""

    def serve(self, *args, env=None):
        script = Script(os.path.join(SCRIPTS, "served.py"), *args, env=env)
        self.addCleanup(script.close)
        port = script.read_port()
        s = proxy(port)
        self.addCleanup(s("close"))
        return script, port, s

    def test_registered_functions_answer(self):
        _, port, s = self.serve()
        self.assertEqual(s.sample.add(2, 3), 5)          # a decorator, with a name
        self.assertEqual(s.scale3(4), 12)                # a closure
        self.assertIsInstance(s.started(), float)        # a lambda over the script's state
        self.assertEqual(s.mul(6, 7), 42)                # an instance's method
        self.assertEqual(fault_of(s._hidden)[0], METHOD_NOT_FOUND)
        self.assertEqual(s.system.methodHelp("scale3"), "x times the closure's k.")
        self.assertEqual(s.system.methodSignature("sample.add"), [["int", "int", "int"]])
        body = json.dumps({"jsonrpc": "2.0", "method": "sample.add", "params": {"b": 2, "a": 40},
                           "id": 1}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/RPC2", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(json.loads(r.read())["result"], 42)

    def test_workers_are_forked_from_the_script(self):
        script, _, s = self.serve()
        worker = s.pid()
        self.assertNotEqual(worker, script.pid)
        # Forked, not started anew: below the script, its own command line.
        self.assertIn(worker, procs.live_children(script.pid))
        self.assertEqual(procs.cmdline(worker), procs.cmdline(script.pid))

    def test_calls_run_at_once_one_per_worker(self):
        _, port, _ = self.serve("--workers", "2")
        results = []
        started = time.monotonic()
        threads = [threading.Thread(target=lambda: results.append(call(port, "sleep", 0.5)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        self.assertEqual(results, [0.5, 0.5])
        self.assertLess(elapsed, 0.9, "two sleep(0.5) calls did not run at once")

    def test_faults_and_crashes(self):
        script, port, s = self.serve("--workers", "2")
        self.assertEqual(fault_of(s.fault), (42, "x"))
        self.assertEqual(fault_of(s.fail), (INTERNAL_ERROR, "internal error"))
        self.assertEqual(fault_of(s.abort)[0], INTERNAL_ERROR)
        deadline = time.monotonic() + 1
        pids = set()
        while len(pids) < 2 and time.monotonic() < deadline:
            threads = [threading.Thread(target=lambda: pids.add(call(port, "pid")))
                       for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(len(pids), 2, "both workers did not answer within 1 s of the crash")
        self.assertIn("ZeroDivisionError", script.stderr())
        self.assertIn("died from signal 6", script.stderr())  # the worker's own end: SIGABRT

    def test_method_timeout(self):
        script, _, s = self.serve("--workers", "1", "--method-timeout", "1")
        started = time.monotonic()
        self.assertEqual(fault_of(s.spin)[0], TIMEOUT)
        self.assertLess(time.monotonic() - started, 2.5)
        time.sleep(0.5)  # the runaway is killed 0.2 s after its deadline
        before = procs.tree_cpu(script.pid)
        time.sleep(1)
        self.assertLess(procs.tree_cpu(script.pid) - before, 0.3, "the runaway still runs")
        self.assertEqual(s.sample.add(1, 1), 2)
        self.assertIn("in spin", script.stderr())  # its Python stack, before the kill

    def test_use_builtin_types_and_allow_none(self):
        _, _, s = self.serve()
        self.assertEqual(s.kind(xmlrpc.client.Binary(b"x")), "Binary")
        self.assertEqual(s.kind(datetime.datetime(2026, 1, 2)), "DateTime")
        self.assertEqual(fault_of(s.none)[0], INTERNAL_ERROR)  # allow_none=False
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
        deadline = time.monotonic() + 5
        self.assertTrue(procs.wait_for(lambda: '"sample.add" 200' in script.stderr(), deadline),
                        script.stderr())

    def test_ctrl_c_lets_calls_in_flight_finish(self):
        script, port, _ = self.serve()
        result = []
        t = threading.Thread(target=lambda: result.append(call(port, "sleep", 1)))
        t.start()
        time.sleep(0.3)
        out, status = script.interrupt()
        t.join(10)
        self.assertEqual(result, [1])
        self.assertIn("interrupted", out)
        self.assertEqual(status, 0, script.stderr())
        self.assertTrue(tree_gone(script.pid, 1), procs.live_children(script.pid))

    def test_nothing_outlives_a_killed_script(self):
        script, _, s = self.serve()
        s.sample.add(1, 2)
        tree = procs.live_children(script.pid)
        self.assertGreaterEqual(len(tree), 5)  # fork server, 2 workers, rapidrpcd, 2 of its own
        script.proc.kill()
        script.proc.wait()
        deadline = time.monotonic() + 2
        left = procs.wait_for(lambda: not any(procs.stat(p) and procs.stat(p)[1] != "Z"
                                              for p in tree), deadline)
        self.assertTrue(left, [p for p in tree if procs.stat(p)])

    def assert_serving_stops_when_killed(self, which, message):
        """SIGKILL the one process below the script that `which(pid)` picks:
        serve_forever() raises saying `message`, and nothing is left."""
        script, _, s = self.serve()
        s.sample.add(1, 2)
        victims = [p for p in procs.live_children(script.pid) if which(script.pid, p)]
        self.assertEqual(len(victims), 1)
        os.kill(victims[0], signal.SIGKILL)
        script.proc.wait(15)
        self.assertNotEqual(script.proc.returncode, 0)
        script.reader.join(5)
        self.assertIn(message, script.stderr())
        self.assertTrue(tree_gone(script.pid, 2), procs.live_children(script.pid))

    def test_serve_forever_raises_when_the_fork_server_dies(self):
        self.assert_serving_stops_when_killed(
            lambda script, p: procs.stat(p)[0] == script and procs.cmdline(p) == procs.cmdline(
                script), "serving stopped: the fork server exited")

    def test_serve_forever_raises_when_rapidrpcd_dies(self):
        self.assert_serving_stops_when_killed(
            lambda script, p: b"--python-attach\0" in procs.cmdline(p),
            "serving stopped: rapidrpcd exited")


class InProcess(unittest.TestCase):
    """The server in this test's own process, as a program embedding it."""

    def setUp(self):
        os.environ["RAPIDRPCD"] = daemon_path()

    def test_shutdown_from_another_thread_and_serve_again(self):
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, workers=1) as server:
            server.register_function(lambda a, b: a + b, "add")
            port = server.server_address[1]
            for _ in range(2):
                t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
                t.start()
                self.assertEqual(call(port, "add", 1, 2), 3)
                server.shutdown()
                t.join(10)
                self.assertFalse(t.is_alive())
                self.assertTrue(tree_gone(os.getpid(), 1), procs.live_children(os.getpid()))

    def test_connections_made_before_serving_are_served(self):
        # The constructor listens, as the standard library's does.
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, workers=1) as server:
            server.register_function(lambda: "early", "early")
            result = []
            c = threading.Thread(target=lambda: result.append(
                call(server.server_address[1], "early")))
            c.start()
            time.sleep(0.2)
            t = threading.Thread(target=server.serve_forever)
            t.start()
            c.join(10)
            server.shutdown()
            t.join(10)
        self.assertEqual(result, ["early"])

    def test_address_in_use(self):
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False) as first:
            with self.assertRaises(OSError) as caught:
                rapidrpc.SimpleXMLRPCServer(first.server_address, logRequests=False)
            self.assertEqual(caught.exception.errno, errno.EADDRINUSE)

    def test_instance_with_dispatch(self):
        class Dispatched:
            def _listMethods(self):
                return ["twice", "name_of"]

            def _methodHelp(self, name):
                return f"help of {name}"

            def _dispatch(self, name, params):
                return params[0] * 2 if name == "twice" else name

        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, workers=1) as server:
            server.register_instance(Dispatched())
            t = threading.Thread(target=server.serve_forever)
            t.start()
            try:
                with proxy(server.server_address[1]) as p:
                    self.assertEqual(p.twice(21), 42)
                    self.assertEqual(p.name_of(), "name_of")
                    self.assertEqual(p.system.methodHelp("twice"), "help of twice")
                    self.assertEqual(fault_of(p.other)[0], METHOD_NOT_FOUND)
            finally:
                server.shutdown()
                t.join(10)

    def test_bind_and_activate_later(self):
        server = rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), bind_and_activate=False)
        try:
            server.server_bind()
            server.server_activate()
            self.assertNotEqual(server.server_address[1], 0)
        finally:
            server.server_close()

    def test_finding_rapidrpcd(self):
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
