"""The access log's disk full, under load; and a file-size limit it reaches
(FileSizeLimit, at the end).

The access log (--access-log) lives on a tmpfs of 64 KiB mounted for the
test in a private directory (so the test needs root and a kernel that lets
it mount; it skips otherwise, saying why). A few calls show the log works;
then a filler file takes every free block (the next write would get ENOSPC:
checked with statvfs), and `rapidrpc bench` runs sample.add on 4 keep-alive
connections for 4 s while a normal call on a new connection is made every
half second. Then the filler is deleted and ECHO_CALLS echo calls are made.
The scenario runs once; each test asserts one thing about it:

  - calls keep being answered: the load's calls all succeed (0 errors, at
    least MIN_CALLS of them: a few thousand a second is usual, so a writer
    that blocked a loop would show), every normal call during the load
    and one after it answers within 1 s, and the disk stayed full to the
    end of the load;
  - logging resumes once space is free: a failed write latches nothing
    (src/access/access_log.cpp, write_all), so the echo calls made after
    the filler is gone get their lines within 2 s (the writer flushes every
    100 ms);
  - the lost lines are reported: the first failed write puts a line on
    standard error naming the access log;
  - the lost lines are counted: once space is free, a `# N lines dropped`
    line comes before the next lines (docs/access.md), and the sample.add
    lines written plus those counted as dropped are the calls answered
    (those the load counted, the normal calls, and at most the load's calls
    still in flight when it stopped);
  - every line of the log is whole: the last write before the disk fills
    is cut short (a tmpfs page, or a disk block, takes part of it); the
    writer finishes that line before writing anything else, so no line is
    made of two, and every line is a request's or a `#` line.
"""

import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
import unittest

import faults
from faults import Bench, harness

FS_BYTES = 64 * 1024
DURATION = 4.0
MIN_CALLS = 500
ECHO_CALLS = 20
# A whole text line (docs/access.md): TIME PEER USER METHOD STATUS FAULT
# REQUEST_BYTES RESPONSE_BYTES MICROSECONDS.
LINE_RE = re.compile(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \S+ \S+ (?:-|"[^"]*"(?:\.\.\.)?)'
                     rb' \d{3} -?\d+ \d+ \d+ \d+')
