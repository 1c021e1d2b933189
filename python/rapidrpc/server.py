"""SimpleXMLRPCServer and its kin, with rapidrpcd in front.

A script written for the standard library's xmlrpc.server changes its import
line and keeps the rest:

    from rapidrpc import SimpleXMLRPCServer

    with SimpleXMLRPCServer(("localhost", 8000)) as server:
        server.register_function(pow)
        server.serve_forever()

The classes here are the standard library's, subclassed: the script's
request handler class, the dispatcher, the faults, the encodings and the
documentation pages are the standard library's own code, run in the
script's process (or in the threads and processes its mixin or `workers=`
asks for). What changes is the socket the server accepts from. The
constructor binds and listens on TCP as the standard library does; at the
first serve_forever() or handle_request() rapidrpcd starts on that TCP
socket (--listen-fd) and relays each client connection's requests to a Unix
socket in a private directory (--relay): `self.socket` accepts from there.
rapidrpcd keeps the client connections (HTTP/1.1 framing, keep-alive, slow
clients, limits); each relayed connection starts with a PROXY protocol line
naming the client, which accept() reads, and the first bytes back are the
serving process's pid (docs/design.md, "The relay"). docs/python.md says
what still differs from the standard library.
"""

import io
import os
import queue
import re
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import weakref
import xmlrpc.server
from socketserver import ForkingMixIn, ThreadingMixIn
from xmlrpc.client import Fault, dumps, loads
from xmlrpc.server import (CGIXMLRPCRequestHandler, DocCGIXMLRPCRequestHandler,
                           DocXMLRPCRequestHandler, ServerHTMLDoc, SimpleXMLRPCDispatcher,
                           SimpleXMLRPCRequestHandler, XMLRPCDocGenerator, list_public_methods,
                           resolve_dotted_attribute)

from rapidrpc._worker import die_with_parent, fork_worker, load_prctl

__all__ = [
    "SimpleXMLRPCServer", "MultiPathXMLRPCServer", "DocXMLRPCServer",
    "SimpleXMLRPCRequestHandler", "SimpleXMLRPCDispatcher", "DocXMLRPCRequestHandler",
    "CGIXMLRPCRequestHandler", "DocCGIXMLRPCRequestHandler", "ServerHTMLDoc",
    "XMLRPCDocGenerator", "resolve_dotted_attribute", "list_public_methods",
    "ThreadingMixIn", "ForkingMixIn", "find_rapidrpcd",
]

# The standard library's classes, taken now: a program (CPython's own tests
# among them) may put ours in xmlrpc.server's place afterwards.
_StdSimpleXMLRPCServer = xmlrpc.server.SimpleXMLRPCServer
_StdMultiPathXMLRPCServer = xmlrpc.server.MultiPathXMLRPCServer
_StdDocXMLRPCServer = xmlrpc.server.DocXMLRPCServer

# Seconds that requests in flight get to finish when serving stops: rapidrpcd's
# --drain-timeout, and the wait for the processes of workers=N.
DRAIN_SECONDS = 10
# A relayed connection's PROXY line comes with its request, at once; this
# bounds the wait should it not.
PROXY_LINE_SECONDS = 10
# PROXY protocol v1: the longest line, CRLF included.
PROXY_LINE_MAX = 107
# fault_details=False: the fault of any exception other than Fault.
INTERNAL_ERROR = -32603
# workers=N: a process that lived less than this is replaced this much later,
# so a script that fails at once does not fork in a loop.
RESPAWN_SECONDS = 1.0
# The handler's fast way (_answer_plainly): the most of a relayed request it
# takes at once, and the most header lines (http.client's limit is 100).
PLAIN_REQUEST_MAX = 65536
PLAIN_FIELDS_MAX = 64


