"""What docs/design.md promises of the processes the daemon starts.

- Prefork respawn ("Modes"): "A crash costs that connection; the
  supervisor replaces the worker at once, or with a growing delay (up to
  5 s) if workers keep dying young." With one worker, test.crash calls on
  raw sockets (no client that retries) kill it again and again right after
  it starts: the delays the supervisor logs for each replacement are none
  for the first deaths, then double, and stop growing at the cap; a worker
  that has lived a while is again replaced at once. No replacement comes
  before its delay, nor more than 3 s after it (a loaded machine is slow to
  fork). The daemon runs with --respawn-backoff 0.025 and
  --respawn-backoff-max 1 (the defaults, 0.1 and 5 s, would make this wait
  16 s; tests/unit/server/respawn_test.cpp checks them and their schedule).
- `--isolate` workers ("Worker processes"): "Workers inherit no other
  descriptor (posix_spawn with closefrom), so a worker never holds the
  listening port": each worker's /proc/PID/fd holds 0, 1, 2 and the socket
  pair at 3, nothing else, neither at start nor when a worker is replaced
  while clients are connected and the access log is open.
- `--isolate`, an idle worker's death ("Worker processes"): the pool
  notices it before sending a call there and replaces the worker; a call
  sent to a worker that died without reading it goes to another worker.
  After SIGKILL of one idle worker (as the OOM killer sends), or of both,
  every one of 10 calls on raw connections (nothing resent) succeeds, the
  first sent at once; the death is logged, and two workers serve again.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import procs
from harness import (HOST, IncompleteResponse, RawClient, call_body, daemon_path, fib_str,
                     http_request, main, parse_fault, parse_result, running_daemon, wait_until)

# test.crash raises SIGSEGV: no core files from the daemon's processes.
_soft, _hard = resource.getrlimit(resource.RLIMIT_CORE)
resource.setrlimit(resource.RLIMIT_CORE, (0, _hard))

INTERNAL_ERROR = -32603
# The back-off the daemon is given: the n-th quick death in a row (n >= 2)
# waits BACKOFF * 2**n, at most CAP.
BACKOFF, CAP = 0.025, 1.0
# A replacement comes no earlier than its delay (the test's own clock reads
# a death a little after the supervisor's), and on a loaded machine it may
# come well after: the supervisor polls every 20 ms, then a fork, an accept
# and the crash.
EARLY = 0.05
LATE = 3.0


def report(msg):
    print(f"\n  {msg}", file=sys.stderr, flush=True)


def daemon(*args):
    return running_daemon(*args, env_args=False)


def crash(d):
    """test.crash on a new raw connection; returns when the connection ends
    (the worker is dead), asserting no answer came."""
    with RawClient(d, timeout=30) as c:
        c.send(http_request(call_body("test.crash"), headers=[("Connection", "close")]))
        try:
            resp = c.read_response()
        except (IncompleteResponse, ConnectionResetError):
            return time.monotonic()
    raise AssertionError(f"test.crash was answered: {resp!r}")


class PreforkRespawn(unittest.TestCase):

    def test_a_worker_dying_young_again_and_again_is_replaced_ever_later_up_to_5_s(self):
        with daemon("--mode", "prefork", "--processes", "1", "--enable-test-methods",
                    "--respawn-backoff", str(BACKOFF), "--respawn-backoff-max", str(CAP)) as d:
            # The first worker has lived a while: its death is not a young one.
            procs.wait_for(lambda: len(procs.serving(d.proc.pid)) == 1, time.monotonic() + 5)
            time.sleep(1.2)
            # Each crash goes to the worker that replaces the last one, as
            # soon as it is there: the time from one death to the next is
            # the supervisor's delay (plus a fork and a crash).
            deaths = [crash(d)]
            for _ in range(7):
                deaths.append(crash(d))
            delays = [b - a for a, b in zip(deaths, deaths[1:])]
            # A worker that has lived more than a while is replaced at once.
            with RawClient(d, timeout=30) as c:
                c.send(http_request(call_body("sample.add", 20, 22), headers=[("Connection", "close")]))
                self.assertEqual(parse_result(c.read_response().body), 42)
            time.sleep(1.5)
            t = crash(d)
            after_a_long_life = crash(d) - t
            # Every death was seen (the last one within the supervisor's poll),
            # each with the delay the supervisor chose for its replacement.
            line = "died from signal 11; replacing it"
            procs.wait_for(lambda: d.stderr_text(limit=20000).count(line) >= 10, time.monotonic() + 2)
            text = d.stderr_text(limit=20000)
            self.assertEqual(text.count(line), 10, text[-3000:])
            chosen = [float(m.group(1) or 0) for m in
                      re.finditer(r"died from signal 11; replacing it(?: in ([0-9.]+) s)?", text)]
            report(f"prefork --processes 1: delays chosen {chosen} s; between deaths "
                   f"{[round(x, 2) for x in delays]} s; after a worker that lived 1.5 s: "
                   f"{after_a_long_life:.2f} s")

            # The policy, as the supervisor states it: the first deaths are
            # replaced at once...
            self.assertEqual(chosen[:2], [0, 0], chosen)
            # ...then ever later, each delay twice the last...
            self.assertEqual(chosen[2:6], [BACKOFF * 4, BACKOFF * 8, BACKOFF * 16, BACKOFF * 32],
                             f"the delays do not double: {chosen}")
            # ...up to the cap, and no further...
            self.assertEqual(chosen[6:8], [CAP, CAP], chosen)
            # ...and a worker that has lived a while is again replaced at once.
            self.assertEqual(chosen[8], 0, chosen)
            # The supervisor keeps to what it says: no replacement comes
            # before its delay. How much later it comes depends on how busy
            # the machine is (a fork, an accept, the crash), so the bound
            # above is loose.
            observed = delays + [after_a_long_life]
            for said, took in zip(chosen[:7] + [chosen[8]], observed):
                self.assertGreater(took, said - EARLY, f"chosen {chosen}, observed {observed}")
                self.assertLess(took, said + LATE, f"chosen {chosen}, observed {observed}")


    def test_back_off_options_outside_prefork_are_refused(self):
        # Only prefork replaces workers with a back-off: elsewhere the options
        # would be ignored without a word, so the daemon refuses them (exit 2);
        # their defaults, as the packaged config file spells them, start.
        for mode in ("async-pool", "async", "sequential", "fork"):
            for option, value in (("--respawn-backoff", "0.5"), ("--respawn-backoff-max", "1")):
                with self.subTest(mode=mode, option=option):
                    r = subprocess.run([daemon_path(), "--port", "0", "--mode", mode, option, value],
                                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(b"are used with --mode prefork only", r.stderr)
        with daemon("--respawn-backoff", "0.1", "--respawn-backoff-max", "5") as d:
            with d.proxy() as p:
                self.assertEqual(p.sample.add(1, 2), 3)


class IsolateDescriptors(unittest.TestCase):

    def assert_only_the_socket_pair(self, d, where):
        root = d.proc.pid
        listening = procs.listening_inodes(d.port)
        self.assertTrue(listening, "cannot find the listening socket in /proc/net")
        workers = procs.live_children(root)
        self.assertEqual(len(workers), 2, f"{where}: workers {workers}")
        parent_fds = procs.open_fds(root)
        self.assertTrue(any(procs.socket_inode(t) in listening for t in parent_fds.values()),
                        "the daemon does not hold its listening socket (the check would be blind)")
        for pid in workers:
            fds = procs.open_fds(pid)
            self.assertEqual(sorted(fds), [0, 1, 2, 3], f"{where}: worker {pid} holds {fds}")
            self.assertIsNotNone(procs.socket_inode(fds[3]), f"{where}: fd 3 of {pid} is {fds[3]}")
            for n, target in fds.items():
                self.assertNotIn(procs.socket_inode(target), listening,
                                 f"{where}: worker {pid} holds the listening socket at fd {n}")
        return workers

    def test_isolate_workers_hold_only_their_socket_pair(self):
        with tempfile.TemporaryDirectory(prefix="rapidrpc-fds-") as tmp:
            log = os.path.join(tmp, "access.log")
            with daemon("--isolate", "--workers", "2", "--enable-test-methods",
                        "--access-log", log, "--admin", f"{HOST}:0") as d:
                # Once both have started (a sanitized one holds /proc/self/maps
                # while it starts) and said they are ready.
                wait_until(lambda: d.metric("rapidrpc_worker_processes_up") == 2, 10,
                           "two workers ready")
                first = self.assert_only_the_socket_pair(d, "at start")
                # Replace a worker while clients hold connections: the
                # replacement is spawned with those sockets open in the daemon.
                clients = [RawClient(d) for _ in range(4)]
                try:
                    for c in clients:
                        c.send(http_request(call_body("sample.add", 1, 2)))
                        self.assertEqual(parse_result(c.read_response().body), 3)
                    with RawClient(d, timeout=30) as c:
                        c.send(http_request(call_body("test.crash")))
                        fault = parse_fault(c.read_response().body)
                        self.assertEqual(fault.faultCode, INTERNAL_ERROR)
                    procs.wait_for(lambda: len(procs.live_children(d.proc.pid)) == 2
                                   and set(procs.live_children(d.proc.pid)) != set(first)
                                   and d.metric("rapidrpc_worker_processes_up") == 2,
                                   time.monotonic() + 10)
                    later = self.assert_only_the_socket_pair(d, "after a replacement")
                    self.assertNotEqual(set(later), set(first), "no worker was replaced")
                    held = {procs.socket_inode(t) for t in procs.open_fds(d.proc.pid).values()}
                    self.assertGreater(len(held - {None}), 4 + 2,
                                       "the daemon does not hold the client sockets")
                finally:
                    for c in clients:
                        c.close()


class IsolateIdleDeath(unittest.TestCase):

    def ten_calls(self, d):
        for i in range(10):
            with RawClient(d, timeout=30) as c:
                c.send(http_request(call_body("load", 20 + i), headers=[("Connection", "close")]))
                body = c.read_response().body
            self.assertEqual(parse_result(body), fib_str(20 + i), f"call {i}: {body[:300]!r}")

    def kill_idle_workers(self, killed, noticed_first):
        """SIGKILL `killed` of 2 idle workers, then 10 calls. noticed_first:
        the pool must log each death before any call is sent (it watches
        idle workers); else the calls go at once, the first racing the
        kill."""
        with daemon("--isolate", "--workers", "2") as d:
            root = d.proc.pid
            procs.wait_for(lambda: len(procs.live_children(root)) == 2, time.monotonic() + 5)
            workers = sorted(procs.live_children(root))
            self.assertEqual(len(workers), 2, workers)
            self.ten_calls(d)  # both have served, and are idle now
            victims = workers[:killed]
            for pid in victims:
                os.kill(pid, signal.SIGKILL)
            if noticed_first:
                idle_line = "died from signal 9 while idle; replacing it"
                procs.wait_for(lambda: d.stderr_text().count(idle_line) >= killed,
                               time.monotonic() + 2)
                self.assertEqual(d.stderr_text().count(idle_line), killed,
                                 f"an idle worker's death went unnoticed:\n{d.stderr_text()}")
            self.ten_calls(d)
            procs.wait_for(lambda: len(procs.live_children(root)) == 2
                           and not set(victims) & set(procs.live_children(root)),
                           time.monotonic() + 5)
            self.assertEqual(len(procs.live_children(root)), 2,
                             f"the workers were not replaced:\n{d.stderr_text()[-3000:]}")
            self.assertFalse(set(victims) & set(procs.live_children(root)))
            # Idle, or dying as a call reached it (a kill takes effect a
            # little after os.kill returns): logged either way, once.
            text = d.stderr_text()
            self.assertEqual(text.count("died from signal 9"), killed, text[-3000:])
            self.assertNotIn("running this call died", text)

    def test_an_idle_workers_death_is_noticed_then_ten_calls_all_succeed(self):
        self.kill_idle_workers(1, noticed_first=True)

    def test_sigkill_of_one_idle_worker_then_ten_calls_at_once_all_succeed(self):
        self.kill_idle_workers(1, noticed_first=False)

    def test_sigkill_of_both_idle_workers_then_ten_calls_at_once_all_succeed(self):
        self.kill_idle_workers(2, noticed_first=False)


if __name__ == "__main__":
    main()
