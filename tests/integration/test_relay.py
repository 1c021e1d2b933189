"""rapidrpcd --relay SOCKET: every request relayed to a program behind a Unix
socket (docs/design.md, "The relay"), against a scripted program in the
test itself: a Unix listener whose every connection is served on a thread
of its own, reading the PROXY line, saying a pid, reading requests and
writing the responses each test scripts.

Covered: the request passed as the client sent it (every header, its order
and case, nothing added), a chunked body de-chunked, the PROXY line, the
response passed as the program wrote it, connection affinity (an HTTP/1.0
program gets a new Unix connection per request while the client keeps its
TCP connection; an HTTP/1.1 program keeps one), the client's
Connection: close, the response framings (Content-Length, chunked, until
the end of the stream, HEAD), a program that ends its connection mid-
response (502) or is not there (503), --method-timeout (a fault, the
serving process killed unless it is --relay-keep-pid), the body limit
(413, nothing relayed), a request whose client ended its stream inside
the body (relayed as it came, then the end of the stream; inside a head
or a chunked body, not relayed), and the options --relay does not go
with.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xmlrpc.client

from harness import HOST, RAW_TIMEOUT, Daemon, daemon_path

TIMEOUT_FAULT = -32001


class Link:
    """One Unix connection from rapidrpcd, as the program sees it."""

    def __init__(self, conn):
        self.conn = conn
        self.conn.settimeout(RAW_TIMEOUT)
        self.buf = b""
        self.proxy = None
        self.requests = []  # (head bytes, body bytes), in order
        self.ended = threading.Event()  # rapidrpcd closed its end

    def _fill(self):
        data = self.conn.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def start(self, pid=None):
        """Reads the PROXY line, says the pid (by default this process's)."""
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise AssertionError(f"no PROXY line, got {self.buf!r}")
        line, self.buf = self.buf.split(b"\r\n", 1)
        self.proxy = line + b"\r\n"
        self.send(b"%d\n" % (os.getpid() if pid is None else pid))

    def read_request(self):
        """(head, body), or None at the end of the stream."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                if self.buf:
                    raise AssertionError(f"stream ended inside a request head: {self.buf!r}")
                self.ended.set()
                return None
        end = self.buf.index(b"\r\n\r\n") + 4
        head, self.buf = self.buf[:end], self.buf[end:]
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(self.buf) < length:
            if not self._fill():
                raise AssertionError("stream ended inside a request body")
        body, self.buf = self.buf[:length], self.buf[length:]
        self.requests.append((head, body))
        return head, body

    def send(self, data):
        self.conn.sendall(data)

    def close(self):
        self.conn.close()


class Backend:
    """The program behind the relay: `serve(link)` serves each Unix
    connection, on a thread of its own."""

    def __init__(self, serve, directory):
        self.path = os.path.join(directory, "relay.sock")
        self.serve = serve
        self.links = []
        self.errors = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(16)
        self.threads = []
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            link = Link(conn)
            self.links.append(link)
            t = threading.Thread(target=self._serve, args=(link,), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve(self, link):
        try:
            self.serve(link)
        except Exception as err:  # noqa: BLE001 - reported by check()
            self.errors.append(repr(err))
        finally:
            link.close()

    def close(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.accepting.join(5)
        for t in self.threads:
            t.join(5)


# -- scripted programs -------------------------------------------------------

OK_10 = b"HTTP/1.0 200 OK\r\nServer: scripted\r\nX-Reply-Case: Kept\r\nContent-Length: 2\r\n\r\nok"


def http10_program(link):
    """The standard library's default: HTTP/1.0, one request, then close."""
    link.start()
    if link.read_request() is not None:
        link.send(OK_10)


def http11_program(link):
    """HTTP/1.1: answers every request on the connection until its end."""
    link.start()
    n = 0
    while link.read_request() is not None:
        n += 1
        body = b"reply %d" % n
        link.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def framing_program(link):
    """Answers by the request's path: how the response is framed."""
    link.start()
    while True:
        req = link.read_request()
        if req is None:
            return
        target = req[0].split(b" ")[1]
        if target == b"/chunked":
            link.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked"
                      b"\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n")
        elif target == b"/until-close":
            link.send(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it")
            return
        elif target == b"/head":
            link.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n")
        elif target == b"/no-content":
            link.send(b"HTTP/1.1 204 No Content\r\nX-Empty: yes\r\n\r\n")
        elif target == b"/continue":
            link.send(b"HTTP/1.1 100 Continue\r\n\r\n"
                      b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nafter")
        else:
            link.send(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nlength")


def crashing_program(link):
    """Ends its connection in the middle of a response body."""
    link.start()
    if link.read_request() is not None:
        link.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")


def cut_short_program(link):
    """Reads one request's head and then its stream to the end, whatever the
    head's length says; answers 400 naming how many body bytes came."""
    link.start()
    while b"\r\n\r\n" not in link.buf:
        if not link._fill():
            raise AssertionError(f"stream ended inside a request head: {link.buf!r}")
    end = link.buf.index(b"\r\n\r\n") + 4
    head, link.buf = link.buf[:end], link.buf[end:]
    while link._fill():
        pass
    link.requests.append((head, link.buf))
    body = b"%d body bytes" % len(link.buf)
    link.send(b"HTTP/1.0 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


# -- the client side ---------------------------------------------------------

def connect(port):
    s = socket.create_connection((HOST, port), timeout=RAW_TIMEOUT)
    s.settimeout(RAW_TIMEOUT)
    return s


class Reader:
    """Reads rapidrpcd's responses off a client socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def response(self, head_request=False):
        """(head bytes, body bytes) of the next response."""
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError(f"connection closed before a response head: {self.buf!r}")
            self.buf += data
        end = self.buf.index(b"\r\n\r\n") + 4
        head, self.buf = self.buf[:end], self.buf[end:]
        status = int(head.split(b" ")[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value.strip())
        if head_request or status in (204, 304):
            length = 0
        while len(self.buf) < length:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("connection closed inside a response body")
            self.buf += data
        body, self.buf = self.buf[:length], self.buf[length:]
        return head, body

    def closed(self):
        """True if the server closes the connection with nothing more sent."""
        try:
            data = self.sock.recv(1)
        except ConnectionResetError:
            return True
        return data == b"" and self.buf == b""


def wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


class RelayTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rapidrpc-relay-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def start(self, program, *args):
        """A scripted program and rapidrpcd relaying to it."""
        backend = Backend(program, self.dir)
        self.addCleanup(backend.close)
        daemon = Daemon("--relay", backend.path, *args, env_args=False).start()
        self.addCleanup(daemon.stop)
        self.addCleanup(lambda: self.assertEqual(backend.errors, []))
        return backend, daemon

    def client(self, daemon):
        sock = connect(daemon.port)
        self.addCleanup(sock.close)
        return sock, Reader(sock)

    # -- the request ---------------------------------------------------------

    def test_request_passed_as_the_client_sent_it(self):
        backend, d = self.start(http10_program)
        head = (b"POST /any/Path?q=1 HTTP/1.1\r\nHost: example\r\nX-Mixed-CASE: a  b\r\n"
                b"content-type: text/xml\r\nX-Dup: 1\r\nUser-Agent: test\r\nX-Dup: 2\r\n"
                b"Content-Length: 5\r\n\r\n")
        # A second one that only the general parser reads (a byte past ASCII).
        other = (b"PUT /other HTTP/1.1\r\nHost: example\r\nX-Latin: caf\xe9\r\n"
                 b"Content-Length: 3\r\n\r\n")
        sock, reader = self.client(d)
        sock.sendall(head + b"hello")
        self.assertEqual(reader.response(), (
            b"HTTP/1.1 200 OK\r\nServer: scripted\r\nX-Reply-Case: Kept\r\nContent-Length: 2"
            b"\r\n\r\n", b"ok"))
        sock.sendall(other + b"abc")
        self.assertEqual(reader.response()[1], b"ok")
        self.assertEqual([link.requests for link in backend.links],
                         [[(head, b"hello")], [(other, b"abc")]])

    def test_chunked_body_is_sent_with_its_length(self):
        backend, d = self.start(http10_program)
        sock, reader = self.client(d)
        sock.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
                     b"X-After: 1\r\n\r\n4\r\nwiki\r\n6\r\npedia!\r\n0\r\n\r\n")
        self.assertEqual(reader.response()[1], b"ok")
        self.assertEqual(backend.links[0].requests, [(
            b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nX-After: 1\r\nContent-Length: 10\r\n\r\n",
            b"wikipedia!")])

    def test_proxy_line_names_the_client_and_the_listener(self):
        backend, d = self.start(http10_program)
        sock, reader = self.client(d)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        reader.response()
        client_port = sock.getsockname()[1]
        self.assertEqual(backend.links[0].proxy,
                         b"PROXY TCP4 127.0.0.1 127.0.0.1 %d %d\r\n" % (client_port, d.port))

    # -- connection affinity -------------------------------------------------

    def test_http10_program_gets_a_connection_per_request(self):
        backend, d = self.start(http10_program)
        sock, reader = self.client(d)
        for _ in range(3):
            sock.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")
            head, body = reader.response()
            self.assertEqual(body, b"ok")
            self.assertNotIn(b"Connection: close", head)
        # Three Unix connections, one request each; one TCP connection.
        self.assertEqual([len(link.requests) for link in backend.links], [1, 1, 1])

    def test_http11_program_keeps_the_clients_connection(self):
        backend, d = self.start(http11_program)
        sock, reader = self.client(d)
        for n in (1, 2):
            sock.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")
            self.assertEqual(reader.response()[1], b"reply %d" % n)
        self.assertEqual(len(backend.links), 1)
        self.assertEqual(len(backend.links[0].requests), 2)
        # The client leaves: the program's handler sees the end of its stream.
        sock.close()
        self.assertTrue(backend.links[0].ended.wait(5), "the Unix connection was not closed")

    def test_client_connection_close_closes_after_the_response(self):
        _, d = self.start(http11_program)
        sock, reader = self.client(d)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        head, body = reader.response()
        self.assertEqual(body, b"reply 1")
        self.assertIn(b"\r\nConnection: close\r\n", head)
        self.assertTrue(reader.closed())

    def test_http10_client_gets_http10_and_keep_alive_as_asked(self):
        _, d = self.start(http10_program)
        sock, reader = self.client(d)
        sock.sendall(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        head, _ = reader.response()
        self.assertTrue(head.startswith(b"HTTP/1.0 200 OK\r\n"), head)
        self.assertIn(b"\r\nConnection: keep-alive\r\n", head)
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        head, _ = reader.response()
        self.assertIn(b"\r\nConnection: close\r\n", head)
        self.assertTrue(reader.closed())

    # -- response framing ----------------------------------------------------

    def test_response_framings(self):
        _, d = self.start(framing_program)
        sock, reader = self.client(d)

        sock.sendall(b"GET /chunked HTTP/1.1\r\nHost: h\r\n\r\n")
        head, body = reader.response()
        self.assertEqual(head, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                               b"Content-Length: 12\r\n\r\n")
        self.assertEqual(body, b"hello, world")

        sock.sendall(b"HEAD /head HTTP/1.1\r\nHost: h\r\n\r\n")
        head, body = reader.response(head_request=True)
        self.assertEqual(head, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                               b"Content-Length: 10\r\n\r\n")

        sock.sendall(b"GET /no-content HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(reader.response(), (b"HTTP/1.1 204 No Content\r\nX-Empty: yes\r\n\r\n",
                                             b""))

        sock.sendall(b"GET /continue HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(reader.response()[1], b"after")

        sock.sendall(b"GET /until-close HTTP/1.1\r\nHost: h\r\n\r\n")
        head, body = reader.response()
        self.assertEqual(head, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                               b"Content-Length: 9\r\n\r\n")
        self.assertEqual(body, b"all of it")

        # Nothing was left over on the client's connection: it goes on.
        sock.sendall(b"GET /length HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(reader.response()[1], b"length")

    # -- failures ------------------------------------------------------------

    def test_connection_ended_mid_response_is_502(self):
        _, d = self.start(crashing_program)
        sock, reader = self.client(d)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        head, _ = reader.response()
        self.assertTrue(head.startswith(b"HTTP/1.1 502 "), head)
        self.assertIn(b"text/plain", head)
        self.assertTrue(reader.closed())
        self.assertTrue(wait_for(lambda: "ended its connection" in d.stderr_text()),
                        d.stderr_text())

    def test_no_program_is_503_and_the_client_stays(self):
        for path in (os.path.join(self.dir, "absent.sock"), self._dead_socket()):
            d = Daemon("--relay", path, env_args=False).start()
            try:
                sock, reader = self.client(d)
                for _ in range(2):
                    sock.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")
                    head, body = reader.response()
                    self.assertTrue(head.startswith(b"HTTP/1.1 503 "), head)
                    self.assertIn(b"text/plain", head)
                    self.assertTrue(body)
            finally:
                d.stop()

    def _dead_socket(self):
        """A socket file nobody listens on."""
        path = os.path.join(self.dir, "dead.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()
        return path

    def _sleeper(self):
        """A child process standing for the one serving a request: it
        ignores SIGUSR1, so only SIGKILL ends it."""
        child = subprocess.Popen(
            [sys.executable, "-c", "import signal, time\n"
             "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\nprint('ready', flush=True)\n"
             "time.sleep(60)"], stdout=subprocess.PIPE)
        self.addCleanup(lambda: (child.poll() is None and child.kill(), child.wait(10),
                                 child.stdout.close()))
        self.assertEqual(child.stdout.readline(), b"ready\n")
        return child

    def _hung_program(self, pid):
        def program(link):
            link.start(pid)
            link.read_request()
            link.read_request()  # never answers; returns at the end of the stream
        return program

    def _call_past_timeout(self, d):
        started = time.monotonic()
        with xmlrpc.client.ServerProxy(f"http://{HOST}:{d.port}/RPC2") as proxy, \
                self.assertRaises(xmlrpc.client.Fault) as caught:
            proxy.anything(1)
        self.assertEqual(caught.exception.faultCode, TIMEOUT_FAULT)
        self.assertLess(time.monotonic() - started, 5.0)

    def test_timeout_answers_a_fault_and_kills_the_serving_process(self):
        child = self._sleeper()
        backend, d = self.start(self._hung_program(child.pid), "--method-timeout", "0.5")
        self._call_past_timeout(d)
        self.assertEqual(child.wait(5), -signal.SIGKILL)
        self.assertIn(f"process {child.pid} ran past", d.stderr_text())
        # Its Unix connection is closed.
        self.assertTrue(backend.links[0].ended.wait(5))

    def test_timeout_never_kills_the_kept_pid(self):
        child = self._sleeper()
        backend, d = self.start(self._hung_program(child.pid), "--method-timeout", "0.5",
                                "--relay-keep-pid", str(child.pid))
        self._call_past_timeout(d)
        self.assertTrue(backend.links[0].ended.wait(5))
        time.sleep(0.5)  # past the 0.2 s after which a SIGKILL would have come
        self.assertIsNone(child.poll(), "the --relay-keep-pid process was killed")

    def test_body_past_the_limit_is_413_and_not_relayed(self):
        backend, d = self.start(http10_program, "--max-body-bytes", "1000")
        sock, reader = self.client(d)
        sock.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2000\r\n\r\n"
                     + b"x" * 2000)
        head, _ = reader.response()
        self.assertTrue(head.startswith(b"HTTP/1.1 413 "), head)
        time.sleep(0.2)
        self.assertEqual(backend.links, [])


    def test_stream_ended_inside_a_body_is_relayed_with_its_end(self):
        # The client sends a whole head and part of its body, then ends its
        # side: the program reads it as it would on its own socket, up to the
        # end of the stream, and its answer reaches the client.
        backend, d = self.start(cut_short_program)
        head = b"POST /RPC2 HTTP/1.0\r\nContent-Length: 100\r\n\r\n"
        sock, reader = self.client(d)
        sock.sendall(head + b"only part")
        sock.shutdown(socket.SHUT_WR)
        status, body = reader.response()
        self.assertTrue(status.startswith(b"HTTP/1.0 400 "), status)
        self.assertEqual(body, b"9 body bytes")
        self.assertTrue(reader.closed())
        self.assertEqual(backend.links[0].requests, [(head, b"only part")])

    def test_stream_ended_elsewhere_in_a_request_is_not_relayed(self):
        # Inside the head, or inside a chunked body (whose de-chunked form
        # would claim a length): nothing goes to the program.
        backend, d = self.start(http10_program)
        for cut in (b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Len",
                    b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"4\r\nwi"):
            sock, reader = self.client(d)
            sock.sendall(cut)
            sock.shutdown(socket.SHUT_WR)
            self.assertTrue(reader.closed(), cut)
        self.assertEqual(backend.links, [])


class RelayOptionsTest(unittest.TestCase):
    def refused(self, *args):
        r = subprocess.run([daemon_path(), "--port", "0", *args], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30)
        return r.returncode, r.stderr.decode()

    def test_options_relay_does_not_go_with_exit_2(self):
        for other in (["--python", "json"], ["--isolate"], ["--mode", "async"],
                      ["--mode", "prefork"], ["--zmq", "tcp://127.0.0.1:*"],
                      ["--worker-listen", "tcp://127.0.0.1:*"],
                      ["--worker-connect", "tcp://127.0.0.1:1"]):
            with self.subTest(other=other):
                status, err = self.refused("--relay", "/nonexistent.sock", *other)
                self.assertEqual(status, 2, err)
                self.assertIn("--relay", err)
        status, err = self.refused("--relay-keep-pid", "1")
        self.assertEqual(status, 2, err)
        self.assertIn("--relay-keep-pid", err)


if __name__ == "__main__":
    from harness import main
    main()