def find_rapidrpcd():
    """The rapidrpcd to run: $RAPIDRPCD, else the build tree beside this
    package (build/bin/rapidrpcd), else the first in PATH."""
    named = os.environ.get("RAPIDRPCD")
    if named:
        if os.path.isfile(named) and os.access(named, os.X_OK):
            return named
        raise FileNotFoundError(f"rapidrpc: RAPIDRPCD={named} is not an executable file")
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(os.path.dirname(os.path.dirname(here)), "build", "bin", "rapidrpcd")
    if os.access(built, os.X_OK):
        return built
    found = shutil.which("rapidrpcd")
    if found:
        return found
    raise FileNotFoundError(
        "rapidrpc: cannot find rapidrpcd: set RAPIDRPCD to its path, build it "
        "(scripts/setup.sh builds build/bin/rapidrpcd) or put it in PATH")


# ---- the socket ----

class _RelayedConnection(socket.socket):
    """One connection rapidrpcd relays: its first bytes back are the pid of
    the process that serves it (announce()); finish_request() sends them,
    and so does the first write of a program that serves it otherwise.
    getpeername() and getsockname() are the client's TCP connection's (its
    PROXY line); TCP options are rapidrpcd's to set on that connection."""

    announced = False
    peer = ("", 0)
    local = ("", 0)
    peeked = b""  # what followed the PROXY line when accept() read it, still unread

    def getpeername(self):
        return self.peer

    def getsockname(self):
        return self.local

    def setsockopt(self, level, *args):
        if level == socket.IPPROTO_TCP:
            return None  # TCP_NODELAY (StreamRequestHandler's) and the like
        return super().setsockopt(level, *args)

    def announce(self):
        if not self.announced:
            self.announced = True
            super().sendall(b"%d\n" % os.getpid())

    def send(self, data, flags=0):
        if not self.announced:
            self.announce()
        return super().send(data, flags)

    def sendall(self, data, flags=0):
        if not self.announced:
            self.announced = True
            data = b"%d\n" % os.getpid() + data  # one write
        return super().sendall(data, flags)


def _read_proxy_line(conn):
    """The client's and the local address from the PROXY line that starts
    `conn`, as a TCP socket's accept() and getsockname() would give them."""
    head = conn.recv(PROXY_LINE_MAX, socket.MSG_PEEK)
    end = head.find(b"\r\n")
    line = b""
    want = end + 2 if end >= 0 else 1
    while not line.endswith(b"\r\n"):
        if len(line) >= PROXY_LINE_MAX:
            raise ConnectionError("rapidrpc: the relayed connection does not start with a "
                                  "PROXY line")
        chunk = conn.recv(want - len(line) if end >= 0 else 1)
        if not chunk:
            raise ConnectionError("rapidrpc: the relayed connection ended before its PROXY line")
        line += chunk
    return _proxy_addresses(line)


def _proxy_addresses(line):
    """The client's and the local address a PROXY line (CRLF included)
    names."""
    fields = line[:-2].decode("ascii", "replace").split(" ")
    if fields[0] != "PROXY":
        raise ConnectionError(f"rapidrpc: not a PROXY line: {line[:40]!r}")
    try:
        if fields[1] == "TCP4" and len(fields) == 6:
            return (fields[2], int(fields[4])), (fields[3], int(fields[5]))
        if fields[1] == "TCP6" and len(fields) == 6:
            return (fields[2], int(fields[4]), 0, 0), (fields[3], int(fields[5]), 0, 0)
    except ValueError:
        pass
    if len(fields) > 1 and fields[1] == "UNKNOWN":
        return ("", 0), ("", 0)
    raise ConnectionError(f"rapidrpc: a PROXY line not understood: {line!r}")


