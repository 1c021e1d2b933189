"""The Python worker's loop over its socket (python/rapidrpc/_worker.py,
serve_frames): every call frame is answered once and in order however its
bytes arrive (a byte at a time, several frames in one write, a frame of
megabytes in parts), and the loop ends 0 on a clean end of stream, 1 on
one in the middle of a frame or on a frame past the limit. In-process: the
loop runs on a thread, the test writes the host's side of a socketpair."""

import marshal
import os
import socket
import struct
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python"))
from rapidrpc import _worker  # noqa: E402


def call(name, *params):
    body = bytes([_worker.CALL]) + marshal.dumps((name, params), _worker.MARSHAL_VERSION)
    return struct.pack(">I", len(body)) + body


class Frames(unittest.TestCase):
    def setUp(self):
        self.host, worker_end = socket.socketpair()
        self.host.settimeout(10)  # a worker that stops answering fails the test
        self.addCleanup(self.host.close)
        self.addCleanup(worker_end.close)
        self.worker = _worker.Worker({"add": lambda a, b: a + b, "echo": lambda v: v})
        self.status = None

        def serve():
            self.status = _worker.serve_frames(self.worker, worker_end.fileno())

        self.loop = threading.Thread(target=serve, daemon=True)
        self.loop.start()
        self.received = b""
        self.assertEqual(self.answer(), _worker.HELLO)  # ready

    def answer(self):
        """The next answer frame's body."""
        while len(self.received) < 4 or len(self.received) < 4 + struct.unpack_from(
                ">I", self.received)[0]:
            chunk = self.host.recv(1 << 20)
            self.assertTrue(chunk, "the worker closed its socket")
            self.received += chunk
        n = struct.unpack_from(">I", self.received)[0]
        body, self.received = self.received[4:4 + n], self.received[4 + n:]
        return body

    def result(self):
        body = self.answer()
        self.assertEqual(body[:1], _worker.RESULT, body[:200])
        return marshal.loads(body[1:])

    def ended(self):
        self.host.shutdown(socket.SHUT_WR)
        self.loop.join(10)
        self.assertFalse(self.loop.is_alive())
        return self.status

    def test_a_frame_a_byte_at_a_time(self):
        for b in call("add", 3, 5) * 2:
            self.host.sendall(bytes([b]))
            time.sleep(0.002)  # so that the loop reads most of them one by one
        self.assertEqual(self.result(), 8)
        self.assertEqual(self.result(), 8)
        self.assertEqual(self.ended(), 0)

    def test_several_frames_in_one_write_are_answered_in_order(self):
        self.host.sendall(b"".join(call("add", i, 1) for i in range(50)))
        self.assertEqual([self.result() for _ in range(50)], list(range(1, 51)))
        self.assertEqual(self.ended(), 0)

    def test_a_frame_of_megabytes_in_parts_then_a_small_one(self):
        big = "x" * (5 << 20)
        data = call("echo", big) + call("add", 1, 1)
        for at in range(0, len(data), 100_000):
            self.host.sendall(data[at:at + 100_000])
        self.assertEqual(self.result(), big)
        self.assertEqual(self.result(), 2)
        self.assertEqual(self.ended(), 0)

    def test_an_end_inside_a_frame_is_an_error(self):
        self.host.sendall(call("add", 3, 5)[:-1])
        self.assertEqual(self.ended(), 1)

    def test_an_end_inside_a_length_is_an_error(self):
        self.host.sendall(b"\0\0")
        self.assertEqual(self.ended(), 1)

    def test_a_frame_past_the_limit_is_an_error(self):
        self.host.sendall(struct.pack(">I", _worker.MAX_FRAME + 1))
        self.assertEqual(self.ended(), 1)


if __name__ == "__main__":
    unittest.main()