# The line saying lines were lost (docs/access.md).
DROPPED_RE = re.compile(rb'# (\d+) lines dropped: [^\n]+')


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(path):
    """Writes a file at `path` until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        block = b"\0" * 4096
        try:
            while True:
                f.write(block)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0")
        except OSError:
            pass


def log_lines(path, method):
    with open(path, "rb") as f:
        return sum(1 for line in f if b'"' + method + b'"' in line)


class AccessLogDiskFull(harness.DaemonTestCase):
    mount = None
    outcome = None  # the scenario's findings, made once for every test

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("mounting a small tmpfs needs root")
        cls.tmp = tempfile.mkdtemp(prefix="rapidrpc-diskfull-")
        mount = os.path.join(cls.tmp, "fs")
        os.mkdir(mount)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES},mode=0700", "tmpfs",
                            mount], capture_output=True, text=True, timeout=10)
        if r.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise unittest.SkipTest(f"cannot mount a tmpfs: {r.stderr.strip()}")
        cls.mount = mount
        cls.log = os.path.join(mount, "access.log")
        cls.filler = os.path.join(mount, "filler")
        cls.daemon_args = ("--access-log", cls.log, "--threads", "2")
        try:
            super().setUpClass()
        except BaseException:
            cls._unmount()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()  # stops the daemon, which holds the log open
        finally:
            cls._unmount()

    @classmethod
    def _unmount(cls):
        if cls.mount is not None:
            r = subprocess.run(["umount", cls.mount], capture_output=True, timeout=10)
            if r.returncode != 0:
                subprocess.run(["umount", "-l", cls.mount], capture_output=True, timeout=10)
            cls.mount = None
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def scenario(self):
        cls = type(self)
        if cls.outcome is not None:
            return cls.outcome
        o = cls.outcome = {}
        with self.proxy() as p:
            for i in range(5):
                self.assertEqual(p.echo(i), i)
        deadline = time.monotonic() + 2
        while log_lines(self.log, b"echo") < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(log_lines(self.log, b"echo"), 5, "the access log does not work at all")

        mark = self.daemon.stderr_bytes()
        fill(self.filler)
        o["free_before"] = free_bytes(self.mount)
        o["log_bytes_full"] = os.path.getsize(self.log)
        bench = Bench(self.daemon.port, "sample.add", "i/20", "i/22", connections=4,
                      duration=DURATION, options=("--expect", "42")).start()
        o["normal_calls"] = []
        try:
            while bench.running():
                o["normal_calls"].append(faults.normal_call(self.daemon.port))
                time.sleep(0.5)
            o["bench"] = bench.result()
        finally:
            bench.stop()
        time.sleep(0.3)  # the last lines of the load reach the writer
        o["free_after"] = free_bytes(self.mount)
        o["log_bytes_after_load"] = os.path.getsize(self.log)
        o["normal_after"] = faults.normal_call(self.daemon.port)
        o["stderr_full"] = self.daemon.stderr_since(mark)

        os.unlink(self.filler)
        with self.proxy() as p:
            for i in range(ECHO_CALLS):
                self.assertEqual(p.echo(f"again {i}"), f"again {i}")
        deadline = time.monotonic() + 2
        while log_lines(self.log, b"echo") < 5 + ECHO_CALLS and time.monotonic() < deadline:
            time.sleep(0.05)
        o["echo_lines"] = log_lines(self.log, b"echo") - 5
        with open(self.log, "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        o["torn"] = [line for line in lines
                     if not LINE_RE.fullmatch(line) and not DROPPED_RE.fullmatch(line)]
        o["dropped"] = sum(int(m.group(1)) for m in map(DROPPED_RE.fullmatch, lines) if m)
        o["add_lines"] = sum(1 for line in lines if b' "sample.add" ' in line)
        print(f"\n  load on a full disk: {faults.describe(o['bench'])}\n"
              f"  normal calls during it: {len(o['normal_calls'])}, slowest "
              f"{max(o['normal_calls'], default=0) * 1000:.1f} ms; after: "
              f"{o['normal_after'] * 1000:.1f} ms\n"
              f"  log {o['log_bytes_full']} bytes when the disk filled, "
              f"{o['log_bytes_after_load']} after the load; {o['echo_lines']} of {ECHO_CALLS} "
              f"lines once space was free; {o['add_lines']} sample.add lines written, "
              f"{o['dropped']} counted as dropped; {len(o['torn'])} broken lines; "
              f"stderr meanwhile: {o['stderr_full'][-300:]!r}")
        return o

    def test_calls_keep_being_answered_on_a_full_disk(self):
        o = self.scenario()
        r = o["bench"]
        summary = faults.describe(r)
        self.assertEqual(o["free_before"], 0, "the filler did not fill the file system")
        self.assertEqual(o["free_after"], 0, "the file system was not full to the end of the load")
        self.assertEqual(r["errors"]["total"], 0, summary)
        self.assertGreaterEqual(r["ok"], MIN_CALLS, summary)
        self.assertGreater(faults.ok_in_last(r, 1.0), 0, summary)
        self.assertGreaterEqual(len(o["normal_calls"]), 4, "too few normal calls during the load")
        # normal_call raised if any took over SERVE_DEADLINE.

    def test_lines_are_written_again_once_space_is_free(self):
        o = self.scenario()
        self.assertEqual(o["echo_lines"], ECHO_CALLS,
                         f"{o['echo_lines']} of the {ECHO_CALLS} calls made after space was freed "
                         "are in the access log")

    def test_lost_lines_are_reported_on_stderr(self):
        o = self.scenario()
        self.assertRegex(o["stderr_full"], re.compile("access log", re.I),
                         "access-log lines were lost to a full disk and nothing said so")

    def test_lost_lines_are_counted_in_the_log(self):
        o = self.scenario()
        r = o["bench"]
        answered = r["calls"] + len(o["normal_calls"]) + 1  # + the normal call after the load
        accounted = o["add_lines"] + o["dropped"]
        self.assertGreater(o["dropped"], 0, "no '# N lines dropped' line after the disk was full")
        self.assertGreaterEqual(accounted, answered,
                                f"{o['add_lines']} sample.add lines written and {o['dropped']} "
                                f"counted as dropped, for {answered} calls answered")
        self.assertLessEqual(accounted, answered + r["unfinished"],
                             f"{o['add_lines']} sample.add lines written and {o['dropped']} "
                             f"counted as dropped, for {answered} calls answered and "
                             f"{r['unfinished']} in flight at the end of the load")

    def test_every_line_is_whole_after_the_disk_was_full(self):
        o = self.scenario()
        self.assertEqual(o["torn"], [], "lines broken by the full disk")

class FileSizeLimit(unittest.TestCase):
    """A file-size limit (ulimit -f, systemd's LimitFSIZE=) that the access
    log reaches: its write fails with EFBIG, which is reported, and the
    calls go on. Without SIGXFSZ ignored, the write past the limit kills
    the daemon. Needs no root."""

    LIMIT = 16 * 1024  # bytes: some 150 lines

    def test_a_file_size_limit_fails_the_write_not_the_daemon(self):
        work = tempfile.mkdtemp(prefix="rapidrpc-fsize-")
        self.addCleanup(shutil.rmtree, work, True)
        log = os.path.join(work, "access.log")
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.LIMIT, hard))
        try:  # the daemon inherits the limit; this process keeps it no longer
            daemon = harness.Daemon("--access-log", log, env_args=False).start()
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        with daemon:
            with harness.make_proxy(daemon.url) as proxy:
                for i in range(400):
                    self.assertEqual(proxy.sample.add(i, 1), i + 1)
            deadline = time.monotonic() + 2
            while "File too large" not in daemon.stderr_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            daemon.assert_alive()
            self.assertIn("cannot write access log", daemon.stderr_text())
            self.assertIn("File too large", daemon.stderr_text())
            self.assertLessEqual(os.path.getsize(log), self.LIMIT)
            faults.normal_call(daemon.port)


if __name__ == "__main__":
    harness.main()
