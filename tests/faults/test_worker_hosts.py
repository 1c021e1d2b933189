"""SIGKILL of a worker host under the seed workload.

A front that runs no pool call itself (`--workers 0 --worker-listen`) on
127.0.0.1 and two worker hosts (`--worker-connect`, 2 calls at once each),
each connecting from a loopback address of its own (127.0.0.21 and
127.0.0.22, libzmq's `tcp://SOURCE;DESTINATION`, so the front's log tells
them apart; loopback addresses, so no network namespace is needed),
under the seed workload through the front: load(150000) (a 31,348-digit
answer, checked against Python's own Fibonacci number), 20 calls at once, a
new connection per call, 160 calls (about 7 s on 2 cores). Once 20 calls
are answered and both hosts are full, one host's process group gets
SIGKILL; 4 s after the kill it starts again.

Asserted: the calls that failed are at most what the killed host was running
(its 2 places), each answered with fault -32603 (none unanswered: no
connection closed, no timeout, no wrong answer, no unfinished call); the front
logs that host, by its address, as gone within 2.5 s of the kill (docs/scale-out.md); calls go on being answered
(by the other host) until the run ends, well after the kill; the restarted
host is connected again and takes calls: once the other host leaves
(SIGTERM, which lets its calls in flight finish), a pool call is answered.
Then a normal call on a new connection within 1 s.
"""

import json
import re
import time
import unittest
import urllib.request

import faults
from faults import Bench, harness

N = 150000
CAPACITY = 2  # calls at once on each host
CALLS = 160
DURATION = 7.0  # about what CALLS take on 2 cores
ENDPOINT_RE = re.compile(rb"worker hosts connect at (\S+)")
ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on (\S+)")
DROP_DEADLINE = 2.5  # docs/scale-out.md: the front stops sending to a lost host within 2.5 s
HOST_ADDRESSES = ("127.0.0.21", "127.0.0.22")


class WorkerHostKill(unittest.TestCase):
    def setUp(self):
        self.daemons = []
        self.front = self.start("--workers", "0", "--worker-listen", f"tcp://{harness.HOST}:*",
                                "--admin", f"{harness.HOST}:0")
        for line in self.front._stdout_lines:
            m = ENDPOINT_RE.search(line)
            if m:
                self.address = m.group(1).decode()
            m = ADMIN_RE.search(line)
            if m:
                self.admin = m.group(1).decode()
        self.hosts = [self.host(0), self.host(1)]
        self.wait_for_log("connected", 2)

    def tearDown(self):
        for d in reversed(self.daemons):
            if d.alive():
                d.stop()
            else:
                d.kill()

    def start(self, *args):
        d = harness.Daemon(*args, env_args=False).start()
        self.daemons.append(d)
        return d

    def host(self, n):
        source = HOST_ADDRESSES[n]
        front = self.address.split("://", 1)[1]
        return self.start("--worker-connect", f"tcp://{source}:0;{front}", "--workers",
                          str(CAPACITY))

    def metric(self, name):
        """A sample of the front's /metrics, summed over its labels."""
        with urllib.request.urlopen(f"http://{self.admin}/metrics", timeout=5) as r:
            text = r.read().decode()
        return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))

    def wait_for_log(self, text, count, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.front.stderr_since(0).count(text) >= count:
                return time.monotonic()
            time.sleep(0.02)
        self.fail(f"the front did not log {text!r} {count} time(s) within {timeout} s:\n"
                  f"{self.front.stderr_text(2000)}")

    def test_sigkill_of_a_host_costs_at_most_its_calls_in_flight(self):
        expect = json.dumps(harness.fib_str(N))
        # A number of calls, not a time: every call made is answered or
        # fails before the run ends.
        bench = Bench(self.front.port, "load", f"i/{N}", connections=20, duration=DURATION,
                      requests=CALLS, options=("--no-keep-alive", "--expect", expect)).start()
        try:
            # Well into the run, with calls in flight on both hosts.
            harness.wait_until(
                lambda: self.metric("rapidrpc_calls_total") >= 20
                and self.metric("rapidrpc_pool_busy_workers") == 2 * CAPACITY,
                30, "20 calls answered and both hosts full")
            doomed = self.hosts[0]
            killed_at = time.monotonic()
            doomed.kill()
            dropped_at = self.wait_for_log(f"worker host {HOST_ADDRESSES[0]} stopped answering", 1)
            time.sleep(max(0.0, 4.0 - (time.monotonic() - killed_at)))
            self.hosts[0] = self.host(0)
            self.wait_for_log(f"worker host {HOST_ADDRESSES[0]} connected", 2)
            r = bench.result()
        finally:
            bench.stop()
        summary = faults.describe(r)
        print(f"\n  kill of a host: {summary}; dropped {dropped_at - killed_at:.2f} s after")
        self.assertLess(dropped_at - killed_at, DROP_DEADLINE)
        errors = r["errors"]
        self.assertLessEqual(errors["total"], CAPACITY,
                             f"more calls failed than the host had in flight: {summary}")
        for kind in ("connect", "io", "timeout", "http_status", "bad_response", "mismatch"):
            self.assertEqual(errors[kind], 0, f"{kind} errors: {summary}")
        self.assertEqual(r["unfinished"], 0, summary)
        self.assertEqual(r["ok"], r["calls"] - errors["total"], summary)
        self.assertGreater(r["ok"], 20, f"too few calls to have tested anything: {summary}")
        # Every call was answered, and the run went on well past the kill:
        # the calls after it went to the other host.
        self.assertGreater(r["elapsed_s"], killed_at - bench.started + 1.0,
                           f"the run ended before the kill: {summary}")
        # The restarted host takes calls: with the other one gone, a pool
        # call is answered, and by it.
        self.hosts[1].stop()
        self.wait_for_log(f"worker host {HOST_ADDRESSES[1]} left", 1)
        harness.assert_pool_call_answers(self.front)
        try:
            took = faults.normal_call(self.front.port)
        except (OSError, AssertionError, harness.IncompleteResponse) as err:
            self.fail(f"no normal call within {faults.SERVE_DEADLINE} s on a new connection after "
                      f"the kill: {err!r}\n{self.front.diagnostics()}")
        print(f"  the normal call after: {took * 1000:.1f} ms")


if __name__ == "__main__":
    harness.main()
