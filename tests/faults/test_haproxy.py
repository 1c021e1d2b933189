"""Three rapidrpcd instances behind HAProxy, run with the shipped
packaging/haproxy/haproxy.cfg (its addresses set through the environment
variables it reads), under a continuous load through HAProxy: XML-RPC and
JSON-RPC, each on keep-alive connections and on a new connection per call
(four `rapidrpc bench` processes at once, every answer checked).

- A rolling restart (each instance in turn: SIGTERM, wait for its exit,
  start it again, wait until HAProxy has it back) loses no call. The
  instances run with --drain-delay 3: /readyz says 503 at once and HAProxy
  takes the instance out (two failed checks a second apart) before it stops
  accepting and closes the connections HAProxy keeps to it. They run with
  --idle-timeout 300, as docs/operations.md says, so that HAProxy closes
  its idle connections to them before they would; and the loads' keep-alive
  connections are opened anew once idle for a second (rapidrpc bench
  --max-idle), as a client of HAProxy must before its timeout
  http-keep-alive (15 s) closes them.
- SIGKILL of one instance fails at most the calls in flight on it then (at
  most one per client connection, all of them within the moment of the
  kill); HAProxy has it down within its check interval (2 checks, 1 s apart)
  and sends it nothing more; started again, it is back and serves.

The instances listen on their own loopback addresses, 127.0.0.11 to
127.0.0.13 (all of 127/8 is this machine's loopback, so no network
namespace is needed), each with its admin listener on the same address.
After each test a normal call on a new connection, through HAProxy and to
every instance, is answered within 1 s."""

import concurrent.futures
import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import harness  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.abspath(os.path.join(HERE, "..", "..", "packaging", "haproxy", "haproxy.cfg"))
ADDRESSES = ("127.0.0.11", "127.0.0.12", "127.0.0.13")
SERVERS = ("r1", "r2", "r3")  # their names in the config, in that order
DRAIN_DELAY = 3.0
# The config's checks: a server is down after 2 failed checks 1 s apart.
CHECK_INTERVAL = 2.0
# How long a fresh call may take, connect to answer.
SERVE_DEADLINE = 1.0
# Each of the four loads: calls per second in all (open loop), over this
# many connections. Enough that HAProxy always has connections to every
# instance in use and in its idle pool; little enough that the machine,
# two cores with three instances, HAProxy and the loads on it, keeps up.
RATE = 600
# A sanitizer build (set by CMakeLists.txt): its instances start and stop
# more slowly.
SANITIZED = os.environ.get("RAPIDRPCD_SANITIZED") == "1"
CONNECTIONS = 4
LOADS = (("xmlrpc", True), ("xmlrpc", False), ("jsonrpc", True), ("jsonrpc", False))


def tool_path():
    return os.path.join(os.path.dirname(harness.daemon_path()), "rapidrpc")


def free_port(address):
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def add_call(address, port, timeout=SERVE_DEADLINE):
    """sample.add(2, 3) on a new connection; the seconds it took."""
    started = time.monotonic()
    with harness.make_proxy(f"http://{address}:{port}/RPC2", timeout) as proxy:
        result = proxy.sample.add(2, 3)
    if result != 5:
        raise AssertionError(f"sample.add(2, 3) = {result!r} at {address}:{port}")
    return time.monotonic() - started


class Instance:
    """One rapidrpcd on its own address, started again on the same ports."""

    def __init__(self, address):
        self.address = address
        self.port = free_port(address)
        self.admin = free_port(address)
        self.daemon = None

    def start(self):
        d = harness.Daemon(env_args=False)
        d.args = [harness.daemon_path(), "--host", self.address, "--port", str(self.port),
                  "--admin", f"{self.address}:{self.admin}", "--drain-delay", str(DRAIN_DELAY),
                  "--idle-timeout", "300", "--threads", "1", "--workers", "1"]
        self.daemon = d.start()

    def sigkill(self):
        self.daemon.proc.send_signal(signal.SIGKILL)
        self.daemon.wait(10)
        self.daemon.kill()  # what it started, and the harness's bookkeeping

    def stop(self):
        if self.daemon is not None and self.daemon.alive():
            self.daemon.stop(timeout=DRAIN_DELAY + harness.STOP_TIMEOUT)


def stop_all(instances):
    """Stops the instances side by side, since each waits out its drain
    delay; raises the first failure once all have stopped."""
    with concurrent.futures.ThreadPoolExecutor(len(instances)) as pool:
        for stopping in [pool.submit(inst.stop) for inst in instances]:
            stopping.result()


