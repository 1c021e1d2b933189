"""Access-log backpressure (docs/access.md, "Writing"): "The writer thread
does the write()s, so a slow disk never blocks a loop ... If more than 16
MiB wait for the disk, new lines are dropped and a line `# N lines dropped:
the log could not keep up` says so."

The access log is a FIFO that the test holds open but does not read, so
the writer thread blocks once the pipe is full. Over 16 MiB of lines (each
about 600 bytes: a JSON-RPC call of an unknown 128-byte method name that the
log writes escaped) are then asked for. Every request must still be
answered while the log is stuck; once the FIFO is read, the log holds the
documented `#` line(s), and its lines plus the dropped counts account for
every request exactly.

Not in fork and prefork: there each child writes its own lines directly,
with no writer thread and nothing dropped (docs/access.md). Not in
sequential: one request per connection would mean 40,000 connections.
"""

import fcntl
import json
import os
import re
import select
import socket
import tempfile
import threading
import time
import unittest

import harness
from harness import HOST, Daemon, http_request, skip_in_modes

# 64 two-byte characters: the 128 bytes the log keeps of a method name,
# each written as \xHH.
METHOD = "\u00e9" * 64
CONNECTIONS = 8
PER_CONNECTION = 5000  # 40,000 requests, about 24 MiB of log lines
BATCH = 250  # requests sent before their answers are read
QUEUE_BYTES = 16 * 2**20  # what may wait for the disk (docs/access.md)
BUFFER_BYTES = 64 * 2**10  # a loop's buffer is handed over at this size
DROPPED_RE = re.compile(rb"^# (\d+) lines dropped: the log could not keep up$")
_LENGTH_RE = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.I)


def count_responses(buf, start):
    """(whole responses in buf[start:], where the next one starts); each must
    be a 200 with a Content-Length."""
    n, pos = 0, start
    while True:
        end = buf.find(b"\r\n\r\n", pos)
        if end < 0:
            return n, pos
        head = bytes(buf[pos:end])
        if not head.startswith(b"HTTP/1.1 200 "):
            raise AssertionError(f"not a 200: {head[:200]!r}")
        m = _LENGTH_RE.search(head)
        if m is None:
            raise AssertionError(f"no Content-Length: {head[:300]!r}")
        stop = end + 4 + int(m.group(1))
        if stop > len(buf):
            return n, pos
        n += 1
        pos = stop


@skip_in_modes(("fork", "prefork"), "each child writes its own lines, with nothing dropped")
@skip_in_modes("sequential", "one request per connection: 40,000 connections")
class AccessLogBackpressure(unittest.TestCase):

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="rapidrpc-log-")
        self.addCleanup(self._dir.cleanup)
        self.fifo = os.path.join(self._dir.name, "access.log")
        os.mkfifo(self.fifo)
        # A reader that does not read (yet): the daemon's open() does not
        # wait, and its writes block once the pipe is full.
        self.reader = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, self.reader)

    def drive(self, port, errors, answered):
        request = http_request(
            json.dumps({"jsonrpc": "2.0", "method": METHOD, "params": [], "id": 1}).encode(),
            headers=[("Content-Type", "application/json")])
        try:
            with socket.create_connection((HOST, port), timeout=30) as s:
                buf, pos, got = bytearray(), 0, 0
                for _ in range(PER_CONNECTION // BATCH):
                    s.sendall(request * BATCH)
                    want = got + BATCH
                    while got < want:
                        chunk = s.recv(1 << 16)
                        if not chunk:
                            raise AssertionError(f"closed after {got} answers")
                        buf += chunk
                        n, pos = count_responses(buf, pos)
                        got += n
                        if pos > (1 << 20):
                            del buf[:pos]
                            pos = 0
                with answered_lock:
                    answered.append(got)
        except Exception as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    def read_log(self, total, timeout=60):
        """Everything in the FIFO until its lines and dropped counts add up
        to `total` (or `timeout` passes): (bytes, lines, dropped, notes)."""
        data = bytearray()
        lines = dropped = 0
        notes = []
        parsed = 0  # data[:parsed] is counted
        deadline = time.monotonic() + timeout
        while lines + dropped < total and time.monotonic() < deadline:
            ready, _, _ = select.select([self.reader], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(self.reader, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                break
            data += chunk
            end = data.rfind(b"\n") + 1
            for line in bytes(data[parsed:end]).split(b"\n")[:-1]:
                m = DROPPED_RE.match(line)
                if m:
                    dropped += int(m.group(1))
                    notes.append(line)
                elif line.startswith(b"#"):
                    raise AssertionError(f"an unexpected # line: {line!r}")
                else:
                    lines += 1
            parsed = max(parsed, end)
        return bytes(data), lines, dropped, notes

    def test_a_stuck_log_drops_lines_says_so_and_serving_goes_on(self):
        d = Daemon("--access-log", self.fifo).start()
        with d:
            errors, answered = [], []
            threads = [threading.Thread(target=self.drive, args=(d.port, errors, answered))
                       for _ in range(CONNECTIONS)]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            took = time.monotonic() - t0
            self.assertEqual(errors, [], f"requests failed while the log was stuck\n{d.diagnostics()}")
            total = sum(answered)
            self.assertEqual(total, CONNECTIONS * PER_CONNECTION)
            # Still serving, with the log still stuck.
            with d.proxy(timeout=10) as p:
                self.assertEqual(p.sample.add(20, 22), 42)
            total += 1
            data, lines, dropped, notes = self.read_log(total)
            print(f"\n  {harness.MODE}: {total} requests answered in {took:.1f} s with the log "
                  f"stuck; the log then gave {len(data) / 2**20:.1f} MiB: {lines} lines, "
                  f"{dropped} dropped in {len(notes)} note(s): {notes[:2]}", flush=True)
            self.assertTrue(notes, "no '# N lines dropped: the log could not keep up' line")
            self.assertGreater(dropped, 0)
            # Every answered request is either logged or counted as dropped.
            self.assertEqual(lines + dropped, total,
                             f"{lines} lines + {dropped} dropped != {total} requests")
            # What was kept: up to the 16 MiB that may wait for the disk
            # (whole buffers of up to 64 KiB each, the queue's and the one
            # being written) and the pipe's contents. No more: past 16 MiB
            # waiting, lines are dropped. (Lines of the loops' last buffers,
            # handed over up to 100 ms late, may come in as the log drains:
            # one buffer a loop, a loop a core at most.)
            pipe = fcntl.fcntl(self.reader, fcntl.F_GETPIPE_SZ)
            loops = os.cpu_count() or 1
            most = QUEUE_BYTES + pipe + loops * BUFFER_BYTES
            print(f"  kept {len(data)} bytes: the bound is {most} (16 MiB + the pipe's {pipe} "
                  f"+ {loops} buffers), {most - len(data)} to spare", flush=True)
            self.assertGreater(len(data), QUEUE_BYTES - BUFFER_BYTES)
            self.assertLessEqual(len(data), most, "more than 16 MiB waited for the disk")
            escaped = "".join(f"\\x{b:02x}" for b in METHOD.encode())
            self.assertIn(f'"{escaped}"'.encode(), data[:4096])
            # Whatever the stop writes still has a reader.
            threading.Thread(target=self.drain_fifo, daemon=True).start()

    def drain_fifo(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if os.read(self.reader, 1 << 20) == b"":
                    return
            except BlockingIOError:
                time.sleep(0.05)
            except OSError:
                return


answered_lock = threading.Lock()

if __name__ == "__main__":
    harness.main()
