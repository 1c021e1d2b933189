"""Slow clients by the thousand, under load.

SLOW (2,000) connections each send the start of a request head and then
trickle one more header byte about every half second, never finishing it:
each holds a connection (and a parser) on the daemon for as long as the
request timeout allows (10 s, the default; the test is over in about 6 s
from the first byte). One thread drives them all, non-blocking, with a
selector that notices any the daemon closes. Meanwhile `rapidrpc bench`
runs sample.add on 4 keep-alive connections for 4 s.

Asserted:
  - the slow clients are really held: the daemon has at least 95 % of them
    open (its descriptors, from /proc) from before the load to its end;
  - the normal calls all succeed (0 errors, at least MIN_CALLS: thousands a
    second is usual), still in the last second, with p99 latency under
    MAX_P99 (generous: a shared 2-core machine, with the trickling client,
    the load tool and the daemon on it; a loop that walked every held
    connection per event, or served them ahead of the ready ones, would be
    far slower);
  - then, with the slow clients still held, a normal call on a new
    connection is answered within 1 s.

Both processes need SLOW descriptors and more: the test raises its soft
RLIMIT_NOFILE to the hard limit before starting the daemon (which inherits
it), and uses fewer slow clients if the hard limit is low (at least
MIN_SLOW, or the test skips, saying why).
"""

import resource
import selectors
import socket
import time
import unittest

import faults
from faults import Bench, harness

SLOW = 2000
MIN_SLOW = 500
DURATION = 4.0
MIN_CALLS = 500
MAX_P99 = 1.0  # seconds
TICK = 0.02  # the trickling client's tick; each client gets a byte every INTERVAL
INTERVAL = 0.5
HEAD = b"POST /RPC2 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nX-Slow: "


def raise_nofile():
    """The soft RLIMIT_NOFILE raised to the hard one; returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class SlowClientsUnderLoad(harness.DaemonTestCase):
    daemon_args = ("--threads", "2")

    @classmethod
    def setUpClass(cls):
        soft = raise_nofile()  # before the daemon starts: it inherits the limit
        cls.slow = min(SLOW, soft - 200)
        if cls.slow < MIN_SLOW:
            raise unittest.SkipTest(f"RLIMIT_NOFILE {soft} leaves room for {cls.slow} slow "
                                    f"clients, fewer than {MIN_SLOW}")
        super().setUpClass()

    def test_thousands_of_slow_clients_do_not_slow_normal_calls(self):
        pid = self.daemon.proc.pid
        base = faults.open_fds(pid)
        sel = selectors.DefaultSelector()
        socks = []
        closed = 0
        bench = None
        try:
            for _ in range(self.slow):
                s = socket.create_connection((harness.HOST, self.daemon.port), timeout=5)
                s.sendall(HEAD)
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ)
                socks.append(s)
            deadline = time.monotonic() + 5
            while faults.open_fds(pid) < base + 0.95 * self.slow and time.monotonic() < deadline:
                time.sleep(0.05)
            held_least = faults.open_fds(pid) - base
            gone = set()

            def trickle(i):
                s = socks[i]
                if s in gone:
                    return
                try:
                    s.send(b"a")
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    gone.add(s)

            bench = Bench(self.daemon.port, "sample.add", "i/20", "i/22", connections=4,
                          duration=DURATION, options=("--expect", "42"))
            cpu0, t0 = faults.cpu_seconds(pid), time.monotonic()
            bench.start()
            per_tick = max(1, int(self.slow * TICK / INTERVAL))
            i = 0
            while bench.running() and time.monotonic() - t0 < DURATION + 10:
                for _ in range(per_tick):
                    trickle(i % self.slow)
                    i += 1
                for key, _ in sel.select(TICK):
                    s = key.fileobj
                    try:
                        data = s.recv(4096)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    # An answer (408) or the end of the connection: it is no
                    # longer held.
                    sel.unregister(s)
                    gone.add(s)
                    closed += 1
                if i % (per_tick * 10) < per_tick:
                    held_least = min(held_least, faults.open_fds(pid) - base)
            r = bench.result()
            cpu = faults.cpu_seconds(pid) - cpu0
            elapsed = time.monotonic() - t0
            held_least = min(held_least, faults.open_fds(pid) - base)
            took = None
            try:
                took = faults.normal_call(self.daemon.port)
            except (OSError, AssertionError, harness.IncompleteResponse) as err:
                fresh_error = err
            summary = faults.describe(r)
            print(f"\n  {self.slow} slow clients ({i} bytes trickled, {closed} closed by the "
                  f"daemon), at least {held_least} held; daemon CPU {cpu:.2f} s in "
                  f"{elapsed:.2f} s\n  {summary}\n  the normal call after: "
                  f"{'failed' if took is None else f'{took * 1000:.1f} ms'}")

            self.assertGreaterEqual(held_least, 0.95 * self.slow,
                                    f"the daemon held only {held_least} of the {self.slow} slow "
                                    f"connections: this tested less than it should")
            self.assertEqual(r["errors"]["total"], 0, summary)
            self.assertGreaterEqual(r["ok"], MIN_CALLS, summary)
            self.assertGreater(faults.ok_in_last(r, 1.0), 0, summary)
            self.assertLess(r["latency_us"]["p99"], MAX_P99 * 1e6, summary)
            if took is None:
                self.fail(f"no normal call within {faults.SERVE_DEADLINE} s on a new connection "
                          f"beside {self.slow} slow clients: {fresh_error!r}\n"
                          f"{self.daemon.diagnostics()}")
        finally:
            if bench is not None:
                bench.stop()
            sel.close()
            for s in socks:
                s.close()
        # Once they are gone, the daemon lets their descriptors go.
        deadline = time.monotonic() + 5
        while faults.open_fds(pid) > base + 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertLessEqual(faults.open_fds(pid), base + 10,
                             "the slow clients' descriptors were not released")
        harness.assert_pool_call_answers(self.daemon)


if __name__ == "__main__":
    harness.main()