class Haproxy:
    def __init__(self, instances, work):
        self.socket_path = os.path.join(work, "haproxy.sock")
        self.port = free_port("127.0.0.1")
        env = dict(os.environ, RAPIDRPC_HAPROXY_SOCKET=self.socket_path,
                   RAPIDRPC_FRONT=f"127.0.0.1:{self.port}")
        for n, inst in enumerate(instances, 1):
            env[f"RAPIDRPC_{n}"] = f"{inst.address}:{inst.port}"
            env[f"RAPIDRPC_{n}_ADMIN"] = str(inst.admin)
        self.log = tempfile.TemporaryFile()
        # -db: stay in the foreground; -W is not needed for one process.
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", CONFIG], env=env,
                                     stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def command(self, line):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall(line.encode() + b"\n")
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        return b"".join(chunks).decode()

    def servers(self):
        """{server name: its `show stat` row} of the backend."""
        text = self.command("show stat").lstrip("# ")
        return {row["svname"]: row for row in csv.DictReader(io.StringIO(text))
                if row["pxname"] == "rapidrpcd" and row["svname"] in SERVERS}

    def status(self, server):
        try:
            return self.servers()[server]["status"]
        except OSError:
            return "unreachable"

    def output(self):
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-4000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


class Load:
    """The four `rapidrpc bench` runs through HAProxy, for `seconds`."""

    def __init__(self, port, seconds):
        self.seconds = seconds
        self.started = time.monotonic()
        self.runs = []
        for protocol, keep_alive in LOADS:
            args = [tool_path(), "bench", "--json", "--duration", str(seconds),
                    "--connections", str(CONNECTIONS), "--rate", str(RATE),
                    "--protocol", protocol, "--expect", "5", "--timeout", "5",
                    "--keep-alive" if keep_alive else "--no-keep-alive",
                    f"http://127.0.0.1:{port}/RPC2", "sample.add", "2", "3"]
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.runs.append((f"{protocol} {'keep-alive' if keep_alive else 'new connections'}",
                              proc))

    def ends_in(self):
        return self.started + self.seconds - time.monotonic()

    def results(self):
        """{name: the bench's JSON summary}."""
        out = {}
        for name, proc in self.runs:
            stdout, stderr = proc.communicate(timeout=self.seconds + 30)
            if proc.returncode not in (0, 1):
                raise AssertionError(f"bench ({name}) exited {proc.returncode}: {stderr.decode()}")
            out[name] = json.loads(stdout)
        return out


