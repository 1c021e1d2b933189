"""rapidrpcd under systemd (packaging/systemd, docs/operations.md):

- readiness: with NOTIFY_SOCKET set (a datagram socket this test listens
  on), rapidrpcd sends READY=1 once it serves, RELOADING=1 then READY=1 on
  SIGHUP, and STOPPING=1 when SIGTERM arrives;
- socket activation: under systemd-socket-activate, which holds the port
  and starts rapidrpcd at the first connection, rapidrpcd serves the
  socket it is handed (LISTEN_FDS) instead of binding --port;
- the journal: with standard error the journal's stream (JOURNAL_STREAM
  names it), the library's lines carry their level ("<3>" an error), which
  journald reads as their priority; elsewhere they do not;
- the unit files pass systemd-analyze verify.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import xmlrpc.client

from harness import Daemon, daemon_path, main, reserve_port_below_ephemeral, wait_until
from procs import children

HERE = os.path.dirname(os.path.abspath(__file__))
UNITS = os.path.join(HERE, "..", "..", "packaging", "systemd")


class Notify(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(self.sock.close)
        self.sock.bind(self.path)
        self.sock.settimeout(10)

    def next_message(self):
        return dict(line.split("=", 1) for line in self.sock.recv(4096).decode().splitlines())

    def test_ready_reloading_stopping(self):
        d = Daemon(env={"NOTIFY_SOCKET": self.path}, env_args=False).start()
        try:
            ready = self.next_message()
            self.assertEqual(ready.get("READY"), "1", ready)
            self.assertIn(f":{d.port}", ready.get("STATUS", ""))
            d.send_signal(signal.SIGHUP)
            reloading = self.next_message()
            self.assertEqual(reloading.get("RELOADING"), "1", reloading)
            self.assertTrue(reloading.get("MONOTONIC_USEC", "").isdigit(), reloading)
            self.assertEqual(self.next_message().get("READY"), "1")
            d.send_signal(signal.SIGTERM)
            self.assertEqual(self.next_message().get("STOPPING"), "1")
            self.assertEqual(d.wait(15), 0)
        finally:
            d.stop()


@unittest.skipUnless(shutil.which("systemd-socket-activate"),
                     "no systemd-socket-activate (Debian's systemd package)")
class SocketActivation(unittest.TestCase):
    def test_serves_the_socket_it_is_handed(self):
        # systemd-socket-activate takes no port 0: the port is held by the
        # test until just before it binds it, below the ephemeral range.
        reserved = reserve_port_below_ephemeral()
        port = reserved.getsockname()[1]
        reserved.close()
        # --port 1 would need privileges: the handed socket is served instead.
        proc = subprocess.Popen(
            ["systemd-socket-activate", "-l", f"127.0.0.1:{port}", daemon_path(), "--port", "1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 10
            while True:  # it listens at once, and starts rapidrpcd at the first connection
                try:
                    with xmlrpc.client.ServerProxy(f"http://127.0.0.1:{port}/RPC2") as p:
                        self.assertEqual(p.sample.add(1, 2), 3)
                    break
                except ConnectionRefusedError:
                    self.assertLess(time.monotonic(), deadline, "nothing listens")
                    time.sleep(0.05)
            banner = proc.stdout.readline()
            self.assertIn(f"listening on 127.0.0.1:{port} ", banner)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                _, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, err)


@unittest.skipUnless(shutil.which("systemd-analyze"),
                     "no systemd-analyze (Debian's systemd package)")
class Journal(unittest.TestCase):
    def worker_death_line(self, journal):
        # One worker process, killed: the pool says so (an error) and replaces it.
        d = Daemon("--isolate", "--workers", "1", env_args=False)
        if journal:
            st = os.fstat(d._stderr.fileno())
            d.env = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
        with d.start():
            workers = wait_until(lambda: list(children(d.proc.pid, zombies=False)), 30,
                                 "a worker process")
            os.kill(workers[0], signal.SIGKILL)
            line = wait_until(lambda: next((ln for ln in d.stderr_since(0).splitlines()
                                            if "died from signal 9" in ln), None), 30,
                              "the line saying the worker died")
            return line

    def test_the_librarys_lines_carry_their_level_for_the_journal(self):
        self.assertTrue(self.worker_death_line(True).startswith("<3>rapidrpc: worker process "))

    def test_elsewhere_they_do_not(self):
        self.assertTrue(self.worker_death_line(False).startswith("rapidrpc: worker process "))


class Units(unittest.TestCase):
    def test_units_verify(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(UNITS, "rapidrpcd.service.in")) as f:
            service = (f.read()
                       .replace("@CMAKE_INSTALL_FULL_BINDIR@/rapidrpcd", daemon_path())
                       .replace("@RAPIDRPC_SERVICE_ARGUMENTS@", "--host 127.0.0.1 --port 6677"))
        self.assertNotRegex(service, "@[A-Z_]+@")
        with open(os.path.join(tmp, "rapidrpcd.service"), "w") as f:
            f.write(service)
        shutil.copy(os.path.join(UNITS, "rapidrpcd.socket"), tmp)
        r = subprocess.run(["systemd-analyze", "verify", "--man=no",
                            os.path.join(tmp, "rapidrpcd.service"),
                            os.path.join(tmp, "rapidrpcd.socket")],
                           capture_output=True, text=True, timeout=60)
        ours = [line for line in (r.stdout + r.stderr).splitlines() if "rapidrpcd" in line]
        self.assertEqual(ours, [], r.stdout + r.stderr)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    main()
