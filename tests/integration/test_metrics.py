"""The admin listener (--admin, docs/operations.md): /metrics in the
Prometheus text format, /healthz and /readyz.

- the exposition parses (prometheus_client's parser, Debian's
  python3-prometheus-client) and passes `promtool check metrics` (Debian's
  prometheus);
- rapidrpc_calls_total grows by exactly the calls made, per protocol, method
  and outcome, also while other calls run and scrapes go on; unregistered
  names share one label value; faults and rejections are counted under
  their labels;
- a real Prometheus server, started here on loopback, scrapes rapidrpcd and
  its query API returns the series;
- /readyz is 200 while serving, 503 from SIGTERM until exit while a call
  in flight still finishes, and 503 "no worker process is up" while
  --isolate's one worker is held back after crashing again and again;
- the children of prefork and the worker processes of --isolate are
  counted by the process that serves /metrics.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import xmlrpc.client

from harness import HOST, Daemon, main, wait_until

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as err:  # a requirement: without it nothing here is parsed
    raise ImportError("test_metrics needs python3-prometheus-client "
                      "(scripts/setup.sh --tests installs it)") from err

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on (\S+)")


def start(*args):
    """A daemon with an admin listener on a free port; returns (daemon, admin port)."""
    d = Daemon("--admin", f"{HOST}:0", *args, env_args=False).start()
    for line in list(d._stdout_lines):
        m = ADMIN_RE.search(line)
        if m:
            return d, int(m.group(1).rsplit(b":", 1)[1])
    d.stop()
    raise AssertionError("rapidrpcd printed no admin line")


def get(port, path, method="GET", timeout=10):
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read().decode()
    finally:
        c.close()


def parse(text):
    """{(sample name, frozenset(labels)): value}, through a real parser."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def read_response(sock):
    """One response with a Content-Length, read to its last byte."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def scrape(port):
    status, ctype, body = get(port, "/metrics")
    assert status == 200, (status, body)
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    return parse(body)


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def calls(samples, protocol, method, outcome="ok"):
    return value(samples, "rapidrpc_calls_total", protocol=protocol, method=method, outcome=outcome)


def jsonrpc(port, method, params, id_=1):
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": id_})
        c.request("POST", "/RPC2", body, {"Content-Type": "application/json"})
        return json.loads(c.getresponse().read())
    finally:
        c.close()


class Exposition(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d, cls.admin = start("--deny-method", "sample.sum", "--max-body-bytes", "4096")

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def test_health_and_routes(self):
        self.assertEqual(get(self.admin, "/healthz")[::2], (200, "ok\n"))
        self.assertEqual(get(self.admin, "/readyz")[::2], (200, "ready\n"))
        self.assertEqual(get(self.admin, "/nothing")[0], 404)
        self.assertEqual(get(self.admin, "/metrics", method="POST")[0], 405)
        status, _, body = get(self.admin, "/metrics", method="HEAD")
        self.assertEqual((status, body), (200, ""))
        # The RPC port does not serve them.
        self.assertEqual(get(self.d.port, "/metrics")[0], 404)

    def test_promtool_accepts_the_exposition(self):
        if not os.path.exists(PROMTOOL):
            self.skipTest("promtool is not installed (Debian's prometheus package)")
        self.d.proxy().sample.add(1, 2)  # so that every family has samples
        _, _, body = get(self.admin, "/metrics")
        check = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(),
                               capture_output=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        families = {f.name for f in text_string_to_metric_families(body)}
        for name in ("rapidrpc_calls", "rapidrpc_call_duration_seconds",
                     "rapidrpc_calls_in_flight", "rapidrpc_connections_open",
                     "rapidrpc_connections", "rapidrpc_rejections",
                     "rapidrpc_pool_queue_depth", "rapidrpc_pool_busy_workers",
                     "rapidrpc_pool_wait_seconds",
                     "rapidrpc_worker_restarts", "rapidrpc_received_bytes", "rapidrpc_sent_bytes",
                     "process_cpu_seconds", "process_resident_memory_bytes", "process_open_fds",
                     "process_start_time_seconds"):
            self.assertIn(name, families)

    def test_calls_counted_exactly_while_scraped(self):
        before = scrape(self.admin)
        stop = threading.Event()
        scrapes, errors = [], []

        def scraper():
            try:
                while not stop.is_set():
                    scrapes.append(scrape(self.admin))  # each one parses
            except Exception as err:  # noqa: BLE001 - fails the test below
                errors.append(err)

        t = threading.Thread(target=scraper)
        t.start()
        try:
            proxy = self.d.proxy()
            for i in range(40):
                self.assertEqual(proxy.sample.add(i, 1), i + 1)
            for i in range(23):
                self.assertEqual(jsonrpc(self.d.port, "sample.add", [i, 2])["result"], i + 2)
        finally:
            stop.set()
            t.join(30)
        after = scrape(self.admin)
        self.assertEqual(errors, [], "a scrape during the calls failed")
        self.assertGreater(len(scrapes), 0)
        self.assertEqual(calls(after, "xmlrpc", "sample.add") - calls(before, "xmlrpc", "sample.add"),
                         40)
        self.assertEqual(
            calls(after, "jsonrpc", "sample.add") - calls(before, "jsonrpc", "sample.add"), 23)
        hist = "rapidrpc_call_duration_seconds_count"
        self.assertEqual(value(after, hist, protocol="xmlrpc", method="sample.add")
                         - value(before, hist, protocol="xmlrpc", method="sample.add"), 40)
        inf = value(after, "rapidrpc_call_duration_seconds_bucket", protocol="xmlrpc",
                    method="sample.add", le="+Inf")
        self.assertEqual(inf, value(after, hist, protocol="xmlrpc", method="sample.add"))
        # Counters never go down from one scrape to the next.
        seen = [s for s in scrapes] + [after]
        for a, b in zip(seen, seen[1:]):
            self.assertLessEqual(calls(a, "xmlrpc", "sample.add"), calls(b, "xmlrpc", "sample.add"))
        self.assertGreater(value(after, "rapidrpc_received_bytes_total"),
                           value(before, "rapidrpc_received_bytes_total"))
        self.assertGreater(value(after, "rapidrpc_connections_total"),
                           value(before, "rapidrpc_connections_total") + 22)

    def test_faults_and_rejections_under_their_labels(self):
        before = scrape(self.admin)
        proxy = self.d.proxy()
        with self.assertRaises(xmlrpc.client.Fault):
            proxy.sample.add("x", 1)  # a fault from the method's parameters
        with self.assertRaises(xmlrpc.client.Fault) as denied:
            proxy.sample.sum([1, 2])  # --deny-method
        self.assertEqual(denied.exception.faultCode, -32002)
        for name in ("no.such.method", "another.unknown", "x" * 100):
            with self.assertRaises(xmlrpc.client.Fault):
                getattr(proxy, name)()
        c = http.client.HTTPConnection(HOST, self.d.port, timeout=10)
        c.request("POST", "/RPC2", "x" * 5000, {"Content-Type": "text/xml"})
        self.assertEqual(c.getresponse().status, 413)
        c.close()
        c = http.client.HTTPConnection(HOST, self.d.port, timeout=10)
        c.request("POST", "/no/such/path", "<x/>", {"Content-Type": "text/xml"})
        self.assertEqual(c.getresponse().status, 404)
        c.close()
        after = scrape(self.admin)

        def grew(name, **labels):
            return value(after, name, **labels) - value(before, name, **labels)

        self.assertEqual(grew("rapidrpc_calls_total", protocol="xmlrpc", method="sample.add",
                              outcome="fault"), 1)
        self.assertEqual(grew("rapidrpc_calls_total", protocol="xmlrpc", method="sample.sum",
                              outcome="fault"), 1)
        self.assertEqual(grew("rapidrpc_rejections_total", reason="method_denied"), 1)
        self.assertEqual(grew("rapidrpc_rejections_total", reason="body_too_large"), 1)
        self.assertEqual(grew("rapidrpc_rejections_total", reason="not_found"), 1)
        # Unregistered names share one label value: no unbounded label set.
        self.assertEqual(grew("rapidrpc_calls_total", protocol="xmlrpc", method="(other)",
                              outcome="fault"), 3)
        methods = {dict(k[1]).get("method") for k in after if k[0] == "rapidrpc_calls_total"}
        self.assertNotIn("no.such.method", methods)
        registered = set(self.d.proxy().system.listMethods()) | {"(other)", "(batch)"}
        self.assertLessEqual(methods, registered)


class Readiness(unittest.TestCase):
    def test_readyz_503_from_sigterm_until_exit_while_a_call_finishes(self):
        d, admin = start("--drain-timeout", "20")
        try:
            self.assertEqual(get(admin, "/readyz")[0], 200)
            result = {}

            def slow_call():
                try:
                    result["value"] = xmlrpc.client.ServerProxy(d.url).sleep(2)
                except Exception as err:  # noqa: BLE001 - fails the test below
                    result["error"] = err

            t = threading.Thread(target=slow_call)
            t.start()
            wait_until(lambda: value(scrape(admin), "rapidrpc_calls_in_flight") >= 1, 10,
                       "the call in flight")
            d.send_signal(signal.SIGTERM)
            # The signal reaches the daemon's signal thread in its own time.
            wait_until(lambda: get(admin, "/readyz")[0] == 503, 5, "/readyz at 503 after SIGTERM")
            answers = []
            while d.alive():
                try:
                    answers.append(get(admin, "/readyz", timeout=2)[::2])
                except OSError:
                    break  # the process is closing its admin listener
                time.sleep(0.05)
            t.join(30)
            self.assertEqual(d.wait(20), 0)
            self.assertIn("value", result, f"the call in flight did not finish: {result}")
            self.assertGreater(len(answers), 5, answers)
            # 503 from the first answer after SIGTERM (the call keeps the
            # process up for about 2 s) until the listener closed.
            self.assertTrue(all(a == (503, "not ready: draining\n") for a in answers), answers)
        finally:
            d.stop()

    def test_with_a_drain_delay_readyz_is_503_while_new_connections_are_still_served(self):
        # --drain-delay: /readyz says 503 at once, and for the delay
        # everything else goes on (new connections accepted and answered,
        # for a load balancer's pooled connections never to be closed under
        # a call); then the drain, and the exit.
        delay = 2.0
        d, admin = start("--drain-delay", str(delay), "--drain-timeout", "5")
        try:
            self.assertEqual(get(admin, "/readyz")[0], 200)
            signalled = time.monotonic()
            d.send_signal(signal.SIGTERM)
            wait_until(lambda: get(admin, "/readyz")[0] == 503, 1, "/readyz at 503 after SIGTERM")
            served = 0
            while time.monotonic() - signalled < delay - 0.5:
                self.assertEqual(get(admin, "/readyz")[::2], (503, "not ready: draining\n"))
                with xmlrpc.client.ServerProxy(d.url) as p:  # a new connection each time
                    self.assertEqual(p.sample.add(2, 3), 5)
                served += 1
                time.sleep(0.1)
            self.assertGreater(served, 5)
            self.assertEqual(d.wait(delay + 5), 0)
            self.assertGreaterEqual(time.monotonic() - signalled, delay)
            self.assertIn("serving 2 s more with /readyz answering 503", d.stderr_text())
        finally:
            d.stop()


class Processes(unittest.TestCase):
    def test_prefork_children_are_counted(self):
        d, admin = start("--mode", "prefork", "--processes", "2")
        try:
            before = scrape(admin)
            for i in range(30):  # a new connection each: the calls spread over the children
                self.assertEqual(xmlrpc.client.ServerProxy(d.url).sample.add(i, i), 2 * i)
            after = wait_until(
                lambda: (lambda s: s if value(s, "rapidrpc_connections_open") == 0 else None)(
                    scrape(admin)), 5, "no connection open")
            self.assertEqual(
                calls(after, "xmlrpc", "sample.add") - calls(before, "xmlrpc", "sample.add"), 30)
            self.assertEqual(value(after, "rapidrpc_connections_open"), 0)
            self.assertEqual(value(after, "rapidrpc_calls_in_flight"), 0)
        finally:
            d.stop()

    def test_fork_children_hold_no_admin_connection(self):
        # A child of fork mode must not hold a copy of an admin connection
        # open when it was forked: the client of /metrics would not see the
        # connection close until that child ended.
        d, admin = start("--mode", "fork", "--processes", "2")
        self.addCleanup(d.stop)
        scraper = socket.create_connection((HOST, admin), timeout=10)
        self.addCleanup(scraper.close)
        scraper.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertTrue(read_response(scraper).startswith(b"HTTP/1.1 200"))
        # A connection that stays half a request long: its child waits for
        # the rest (up to the request timeout) while the scraper's is open.
        client = socket.create_connection((HOST, d.port), timeout=10)
        self.addCleanup(client.close)
        client.sendall(b"POST /RPC2 HTTP/1.1\r\n")
        wait_until(lambda: value(scrape(admin), "rapidrpc_connections_open") == 1, 10,
                   "the child serving")
        scraper.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertTrue(read_response(scraper).startswith(b"HTTP/1.1 200"))
        scraper.settimeout(5)
        try:
            self.assertEqual(scraper.recv(1), b"")
        except TimeoutError:
            self.fail("the admin connection was not closed (a child holds it)")
        self.assertEqual(value(scrape(admin), "rapidrpc_connections_open"), 1,
                         "the child had ended by then")

    def test_isolate_worker_crash_counted_and_ready_again(self):
        d, admin = start("--isolate", "--workers", "1", "--enable-test-methods")
        try:
            wait_until(lambda: value(scrape(admin), "rapidrpc_worker_processes_up") == 1, 10,
                       "the worker process up")
            with self.assertRaises(xmlrpc.client.Fault):
                d.proxy().test.crash()
            after = scrape(admin)
            self.assertEqual(value(after, "rapidrpc_worker_restarts_total", cause="crash"), 1)
            self.assertEqual(
                value(after, "rapidrpc_calls_total", protocol="xmlrpc", method="test.crash",
                      outcome="fault"), 1)
            wait_until(lambda: get(admin, "/readyz")[0] == 200, 10, "/readyz at 200 again")
            self.assertEqual(d.proxy().sample.add(2, 2), 4)
        finally:
            d.stop()

    def test_readyz_503_while_no_worker_process_is_up(self):
        # A worker that keeps dying young (within 1 s of its start) is
        # replaced ever more slowly (docs/design.md): from the third such
        # death on, 0.4 s later, then 0.8 s, ... After five crashes (the
        # first worker may not count as young) none is up for 0.4 s at
        # least, and /readyz says so until the next one is.
        d, admin = start("--isolate", "--workers", "1", "--enable-test-methods")
        try:
            wait_until(lambda: get(admin, "/readyz")[::2] == (200, "ready\n"), 10, "ready")
            for _ in range(5):
                with self.assertRaises(xmlrpc.client.Fault):
                    d.proxy().test.crash()
            held_back = wait_until(
                lambda: (lambda a: a if a[0] == 503 else None)(get(admin, "/readyz")[::2]), 0.5,
                "/readyz at 503 with no worker process up")
            self.assertEqual(held_back, (503, "not ready: no worker process is up\n"))
            self.assertEqual(value(scrape(admin), "rapidrpc_worker_processes_up"), 0)
            wait_until(lambda: get(admin, "/readyz")[::2] == (200, "ready\n"), 10,
                       "/readyz at 200 once a worker is up again")
            self.assertEqual(d.proxy().sample.add(2, 2), 4)
        finally:
            d.stop()

    def test_zeromq_calls_are_jsonrpc_calls(self):
        try:
            import zmq
        except ImportError:
            self.skipTest("python3-zmq is not installed")
        d, admin = start("--zmq", "tcp://127.0.0.1:*")
        ctx = zmq.Context()
        try:
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(d.zmq_endpoints[0])
            for i in range(5):
                s.send(json.dumps({"jsonrpc": "2.0", "method": "sample.add", "params": [i, 1],
                                   "id": i}).encode())
                self.assertTrue(s.poll(10000), "no reply over ZeroMQ")
                self.assertEqual(json.loads(s.recv())["result"], i + 1)
            s.close()
            self.assertEqual(calls(scrape(admin), "jsonrpc", "sample.add"), 5)
        finally:
            ctx.term()
            d.stop()


PROMETHEUS_LISTENING_RE = re.compile(r'msg="Listening on" address=\S+:(\d+)')


def prometheus_port(prom, timeout=30):
    """The port a Prometheus started with --web.listen-address=HOST:0 chose,
    from its log line `msg="Listening on" address=HOST:PORT`; its standard
    error is read to the end on a thread of its own from then on."""
    found = threading.Event()
    port = []

    def read():
        for line in iter(prom.stderr.readline, b""):
            m = PROMETHEUS_LISTENING_RE.search(line.decode(errors="replace"))
            if m and not port:
                port.append(int(m.group(1)))
                found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(timeout):
        raise AssertionError(f"prometheus said on which port it listens not within {timeout} s")
    return port[0]


class RealPrometheus(unittest.TestCase):
    def test_prometheus_scrapes_and_queries_the_series(self):
        if not os.path.exists(PROMETHEUS):
            self.skipTest("prometheus is not installed (Debian's prometheus package)")
        d, admin = start()
        work = tempfile.mkdtemp()
        prom = None
        try:
            for i in range(7):
                self.assertEqual(d.proxy().sample.add(i, 1), i + 1)
            config = os.path.join(work, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: rapidrpcd\n    static_configs:\n"
                        f"      - targets: ['{HOST}:{admin}']\n")
            prom = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
                 f"--web.listen-address={HOST}:0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            port = prometheus_port(prom)
            query = urllib.parse.quote('rapidrpc_calls_total{method="sample.add",outcome="ok"}')
            deadline = time.monotonic() + 60
            found = None
            while time.monotonic() < deadline and found is None:
                time.sleep(0.5)
                self.assertIsNone(prom.poll(), "prometheus exited")
                try:
                    status, _, body = get(port, f"/api/v1/query?query={query}", timeout=5)
                except OSError:
                    continue
                if status != 200:
                    continue
                result = json.loads(body)["data"]["result"]
                if result:
                    found = result
            self.assertIsNotNone(found, "Prometheus's query API never returned the series")
            self.assertEqual(found[0]["metric"]["job"], "rapidrpcd")
            self.assertEqual(found[0]["metric"]["protocol"], "xmlrpc")
            self.assertEqual(float(found[0]["value"][1]), 7)
        finally:
            if prom is not None:
                prom.terminate()
                try:
                    prom.wait(20)
                except subprocess.TimeoutExpired:
                    prom.kill()
                    prom.wait()
                prom.stderr.close()
            shutil.rmtree(work, ignore_errors=True)
            d.stop()


if __name__ == "__main__":
    main()
