"""What signals do besides the first SIGTERM (docs/operations.md, "Signals"
and "Upgrading without losing a call"):

- a second SIGTERM (and a SIGINT, a SIGUSR2, a SIGHUP) during a drain
  changes nothing: the call in flight finishes with its answer, the stop
  is logged once, no upgrade starts, no reload, and the exit status is 0;
  during --drain-delay, a second SIGTERM does not cut the delay short (a
  new connection is still served and the exit comes no earlier than the
  delay), and SIGHUP still reloads;
- a SIGUSR2 successor that never serves (it neither reports nor exits, and
  ignores SIGTERM): the old process serves all along, logs that it did not
  serve within 30 s, ends it (SIGTERM, then SIGKILL 5 s later), says the
  upgrade failed and goes on serving, and still stops on SIGTERM;
- systemd: after a SIGUSR2 upgrade the old process names the successor
  MAINPID= on NOTIFY_SOCKET (a datagram socket bound here, with the
  sender's pid read from SCM_CREDENTIALS), sends no STOPPING=1, and the
  successor's own READY=1 comes first.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import contextlib
import os
import re
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time
import unittest
import xmlrpc.client

from harness import (HOST, Daemon, RawClient, call_body, daemon_path, http_request, main,
                     parse_result, wait_until)

SUCCESSOR_RE = re.compile(r"process (\d+) serves now")
STOP_LOGGED = "received, finishing calls in flight"


def calls_in_flight(d):
    return int(d.metric("rapidrpc_calls_in_flight"))


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_pid(pid, timeout=20):
    """SIGTERMs a process that is not the test's child (a successor) and
    waits for it to go; SIGKILLs it past `timeout`. Returns whether it went
    on SIGTERM."""
    if not pid_alive(pid):
        return True
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        return False
    return True


class SlowCall(threading.Thread):
    """sleep(seconds) on a connection of its own; .result is its answer."""

    def __init__(self, d, seconds):
        super().__init__(daemon=True)
        self.d, self.seconds = d, seconds
        self.result, self.error = None, None
        self.start()

    def run(self):
        try:
            with RawClient(self.d, timeout=30) as c:
                c.send(http_request(call_body("sleep", self.seconds)))
                resp = c.read_response()
            self.result = (resp.status, parse_result(resp.body), resp.connection_tokens())
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.error = err


class SecondSignal(unittest.TestCase):
    def test_a_second_stop_signal_during_the_drain_changes_nothing(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work, True)
        config = os.path.join(work, "rapidrpcd.toml")
        with open(config, "w") as f:
            f.write("drain-timeout = 20\n")
        d = Daemon("--config", config, "--admin", f"{HOST}:0", env_args=False).start()
        self.addCleanup(d.kill)
        call = SlowCall(d, 3)
        wait_until(lambda: calls_in_flight(d) == 1, 10, "the call in flight")
        d.send_signal(signal.SIGTERM)
        wait_until(lambda: STOP_LOGGED in d.stderr_text(), 10, "the drain logged")
        with open(config, "w") as f:
            f.write('drain-timeout = 20\ndeny-method = ["sample.sum"]\n')
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM):
            d.send_signal(sig)
        # The signals came during the drain: the call was still running.
        self.assertTrue(call.is_alive(), "the call ended before the second signals were sent")
        self.assertEqual(d.wait(20), 0, d.diagnostics())
        call.join(30)
        self.assertIsNone(call.error, f"the call in flight: {call.error!r}\n{d.diagnostics()}")
        self.assertEqual(call.result, (200, True, {"close"}))
        log = d.stderr_text()
        self.assertEqual(log.count(STOP_LOGGED), 1, log)
        self.assertNotIn("SIGUSR2", log)  # no upgrade was started
        self.assertNotIn("reload:", log)  # no reload during the drain
        self.assertIn("rapidrpcd: stopped", log)

    def test_a_second_sigterm_during_the_drain_delay_changes_nothing_and_sighup_reloads(self):
        delay = 3.0
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work, True)
        config = os.path.join(work, "rapidrpcd.toml")
        with open(config, "w") as f:
            f.write(f"drain-delay = {delay}\ndrain-timeout = 10\n")
        d = Daemon("--config", config, env_args=False).start()
        self.addCleanup(d.kill)
        signalled = time.monotonic()
        d.send_signal(signal.SIGTERM)
        wait_until(lambda: "serving 3 s more" in d.stderr_text(), 5, "the drain delay logged")
        d.send_signal(signal.SIGTERM)
        d.send_signal(signal.SIGINT)
        # Still serving as before: a new connection is accepted and answered.
        with xmlrpc.client.ServerProxy(d.url) as p:
            self.assertEqual(p.sample.add(2, 3), 5)
        with open(config, "w") as f:
            f.write(f'drain-delay = {delay}\ndrain-timeout = 10\ndeny-method = ["sample.sum"]\n')
        d.send_signal(signal.SIGHUP)
        wait_until(lambda: 'reload: deny-method = ["sample.sum"]' in d.stderr_text(), 5,
                   "the reload during the drain delay")
        with xmlrpc.client.ServerProxy(d.url) as p:
            with self.assertRaises(xmlrpc.client.Fault) as denied:
                p.sample.sum([1, 2])
        self.assertEqual(denied.exception.faultCode, -32002)
        self.assertEqual(d.wait(delay + 15), 0, d.diagnostics())
        self.assertGreaterEqual(time.monotonic() - signalled, delay)
        self.assertEqual(d.stderr_text().count("serving 3 s more"), 1)


class Upgrade(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.work, True)
        self.successors = []
        self.addCleanup(lambda: [stop_pid(p) for p in self.successors])

    def successor_of(self, d):
        m = wait_until(lambda: SUCCESSOR_RE.search(d.stderr_text()), 30,
                       "a successor reported serving")
        pid = int(m.group(1))
        self.successors.append(pid)
        return pid

    def test_a_successor_that_never_serves_leaves_the_old_one_serving(self):
        exe = os.path.join(self.work, "rapidrpcd")
        shutil.copy2(daemon_path(), exe)
        d = Daemon(env_args=False)
        d.args[0] = exe
        d.start()
        self.addCleanup(d.kill)
        # The new binary at the path starts, ignores SIGTERM, and neither
        # serves nor exits: the worst a successor can do.
        marker = os.path.join(self.work, "successor.pid")
        with open(exe + ".new", "w") as f:
            f.write(f"#!/bin/sh\ntrap '' TERM\necho $$ > {marker}\nexec sleep 600\n")
        os.chmod(exe + ".new", 0o755)
        os.rename(exe + ".new", exe)
        d.send_signal(signal.SIGUSR2)
        def started():
            with contextlib.suppress(OSError), open(marker) as f:
                return f.read().strip()

        successor = int(wait_until(started, 10, "the successor started"))
        self.successors.append(successor)
        # Until the upgrade is given up, the old process serves alone.
        served = 0
        while "did not serve within 30 s" not in d.stderr_text():
            self.assertLess(served, 400, "no decision logged after 40 s:\n" + d.stderr_text())
            with xmlrpc.client.ServerProxy(d.url) as p:
                self.assertEqual(p.sample.add(served, 1), served + 1)
            served += 1
            time.sleep(0.1)
        wait_until(lambda: "upgrade failed; this process goes on serving" in d.stderr_text(), 15,
                   "the upgrade given up")
        self.assertFalse(pid_alive(successor), "the successor that never served is still running")
        log = d.stderr_text()
        self.assertIn(f"process {successor} did not serve within 30 s; stopping it", log)
        # SIGTERM did not end it: SIGKILL did.
        self.assertIn(f"process {successor} did not end within 5 s; killing it", log)
        self.assertRegex(log, rf"process {successor} \(.*\) ended by signal 9")
        d.assert_alive()
        with xmlrpc.client.ServerProxy(d.url) as p:
            self.assertEqual(p.sample.add(1, 2), 3)
        d.stop()  # and it still stops on SIGTERM, exit status 0

    def test_the_successor_is_named_mainpid_under_systemd(self):
        path = os.path.join(self.work, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(path)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        sock.settimeout(20)

        def next_message():
            """(sender pid, {field: value})."""
            data, anc, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(struct.calcsize("3i")))
            pid = None
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("3i", cdata[:struct.calcsize("3i")])[0]
            return pid, dict(line.split("=", 1) for line in data.decode().splitlines())

        d = Daemon(env={"NOTIFY_SOCKET": path}, env_args=False).start()
        self.addCleanup(d.kill)
        old = d.proc.pid
        pid, ready = next_message()
        self.assertEqual((pid, ready.get("READY")), (old, "1"), ready)
        d.send_signal(signal.SIGUSR2)
        new = self.successor_of(d)
        self.assertNotEqual(new, old)
        pid, ready = next_message()
        self.assertEqual((pid, ready.get("READY")), (new, "1"), ready)
        pid, handover = next_message()
        self.assertEqual(pid, old, handover)
        self.assertEqual(handover, {"MAINPID": str(new)})
        self.assertEqual(d.wait(20), 0, d.diagnostics())
        # The old process said nothing more: the successor's STOPPING=1,
        # when it stops, is the next message.
        self.assertTrue(stop_pid(new), "the successor did not stop on SIGTERM")
        pid, stopping = next_message()
        self.assertEqual((pid, stopping.get("STOPPING")), (new, "1"), stopping)


if __name__ == "__main__":
    main()
