"""SimpleXMLRPCServer, served by rapidrpcd.

A script written for the standard library's xmlrpc.server changes its import
line and keeps the rest:

    from rapidrpc import SimpleXMLRPCServer

    with SimpleXMLRPCServer(("localhost", 8000)) as server:
        server.register_function(pow)
        server.serve_forever()

The constructor binds and listens as the standard library's does.
serve_forever() forks a fork server holding the registered functions, then
starts rapidrpcd on the listening socket: rapidrpcd does the HTTP, XML-RPC,
JSON-RPC and connections, and each of its worker processes asks the fork
server for a Python worker forked from it, so the functions (closures and
lambdas too) run there as registered. docs/python.md says what differs from
the standard library.
"""

import faulthandler
import functools
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from xmlrpc.server import SimpleXMLRPCRequestHandler

from rapidrpc import _worker

__all__ = ["SimpleXMLRPCServer", "SimpleXMLRPCRequestHandler", "find_rapidrpcd"]

# rapidrpcd's own drain time on SIGTERM (--drain-timeout): calls in flight
# get this long to finish when serving stops.
DRAIN_SECONDS = 10


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


class SimpleXMLRPCServer:
    """xmlrpc.server.SimpleXMLRPCServer's interface, served by rapidrpcd.

    Besides the standard library's arguments: `workers`, the number of
    Python worker processes (calls that run at once; default one per core),
    and `method_timeout`, seconds a call may run before it fails with fault
    -32001 and its worker is replaced (default: no limit). From
    `requestHandler` the server takes `rpc_paths` and `encode_threshold`;
    rapidrpcd handles the requests itself."""

    address_family = socket.AF_INET
    socket_type = socket.SOCK_STREAM
    allow_reuse_address = True
    allow_reuse_port = False
    # The standard library's is 5: it serves one connection at a time.
    # rapidrpcd serves them all at once, and a burst of clients must not
    # find the queue full before it accepts them.
    request_queue_size = socket.SOMAXCONN

    def __init__(self, addr, requestHandler=SimpleXMLRPCRequestHandler, logRequests=True,
                 allow_none=False, encoding=None, bind_and_activate=True,
                 use_builtin_types=False, *, workers=None, method_timeout=None):
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError("workers must be a positive int")
        if method_timeout is not None and not method_timeout > 0:
            raise ValueError("method_timeout must be a positive number of seconds")
        self.rapidrpcd = find_rapidrpcd()
        self.server_address = addr
        self.RequestHandlerClass = requestHandler
        self.logRequests = logRequests
        self.allow_none = allow_none
        self.encoding = encoding or "utf-8"
        self.use_builtin_types = use_builtin_types
        self.workers = workers or os.cpu_count() or 1
        self.method_timeout = method_timeout
        self.funcs = {}
        self.instance = None
        self.allow_dotted_names = False
        self.__shutdown_request = False
        self.__is_shut_down = threading.Event()
        self.__is_shut_down.set()
        self.socket = socket.socket(self.address_family, self.socket_type)
        if bind_and_activate:
            try:
                self.server_bind()
                self.server_activate()
            except BaseException:
                self.server_close()
                raise

    # ---- the socket, as socketserver.TCPServer has it ----

    def server_bind(self):
        if self.allow_reuse_address and hasattr(socket, "SO_REUSEADDR"):
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.allow_reuse_port and hasattr(socket, "SO_REUSEPORT"):
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self.socket.bind(self.server_address)
        self.server_address = self.socket.getsockname()

    def server_activate(self):
        self.socket.listen(self.request_queue_size)

    def server_close(self):
        self.socket.close()

    def fileno(self):
        return self.socket.fileno()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.server_close()

    # ---- registration, as SimpleXMLRPCDispatcher has it ----

    def register_function(self, function=None, name=None):
        """Registers `function` under `name` (default: its __name__); as a
        decorator, @server.register_function or
        @server.register_function(name="x")."""
        if function is None:
            return functools.partial(self.register_function, name=name)
        if name is None:
            name = function.__name__
        self.funcs[name] = function
        return function

    def register_instance(self, instance, allow_dotted_names=False):
        """Serves `instance`'s public methods (with allow_dotted_names, its
        attributes' too: read the standard library's warning first)."""
        self.instance = instance
        self.allow_dotted_names = allow_dotted_names

    def register_introspection_functions(self):
        """rapidrpcd always answers system.listMethods, system.methodHelp
        and system.methodSignature."""

    def register_multicall_functions(self):
        """rapidrpcd always answers system.multicall."""

    # ---- serving ----

    def serve_forever(self, poll_interval=0.5):
        """Serves until shutdown() is called from another thread (or a
        KeyboardInterrupt, which is raised here once serving has stopped)."""
        self.__is_shut_down.clear()
        try:
            with _Serving(self) as serving:
                while not self.__shutdown_request:
                    ended = serving.wait(poll_interval)
                    if ended is not None:
                        raise RuntimeError(f"serving stopped: {ended}; the standard error above "
                                           "says why")
        finally:
            self.__shutdown_request = False
            self.__is_shut_down.set()

    def shutdown(self):
        """Stops serve_forever() (calls in flight finish first) and waits
        until it has returned. Call it from another thread."""
        self.__shutdown_request = True
        self.__is_shut_down.wait()

    def _rapidrpcd_command(self, fork_server_path):
        handler = self.RequestHandlerClass
        paths = list(getattr(handler, "rpc_paths", ("/", "/RPC2"))) or ["*"]
        threshold = getattr(handler, "encode_threshold", 1400)
        cmd = [self.rapidrpcd, "--python-attach", fork_server_path,
               "--listen-fd", str(self.socket.fileno()),
               "--workers", str(self.workers),
               "--gzip-min-bytes", str(threshold or 0),
               "--drain-timeout", str(DRAIN_SECONDS)]
        for p in paths:
            cmd += ["--path", p]
        if self.method_timeout:
            cmd += ["--method-timeout", str(self.method_timeout)]
        if self.logRequests:
            cmd += ["--access-log", "-"]
        return cmd


