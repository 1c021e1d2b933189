"""Process lifecycle: graceful stop on SIGTERM/SIGINT with calls in flight,
and command-line errors."""

import concurrent.futures as cf
import signal
import socket
import subprocess
import sys
import time
import unittest

import harness
from harness import (Daemon, RawClient, call_body, concurrent_exchanges, http_request,
                     parse_result, skip_in_modes)

# Calls in flight at SIGTERM are answered; connections the daemon has not
# accepted yet (beyond what it serves at once: 1 in sequential, --processes in
# fork and prefork) wait in the kernel's accept backlog, and closing the
# listener resets them. So the graceful-stop tests put at most that many calls
# in flight.
CAPACITY = harness.capacity()

# An admin listener, whose rapidrpc_calls_in_flight tells a test when the
# daemon has read the calls it sent (Daemon.wait_for_calls): a request still
# unread in its socket is an idle connection to the daemon, which a stop
# closes, so a test signals only once its calls are in.
ADMIN = ("--admin", f"{harness.HOST}:0")


def report(msg):
    print(f"\n  {msg}", file=sys.stderr, flush=True)


def in_flight(n):
    return n if CAPACITY is None else min(n, CAPACITY)


# How long the in-flight sleeps last: longer than fork/prefork's 2 s idle
# timeout, which must not cut off a call in progress.
IN_FLIGHT_SLEEP = 2.0

# fork and prefork children close an idle connection after 2 s, checked by a
# once-a-second sweep, so by 3 s; they are not told of the stop.
PROCESS_IDLE_TIMEOUT = 3.0
# How soon an idle connection must be closed (and an idle daemon gone) after
# SIGTERM, or after PROCESS_IDLE_TIMEOUT in fork and prefork: far below the
# drain deadline (30 s in these tests), with room for a loaded machine and
# the once-a-second sweep.
IDLE_STOP_BOUND = 1.5


