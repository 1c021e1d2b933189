"""The drain deadline (docs/limits.md: "time calls in flight get after
SIGINT/SIGTERM | 10 s | --drain-timeout | connections cut off"; README and
docs/design.md, "Stopping").

A call still running at the deadline is cut off: its connection closes
without an answer at about --drain-timeout after the signal, and the daemon
exits 0 right then, leaving no process behind, not when the call would have
finished (a 30 s sleep in every mode; a 30 s CPU-bound test.spin where a
process runs it: fork, prefork, --isolate).

A thread cannot be stopped (docs/design.md, "Stopping"): on async-pool's
worker threads the spin's connection is still cut off at the deadline, but
the exit waits until the method returns; in async and sequential the
method blocks the loop itself, so it is answered when it returns (with
Connection: close) and the daemon exits then.
"""

import signal
import time
import unittest

import harness
from harness import (HOST, Daemon, IncompleteResponse, RawClient, call_body, http_request,
                     parse_result, skip_in_modes, wait_until)

DRAIN = 2.0
CALL_SECONDS = 30
# A spin that outlives the drain deadline but keeps the thread tests short.
SPIN = 6
# The loops check the drain deadline with a timer of its own; the process
# modes' supervisor polls every 10 ms. A second and a half covers a loaded
# machine; the call itself would take 30 s.
CUT_LATEST = DRAIN + 1.5
# The exit after the cut: joining the threads and, in a sanitizer build,
# the leak check. (The --isolate pool once gave stuck workers 2 s more.)
EXIT_AFTER_CUT = 1.5


def calls_in_flight(d):
    """rapidrpc_calls_in_flight, from the daemon's admin listener."""
    return int(d.metric("rapidrpc_calls_in_flight"))


class DrainDeadline(unittest.TestCase):

    def start(self, *args):
        d = Daemon("--drain-timeout", str(DRAIN), "--admin", f"{HOST}:0", *args).start()
        self.addCleanup(d.kill)
        return d

    def signal_during(self, d, request):
        """Sends `request`, then SIGTERM once the call runs; returns (the
        answer or None if the connection was cut, seconds from the signal
        to the end of the connection, seconds from the signal to the exit,
        seconds the call ran before the signal)."""
        with RawClient(d, timeout=CALL_SECONDS + 10) as c:
            t_send = time.monotonic()
            c.send(request)
            wait_until(lambda: calls_in_flight(d) == 1, 10, "the call running")
            t_sig = time.monotonic()
            d.send_signal(signal.SIGTERM)
            answer = None
            try:
                answer = c.read_response()
            except (IncompleteResponse, ConnectionResetError):
                pass
            t_cut = time.monotonic() - t_sig
        status = d.wait(CALL_SECONDS + 30)
        t_exit = time.monotonic() - t_sig
        name = request.split(b"<methodName>")[1].split(b"<")[0].decode()
        print(f"\n  {harness.MODE}: {name}: connection ended {t_cut:.2f} s after SIGTERM "
              f"({'answered' if answer else 'cut off'}), exit {status} after {t_exit:.2f} s "
              f"(--drain-timeout {DRAIN})", flush=True)
        self.assertEqual(status, 0, f"exit status after SIGTERM\n{d.diagnostics()}")
        self.assertEqual(self.wait_gone(d), {}, "processes left behind")
        return answer, t_cut, t_exit, t_sig - t_send

    def assert_cut_at_the_deadline(self, answer, t_cut):
        self.assertIsNone(answer, f"the call was answered, not cut off: {answer!r}")
        self.assertGreater(t_cut, DRAIN - 0.1, "the call was cut off before the drain deadline")
        self.assertLess(t_cut, CUT_LATEST, "the call was not cut off at the drain deadline")

    def cut_off(self, d, request):
        answer, t_cut, t_exit, _ = self.signal_during(d, request)
        self.assert_cut_at_the_deadline(answer, t_cut)
        self.assertLess(t_exit - t_cut, EXIT_AFTER_CUT,
                        f"the daemon exited {t_exit:.2f} s after SIGTERM, not at the drain "
                        f"deadline\n{d.diagnostics()}")

    def wait_gone(self, d):
        try:
            wait_until(lambda: not d.processes(), 2.0, "no process of the daemon left")
        except AssertionError:
            pass  # reported by the caller, with the processes
        return d.processes()

    def test_a_sleep_running_at_the_deadline_is_cut_off(self):
        d = self.start()
        self.cut_off(d, http_request(call_body("sleep", CALL_SECONDS)))

    @skip_in_modes(("async-pool", "async", "sequential"),
                   "a method running on a thread cannot be stopped (tested below)")
    def test_a_cpu_bound_call_running_at_the_deadline_is_cut_off(self):
        d = self.start("--enable-test-methods")
        self.cut_off(d, http_request(call_body("test.spin", CALL_SECONDS)))

    @harness.only_in_modes("async-pool", "worker threads: async-pool only")
    def test_a_cpu_bound_call_on_a_thread_is_cut_off_and_the_exit_waits_for_it(self):
        d = self.start("--enable-test-methods")
        answer, t_cut, t_exit, ran = self.signal_during(
            d, http_request(call_body("test.spin", SPIN)))
        self.assert_cut_at_the_deadline(answer, t_cut)
        # The spin had run `ran` seconds at the signal.
        self.assertGreater(t_exit, SPIN - ran - 0.2, "the daemon exited with a thread still running")
        self.assertLess(t_exit, SPIN - ran + EXIT_AFTER_CUT + 1.0)

    @harness.only_in_modes(harness.INLINE_MODES, "methods on the loop: async, sequential")
    def test_a_cpu_bound_call_on_the_loop_is_answered_and_the_exit_follows(self):
        d = self.start("--enable-test-methods")
        answer, t_cut, t_exit, ran = self.signal_during(
            d, http_request(call_body("test.spin", SPIN)))
        self.assertIsNotNone(answer, "the blocked loop's call was cut off")
        self.assertEqual(answer.status, 200, answer)
        self.assertIs(parse_result(answer.body), True)
        self.assertIn("close", answer.connection_tokens(), answer)
        self.assertGreater(t_cut, SPIN - ran - 0.2)
        self.assertLess(t_exit - t_cut, EXIT_AFTER_CUT, "the exit did not follow the answer")


if __name__ == "__main__":
    harness.main()