class _Serving:
    """One serve_forever(): the fork server and rapidrpcd, and their end."""

    def __init__(self, server):
        self.server = server
        self.dir = None
        self.fork_server = None  # its pid
        self.control = None      # its end of stream tells the fork server to stop
        self.rapidrpcd = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind, value, tb):
        interrupted = self.stop()
        if interrupted and kind is None:
            raise KeyboardInterrupt

    def start(self):
        server = self.server
        methods = _worker.methods_of(server.funcs, server.instance, server.allow_dotted_names)
        table = _worker.describe(methods)
        worker = _worker.Worker(methods, server.allow_none, server.use_builtin_types)
        self.dir = tempfile.mkdtemp(prefix="rapidrpc-")  # 0700: this user's only
        path = os.path.join(self.dir, "fork-server")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(path)
            listener.listen(64)
            control_read, self.control = os.pipe()
            try:
                _flush_std()  # what is buffered is printed once, not once per process
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
                    pid = os.fork()
                if pid == 0:
                    _fork_server_main(listener, control_read, self.control, table, worker,
                                      server.socket)
                self.fork_server = pid
            finally:
                os.close(control_read)
        finally:
            listener.close()
        out = 2 if server.logRequests else subprocess.DEVNULL
        # The script's service manager talks to the script, not to rapidrpcd.
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")}
        self.rapidrpcd = subprocess.Popen(
            server._rapidrpcd_command(path), pass_fds=(server.socket.fileno(),), env=env,
            stdin=subprocess.DEVNULL, stdout=out, start_new_session=True)

    def wait(self, timeout):
        """Waits up to `timeout`; what ended serving, or None while it goes on."""
        try:
            return f"rapidrpcd exited with status {self.rapidrpcd.wait(timeout)}"
        except subprocess.TimeoutExpired:
            pass
        pid, status = os.waitpid(self.fork_server, os.WNOHANG)
        if pid != 0:
            self.fork_server = None
            return f"the fork server exited with status {os.waitstatus_to_exitcode(status)}"
        return None

    def stop(self):
        """Stops rapidrpcd (calls in flight finish), then the fork server and
        its workers. True if a KeyboardInterrupt came meanwhile."""
        interrupted = False
        if self.rapidrpcd is not None and self.rapidrpcd.returncode is None:
            try:
                self.rapidrpcd.send_signal(signal.SIGTERM)
                self.rapidrpcd.wait(DRAIN_SECONDS + 5)
            except (KeyboardInterrupt, subprocess.TimeoutExpired) as e:
                interrupted = isinstance(e, KeyboardInterrupt)
                self.rapidrpcd.kill()
                self.rapidrpcd.wait()
        if self.control is not None:
            os.close(self.control)
            self.control = None
        if self.fork_server is not None:
            while True:
                try:
                    os.waitpid(self.fork_server, 0)
                    break
                except KeyboardInterrupt:
                    interrupted = True
                except ChildProcessError:
                    break
            self.fork_server = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return interrupted


