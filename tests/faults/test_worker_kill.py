"""SIGKILL of a worker process under load.

While `rapidrpc bench` keeps every worker busy with load(50000) (about
5-10 ms a call, so a kill lands in the middle of one), the test kills a
worker process with SIGKILL three times, about a second apart, each time
the oldest one (a worker that dies within a second of its start counts as
dying young, and those are replaced ever more slowly: not what is tested
here). Two set-ups, each with its own daemon:

  --isolate --workers 2: the pool's supervised worker processes. A process
    runs one call at a time, so each kill can cost at most the one call it
    was running (fault -32603); the calls waiting in the pool's queue, and
    the connections, are untouched.
  --mode prefork --processes 2: a process serves one connection at a time,
    and the load's connections are keep-alive with one call in flight each,
    so each kill can cost at most that connection's one call (the client
    sees the connection end, and reconnects to the replacement).

So failed calls <= kills, and only the failure a kill explains counts:
faults in isolate, a broken connection in prefork; never a wrong answer,
an HTTP error or a timeout. Every answer is checked against Python's own
Fibonacci number (--expect). Each killed process is replaced (the set of
workers is back to its size, without the killed pid, within 2 s of each
kill) and the daemon logs each death ("... died from signal 9"), no other.
The load keeps being answered after the last kill (calls answered in the
last second of the run), and afterwards a normal call on a new connection
is answered within 1 s and a pool call within 2 s.
"""

import json
import os
import signal
import time

import faults
from faults import Bench, harness

N = 50000  # load(N): milliseconds of CPU in the worker, a 10,450-digit answer
KILLS = 3
# Seconds of load: kills at about 1, 2.2 and 3.4 s, each followed by 1.1 s
# (so the oldest worker is never one that would die young), and after the
# last the load's final second, which must have calls answered.
DURATION = 5.0
REPLACE_DEADLINE = 2.0  # seconds for a killed worker to be replaced


def kill_workers_under_load(test, workers, count, connections, kills=KILLS):
    """Runs the load, kills `kills` of `workers()` ({pid: start}) during it;
    returns (bench summary, killed pids)."""
    expect = json.dumps(harness.fib_str(N))
    bench = Bench(test.daemon.port, "load", f"i/{N}", connections=connections,
                  duration=DURATION, options=("--expect", expect)).start()
    killed = []
    try:
        time.sleep(1.0)
        for _ in range(kills):
            if not bench.running():
                test.fail(f"the load ended before the kills did: {faults.describe(bench.result())}")
            live = workers()
            test.assertEqual(len(live), count, f"workers before a kill: {live}")
            victim = min(live, key=live.get)  # the oldest
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
            test.expected_deaths = len(killed)  # checked against stderr in tearDown
            deadline = time.monotonic() + REPLACE_DEADLINE
            while time.monotonic() < deadline:
                live = workers()
                if victim not in live and len(live) == count:
                    break
                time.sleep(0.01)
            test.assertNotIn(victim, live, f"worker {victim} still there after SIGKILL")
            test.assertEqual(len(live), count,
                             f"worker {victim} not replaced within {REPLACE_DEADLINE} s: {live}\n"
                             f"{test.daemon.stderr_text(2000)}")
            time.sleep(1.1)
        r = bench.result()
    finally:
        bench.stop()
    return r, killed


class WorkerKill:
    """What the isolate and prefork cases share."""

    COUNT = 2  # worker processes
    CONNECTIONS = 2
    # The one kind of failure a kill can explain (an errors field of the
    # summary); every other kind must stay at 0.
    KILL_FAILURE = None

    def workers(self):
        raise NotImplementedError

    def test_sigkill_of_a_worker_costs_at_most_its_call(self):
        r, killed = kill_workers_under_load(self, self.workers, self.COUNT, self.CONNECTIONS)
        summary = faults.describe(r)
        print(f"\n  {len(killed)} kills: {summary}")
        errors = r["errors"]
        self.assertLessEqual(errors["total"], len(killed),
                             f"more calls failed than the killed processes had in flight: {summary}")
        for kind in ("connect", "io", "timeout", "http_status", "bad_response", "fault",
                     "mismatch"):
            if kind != self.KILL_FAILURE:
                self.assertEqual(errors[kind], 0, f"{kind} errors: {summary}")
        self.assertEqual(r["ok"], r["calls"] - errors["total"], summary)
        self.assertGreater(r["ok"], 100, f"too few calls to have tested anything: {summary}")
        self.assertGreater(faults.ok_in_last(r, 1.0), 0,
                           f"no call answered in the last second, after the kills: {summary}")
        # Every worker is up again, none of them a killed one.
        live = self.workers()
        self.assertEqual(len(live), self.COUNT, live)
        self.assertFalse(set(live) & set(killed), live)
        try:
            took = faults.normal_call(self.daemon.port)
        except (OSError, AssertionError, harness.IncompleteResponse) as err:
            self.fail(f"no normal call within {faults.SERVE_DEADLINE} s on a new connection after "
                      f"the kills: {err!r}\n{self.daemon.diagnostics()}")
        print(f"  the normal call after: {took * 1000:.1f} ms")
        harness.assert_pool_call_answers(self.daemon)


class IsolateWorkerKill(WorkerKill, harness.DaemonTestCase):
    daemon_args = ("--isolate", "--workers", "2", "--threads", "2")
    CONNECTIONS = 4  # more calls than workers: the pool's queue is never empty
    KILL_FAILURE = "fault"

    def workers(self):
        return faults.children(self.daemon.proc.pid, cmdline_has="--worker")


class PreforkWorkerKill(WorkerKill, harness.DaemonTestCase):
    daemon_args = ("--mode", "prefork", "--processes", "2")
    # One keep-alive connection per process: a connection beyond the
    # processes would wait in the backlog for the whole run.
    CONNECTIONS = 2
    KILL_FAILURE = "io"

    def workers(self):
        # The children of the supervisor process (the daemon's one child).
        return {pid: start for supervisor in faults.children(self.daemon.proc.pid)
                for pid, start in faults.children(supervisor).items()}


if __name__ == "__main__":
    harness.main()
