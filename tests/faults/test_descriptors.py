"""Out of file descriptors under load: `ulimit -n` just above what the
daemon holds.

The daemon (two loop threads) first takes HELD keep-alive connections of
the test's, each answered one call. Then its RLIMIT_NOFILE is lowered with
prlimit to leave ROOM descriptors for new connections, and `rapidrpc bench
--no-keep-alive` runs CLIENTS connections at once, each call sleep(0.2) on
a new connection: far more connections than descriptors, so accept() fails
with EMFILE again and again while the backlog is never empty (the test
checks that the daemon's descriptor table did fill up: otherwise it tested
nothing). test_connections.OutOfDescriptors checks the idle case; this is
the same fault under a continuous load, where every freed descriptor is
taken at once by the next waiting connection.

Asserted:
  - no spinning: the daemon's CPU time over the run stays below MAX_CPU
    of a core (the load's own work, ROOM / 0.2 s = 60 sleep calls a second,
    costs a few percent; an accept loop that retries EMFILE without pausing
    burns a whole core);
  - the accept loop never stops: the load's calls all succeed (0 errors:
    a connection waits in the backlog, it is not refused) and at least
    MIN_SHARE of what ROOM descriptors allow were made (ROOM * 5 calls a
    second: the 100 ms pauses after EMFILE cost some);
  - the connections it holds keep being served: a call on each held
    connection every half second, each answered within 1 s;
  - afterwards the daemon is back at the descriptors it had before the load
    within 5 s (the calls the load abandoned at its end wait in the backlog
    and are served first: about (CLIENTS - ROOM) * 0.2 s / ROOM, half a
    second), and then, with the limit still lowered (the load's descriptors
    are free again, which is what must be enough: nobody restores a limit
    after an EMFILE storm), a normal call on a new connection is answered
    within 1 s, and the held connections still are. The limit is restored
    at the end of the test.
"""

import os
import resource
import time
import unittest

import faults
from faults import Bench, harness
from harness import RawClient, call_body, http_request, parse_result

ROOM = 12  # descriptors left for new connections
HELD = 4  # keep-alive connections taken before the limit is lowered
CLIENTS = 40  # connections of the load at once, each holding a descriptor 0.2 s
SLEEP = 0.2
DURATION = 4.0
MAX_CPU = 0.3  # CPU seconds per second of the run
MIN_SHARE = 0.4


def call_on(client, value, deadline):
    """echo(value) on an open connection, answered within `deadline` s."""
    t0 = time.monotonic()
    client.sock.settimeout(deadline)
    client.send(http_request(call_body("echo", value)))
    resp = client.read_response()
    took = time.monotonic() - t0
    if resp.status != 200 or parse_result(resp.decoded_body()) != value:
        raise AssertionError(f"bad answer on a held connection: {resp!r}")
    if took > deadline:
        raise AssertionError(f"a call on a held connection took {took:.2f} s")
    return took


# UndefinedBehaviorSanitizer needs a free descriptor for its vptr check
# (tests/hostile/test_connections.py, OutOfDescriptors): with none free by
# design, a sanitizer build would report valid objects.
@harness.not_applicable(faults.SANITIZED, "a sanitizer build: UBSan's vptr check needs a free descriptor")
class DescriptorsUnderLoad(harness.DaemonTestCase):
    daemon_args = ("--threads", "2")

    def test_emfile_under_load_neither_spins_nor_stops_serving(self):
        pid = self.daemon.proc.pid
        held = [RawClient(self.daemon, timeout=5) for _ in range(HELD)]
        old = None
        bench = None
        try:
            for i, c in enumerate(held):
                call_on(c, f"held {i}", 5.0)
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            highest = max(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
            base_fds = faults.open_fds(pid)
            limit = highest + 1 + ROOM
            old = resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, hard))

            bench = Bench(self.daemon.port, "sleep", f"d/{SLEEP}", connections=CLIENTS,
                          duration=DURATION, options=("--no-keep-alive", "--expect", "true"))
            cpu0, t0 = faults.cpu_seconds(pid), time.monotonic()
            bench.start()
            most_fds, held_worst, rounds = 0, 0.0, 0
            while bench.running() and time.monotonic() - t0 < DURATION + 10:
                most_fds = max(most_fds, faults.open_fds(pid))
                for i, c in enumerate(held):
                    held_worst = max(held_worst, call_on(c, f"during {rounds} {i}",
                                                         faults.SERVE_DEADLINE))
                rounds += 1
                time.sleep(0.5)
            r = bench.result()
            cpu = faults.cpu_seconds(pid) - cpu0
            elapsed = time.monotonic() - t0
            summary = faults.describe(r)
            print(f"\n  limit {limit} (room {ROOM}), highest descriptors open {most_fds}; "
                  f"CPU {cpu:.2f} s in {elapsed:.2f} s; held connections: {rounds} rounds, "
                  f"slowest {held_worst * 1000:.1f} ms\n  {summary}")

            self.assertGreaterEqual(most_fds, limit - 1,
                                    f"the descriptor table never filled up ({most_fds} open, "
                                    f"limit {limit}): this tested nothing")
            self.assertLess(cpu / elapsed, MAX_CPU,
                            f"{cpu:.2f} s of CPU in {elapsed:.2f} s while out of descriptors: "
                            "the accept loop spins")
            self.assertEqual(r["errors"]["total"], 0, summary)
            floor = MIN_SHARE * ROOM / SLEEP * DURATION
            self.assertGreaterEqual(r["ok"], floor,
                                    f"fewer than {floor:.0f} calls: the accept loop stalled. "
                                    f"{summary}")
            self.assertGreater(faults.ok_in_last(r, 1.0), 0, f"no call in the last second: {summary}")
            self.assertGreaterEqual(rounds, 3, "the held connections were called too rarely")

            # The load is over, but the calls it abandoned at the end of its
            # run are still in the backlog (a connection closed before it is
            # accepted is accepted and answered all the same): once they are
            # through, the daemon is back at the descriptors it had before.
            # The limit is still the lowered one.
            drained = time.monotonic()
            while faults.open_fds(pid) > base_fds and time.monotonic() - drained < 5.0:
                time.sleep(0.02)
            drained = time.monotonic() - drained
            self.assertLessEqual(faults.open_fds(pid), base_fds,
                                 f"the daemon holds {faults.open_fds(pid) - base_fds} more "
                                 "descriptors than before the load, 5 s after it")
            print(f"  back to {base_fds} descriptors {drained * 1000:.0f} ms after the load")
            try:
                took = faults.normal_call(self.daemon.port)
            except (OSError, AssertionError, harness.IncompleteResponse) as err:
                self.fail(f"no normal call within {faults.SERVE_DEADLINE} s on a new connection "
                          f"after the load: {err!r}\n{self.daemon.diagnostics()}")
            print(f"  the normal call after: {took * 1000:.1f} ms")
            for i, c in enumerate(held):
                call_on(c, f"after {i}", faults.SERVE_DEADLINE)
        finally:
            if bench is not None:
                bench.stop()
            for c in held:
                c.close()
            if old is not None:
                resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
        harness.assert_pool_call_answers(self.daemon)


if __name__ == "__main__":
    harness.main()
