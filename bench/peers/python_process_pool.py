#!/usr/bin/python3
"""Python design "process pool": a TCPServer hands each accepted socket to a
multiprocessing.Pool; each pool process runs the whole HTTP + XML-RPC request.

The parent only accepts.  The socket travels to a pool process by fd passing:
multiprocessing.reduction.DupFd dups it at once and serves the copy over a
Unix socket (SCM_RIGHTS) when the pool process asks for it, so the parent can
close its own copy right after queueing the task.  Each pool process owns an
unbound SimpleXMLRPCServer (built once, in the pool initializer) and runs
SimpleXMLRPCRequestHandler on the socket through it.

  python_process_pool.py --host 127.0.0.1 --port PORT --processes N
Prints "listening on HOST:PORT" once the pool is up and the socket is bound.
"""

import multiprocessing
import signal
import socket
import socketserver
import sys
from multiprocessing.reduction import DupFd
from xmlrpc.server import SimpleXMLRPCServer

import python_common

_server = None  # in each pool process: the dispatcher + request handler


def _init_worker():
    global _server
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # Pool.terminate() ends us with SIGTERM
    _server = SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, allow_none=True,
                                 bind_and_activate=False)
    python_common.register_all(_server)


def _handle(dup_fd, family, client_address):
    """In a pool process: serve one connection from start to close."""
    sock = socket.socket(family, socket.SOCK_STREAM, fileno=dup_fd.detach())
    try:
        _server.finish_request(sock, client_address)
    except Exception:
        _server.handle_error(sock, client_address)
    finally:
        _server.shutdown_request(sock)


class PoolServer(socketserver.TCPServer):
    request_queue_size = python_common.LISTEN_BACKLOG
    allow_reuse_address = True

    def __init__(self, address, processes):
        self.pool = multiprocessing.Pool(processes, initializer=_init_worker)
        super().__init__(address, None)

    def process_request(self, request, client_address):
        self.pool.apply_async(_handle, (DupFd(request.fileno()), request.family, client_address))
        self.close_request(request)  # close only: the pool process owns the connection now

    def server_close(self):
        super().server_close()
        self.pool.terminate()
        self.pool.join()


def main():
    args = python_common.parse_args(__doc__.splitlines()[0], processes=True)
    python_common.exit_on_sigterm()
    server = PoolServer((args.host, args.port), args.processes)
    return python_common.serve(server)


if __name__ == "__main__":
    sys.exit(main())