class _Relay:
    """rapidrpcd and its Unix socket's directory: what server_close() (or the
    script's exit) ends. Held apart from the socket for its finalizer."""

    def __init__(self):
        self.owner = os.getpid()  # forked processes leave it to this one
        self.dir = None
        self.path = None
        self.daemon = None  # rapidrpcd's Popen

    def end(self):
        if os.getpid() != self.owner:
            return
        daemon, self.daemon = self.daemon, None
        if daemon is not None and daemon.returncode is None:
            try:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(DRAIN_SECONDS + 5)
            except BaseException:  # noqa: BLE001 - a Ctrl-C or a hang: it goes now
                daemon.kill()
                daemon.wait()
                raise
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class _RelaySocket(socket.socket):
    """`server.socket`: the Unix listener rapidrpcd relays to, standing for
    the TCP socket it holds (`tcp`). Options, bind(), getsockname() and
    listen() are the TCP socket's (listen() also makes the Unix listener);
    accept(), settimeout(), fileno() and select() are the Unix listener's;
    close() closes both and stops rapidrpcd."""

    def __init__(self, tcp):
        super().__init__(socket.AF_UNIX, socket.SOCK_STREAM)
        self.tcp = tcp
        self.relay = _Relay()
        self._finalizer = weakref.finalize(self, self.relay.end)

    def setsockopt(self, *args):
        return self.tcp.setsockopt(*args)

    def getsockopt(self, *args):
        return self.tcp.getsockopt(*args)

    def bind(self, address):
        return self.tcp.bind(address)

    def getsockname(self):
        return self.tcp.getsockname()

    def listen(self, *backlog):
        self.tcp.listen(*backlog)
        relay = self.relay
        if relay.path is None:
            relay.dir = tempfile.mkdtemp(prefix="rapidrpc-")  # 0700: this user's only
            relay.path = os.path.join(relay.dir, "relay")
            super().bind(relay.path)
        # rapidrpcd does not queue: the requests waiting for the script do,
        # here, however short the TCP queue the script asked for.
        super().listen(socket.SOMAXCONN)

    def accept(self):
        """A relayed connection and its client's address (its PROXY line)."""
        fd, _ = self._accept()
        conn = _RelayedConnection(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=fd)
        if socket.getdefaulttimeout() is None and self.gettimeout():
            conn.setblocking(True)
        try:
            # The PROXY line comes with the request, as a rule all of it:
            # what follows the line is kept, still unread, for the fast way
            # (_answer_plainly), which then needs no look of its own.
            try:
                data = conn.recv(PLAIN_REQUEST_MAX, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                data = b""
            end = data.find(b"\r\n", 0, PROXY_LINE_MAX)
            if end >= 0:
                conn.peer, conn.local = _proxy_addresses(data[:end + 2])
                conn.recv(end + 2)
                conn.peeked = data[end + 2:]
            else:
                timeout = conn.gettimeout()
                conn.settimeout(PROXY_LINE_SECONDS)
                conn.peer, conn.local = _read_proxy_line(conn)
                conn.settimeout(timeout)
        except BaseException:
            conn.close()
            raise
        return conn, conn.peer

    def start(self, command):
        """Starts rapidrpcd, `command(unix path)`, if it is not running."""
        relay = self.relay
        if relay.daemon is not None:
            code = relay.daemon.poll()
            if code is None:
                return
            raise RuntimeError(f"serving stopped: rapidrpcd exited with status {code}; the "
                               "standard error above says why")
        if relay.path is None or self.tcp.fileno() < 0:
            raise RuntimeError("rapidrpc: the server is not listening (server_activate() "
                               "was not called, or server_close() was)")
        if os.getpid() != relay.owner:
            raise RuntimeError("rapidrpc: serving starts in the process that made the server")
        relay.daemon = _spawn(
            command(relay.path), pass_fds=(self.tcp.fileno(),), env=_daemon_environment(),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_dying_with(os.getpid(), signal.SIGTERM))

    def ended(self):
        """How rapidrpcd ended, if it did on its own; else None."""
        daemon = self.relay.daemon
        if daemon is None or daemon.poll() is None:
            return None
        return f"serving stopped: rapidrpcd exited with status {daemon.returncode}"

    def close(self):
        # The Unix listener first: requests queued there fail now (rapidrpcd
        # answers 502) rather than wait out rapidrpcd's drain.
        try:
            super().close()
            self.tcp.close()
        finally:
            self._finalizer()  # self.relay.end(), once


def _daemon_environment():
    # The script's service manager talks to the script, not to rapidrpcd.
    return {k: v for k, v in os.environ.items()
            if k not in ("NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")}


def _dying_with(parent, sig):
    load_prctl()  # here, not in the child
    return lambda: die_with_parent(parent, sig)


# rapidrpcd is started from one thread that lives as long as the process:
# PR_SET_PDEATHSIG fires when the *thread* that forked it ends, and
# serve_forever() may run in a thread that ends before the server does.
_spawn_lock = threading.Lock()
_spawn_queue = None


def _spawn(*args, **kwargs):
    global _spawn_queue
    with _spawn_lock:
        if _spawn_queue is None:
            _spawn_queue = queue.SimpleQueue()
            threading.Thread(target=_spawner, args=(_spawn_queue,), name="rapidrpc-spawner",
                             daemon=True).start()
        requests = _spawn_queue
    answer = queue.SimpleQueue()
    requests.put((args, kwargs, answer))
    ok, value = answer.get()
    if not ok:
        raise value
    return value


def _spawner(requests):
    while True:
        args, kwargs, answer = requests.get()
        try:
            answer.put((True, subprocess.Popen(*args, **kwargs)))
        except BaseException as e:  # noqa: BLE001 - raised in the caller
            answer.put((False, e))
        del args, kwargs, answer


def _forget_spawner():
    global _spawn_queue, _spawn_lock
    _spawn_queue = None  # its thread is not in a forked child
    _spawn_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_spawner)