class GracefulStop(unittest.TestCase):

    def start(self, *args):
        d = Daemon(*args).start()
        self.addCleanup(d.kill)
        return d

    def test_sigterm_lets_in_flight_sleeps_finish(self):
        d = self.start(*ADMIN)
        req = http_request(call_body("sleep", IN_FLIGHT_SLEEP))
        n = in_flight(8)
        signalled = []

        def on_sent():
            d.wait_for_calls(n)  # the calls have reached the server
            d.send_signal(signal.SIGTERM)
            signalled.append(time.monotonic())

        results, done, t0 = concurrent_exchanges(d.port, [req] * n, 30.0, on_sent)
        for r in results:
            self.assertIsInstance(r, harness.RawResponse, f"{r!r}\n{d.diagnostics()}")
            self.assertEqual(r.status, 200, r)
            self.assertIs(parse_result(r.body), True)
        self.assertGreaterEqual(min(done) - t0, IN_FLIGHT_SLEEP - 0.1)
        status = d.wait(harness.STOP_TIMEOUT)
        self.assertEqual(status, 0, f"exit status after SIGTERM\n{d.diagnostics()}")

    def test_sigterm_during_100_in_flight_sleeps(self):
        # Acceptance: SIGTERM while 100 sleep(2) calls are in flight (as many
        # as the mode serves at once in sequential, fork and prefork). Every
        # call is answered with its result, new connections are refused from
        # the signal on, and the daemon exits 0 within the drain deadline.
        drain = 5.0
        d = self.start("--drain-timeout", str(drain), *ADMIN)
        n = in_flight(100)
        req = http_request(call_body("sleep", IN_FLIGHT_SLEEP))
        refused = []
        signalled = []

        def on_sent():
            d.wait_for_calls(n)  # the calls have reached the server
            d.send_signal(signal.SIGTERM)
            signalled.append(time.monotonic())
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                try:
                    socket.create_connection((harness.HOST, d.port), timeout=1).close()
                except (ConnectionRefusedError, ConnectionResetError, TimeoutError):
                    # (Reset: it reached the backlog as the listener closed.
                    # Timeout: its SYN was dropped, so not accepted either;
                    # seen once in --isolate mode, not yet explained.)
                    refused.append(time.monotonic() - signalled[0])
                    return
                time.sleep(0.02)

        results, done, t0 = concurrent_exchanges(d.port, [req] * n, 30.0, on_sent)
        for r in results:
            self.assertIsInstance(r, harness.RawResponse, f"{r!r}\n{d.diagnostics()}")
            self.assertEqual(r.status, 200, r)
            self.assertIs(parse_result(r.body), True)
            if harness.MODE not in harness.PROCESS_MODES:
                # (A fork/prefork child is not told of the stop: it closes
                # the connection after its 2 s idle timeout instead.)
                self.assertIn("close", r.connection_tokens(), r)
        self.assertEqual(len(results), n)
        self.assertGreaterEqual(min(done) - t0, IN_FLIGHT_SLEEP - 0.1)
        if harness.MODE != "prefork":
            # (A busy prefork worker keeps its copy of the listening sockets
            # until its connection ends, so the kernel still queues new
            # connections, which are reset when the last worker exits.)
            self.assertTrue(refused, "a new connection was still accepted 1 s after SIGTERM")
        status = d.wait(max(0.1, drain + 1.0 - (time.monotonic() - signalled[0])))
        self.assertEqual(status, 0, f"no exit 0 within the drain deadline\n{d.diagnostics()}")

    @skip_in_modes(("async", "sequential") + harness.PROCESS_MODES,
                   "no worker queue: while a load runs inline (async, sequential) or holds every "
                   "process (fork, prefork), the other calls wait in the kernel's accept "
                   "backlog, which SIGTERM closes (those clients are reset)")
    def test_sigterm_lets_in_flight_and_queued_loads_finish(self):
        # One worker: when SIGTERM comes, one load runs and the others wait in
        # the queue; every accepted call must still be answered. SIGTERM
        # comes once the daemon has all four. (A drain of 60 s: one load
        # took 3 s in the sanitized suite, so the four together came near
        # the default 10 s, and the last was cut off at the deadline.)
        d = self.start("--workers", "1", "--drain-timeout", "60", *ADMIN)
        expected = harness.fib_fast(400000)
        reqs = [http_request(call_body("load", 400000))] * 3 + \
               [http_request(call_body("sleep", 1.0))]

        def on_sent():
            d.wait_for_calls(len(reqs))
            d.send_signal(signal.SIGTERM)

        results, _, _ = concurrent_exchanges(d.port, reqs, 60.0, on_sent)
        for r in results:
            self.assertIsInstance(r, harness.RawResponse, f"{r!r}\n{d.diagnostics()}")
            self.assertEqual(r.status, 200, r)
        self.assertEqual([parse_result(r.body) for r in results[:3]], [expected] * 3)
        self.assertIs(parse_result(results[3].body), True)
        self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())

    # Regression: a stop during an inline call longer than the loop's 1 s
    # sweep hung the daemon for good (the sweep re-armed after the loop ended).
    def test_sigterm_lets_an_in_flight_pool_call_finish(self):
        # Every mode: a pool method in flight at SIGTERM is answered wherever
        # it runs (worker thread or process, inline, a prefork/fork process),
        # and the daemon then exits within --drain-timeout.
        d = self.start("--enable-test-methods", "--drain-timeout", "3")

        def on_sent():
            time.sleep(0.3)
            d.send_signal(signal.SIGTERM)

        results, done, t0 = concurrent_exchanges(
            d.port, [http_request(call_body("test.spin", 1.2))], 30.0, on_sent)
        self.assertIsInstance(results[0], harness.RawResponse, f"{results[0]!r}\n{d.diagnostics()}")
        self.assertEqual(results[0].status, 200, results[0])
        self.assertIs(parse_result(results[0].body), True)
        self.assertGreaterEqual(done[0] - t0, 1.15)
        status = d.wait(3.0 + 3.0)
        self.assertEqual(status, 0, f"no exit within --drain-timeout 3 (+3 s) of SIGTERM, with the "
                                    f"call answered at {done[0] - t0:.2f} s\n{d.diagnostics()}")

    def test_sigterm_with_server_proxy_clients(self):
        d = self.start()

        def call():
            with d.proxy() as p:
                return p.sleep(IN_FLIGHT_SLEEP)
        n = in_flight(5)
        with cf.ThreadPoolExecutor(max_workers=n) as pool:
            futures = [pool.submit(call) for _ in range(n)]
            time.sleep(0.7)
            d.send_signal(signal.SIGTERM)
            self.assertEqual([f.result(timeout=30) for f in futures], [True] * n)
        self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())

    def test_sigint_idle(self):
        d = self.start()
        with d.proxy() as p:
            self.assertEqual(p.echo(1), 1)
        d.stop(signal.SIGINT)

    @skip_in_modes("sequential", "every connection is closed after its response: none is idle")
    def test_sigterm_with_idle_keep_alive_connection_stops_at_once(self):
        # An idle connection must not delay the stop: with a 30 s drain
        # deadline, the daemon exits within IDLE_STOP_BOUND of SIGTERM (in
        # fork and prefork, once the child has closed it after its 2 s idle
        # timeout, counted from the last request).
        d = self.start("--drain-timeout", "30")
        with RawClient(d) as c:
            c.send(http_request(call_body("echo", 1)))
            self.assertEqual(parse_result(c.read_response().body), 1)
            t_last = time.monotonic()
            time.sleep(0.2)
            t0 = time.monotonic()
            d.stop(timeout=15)  # asserts exit status 0
            took = time.monotonic() - t0
            if harness.MODE in harness.PROCESS_MODES:
                took = time.monotonic() - t_last - PROCESS_IDLE_TIMEOUT
            report(f"{harness.MODE}: stop with an idle connection: {took:.2f} s"
                   + (" past the idle timeout" if harness.MODE in harness.PROCESS_MODES else ""))
            self.assertLess(took, IDLE_STOP_BOUND,
                            f"the stop took {took:.2f} s with an idle connection open "
                            f"(--drain-timeout 30): it waited for the idle connection")

    @skip_in_modes("sequential", "every connection is closed after its response: none is idle")
    def test_sigterm_closes_an_idle_connection_while_a_call_is_in_flight(self):
        # The daemon itself closes the idle connection at SIGTERM (in fork
        # and prefork, its child at the 2 s idle timeout), while a call on
        # another connection keeps the daemon running: not the kernel at exit.
        d = self.start("--drain-timeout", "30")
        sleep = 5.0 if harness.MODE in harness.PROCESS_MODES else 3.0
        with RawClient(d) as idle, RawClient(d, timeout=30) as busy:
            idle.send(http_request(call_body("echo", 1)))
            self.assertEqual(parse_result(idle.read_response().body), 1)
            t_last = time.monotonic()
            busy.send(http_request(call_body("sleep", sleep)))
            time.sleep(0.3)  # the sleep has reached the server
            d.send_signal(signal.SIGTERM)
            t_signal = time.monotonic()
            closed = idle.at_eof(sleep)
            t_eof = time.monotonic()
            self.assertTrue(closed, f"the idle connection was still open {sleep} s after SIGTERM")
            self.assertTrue(d.alive(), "the daemon had exited when the idle connection closed")
            busy.sock.settimeout(0)
            try:
                early = busy.sock.recv(1)
            except BlockingIOError:
                early = None
            self.assertIsNone(early, "the call in flight was answered (or cut off) before the "
                                     "idle connection closed")
            report(f"{harness.MODE}: idle connection closed {t_eof - t_signal:.2f} s after SIGTERM "
                   f"({t_eof - t_last:.2f} s after its last request), the daemon running")
            if harness.MODE in harness.PROCESS_MODES:
                self.assertLess(t_eof - t_last, PROCESS_IDLE_TIMEOUT + IDLE_STOP_BOUND,
                                "the idle connection outlived the 2 s idle timeout (and its sweep)")
            else:
                self.assertLess(t_eof - t_signal, IDLE_STOP_BOUND,
                                "the idle connection was not closed at SIGTERM")
            busy.sock.settimeout(30)
            resp = busy.read_response()
            self.assertIs(parse_result(resp.body), True)
        self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())

    def test_sigterm_with_stalled_half_request_bounded_by_drain_timeout(self):
        # A client stuck halfway through a request may hold the stop for at
        # most --drain-timeout; then the daemon closes it and exits 0.
        drain = 2.0
        d = self.start("--drain-timeout", str(drain))
        with RawClient(d) as c:
            c.send(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n<metho")
            time.sleep(0.2)
            t0 = time.monotonic()
            d.send_signal(signal.SIGTERM)
            self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())
            elapsed = time.monotonic() - t0
            self.assertLess(elapsed, drain + 1.5, "the stop took longer than --drain-timeout")
            if harness.MODE not in harness.PROCESS_MODES:
                # (A fork/prefork child is not told of the stop; its 2 s idle
                # timeout ends the connection.)
                self.assertGreater(elapsed, drain - 0.2,
                                   "the stalled request was cut off before the drain deadline")
                # The line names the client that held the stop, and how:
                # 6 of its body's 1000 bytes came.
                self.assertRegex(d.stderr_text(),
                                 r"rapidrpc: drain deadline reached; closing 1 connection\(s\): "
                                 r"127\.0\.0\.1:%d mid-request \(\d+ bytes buffered, "
                                 r"994 bytes of its body still to come\)\n"
                                 % c.sock.getsockname()[1])
            try:
                self.assertTrue(c.at_eof(5), "stalled connection left open")
            except ConnectionResetError:
                pass

    @skip_in_modes(("sequential", "fork", "prefork"),
                   "a connection serves one request there, and a child is not told of the stop")
    def test_a_client_reset_mid_request_does_not_hold_the_stop(self):
        # A client sends part of a request and resets the connection. With
        # the daemon stopped meanwhile, the reset comes with the bytes: one
        # wake-up, one read of the bytes (the kernel's count of what is left
        # says nothing of a reset), and no report of the reset after it. The
        # daemon must still see it, or the connection stays mid-request and
        # holds the stop until the drain deadline.
        d = self.start("--drain-timeout", "2")
        with RawClient(d) as c:
            c.send(http_request(call_body("echo", 1)))  # accepted and served first
            self.assertEqual(parse_result(c.read_response().body), 1)
            harness.reset_mid_request_while_stopped(d, [c])
        d.send_signal(signal.SIGTERM)
        self.assertEqual(d.wait(harness.STOP_TIMEOUT), 0, d.diagnostics())
        self.assertNotIn("drain deadline reached", d.stderr_text())


