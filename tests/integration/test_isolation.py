"""Failure isolation and method timeouts, against the real daemon with
--enable-test-methods (test.crash, test.spin, test.throw).

- A crash (test.crash, SIGSEGV in the process running it) under
  `--mode prefork --processes 2` and under `--isolate --workers 2` fails that
  call only: echo calls on other connections at the same time all succeed
  (each sent once, on a raw socket: xmlrpc.client would resend one after a
  reset), a pool call in flight on the other worker (sent before the crash,
  unanswered when the crash reply comes) succeeds, the daemon logs one death,
  and the dead process is replaced within 1 s: both workers then answer pool
  calls at once again.
- `--method-timeout 2` stops a runaway test.spin(30) with fault -32001 within
  3 s in --isolate and in prefork, and the CPU is free again: the daemon's
  process tree (from /proc) stops using CPU.
- In thread mode (the default) the caller gets -32001 but the thread keeps
  spinning (the documented limitation): the daemon goes on using a core
  after the fault.
- test.throw gives -32603 without internal detail; without
  --enable-test-methods the test methods do not exist (-32601).

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import resource
import socket
import sys
import threading
import time
import unittest
import xmlrpc.client

import harness
from procs import children, serving, tree_cpu, wait_for
from harness import (RawClient, call_body, concurrent_exchanges, http_request,
                     parse_fault, parse_result, running_daemon, wait_until)

# test.crash raises SIGSEGV: no core files (in the working directory, the
# source tree) from the daemon's processes, which inherit this limit.
_soft, _hard = resource.getrlimit(resource.RLIMIT_CORE)
resource.setrlimit(resource.RLIMIT_CORE, (0, _hard))

PREFORK = ("--mode", "prefork", "--processes", "2")
ISOLATE = ("--isolate", "--workers", "2")
TEST_METHODS = "--enable-test-methods"
TIMEOUT_FAULT = -32001
INTERNAL_ERROR = -32603


def report(msg):
    print(f"\n  {msg}", file=sys.stderr, flush=True)


def daemon(*args):
    """The daemon with exactly these arguments (RAPIDRPCD_ARGS ignored)."""
    return running_daemon(*args, env_args=False)


# -- the daemon's processes, from /proc (procs.py) ------------------------------

def wait_for_workers(d, count, timeout=5.0):
    pids = wait_for(lambda: (lambda now: now if len(now) == count else None)(serving(d.proc.pid)),
                    time.monotonic() + timeout)
    if not pids:
        raise AssertionError(f"rapidrpcd does not have {count} worker processes "
                             f"(it has {sorted(serving(d.proc.pid))})\n{d.diagnostics()}")
    return pids


def spin_request(seconds):
    # Connection: close, so a finished call does not keep a prefork process
    # for the idle timeout.
    return http_request(call_body("test.spin", seconds), headers=[("Connection", "close")])


# -- crashes ---------------------------------------------------------------------------

class CrashIsolation:
    """Mixin: `args` start a daemon with two worker processes."""

    args = ()
    ECHO_THREADS = 4
    ECHO_CALLS = 100
    # The pool call in flight on the other worker when the crash comes: it
    # spins for this long, far longer than the crash takes to be answered.
    IN_FLIGHT_SPIN = 1.5

    def test_crash_fails_only_that_call_and_the_worker_is_replaced(self):
        with daemon(*self.args, TEST_METHODS) as d:
            workers = wait_for_workers(d, 2)
            stop = threading.Event()
            calls = []  # (start, end, error or None): every echo call, once each
            lock = threading.Lock()

            def echo_loop(k):
                i = 0
                while not stop.is_set():
                    t0 = time.monotonic()
                    err = None
                    try:
                        if harness.call_once(d, "echo", f"{k}-{i}", timeout=10) != f"{k}-{i}":
                            err = "echo returned a wrong value"
                    except Exception as e:  # noqa: BLE001 - reported below
                        err = repr(e)
                    with lock:
                        calls.append((t0, time.monotonic(), err))
                    i += 1

            threads = [threading.Thread(target=echo_loop, args=(k,), daemon=True)
                       for k in range(self.ECHO_THREADS)]
            for th in threads:
                th.start()
            try:
                # Most of the echo calls before the crash, the rest while and
                # after it happens.
                wait_for(lambda: len(calls) >= self.ECHO_CALLS - 20, time.monotonic() + 30)
                # A pool call in flight elsewhere (the other worker) when the
                # crash comes: sent first, unanswered when the crash reply
                # arrives, answered after it.
                cpu = children(d.proc.pid)
                spin = RawClient(d, timeout=20)
                spin.send(spin_request(self.IN_FLIGHT_SPIN))
                t_spin = time.monotonic()
                wait_until(lambda: any(c - cpu.get(p, c) >= 0.05
                                       for p, c in children(d.proc.pid).items()),
                           self.IN_FLIGHT_SPIN / 2, "the pool call spinning in a worker")
                # The crash call, sent exactly once.
                with RawClient(d, timeout=10) as c:
                    t_send = time.monotonic()
                    c.send(http_request(call_body("test.crash"), headers=[("Connection", "close")]))
                    try:
                        resp = c.read_response()
                        outcome = parse_fault(resp.decoded_body())
                    except (harness.IncompleteResponse, ConnectionResetError) as err:
                        outcome = err
                    t_reply = time.monotonic()
                spin.sock.settimeout(0)
                try:
                    early = spin.sock.recv(1)
                except BlockingIOError:
                    early = None
                spin.sock.settimeout(20)
                self.assertIsNone(early, f"the pool call in flight was answered (or cut off: "
                                         f"{early!r}) before the crash reply came, "
                                         f"{(t_reply - t_spin) * 1000:.0f} ms after it was sent")
                try:
                    spin_resp = spin.read_response()
                finally:
                    spin.close()
                t_spun = time.monotonic()
                # Echo calls go on after the crash too.
                wait_for(lambda: len(calls) >= self.ECHO_CALLS
                         and time.monotonic() > t_reply + 0.1, time.monotonic() + 20)
            finally:
                stop.set()
                for th in threads:
                    th.join(15)

            # The crash call: a fault or a closed connection.
            report(f"{self.mode}: test.crash -> {outcome!r} after {(t_reply - t_send) * 1000:.0f} ms")
            self.check_crash_outcome(outcome)
            # The pool call in flight on the other worker: answered, after it.
            self.assertEqual(spin_resp.status, 200, spin_resp)
            self.assertIs(parse_result(spin_resp.decoded_body()), True,
                          "the pool call in flight on the other worker failed")
            self.assertGreater(t_spun, t_reply)
            self.assertGreaterEqual(t_spun - t_spin, self.IN_FLIGHT_SPIN - 0.05)
            # Everything else succeeded, each call sent once.
            errors = [e for _, _, e in calls if e]
            self.assertEqual(errors, [], f"{len(errors)} of {len(calls)} echo calls failed")
            self.assertGreaterEqual(len(calls), self.ECHO_CALLS)
            during = [c for c in calls if c[0] < t_reply and c[1] > t_send]
            before = [c for c in calls if c[1] < t_send]
            after = [c for c in calls if c[0] > t_reply]
            report(f"{self.mode}: {len(calls)} echo calls: {len(before)} before the crash, "
                   f"{len(during)} during, {len(after)} after; all succeeded; the pool call "
                   f"in flight answered {(t_spun - t_reply) * 1000:.0f} ms after the crash reply")
            self.assertTrue(before and after, "the echo calls did not surround the crash")
            # One process died, the one that ran test.crash.
            deaths = harness.DEATH_RE.findall(d.stderr_text())
            self.assertEqual(len(deaths), 1, d.diagnostics())

            # Replaced: the dead process is gone and a new one took its place...
            deadline = t_reply + 1.0
            replaced = wait_for(
                lambda: (lambda now: now if len(now) == 2 and now != workers else None)(
                    serving(d.proc.pid)), deadline)
            self.assertTrue(replaced, f"no replacement worker within 1 s of the crash reply: "
                                      f"before {sorted(workers)}, now "
                                      f"{sorted(serving(d.proc.pid))}\n{d.diagnostics()}")
            self.assertEqual(len(workers & replaced), 1, (workers, replaced))
            # ...and it serves: two pool calls run at once, one on each worker
            # (with one worker, the second would end at 0.6 s).
            results, done, t0 = concurrent_exchanges(d.port, [spin_request(0.3)] * 2, 10.0)
            for r in results:
                self.assertIsInstance(r, harness.RawResponse, f"{r!r}\n{d.diagnostics()}")
                self.assertIs(parse_result(r.body), True)
            took = max(done) - t0
            report(f"{self.mode}: 2 x test.spin(0.3) at once after the crash: {took * 1000:.0f} ms")
            self.assertLess(took, 0.5, "two pool calls did not run in parallel: a worker is missing")


class PreforkCrash(CrashIsolation, unittest.TestCase):
    mode = "prefork"
    args = PREFORK

    def check_crash_outcome(self, outcome):
        # The process serving the connection died with it.
        if isinstance(outcome, xmlrpc.client.Fault):
            self.assertEqual(outcome.faultCode, INTERNAL_ERROR, outcome)
        else:
            self.assertIsInstance(outcome, (harness.IncompleteResponse, ConnectionResetError))


class IsolateCrash(CrashIsolation, unittest.TestCase):
    mode = "async-pool --isolate"
    args = ISOLATE

    def check_crash_outcome(self, outcome):
        # The loop survives the worker: the call fails with -32603.
        self.assertIsInstance(outcome, xmlrpc.client.Fault,
                              "--isolate: a worker crash must fail the call with a fault")
        self.assertEqual(outcome.faultCode, INTERNAL_ERROR, outcome)


# -- timeouts ----------------------------------------------------------------------

class RunawayTimeout:
    """Mixin: `args` start a daemon whose pool calls run in worker processes."""

    args = ()

    def test_runaway_call_times_out_and_frees_the_cpu(self):
        with daemon(*self.args, TEST_METHODS, "--method-timeout", "2") as d:
            root = d.proc.pid
            wait_for_workers(d, 2)
            with RawClient(d, timeout=10) as c:
                t0 = time.monotonic()
                c.send(http_request(call_body("test.spin", 30)))
                # The measurement sees the spin: a child burns a core.
                time.sleep(0.4)
                a = children(root)
                time.sleep(0.5)
                b = children(root)
                grown = {pid: b[pid] - a[pid] for pid in a.keys() & b.keys()}
                spinner = max(grown, key=grown.get)
                # (Only 0.5 s of a core at best, less on a busy machine.)
                self.assertGreater(grown[spinner], 0.1,
                                   f"no worker process is spinning: {grown}\n{d.diagnostics()}")
                resp = c.read_response()
                t_fault = time.monotonic()
            elapsed = t_fault - t0
            fault = parse_fault(resp.decoded_body())
            self.assertEqual(fault.faultCode, TIMEOUT_FAULT, fault)
            self.assertGreater(elapsed, 1.9, "the timeout fault came early")
            self.assertLess(elapsed, 3.0, "no timeout fault within 3 s of --method-timeout 2")

            # The runaway process is gone (killed, or ended itself) and reaped...
            gone = wait_for(lambda: spinner not in children(root), t_fault + 1.0)
            self.assertTrue(gone, f"the spinning process {spinner} is still there 1 s after "
                                  f"the timeout fault")
            # ...so the process tree stops using CPU.
            cpu0 = tree_cpu(root)
            time.sleep(1.0)
            used = tree_cpu(root) - cpu0
            report(f"{self.mode}: test.spin(30) -> fault {fault.faultCode} after {elapsed:.2f} s; "
                   f"spinner pid {spinner} gone; CPU over the next 1 s: {used:.2f} s")
            self.assertLess(used, 0.3, "the daemon's processes keep burning CPU after the timeout")
            # And pool calls are served again.
            with d.proxy(timeout=10) as p:
                self.assertIs(p.test.spin(0), True)


class PreforkTimeout(RunawayTimeout, unittest.TestCase):
    mode = "prefork"
    args = PREFORK


class IsolateTimeout(RunawayTimeout, unittest.TestCase):
    mode = "async-pool --isolate"
    args = ISOLATE


class ThreadTimeout(unittest.TestCase):

    # Seconds test.spin runs: past the fault (within 2 s) and the second of
    # CPU measured after it (the fault came at 1.01 s, beside five sanitized
    # test modules as well); the daemon's stop then waits out the rest.
    SPIN = 3.5

    def test_timeout_fault_while_the_thread_keeps_running(self):
        # The documented limitation (docs/limits.md): a method running on a
        # thread cannot be stopped. The caller gets the fault; the thread
        # spins on until test.spin returns (the daemon's stop waits for it).
        with daemon(TEST_METHODS, "--method-timeout", "1") as d:
            with RawClient(d, timeout=10) as c:
                t0 = time.monotonic()
                c.send(http_request(call_body("test.spin", self.SPIN)))
                resp = c.read_response()
                elapsed = time.monotonic() - t0
            fault = parse_fault(resp.decoded_body())
            # The thread keeps running: the daemon burns CPU after the fault.
            cpu0, w0 = tree_cpu(d.proc.pid), time.monotonic()
            time.sleep(1.0)
            used, window = tree_cpu(d.proc.pid) - cpu0, time.monotonic() - w0
            report(f"threads: test.spin({self.SPIN}) with --method-timeout 1 -> fault "
                   f"{fault.faultCode} after {elapsed:.2f} s; then {used:.2f} s of CPU in "
                   f"{window:.2f} s")
            self.assertEqual(fault.faultCode, TIMEOUT_FAULT, fault)
            self.assertGreater(elapsed, 0.9, "the timeout fault came early")
            self.assertLess(elapsed, 2.0, "no timeout fault within ~2 s of --method-timeout 1")
            self.assertLess(time.monotonic() - t0, self.SPIN, "the measurement outlasted the spin")
            # (A share of a core on a busy two-core machine: well above an
            # idle daemon's nothing.)
            self.assertGreater(used, 0.15, "the thread stopped with the fault: no CPU used after it")


# -- a process serves again after a long inline call -------------------------------------

class ProcessReuse:
    """Mixin: one serving process (`args`); a call that runs inline for longer
    than the loop's 1 s deadline sweep, on a connection the client has
    already half-closed, then the next connection.

    Regression: when an inline call outlasted the loop's once-a-second sweep,
    the sweep's completion could be queued as the connection ended; it then
    re-armed itself after the loop had finished, so the process never served
    another connection (prefork) or never exited (fork).
    """

    args = ()

    def test_next_connection_served_after_a_call_longer_than_a_second(self):
        with daemon(*self.args, "--processes", "1", TEST_METHODS, "--drain-timeout", "1") as d:
            for i in range(2):
                with RawClient(d, timeout=10) as c:
                    c.send(http_request(call_body("test.spin", 1.05)))
                    c.sock.shutdown(socket.SHUT_WR)  # the request is all there is
                    self.assertIs(parse_result(c.read_response().body), True)
                try:
                    with d.proxy(timeout=2) as p:
                        self.assertEqual(p.echo(i), i)
                except (TimeoutError, OSError) as err:
                    self.fail(f"--mode {self.mode} --processes 1: no reply to a call on a new "
                              f"connection within 2 s after a 1.05 s call ({err!r}); "
                              f"processes: {d.processes()}")


class PreforkReuse(ProcessReuse, unittest.TestCase):
    mode = "prefork"
    args = ("--mode", "prefork")


class ForkReuse(ProcessReuse, unittest.TestCase):
    mode = "fork"
    args = ("--mode", "fork")


# -- test methods ----------------------------------------------------------------------

class TestMethods(unittest.TestCase):

    def test_throw_is_internal_error_without_detail(self):
        for args in ((), ISOLATE, PREFORK, ("--mode", "async")):
            with self.subTest(args=args), daemon(*args, TEST_METHODS) as d, d.proxy() as p:
                with self.assertRaises(xmlrpc.client.Fault) as cm:
                    p.test.throw()
                fault = cm.exception
                self.assertEqual(fault.faultCode, INTERNAL_ERROR, fault)
                self.assertIn("internal error", fault.faultString)
                for leak in ("secret", "/etc", "rapidrpc/", "runtime_error", "std::"):
                    self.assertNotIn(leak, fault.faultString)
                self.assertEqual(p.echo("still serving"), "still serving")

    def test_absent_without_the_flag(self):
        for args in ((), ISOLATE):
            with self.subTest(args=args), daemon(*args) as d, d.proxy() as p:
                for name in ("test.crash", "test.spin", "test.throw"):
                    with self.assertRaises(xmlrpc.client.Fault) as cm:
                        getattr(p, name)(*([0] if name == "test.spin" else []))
                    self.assertEqual(cm.exception.faultCode, -32601, (name, cm.exception))
                self.assertFalse([m for m in p.system.listMethods() if m.startswith("test.")])
                self.assertEqual(p.load(10), "55")  # the daemon did not crash

    def test_present_with_the_flag(self):
        with daemon(TEST_METHODS) as d, d.proxy() as p:
            for name in ("test.crash", "test.spin", "test.throw"):
                self.assertIn(name, p.system.listMethods())
            self.assertIs(p.test.spin(0.01), True)


if __name__ == "__main__":
    harness.main()