# ---- faults without details ----

def _report(what):
    print(f"rapidrpc: {what} (pid {os.getpid()}):", file=sys.stderr)
    traceback.print_exc()
    sys.stderr.flush()


def _internal_error(dispatcher):
    return dumps(Fault(INTERNAL_ERROR, "internal error"), allow_none=dispatcher.allow_none,
                 encoding=dispatcher.encoding)


def _marshaled_without_details(dispatcher, data, dispatch_method):
    """SimpleXMLRPCDispatcher._marshaled_dispatch, but any exception other
    than Fault is fault -32603 "internal error", its traceback on stderr."""
    try:
        params, method = loads(data, use_builtin_types=dispatcher.use_builtin_types)
        if dispatch_method is not None:
            response = dispatch_method(method, params)
        else:
            response = dispatcher._dispatch(method, params)
        response = dumps((response,), methodresponse=1, allow_none=dispatcher.allow_none,
                         encoding=dispatcher.encoding)
    except Fault as fault:
        response = dumps(fault, allow_none=dispatcher.allow_none, encoding=dispatcher.encoding)
    except BaseException:  # noqa: BLE001 - the standard library's catch, without details
        _report("a call failed")
        response = _internal_error(dispatcher)
    return response.encode(dispatcher.encoding, "xmlcharrefreplace")


# ---- the handler's fast way ----
#
# The standard library's handler reads a request through buffered files
# over the socket, one line at a time. A relayed POST has been read whole
# and checked by rapidrpcd and is all in the socket at once: when the
# handler class keeps the standard library's reading (it overrides none of
# the methods that do it, and speaks HTTP/1.0, one request per connection),
# the request is taken in one read, its head made into the class's
# MessageClass as http.client.parse_headers() would make it, and the
# handler's own do_POST() (a subclass's included) runs on it with the body
# in memory, its response sent in one write. Anything else (another
# method, a head the standard library would refuse, a body not all there)
# goes the standard library's whole way. test_python_server.py compares
# the two ways' answers byte for byte.