class CommandLine(unittest.TestCase):

    def run_daemon(self, *args):
        try:
            return subprocess.run([harness.daemon_path(), *args], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=10)
        except subprocess.TimeoutExpired as err:
            self.fail(f"rapidrpcd {' '.join(args)} did not exit within 10 s: {err}")

    def test_unknown_option_fails(self):
        r = self.run_daemon("--host", "127.0.0.1", "--port", "0", "--no-such-option")
        self.assertNotEqual(r.returncode, 0)
        self.assertTrue(r.stderr.strip(), "no message on stderr")

    def test_bad_port_fails(self):
        for port in ("notanumber", "70000", "-1"):
            with self.subTest(port=port):
                r = self.run_daemon("--host", "127.0.0.1", "--port", port)
                self.assertNotEqual(r.returncode, 0)
                self.assertTrue(r.stderr.strip(), "no message on stderr")

    def test_port_in_use_fails(self):
        d = Daemon().start()
        try:
            r = self.run_daemon("--host", "127.0.0.1", "--port", str(d.port))
            self.assertNotEqual(r.returncode, 0)
            self.assertTrue(r.stderr.strip(), "no message on stderr")
            self.assertNotIn(b"listening on", r.stdout)
        finally:
            d.stop()

    def test_listening_line_is_the_first_stdout_line(self):
        d = Daemon("--threads", "2", "--workers", "2").start()
        try:
            self.assertRegex(d._stdout_lines[0], rb"listening on 127\.0\.0\.1:\d+")
            with d.proxy() as p:
                self.assertEqual(p.sample.add(1, 1), 2)
        finally:
            d.stop()


if __name__ == "__main__":
    harness.main()
