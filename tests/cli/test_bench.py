"""`rapidrpc bench` against the real rapidrpcd: counts, checks, modes, JSON."""

import json
import os
import subprocess
import tempfile
import time
import unittest

import clitest
from clitest import EXIT_FAULT, EXIT_OK, EXIT_TRANSPORT, EXIT_USAGE, describe, harness, run_tool


class BenchTest(harness.DaemonTestCase):

    def bench(self, *args, expect_status=EXIT_OK):
        proc = run_tool("bench", "--json", *args)
        self.assertEqual(proc.returncode, expect_status, describe(proc))
        return json.loads(proc.stdout)

    def test_requests_are_counted_and_checked(self):
        r = self.bench("-c", 4, "-n", 500, self.url, "sample.add", "i/3", "i/5")
        self.assertEqual(r["ok"], 500)
        self.assertEqual(r["calls"], 500)
        self.assertEqual(r["errors"]["total"], 0)
        self.assertEqual(r["settings"]["expected"], 8)
        self.assertGreater(r["throughput"], 0)
        lat = r["latency_us"]
        self.assertTrue(0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"],
                        lat)
        self.assertEqual(sum(r["timeline"]["ok"]), 500)

    def test_a_wrong_answer_is_an_error(self):
        r = self.bench("-c", 2, "-n", 100, "--expect", "9", self.url, "sample.add", "i/3", "i/5",
                       expect_status=EXIT_FAULT)
        self.assertEqual(r["ok"], 0)
        self.assertEqual(r["errors"]["mismatch"], 100)
        self.assertIn("unexpected result", r["first_error"])

    def test_a_fault_is_an_error(self):
        # The warm-up call would refuse a faulting method; --expect skips it.
        r = self.bench("-c", 2, "-n", 50, "--expect", "8", self.url, "sample.add", "i/2147483647", "i/1",
                       expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["fault"], 50)
        self.assertIn("fault -32500", r["first_error"])

    def test_warm_up_fault_stops_the_run(self):
        proc = run_tool("bench", "-n", 10, self.url, "no.such.method")
        self.assertEqual(proc.returncode, EXIT_TRANSPORT, describe(proc))
        self.assertIn("fault -32601", proc.stderr)

    def test_structured_results_are_compared(self):
        r = self.bench("-c", 3, "-n", 300, self.url, "echo", '{"a":[1,2.5,"x",null],"b":"8/20240101T00:00:00"}')
        self.assertEqual(r["ok"], 300, r)
        self.assertEqual(r["settings"]["expected"], {"a": [1, 2.5, "x", None], "b": "8/20240101T00:00:00"})

    def test_a_long_expected_result_is_shortened_in_the_text_summary(self):
        # load(20000) is a Fibonacci number of 4,180 digits.
        proc = run_tool("bench", "-c", 1, "-n", 2, self.url, "load", "i/20000")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        line = next(l for l in proc.stdout.splitlines() if "expected result:" in l)
        self.assertRegex(line, r'^  expected result: "\d{32}\.\.\.\d{32}" \(4,180 characters\)$')
        self.assertLess(len(line), 120)
        # the JSON summary keeps the whole value, for machines
        r = self.bench("-c", 1, "-n", 2, self.url, "load", "i/20000")
        self.assertEqual(len(r["settings"]["expected"]), 4180)
        self.assertTrue(line.endswith(r["settings"]["expected"][-32:] + '" (4,180 characters)'))

    def test_localhost_in_any_case_is_the_loopback(self):
        # the library's rule: no resolver, so no /etc/hosts needed either
        url = self.url.replace(harness.HOST, "LocalHost")
        self.assertIn("LocalHost", url)
        r = self.bench("-c", 1, "-n", 20, url, "sample.add", "i/3", "i/5")
        self.assertEqual(r["ok"], 20)

    def test_jsonrpc_protocol(self):
        r = self.bench("-P", "jsonrpc", "-c", 4, "-n", 300, self.url, "sample.add", "i/3", "i/5")
        self.assertEqual(r["ok"], 300)
        self.assertEqual(r["settings"]["expected"], 8)
        r = self.bench("-P", "jsonrpc", "-c", 2, "-n", 20, "--expect", "8", self.url, "sample.add",
                       "i/2147483647", "i/1", expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["fault"], 20)

    def test_no_keep_alive(self):
        r = self.bench("--no-keep-alive", "-c", 4, "-n", 200, self.url, "sample.add", "i/3", "i/5")
        self.assertEqual(r["ok"], 200)
        self.assertFalse(r["settings"]["keep_alive"])

    def test_threads_share_the_connections(self):
        r = self.bench("-t", 2, "-c", 5, "-n", 1001, self.url, "sample.add", "i/1", "i/2")
        self.assertEqual(r["ok"], 1001)
        self.assertEqual(r["settings"]["expected"], 3)

    def test_duration(self):
        r = self.bench("-c", 2, "-d", 1, self.url, "sample.add", "i/3", "i/5")
        # Thousands here; 200 (5 ms a call on each connection) still shows a
        # run that kept calling for its duration, not one that stalled.
        self.assertGreater(r["ok"], 200, r)
        self.assertEqual(r["errors"]["total"], 0, r)
        self.assertGreaterEqual(r["elapsed_s"], 0.9)
        self.assertLess(r["elapsed_s"], 5)

    def test_duration_ends_at_its_deadline(self):
        """Calls still in flight when a timed run ends are abandoned and
        counted apart, not waited for (as wrk does)."""
        start = time.monotonic()
        # No call was answered, so the run exits 1 (nothing measured).
        r = self.bench("-c", 3, "-d", 1, "--timeout", 10, "--expect", "true", self.url, "sleep", "d/3",
                       expect_status=EXIT_FAULT)
        took = time.monotonic() - start
        self.assertLess(took, 2.5)
        self.assertEqual(r["unfinished"], 3, r)
        self.assertEqual(r["ok"], 0)
        self.assertEqual(r["errors"]["total"], 0)
        self.assertEqual(r["elapsed_s"], 1)

    def test_open_loop_rate(self):
        # 200 calls/s for 1.5 s: about 300 calls, however fast the server is.
        r = self.bench("-c", 4, "-r", 200, "-d", 1.5, self.url, "sample.add", "i/3", "i/5")
        self.assertEqual(r["errors"]["total"], 0)
        self.assertGreaterEqual(r["ok"], 270)
        self.assertLessEqual(r["ok"], 305)

    def test_open_loop_counts_waiting_time(self):
        """Coordinated omission: with one connection and calls that take 50 ms,
        100 calls/s cannot be served, and the latency of the later calls
        includes their wait for the connection (from their scheduled start)."""
        r = self.bench("-c", 1, "-r", 100, "-n", 40, "--timeout", 30, self.url, "sleep", "d/0.05")
        self.assertEqual(r["ok"], 40)
        # The last call was scheduled at 0.39 s and finished near 40 * 0.05 = 2 s.
        self.assertGreater(r["latency_us"]["max"], 1_200_000, r["latency_us"])
        self.assertGreater(r["elapsed_s"], 1.8)

    def test_a_connection_idle_past_max_idle_is_opened_anew(self):
        """A server closes a keep-alive connection idle past its timeout,
        whenever its timer says: a call sent on it is then lost unanswered.
        Here rapidrpcd closes connections idle for 1 s (its sweep finds
        them within the next second) and one connection carries a call
        every 2.5 s: with the default --max-idle (1 s) each call goes on a
        new connection and all are answered; with --max-idle 0 the second
        is sent on the connection the server has closed (the third, after
        that error, on a new one)."""
        # The default mode whatever RAPIDRPCD_ARGS says: sequential mode
        # closes every connection after its answer, leaving none idle.
        with harness.running_daemon("--idle-timeout", "1", env_args=False) as d:
            args = ("bench", "--json", "-c", 1, "-r", 0.4, "-d", 5.5, "--expect", 8)
            call = (d.url, "sample.add", "i/3", "i/5")
            fresh = subprocess.Popen([clitest.tool_path(), *map(str, args), *call],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            stale = subprocess.Popen([clitest.tool_path(), *map(str, args), "--max-idle", "0", *call],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            fresh_out, fresh_err = fresh.communicate(timeout=clitest.RUN_TIMEOUT)
            stale_out, stale_err = stale.communicate(timeout=clitest.RUN_TIMEOUT)
        self.assertEqual(fresh.returncode, EXIT_OK, fresh_err)
        r = json.loads(fresh_out)
        self.assertEqual((r["calls"], r["ok"]), (3, 3), r)
        self.assertEqual(r["settings"]["max_idle_s"], 1)
        # What the limit prevents: the server did close the idle connection.
        self.assertEqual(stale.returncode, EXIT_FAULT, stale_err)
        r = json.loads(stale_out)
        self.assertEqual((r["calls"], r["ok"], r["errors"]["io"]), (3, 2, 1), r)

    def test_timeout_is_an_error(self):
        r = self.bench("-c", 2, "-n", 4, "--timeout", 0.2, "--expect", "true", self.url, "sleep", "d/1",
                       expect_status=EXIT_FAULT)
        self.assertEqual(r["errors"]["timeout"], 4)

    def test_text_summary(self):
        proc = run_tool("bench", "-c", 2, "-n", 100, self.url, "sample.add", "i/3", "i/5")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        for word in ("throughput", "p50", "p90", "p99", "p99.9", "max", "100 ok, 0 errors"):
            self.assertIn(word, proc.stdout)

    def test_report_file_is_self_contained(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "report.html")
            self.bench("-c", 2, "-n", 300, "--report", path, self.url, "sample.add", "i/3", "i/5")
            with open(path, encoding="utf-8") as f:
                html = f.read()
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        for chart in ("chart-latency-histogram", "chart-percentiles", "chart-throughput", "chart-latency-time"):
            self.assertIn(f'id="{chart}"', html)
        # No external resources: the only URL is the SVG namespace name.
        for attr in ("src=", "href=", "<script", "<link", "@import", "url("):
            self.assertNotIn(attr, html)
        self.assertNotIn("://", html.replace("http://www.w3.org/2000/svg", "").replace(self.url, ""))


class BenchUsageTest(unittest.TestCase):

    def test_connection_refused_counts_errors(self):
        port = clitest.free_port()
        proc = run_tool("bench", "--json", "-c", 2, "-d", 0.5, "--expect", "8",
                        f"http://127.0.0.1:{port}/RPC2", "sample.add", "i/3", "i/5")
        self.assertEqual(proc.returncode, EXIT_FAULT, describe(proc))
        r = json.loads(proc.stdout)
        self.assertGreater(r["errors"]["connect"], 0)
        self.assertEqual(r["ok"], 0)

    def test_warm_up_needs_a_server(self):
        port = clitest.free_port()
        proc = run_tool("bench", "-n", 5, f"http://127.0.0.1:{port}/RPC2", "sample.add", "i/3", "i/5")
        self.assertEqual(proc.returncode, EXIT_TRANSPORT, describe(proc))

    def test_requests_and_duration_exclude_each_other(self):
        proc = run_tool("bench", "-n", 5, "-d", 1, "http://127.0.0.1:1/RPC2", "x")
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))

    def test_bad_expect_is_a_usage_error(self):
        proc = run_tool("bench", "--expect", "{bad", "http://127.0.0.1:1/RPC2", "x")
        self.assertEqual(proc.returncode, EXIT_USAGE, describe(proc))


if __name__ == "__main__":
    harness.main()
