"""Reload and binary upgrade without losing a call (docs/operations.md):

- under a continuous `rapidrpc bench` (XML-RPC and JSON-RPC, keep-alive and
  a new connection per call), SIGUSR2 starts a successor from the
  executable's path that takes over the listening sockets (and the admin
  listener's) while the old process drains, and SIGHUP then reloads the
  successor: every call of every bench is answered, and the successor
  serves afterwards;
- the successor is the binary installed at the path now, not the one that
  was running;
- a successor that cannot start leaves the old process serving.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
import xmlrpc.client

from harness import HOST, Daemon, daemon_path, main, reserve_port_below_ephemeral, wait_until

SUCCESSOR_RE = re.compile(r"process (\d+) serves now")
ADMIN_RE = re.compile(rb"admin \(/metrics, /healthz, /readyz\) on \S+:(\d+)")


def rapidrpc_path():
    return os.environ.get("RAPIDRPC") or os.path.join(os.path.dirname(daemon_path()), "rapidrpc")


def calls_total(admin):
    """The sum of rapidrpc_calls_total over its labels, from /metrics."""
    with urllib.request.urlopen(f"http://{HOST}:{admin}/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(float(v) for v in re.findall(r"^rapidrpc_calls_total\{[^}]*\} (\S+)$", text, re.M))


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def stop_pid(pid, timeout=20):
    """SIGTERMs a successor (not the test's child) and waits for it to go."""
    if not pid_alive(pid):
        return True
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        return False
    return True


def wait_successor(d, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = SUCCESSOR_RE.search(d.stderr_since(0))
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError("no successor reported serving:\n" + d.stderr_text())


class Bench(threading.Thread):
    """One `rapidrpc bench` run in the background; .result is its --json summary."""

    def __init__(self, url, seconds, *options):
        super().__init__()
        self.cmd = [rapidrpc_path(), "bench", url, "sample.add", "3", "5", "-d", str(seconds),
                    "--json", *options]
        self.result = None
        self.output = ""

    def run(self):
        p = subprocess.run(self.cmd, capture_output=True, text=True, timeout=120)
        self.output = p.stdout + p.stderr
        try:
            self.result = json.loads(p.stdout)
        except ValueError:
            self.result = None


class Upgrade(unittest.TestCase):
    def setUp(self):
        if not os.access(rapidrpc_path(), os.X_OK):
            self.skipTest("the rapidrpc tool is not built")
        self.successors = []

    def tearDown(self):
        for pid in self.successors:
            stop_pid(pid)

    def start_from(self, exe, *args):
        d = Daemon(*args, env_args=False)
        d.args[0] = exe
        d.start()
        self.addCleanup(self.stop_all, d)
        return d

    def stop_all(self, d):
        for pid in self.successors:
            stop_pid(pid)
        if d.alive():
            d.stop()
        else:
            d.wait(10)

    def test_upgrade_and_reload_under_load_lose_no_call(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work, True)
        exe = os.path.join(work, "rapidrpcd")
        shutil.copy2(daemon_path(), exe)
        config = os.path.join(work, "rapidrpcd.toml")
        with open(config, "w") as f:
            f.write('drain-timeout = 20\n')
        d = self.start_from(exe, "--config", config, "--admin", f"{HOST}:0")
        admin = int(ADMIN_RE.search(b"".join(d._stdout_lines)).group(1))
        url = f"http://{HOST}:{d.port}/RPC2"
        # 3 s of load: the upgrade and the reload, each waiting for 1000
        # calls answered before and after, were done 0.3 s into it (1.1 s
        # in the sanitizer build); what follows only runs the load out.
        benches = [Bench(url, 3, "-c", "8"),
                   Bench(url, 3, "-c", "4", "--no-keep-alive"),
                   Bench(url, 3, "-c", "8", "-P", "jsonrpc"),
                   Bench(url, 3, "-c", "4", "--no-keep-alive", "-P", "jsonrpc")]
        for b in benches:
            b.start()
        # Under load before the upgrade.
        wait_until(lambda: calls_total(admin) >= 1000, 20, "1000 calls answered before SIGUSR2")
        # A new binary at the path: the successor must be it.
        new_exe = exe + ".new"
        shutil.copy2(daemon_path(), new_exe)
        os.rename(new_exe, exe)
        old_pid = d.proc.pid
        d.send_signal(signal.SIGUSR2)
        successor = wait_successor(d)
        self.successors.append(successor)
        self.assertNotEqual(successor, old_pid)
        self.assertEqual(d.wait(25), 0, "the old process did not drain and exit 0:\n"
                         + d.stderr_text())
        self.assertNotIn("(deleted)", os.readlink(f"/proc/{successor}/exe"))
        # The successor under the load (its count starts at 0), then a reload
        # under the same load: the successor reads the file again.
        wait_until(lambda: calls_total(admin) >= 1000, 20, "the successor answering calls")
        with open(config, "w") as f:
            f.write('drain-timeout = 20\ndeny-method = ["sample.sum"]\n')
        os.kill(successor, signal.SIGHUP)
        wait_until(lambda: 'deny-method = ["sample.sum"]' in d.stderr_since(0), 10,
                   "the reload logged")
        # Still under load after the reload.
        after_reload = calls_total(admin)
        wait_until(lambda: calls_total(admin) >= after_reload + 1000, 20,
                   "1000 calls answered after the reload")
        self.assertTrue(pid_alive(successor))
        for b in benches:
            b.join(60)
        for b in benches:
            self.assertIsNotNone(b.result, " ".join(b.cmd) + "\n" + b.output)
            self.assertEqual(b.result["errors"]["total"], 0,
                             " ".join(b.cmd) + ": " + json.dumps(b.result["errors"])
                             + " first error: " + b.result.get("first_error", ""))
            self.assertGreater(b.result["ok"], 100, " ".join(b.cmd))
        # The successor serves calls and the admin listener it took over.
        self.assertEqual(xmlrpc.client.ServerProxy(url).sample.add(20, 22), 42)
        with urllib.request.urlopen(f"http://{HOST}:{admin}/readyz", timeout=10) as r:
            self.assertEqual(r.status, 200)
        with urllib.request.urlopen(f"http://{HOST}:{admin}/metrics", timeout=10) as r:
            self.assertIn(b"rapidrpc_calls_total", r.read())
        self.assertTrue(stop_pid(successor), "the successor did not stop on SIGTERM")

    def test_an_upgrade_reads_the_config_file_anew(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work, True)
        config = os.path.join(work, "rapidrpcd.toml")
        # The first port the kernel chooses; the second, which the successor
        # must bind itself, is held by the test until just before.
        with open(config, "w") as f:
            f.write(f'host = "{HOST}"\nport = 0\n')
        d = Daemon(env_args=False)
        d.args = [daemon_path(), "--config", config]
        d.start()
        self.addCleanup(self.stop_all, d)
        first = d.port
        reserved = reserve_port_below_ephemeral()
        second = reserved.getsockname()[1]
        with open(config, "w") as f:
            f.write(f'host = "{HOST}"\nport = {second}\ndeny-method = ["sample.sum"]\n')
        reserved.close()
        d.send_signal(signal.SIGUSR2)
        self.successors.append(wait_successor(d))
        self.assertEqual(d.wait(20), 0, d.stderr_text())
        self.assertIn(f"the port is now {second}, not {first}", d.stderr_since(0))
        proxy = xmlrpc.client.ServerProxy(f"http://{HOST}:{second}/RPC2")
        self.assertEqual(proxy.sample.add(2, 3), 5)
        with self.assertRaises(xmlrpc.client.Fault) as denied:
            proxy.sample.sum([1, 2])
        self.assertEqual(denied.exception.faultCode, -32002)
        with self.assertRaises(OSError):
            xmlrpc.client.ServerProxy(f"http://{HOST}:{first}/RPC2").sample.add(1, 1)

    def test_a_successor_that_cannot_start_leaves_the_old_one_serving(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work, True)
        exe = os.path.join(work, "rapidrpcd")
        shutil.copy2(daemon_path(), exe)
        d = self.start_from(exe)
        with open(exe + ".new", "w") as f:
            f.write("#!/bin/sh\necho 'not a server' >&2\nexit 3\n")
        os.chmod(exe + ".new", 0o755)
        os.rename(exe + ".new", exe)
        d.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + 20
        while "upgrade failed" not in d.stderr_since(0):
            self.assertLess(time.monotonic(), deadline, d.stderr_text())
            time.sleep(0.05)
        self.assertIn("exited with status 3", d.stderr_since(0))
        d.assert_alive()
        self.assertEqual(d.proxy().sample.add(1, 2), 3)


if __name__ == "__main__":
    main()
