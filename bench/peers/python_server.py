#!/usr/bin/python3
"""Reference peer: Python's standard-library SimpleXMLRPCServer.

This is the "reference" server of the seed write-up: one process, one
thread, one request at a time.  It serves the same methods as rapidrpcd
that the benchmarks call:

  load(n)          n-th Fibonacci number as a decimal string (the seed's loop)
  sample.add(a, b) a + b
  echo(v)          v
  system.*         introspection (listMethods, methodHelp, methodSignature)

It runs as users run it: HTTP/1.0, so every response closes its connection
and a keep-alive client (wrk) reconnects for each request. logRequests=False,
so the per-request log line to stderr is not measured.

--http11 makes the handler speak HTTP/1.1 (keep-alive) instead. The server
is still sequential, so it then serves the first connection for as long as
that client keeps sending, and other connections wait in the listen queue
without an answer: at 64 connections wrk then measures one connection.

Usage: python_server.py --host 127.0.0.1 --port PORT
Prints "listening on HOST:PORT" on stdout once the socket is bound.
"""

import argparse
import sys
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer


def load(n):
    """Return the n-th Fibonacci number as a decimal string (fib(1) = fib(2) = 1)."""
    fib1 = fib2 = 1
    n -= 2
    while n > 0:
        fib1, fib2 = fib2, fib1 + fib2
        n -= 1
    return str(fib2)


def add(a, b):
    """Return a + b."""
    return a + b


def echo(v):
    """Return v unchanged."""
    return v


class Handler(SimpleXMLRPCRequestHandler):
    """SimpleXMLRPCServer's handler (HTTP/1.0, as in the standard library)."""

    rpc_paths = ("/RPC2", "/")


class KeepAliveHandler(Handler):
    """The same, speaking HTTP/1.1 (keep-alive)."""

    protocol_version = "HTTP/1.1"


def main():
    # load(150000) has 31,348 digits; Python >= 3.11 refuses to convert ints
    # of more than 4300 digits to str unless the limit is lifted.
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6677)
    parser.add_argument("--http11", action="store_true",
                        help="speak HTTP/1.1 keep-alive instead of the stdlib's HTTP/1.0")
    args = parser.parse_args()

    server = SimpleXMLRPCServer((args.host, args.port),
                                requestHandler=KeepAliveHandler if args.http11 else Handler,
                                logRequests=False, allow_none=True)
    server.register_introspection_functions()
    server.register_function(load, "load")
    server.register_function(add, "sample.add")
    server.register_function(echo, "echo")
    host, port = server.server_address[:2]
    print(f"listening on {host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