# The handler's methods that read the request; the fast way stands in for
# them, so a class that overrides one goes the whole way.
_READING = ("__new__", "__init__", "setup", "handle", "handle_one_request", "parse_request",
            "finish")
_STOCK_READING = [(name, getattr(SimpleXMLRPCRequestHandler, name)) for name in _READING]


# A field name as the email package's header parser takes it.
_FIELD_NAME = re.compile(r"[!-9;-~]+")


def _reads_as_stock(cls):
    """Whether handler class `cls` reads requests as the standard
    library's does, one per connection."""
    return isinstance(cls, type) and getattr(cls, "protocol_version", None) == "HTTP/1.0" and \
        all(getattr(cls, name, None) is f for name, f in _STOCK_READING)


def _answer_plainly(server, conn, client_address):
    """Answers the POST waiting on `conn` with the server's handler class,
    read here; False, with nothing read, for a request that must go the
    standard library's whole way."""
    data = conn.peeked
    if not data:
        try:
            data = conn.recv(PLAIN_REQUEST_MAX, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except OSError:
            return False
    line_end = data.find(b"\n") - 1  # the request line's CR, if it is there
    line = data[:max(line_end, 0)]
    words = line.split()
    if (line_end < 0 or data[line_end] != 13 or len(words) != 3 or line != b" ".join(words)
            or words[0] != b"POST" or words[2] not in (b"HTTP/1.0", b"HTTP/1.1")
            or not words[1].startswith(b"/") or words[1].startswith(b"//")):
        return False
    # The head's end: its first empty line, every line ended by CRLF (no
    # bare CR or LF, which the email package reads as line ends too).
    end = data.find(b"\r\n\r\n", line_end)
    head = data[line_end + 2:end]
    if (end < 0 or not head.isascii() or head.count(b"\n") >= PLAIN_FIELDS_MAX
            or head.count(b"\r") != head.count(b"\n") or head.count(b"\r\n") != head.count(b"\n")):
        return False
    # http.client.parse_headers()'s message, made from fields it would read
    # the same: a name of visible characters and a colon, no continuation
    # line, the value without its leading white space.
    cls = server.RequestHandlerClass
    headers = cls.MessageClass()
    for field in head.decode("ascii").split("\r\n") if head else ():
        name, colon, value = field.partition(":")
        if not colon or not _FIELD_NAME.fullmatch(name):
            return False
        headers[name] = value.lstrip(" \t")
    headers.set_payload("")
    try:
        length = int(headers["content-length"])
    except (TypeError, ValueError):
        return False
    if len(data) != end + 4 + length:
        return False
    conn.recv(len(data))  # what was peeked, now taken
    if server.method_timeout:
        conn.announce()  # before the call runs: rapidrpcd stops a runaway by this pid
    handler = cls.__new__(cls)
    handler.request = handler.connection = conn
    handler.client_address = client_address
    handler.server = server
    handler.raw_requestline = data[:line_end + 2]
    handler.requestline = data[:line_end].decode("iso-8859-1")
    handler.command = "POST"
    handler.path = words[1].decode("iso-8859-1")
    handler.request_version = words[2].decode("ascii")
    handler.headers = headers
    handler.close_connection = True
    handler.rfile = io.BytesIO(data[end + 4:])
    handler.wfile = io.BytesIO()
    try:
        handler.do_POST()
    finally:
        conn.sendall(handler.wfile.getvalue())
    return True


# ---- the servers ----

class _Relayed:
    """What the three servers add to the standard library's: the relay
    socket, rapidrpcd's start and end, workers=N, fault_details, and a
    shutdown() that returns at once when called while serving."""

    _default_handler = SimpleXMLRPCRequestHandler

    def __init__(self, addr, requestHandler=None, logRequests=True, allow_none=False,
                 encoding=None, bind_and_activate=True, use_builtin_types=False, *,
                 workers=None, method_timeout=None, fault_details=True):
        if self.__dict__.get("_rapidrpc_initializing"):
            # The standard library's MultiPathXMLRPCServer and
            # DocXMLRPCServer call SimpleXMLRPCServer.__init__ by its name in
            # xmlrpc.server, which is this class where a program put it there.
            return _StdSimpleXMLRPCServer.__init__(self, addr, requestHandler, logRequests,
                                                   allow_none, encoding, bind_and_activate,
                                                   use_builtin_types)
        if workers is not None and (type(workers) is not int or workers < 1):
            raise ValueError("workers must be a positive int")
        if workers is not None and isinstance(self, (ThreadingMixIn, ForkingMixIn)):
            mixin = "ThreadingMixIn" if isinstance(self, ThreadingMixIn) else "ForkingMixIn"
            raise ValueError(
                f"rapidrpc: workers= and {mixin} both say how calls run at once: {mixin} "
                "serves each connection in its own " +
                ("thread" if mixin == "ThreadingMixIn" else "forked process") +
                ", workers=N in N processes forked at serve_forever(); keep one of them")
        if method_timeout is not None and not method_timeout > 0:
            raise ValueError("method_timeout must be a positive number of seconds")
        if self.address_family not in (socket.AF_INET, socket.AF_INET6):
            raise ValueError(
                f"rapidrpc: address_family {self.address_family!r} is not served: rapidrpcd "
                "listens on TCP (AF_INET, AF_INET6); use xmlrpc.server's server for another")
        if self.socket_type != socket.SOCK_STREAM:
            raise ValueError("rapidrpc: socket_type must be SOCK_STREAM: rapidrpcd serves TCP")
        self.rapidrpcd_path = find_rapidrpcd()
        self.workers = workers
        self.method_timeout = method_timeout
        self.fault_details = fault_details
        self._serving = None  # (pid, thread id) of the serve_forever() running
        self._stop_write = None  # shutdown() from another process writes here
        self._rapidrpc_initializing = True
        try:
            super().__init__(addr, requestHandler or self._default_handler, logRequests,
                             allow_none, encoding, False, use_builtin_types)
        finally:
            del self._rapidrpc_initializing
        self.socket = _RelaySocket(self.socket)
        if bind_and_activate:
            try:
                self.server_bind()
                self.server_activate()
            except BaseException:
                self.server_close()
                raise

    # ---- rapidrpcd ----

    def _rapidrpcd_command(self, path):
        cmd = [self.rapidrpcd_path, "--listen-fd", str(self.socket.tcp.fileno()),
               "--relay", path, "--relay-keep-pid", str(os.getpid()),
               "--drain-timeout", str(DRAIN_SECONDS)]
        if self.method_timeout:
            cmd += ["--method-timeout", str(self.method_timeout)]
        return cmd

    def _relay_up(self):
        if not isinstance(self.socket, _RelaySocket):
            raise RuntimeError(
                "rapidrpc: server.socket is no longer the socket the constructor made (wrapped "
                "for TLS?): rapidrpcd accepts the connections on it; terminate TLS in front of "
                "the script (docs/python.md), or use xmlrpc.server's server")
        self.socket.start(self._rapidrpcd_command)

    # ---- serving ----

    def handle_request(self):
        self._relay_up()
        return super().handle_request()

    def finish_request(self, request, client_address):
        if isinstance(request, _RelayedConnection):
            if _reads_as_stock(self.RequestHandlerClass) and \
                    _answer_plainly(self, request, client_address):
                return
            request.announce()
        super().finish_request(request, client_address)

    def serve_forever(self, poll_interval=0.5):
        """Serves until shutdown(), from any thread or process of the
        server (a registered function's call included)."""
        self._relay_up()
        is_shut_down = self._BaseServer__is_shut_down
        is_shut_down.clear()
        stop_read, self._stop_write = os.pipe()
        self._serving = (os.getpid(), threading.get_ident())
        try:
            if self.workers:
                self._supervise(poll_interval, stop_read)
            else:
                self._loop(poll_interval, stop_read)
        finally:
            self._serving = None
            os.close(stop_read)
            os.close(self._stop_write)
            self._stop_write = None
            self._BaseServer__shutdown_request = False
            is_shut_down.set()

    def _loop(self, poll_interval, stop_read):
        """socketserver's serve_forever() loop; it also ends when another
        process writes to the stop pipe, or when rapidrpcd ends."""
        with selectors.PollSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            if stop_read is not None:
                selector.register(stop_read, selectors.EVENT_READ)
            while not self._BaseServer__shutdown_request:
                ready = selector.select(poll_interval)
                if self._BaseServer__shutdown_request:
                    break
                if any(key.fileobj is self for key, _ in ready):
                    self._handle_request_noblock()
                elif ready:
                    break  # the stop pipe
                elif stop_read is not None and self.socket.ended():
                    raise RuntimeError(self.socket.ended() + "; the standard error above says "
                                       "why")
                self.service_actions()

    def shutdown(self):
        """Stops serve_forever(). From another thread of the serving process
        it waits until serve_forever() has returned, as the standard
        library's; from the serving thread itself (a registered function)
        or from another process (workers=N, ForkingMixIn) it returns at
        once, and serve_forever() returns once the call has been answered."""
        self._BaseServer__shutdown_request = True
        serving = self._serving
        if serving is None:
            return
        if serving[0] != os.getpid():
            try:
                os.write(self._stop_write, b"s")
            except OSError:
                pass
            return
        if serving[1] == threading.get_ident():
            return
        self._BaseServer__is_shut_down.wait()

    # ---- workers=N ----

    def _supervise(self, poll_interval, stop_read):
        """Runs `workers` processes that each serve as _loop() does, and
        replaces one that ends, until shutdown() or the stop pipe; then
        stops them (calls in flight finish, up to DRAIN_SECONDS)."""
        children = {}  # pid -> pidfd
        due = []  # when the next replacements may start
        selector = selectors.DefaultSelector()
        selector.register(stop_read, selectors.EVENT_READ)
        try:
            for _ in range(self.workers):
                self._fork_worker(children, selector)
            while not self._BaseServer__shutdown_request:
                wait = poll_interval
                if due:
                    wait = max(0.0, min(wait, min(due) - time.monotonic()))
                ready = selector.select(wait)
                for key, _ in ready:
                    if key.fileobj == stop_read:
                        self._BaseServer__shutdown_request = True
                        continue
                    pid = key.data
                    _, status = os.waitpid(pid, 0)
                    selector.unregister(key.fileobj)
                    os.close(key.fileobj)
                    started = children.pop(pid)[1]
                    code = os.waitstatus_to_exitcode(status)
                    how = f"was killed by signal {-code}" if code < 0 else \
                        f"exited with status {code}"
                    print(f"rapidrpc: worker process {pid} {how}; another replaces it",
                          file=sys.stderr, flush=True)
                    lived = time.monotonic() - started
                    due.append(time.monotonic() + (RESPAWN_SECONDS if lived < RESPAWN_SECONDS
                                                   else 0))
                if self._BaseServer__shutdown_request:
                    break
                now = time.monotonic()
                for when in [w for w in due if w <= now]:
                    due.remove(when)
                    self._fork_worker(children, selector)
                if not ready and self.socket.ended():
                    raise RuntimeError(self.socket.ended() + "; the standard error above says "
                                       "why")
        finally:
            selector.close()
            self._stop_workers(children)

    def _fork_worker(self, children, selector):
        pid, pidfd = fork_worker(self._worker_main,
                                 [selector.fileno(), *(fd for fd, _ in children.values())])
        children[pid] = (pidfd, time.monotonic())
        selector.register(pidfd, selectors.EVENT_READ, pid)

    def _worker_main(self):
        """A process of workers=N (fork_worker() runs it): serves as
        _loop() does until SIGTERM, never returning into the script."""
        # Ctrl-C is the script's: it stops the workers with SIGTERM, which
        # lets the call in flight finish.
        signal.signal(signal.SIGTERM, self._worker_stop)
        # The processes accept from one listener: one that finds the
        # connection taken goes back to waiting rather than block.
        if self.socket.gettimeout() is None:
            self.socket.setblocking(False)
        self._loop(0.5, None)
        return 0

    def _worker_stop(self, signum, frame):
        self._BaseServer__shutdown_request = True

    def _stop_workers(self, children):
        for pid in children:
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + DRAIN_SECONDS
        try:
            for pid, (pidfd, _) in children.items():
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pidfd], [], [], left)[0]:
                    _kill(pid, signal.SIGKILL)
        except BaseException:  # a second Ctrl-C: no more waiting
            for pid in children:
                _kill(pid, signal.SIGKILL)
            raise
        finally:
            for pid, (pidfd, _) in children.items():
                os.waitpid(pid, 0)
                os.close(pidfd)
            children.clear()

    # ---- faults ----

    def _marshaled_dispatch(self, data, dispatch_method=None, path=None):
        if self.fault_details:
            return super()._marshaled_dispatch(data, dispatch_method, path)
        return _marshaled_without_details(self, data, dispatch_method)

    def system_multicall(self, call_list):
        if self.fault_details:
            return super().system_multicall(call_list)
        results = []
        for call in call_list:
            try:
                results.append([self._dispatch(call["methodName"], call["params"])])
            except Fault as fault:
                results.append({"faultCode": fault.faultCode, "faultString": fault.faultString})
            except BaseException:  # noqa: BLE001 - as the standard library, without details
                _report("a call of system.multicall failed")
                results.append({"faultCode": INTERNAL_ERROR, "faultString": "internal error"})
        return results