@unittest.skipUnless(shutil.which("haproxy"), "haproxy is not installed (scripts/setup.sh --tests)")
class BehindHaproxy(unittest.TestCase):

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rapidrpc-haproxy-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.instances = [Instance(a) for a in ADDRESSES]
        self.addCleanup(stop_all, self.instances)
        for inst in self.instances:
            inst.start()
        self.haproxy = Haproxy(self.instances, self.work)
        self.addCleanup(self.haproxy.stop)
        if not wait_until(lambda: self.haproxy.proc.poll() is not None
                          or all(self.haproxy.status(s) == "UP" for s in SERVERS), 10) \
                or self.haproxy.proc.poll() is not None:
            self.fail(f"HAProxy does not have every instance up: {self.haproxy.output()}")

    def tearDown(self):
        # A normal call on a new connection, through HAProxy and to each
        # instance, is answered within the deadline.
        self.assertLess(add_call("127.0.0.1", self.haproxy.port), SERVE_DEADLINE)
        for inst in self.instances:
            self.assertLess(add_call(inst.address, inst.port), SERVE_DEADLINE)

    def served(self, server):
        """2xx answers HAProxy has had from `server`."""
        return int(self.haproxy.servers()[server]["hrsp_2xx"] or 0)

    def assert_loads_ran(self, results, seconds):
        for name, r in results.items():
            # Most of the scheduled calls were made: the load really ran
            # across the whole fault, not just before it.
            self.assertGreater(r["calls"], RATE * seconds * 0.5, f"{name}: {r}")
            self.assertEqual(r["ok"] + r["errors"]["total"], r["calls"], f"{name}: {r}")

    def test_a_rolling_restart_loses_no_call(self):
        # The load spans the three restarts and a little more: the test
        # fails, asking for a longer load, if they end within a second of
        # it. A restart (down, drained, started, back up) took 4.4 s, 5.4 s
        # in the sanitized build: 14 and 17 s from the load's start, so the
        # rest of a longer load would be waited out for nothing.
        seconds = 22 if SANITIZED else 18
        load = Load(self.haproxy.port, seconds)
        time.sleep(1)
        after_restart = {}
        for inst, server in zip(self.instances, SERVERS):
            signalled = time.monotonic()
            inst.daemon.send_signal(signal.SIGTERM)
            # /readyz says 503 at once: HAProxy takes the instance out within
            # its checks, before the drain delay ends.
            self.assertTrue(wait_until(lambda: self.haproxy.status(server).startswith("DOWN"),
                                       DRAIN_DELAY),
                            f"{server} still {self.haproxy.status(server)} after the drain delay")
            took = time.monotonic() - signalled
            inst.stop()
            inst.start()
            self.assertTrue(wait_until(lambda: self.haproxy.status(server) == "UP", 10),
                            f"{server} not back: {self.haproxy.status(server)}")
            after_restart[server] = self.served(server)
            print(f"{server}: SIGTERM at {signalled - load.started:.1f} s, down {took:.2f} s "
                  f"later, back after {time.monotonic() - signalled:.2f} s", file=sys.stderr)
        self.assertGreater(load.ends_in(), 1.0,
                           "the rolling restart took longer than the load: lengthen the load")
        results = load.results()
        for name, r in results.items():
            failed_at = [round(i * r["timeline"]["slot_s"], 1)
                         for i, n in enumerate(r["timeline"]["errors"]) if n]
            print(f"{name}: {r['calls']} calls, {r['errors']['total']} failed (at {failed_at} s), "
                  f"p99 {r['latency_us']['p99']:.0f} us", file=sys.stderr)
        self.assert_loads_ran(results, seconds)
        for name, r in results.items():
            self.assertEqual(r["errors"]["total"], 0, f"{name}: {r['errors']}, {r['first_error']}")
        # Each instance served again after its restart.
        for server, count in after_restart.items():
            self.assertGreater(self.served(server), count, server)

    def test_an_instance_killed_fails_only_its_calls_in_flight_and_comes_back(self):
        # The kill 2 s in, the instance down at once (the failed connections
        # mark it so), 1 s of nothing sent to it, then back up within
        # HAProxy's two checks: about 5 s, and the load must go on 1.5 s
        # after that.
        seconds = 8
        load = Load(self.haproxy.port, seconds)
        time.sleep(2)
        victim, server = self.instances[1], SERVERS[1]
        killed_at = time.monotonic() - load.started
        victim.sigkill()
        killed = time.monotonic()
        self.assertTrue(wait_until(lambda: self.haproxy.status(server).startswith("DOWN"),
                                   CHECK_INTERVAL + 0.5),
                        f"{server} still {self.haproxy.status(server)}")
        down_after = time.monotonic() - killed
        # Down, it is sent nothing: not even a connection attempt.
        sessions = self.haproxy.servers()[server]["stot"]
        time.sleep(1)
        self.assertEqual(self.haproxy.servers()[server]["stot"], sessions)
        victim.start()
        self.assertTrue(wait_until(lambda: self.haproxy.status(server) == "UP", 10),
                        f"{server} not back: {self.haproxy.status(server)}")
        back = self.served(server)
        self.assertGreater(load.ends_in(), 1.5, "the load ended too soon: lengthen it")
        results = load.results()
        self.assert_loads_ran(results, seconds)
        self.assertGreater(self.served(server), back, f"{server} serves no call after its restart")
        for name, r in results.items():
            print(f"{name}: {r['calls']} calls, {r['errors']['total']} failed "
                  f"({r['first_error']}); {server} down {down_after:.2f} s after the kill",
                  file=sys.stderr)
            # A call in flight on the killed instance is one per client
            # connection at most, and it fails as the instance dies: every
            # failure lies in the timeline's slots around the kill (0.1 s
            # each; the load started a few ms after `load.started`).
            self.assertLessEqual(r["errors"]["total"], CONNECTIONS, f"{name}: {r['errors']}")
            slot = r["timeline"]["slot_s"]
            for i, n in enumerate(r["timeline"]["errors"]):
                if n:
                    self.assertLessEqual(abs(i * slot - killed_at), 0.5,
                                         f"{name}: {n} failed at {i * slot:.1f} s, "
                                         f"the kill was at {killed_at:.1f} s")


if __name__ == "__main__":
    unittest.main()
