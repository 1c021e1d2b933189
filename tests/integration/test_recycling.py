"""Worker processes replaced on purpose, between calls (docs/python.md,
"Worker processes"): --max-requests with --max-requests-jitter under a
continuous `rapidrpc bench`, and --max-worker-lifetime while idle, for
Python workers (--python) and C++ ones (--isolate). Each run checks:
- no call fails while workers are replaced;
- never fewer workers serving than --workers: rapidrpc_worker_processes_up,
  read over and over through the run, never reads below it (a successor
  starts before the worker it replaces leaves);
- one replacement at a time: the daemon says "worker process A ...;
  starting its successor" and "worker process A left" strictly in turn;
- with jitter, the limits spread: each replacement's line gives its limit,
  all within --max-requests .. --max-requests + jitter, not all the same;
- among crashes and calls past --method-timeout, every call gets its own
  answer and every worker killed is counted under its own cause, however
  a replacement under way meets it.
(--max-worker-memory and each cause's count: test_metrics_counts.)
This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""
import collections
import json
import os
import random
import re
import subprocess
import tempfile
import threading
import time
import unittest
import xmlrpc.client

from harness import HOST, Daemon, daemon_path, main, wait_until

SERVICE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_service")
BEGIN_RE = re.compile(r"worker process (\d+) (.*); starting its successor")
LEFT_RE = re.compile(r"worker process (\d+) left; its successor serves")
LIMIT_RE = re.compile(r"answered (\d+) calls \(its limit: (\d+)\)")


def rapidrpc_path():
    return os.environ.get("RAPIDRPC") or os.path.join(os.path.dirname(daemon_path()), "rapidrpc")


def replacements(d):
    """[(pid, why)] of each replacement the daemon `d` has begun, checking
    that each one ended (its worker left) before the next began."""
    begun, open_pid = [], None
    for line in d.stderr_text(limit=10**6).splitlines():
        m = BEGIN_RE.search(line)
        if m:
            assert open_pid is None, f"{line!r} while {open_pid} is being replaced"
            open_pid = m.group(1)
            begun.append((int(m.group(1)), m.group(2)))
        m = LEFT_RE.search(line)
        if m:
            assert m.group(1) == open_pid, f"{line!r}: not the one being replaced"
            open_pid = None
    return begun


class UpWatch(threading.Thread):
    """Reads rapidrpc_worker_processes_up over and over until stopped; .low
    is the lowest reading."""

    def __init__(self, daemon):
        super().__init__(daemon=True)
        self.d = daemon
        self.low = None
        self.reads = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            up = self.d.metric("rapidrpc_worker_processes_up")
            self.low = up if self.low is None else min(self.low, up)
            self.reads += 1
            time.sleep(0.005)

    def stop(self):
        self.done.set()
        self.join(10)


class Recycling(unittest.TestCase):
    def start(self, workers, *args):
        d = Daemon("--admin", f"{HOST}:0", "--workers", str(workers), *args, env_args=False)
        d.start()
        self.addCleanup(d.stop)
        wait_until(lambda: d.metric("rapidrpc_worker_processes_up") == workers, 30,
                   f"{workers} workers up")
        return d

    def bench(self, d, calls, method, *params):
        p = subprocess.run([rapidrpc_path(), "bench", d.url, method, *params, "-c", "8", "-n",
                            str(calls), "--json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return json.loads(p.stdout)

    def under_load(self, d, workers, method, *params):
        """Runs of 10,000 calls until four workers have been replaced (at
        most twelve runs): every call answered, none failed."""
        watch = UpWatch(d)
        watch.start()
        try:
            for _ in range(12):
                result = self.bench(d, 10000, method, *params)
                self.assertEqual(result["errors"]["total"], 0, result["first_error"])
                self.assertEqual(result["ok"], 10000)
                if len(replacements(d)) >= 4:
                    break
        finally:
            watch.stop()
        self.assertGreater(watch.reads, 20)
        self.assertGreaterEqual(watch.low, workers, "fewer workers serving than --workers")

    def jittered(self, d, least, jitter):
        begun = replacements(d)
        limits = []
        for pid, why in begun:
            m = LIMIT_RE.fullmatch(why)
            self.assertIsNotNone(m, why)
            served, limit = int(m.group(1)), int(m.group(2))
            self.assertGreaterEqual(served, limit)
            limits.append(limit)
        self.assertGreaterEqual(len(limits), 4, d.stderr_text())
        self.assertTrue(all(least <= x <= least + jitter for x in limits), limits)
        self.assertGreater(len(set(limits)), 1, f"the limits do not spread: {limits}")

    def test_python_max_requests_with_jitter_under_load(self):
        d = self.start(2, "--python", "service", "--python-path", SERVICE_DIR,
                       "--max-requests", "200", "--max-requests-jitter", "100")
        self.under_load(d, 2, "add", "i/3", "i/5")
        self.jittered(d, 200, 100)

    def test_isolate_max_requests_with_jitter_under_load(self):
        d = self.start(2, "--isolate", "--max-requests", "200", "--max-requests-jitter", "100")
        self.under_load(d, 2, "load", "i/20")
        self.jittered(d, 200, 100)

    def test_python_workers_past_their_lifetime_go_one_at_a_time(self):
        d = self.start(3, "--python", "service", "--python-path", SERVICE_DIR,
                       "--max-worker-lifetime", "0.3")
        watch = UpWatch(d)
        watch.start()
        try:
            # The three started together, so they are due together.
            wait_until(lambda: len(replacements(d)) >= 6, 20, "six replacements")
        finally:
            watch.stop()
        self.assertGreaterEqual(watch.low, 3, "fewer workers serving than --workers")
        for pid, why in replacements(d):
            self.assertRegex(why, r"^has run \d+\.\d s$")
        self.assertNotIn("died", d.stderr_text(limit=10**6))

    def test_a_worker_whose_lifetime_ends_while_it_starts_is_replaced_once_ready(self):
        # Its module takes 0.8 s to import; its lifetime is 0.3 s.
        with tempfile.TemporaryDirectory(prefix="rapidrpc-recycling-") as folder:
            with open(os.path.join(folder, "slow.py"), "w") as f:
                f.write("import os\nimport time\ntime.sleep(0.8)\n\n\n"
                        "def pid() -> int:\n    return os.getpid()\n")
            d = self.start(1, "--python", "slow", "--python-path", folder,
                           "--max-worker-lifetime", "0.3")
            wait_until(lambda: len(replacements(d)) >= 2, 15, "two replacements")


    def test_recycling_among_crashes_and_timeouts(self):
        d = self.start(3, "--python", "service", "--python-path", SERVICE_DIR,
                       "--max-requests", "10", "--max-requests-jitter", "10",
                       "--max-worker-lifetime", "0.4", "--method-timeout", "0.3")
        answers = collections.Counter()
        wrong = []

        def client(seed):
            rnd = random.Random(seed)
            p = xmlrpc.client.ServerProxy(d.url)
            end = time.monotonic() + 8
            while time.monotonic() < end:
                k = rnd.random()
                try:
                    if k < 0.96:
                        a = rnd.randint(0, 1000)
                        got = p.add(a, 1)
                        answers["add"] += 1
                        if got != a + 1:
                            wrong.append((a, got))
                    elif k < 0.98:
                        p.crash()
                        wrong.append("crash answered")
                    else:
                        p.spin(1.0)
                        wrong.append("spin answered within its timeout")
                except xmlrpc.client.Fault as f:
                    answers[f.faultCode] += 1

        threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(wrong, [])
        self.assertGreater(answers[-32603], 0)
        self.assertGreater(answers[-32001], 0)

        def restarts(cause):
            return d.metric("rapidrpc_worker_restarts_total", cause=cause)

        # Each crash and each runaway killed is counted once, as itself.
        wait_until(lambda: restarts("timeout") == answers[-32001], 10,
                   f"{answers[-32001]} restarts for a timeout")
        self.assertEqual(restarts("crash"), answers[-32603])
        log = d.stderr_text(limit=10**7)
        self.assertEqual(log.count("ran past its call's timeout"), answers[-32001])
        self.assertGreater(len(BEGIN_RE.findall(log)), 0, "no replacement under way")
        wait_until(lambda: d.metric("rapidrpc_worker_processes_up") == 3, 10, "3 workers up")


if __name__ == "__main__":
    main()