class SimpleXMLRPCServer(_Relayed, _StdSimpleXMLRPCServer):
    """xmlrpc.server.SimpleXMLRPCServer, with rapidrpcd in front.

    Besides the standard library's arguments, keywords of rapidrpc's:
    `workers=N` serves in N processes forked from the script at
    serve_forever() (default: in this process, as the standard library);
    `method_timeout=` seconds a request may take before the client gets
    fault -32001 and a process of workers=N serving it is killed and
    replaced; `fault_details=False` answers any exception other than
    xmlrpc.client.Fault with fault -32603 "internal error" (its traceback on
    standard error) instead of the standard library's fault 1 naming it."""


class MultiPathXMLRPCServer(_Relayed, _StdMultiPathXMLRPCServer):
    """xmlrpc.server.MultiPathXMLRPCServer, with rapidrpcd in front (the
    keywords of rapidrpc.SimpleXMLRPCServer too)."""

    def _marshaled_dispatch(self, data, dispatch_method=None, path=None):
        if self.fault_details:
            return super()._marshaled_dispatch(data, dispatch_method, path)
        try:
            dispatcher = self.dispatchers[path]
            if type(dispatcher)._marshaled_dispatch is SimpleXMLRPCDispatcher._marshaled_dispatch:
                return _marshaled_without_details(dispatcher, data, dispatch_method)
            return dispatcher._marshaled_dispatch(data, dispatch_method, path)
        except BaseException:  # noqa: BLE001 - as the standard library, without details
            _report(f"the dispatcher of path {path!r} failed")
            return _internal_error(self).encode(self.encoding, "xmlcharrefreplace")


class DocXMLRPCServer(_Relayed, _StdDocXMLRPCServer):
    """xmlrpc.server.DocXMLRPCServer, with rapidrpcd in front (the keywords
    of rapidrpc.SimpleXMLRPCServer too)."""

    _default_handler = DocXMLRPCRequestHandler


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