def _fork_server_main(listener, control, control_write, table, worker, tcp_socket):
    """The fork server's process: never returns into the script."""
    status = 1
    try:
        os.close(control_write)
        tcp_socket.close()  # rapidrpcd's, not this process's
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the script's
        _worker.die_with_host()  # the script's death ends it
        status = _ForkServer(listener, control, table, worker).run()
    except BaseException:  # noqa: BLE001 - reported, never raised into the script
        traceback.print_exc()
    finally:
        _flush_std()
        os._exit(status)


class _ForkServer:
    """Forks one Python worker for each rapidrpcd worker process that asks.

    A rapidrpcd worker process connects, sends b"w" with its worker-protocol
    socket attached (SCM_RIGHTS) and waits. A worker forked from here serves
    that socket; when it ends, its way of ending goes back (b"x" and the exit
    status, or b"s" and the signal) and the connection is closed. b"u" from
    the process is passed on to the worker as SIGUSR1 (print the stack); the
    connection's end (that process was killed) kills the worker. b"d" asks
    for the method table. The end of `control` stops it all."""

    def __init__(self, listener, control, table, worker):
        self.listener = listener
        self.control = control
        self.table = table
        self.worker = worker
        self.selector = selectors.DefaultSelector()
        self.workers = {}  # pid -> [connection or None, pidfd]

    def run(self):
        self.selector.register(self.listener, selectors.EVENT_READ, self.accept)
        self.selector.register(self.control, selectors.EVENT_READ, None)
        while True:
            for key, _ in self.selector.select():
                if key.data is None:
                    return self.finish()
                key.data(key.fileobj)

    def accept(self, listener):
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _, uid, _ = struct.unpack("3i", creds)
        if uid != os.getuid():
            conn.close()
            return
        conn.settimeout(5)
        try:
            message, fds, _, _ = socket.recv_fds(conn, 1, 1)
        except OSError:
            conn.close()
            return
        if message == b"d":
            for fd in fds:
                os.close(fd)
            try:
                conn.sendall(self.table)
            except OSError:
                pass
            conn.close()
        elif message == b"w" and len(fds) == 1:
            pid = self.fork_worker(fds[0])
            os.close(fds[0])
            pidfd = os.pidfd_open(pid)
            self.workers[pid] = [conn, pidfd]
            conn.setblocking(False)
            self.selector.register(conn, selectors.EVENT_READ,
                                   functools.partial(self.from_process, pid))
            self.selector.register(pidfd, selectors.EVENT_READ,
                                   functools.partial(self.ended, pid))
        else:
            for fd in fds:
                os.close(fd)
            conn.close()

    def fork_worker(self, fd):
        pid = os.fork()
        if pid != 0:
            return pid
        status = 1
        try:
            # Only its own socket stays open.
            self.selector.close()
            self.listener.close()
            os.close(self.control)
            for conn, pidfd in self.workers.values():
                if conn is not None:
                    conn.close()
                os.close(pidfd)
            faulthandler.enable()  # a crash prints the Python stack
            faulthandler.register(signal.SIGUSR1)  # so does the pool, before a kill
            _worker.die_with_host()  # the fork server's death ends it
            status = _worker.serve(self.worker, fd)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        finally:
            _flush_std()
            os._exit(status)

    def from_process(self, pid, conn):
        try:
            data = conn.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            if b"u" in data:
                _kill(pid, signal.SIGUSR1)
            return
        # The rapidrpcd worker process is gone (killed): so goes the worker.
        _kill(pid, signal.SIGKILL)
        self.selector.unregister(conn)
        conn.close()
        self.workers[pid][0] = None

    def ended(self, pid, pidfd):
        _, status = os.waitpid(pid, 0)
        conn, _ = self.workers.pop(pid)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        if conn is None:
            return
        code = os.waitstatus_to_exitcode(status)
        end = b"s" + bytes([-code]) if code < 0 else b"x" + bytes([code & 0xFF])
        self.selector.unregister(conn)
        try:
            conn.setblocking(True)
            conn.sendall(end)
        except OSError:
            pass
        conn.close()

    def finish(self):
        for pid in list(self.workers):
            _kill(pid, signal.SIGKILL)
        for pid, (conn, pidfd) in self.workers.items():
            os.waitpid(pid, 0)
            if conn is not None:
                conn.close()
            os.close(pidfd)
        return 0


def _flush_std():
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream
            pass


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
