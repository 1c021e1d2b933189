#!/usr/bin/python3
"""Reference peer: Python's standard-library SimpleXMLRPCServer.

This is the "reference" server of the article
"XML-RPC: speeding up a server with Python's standard library only": one process, one
thread, one request at a time.  It serves the same methods as rapidrpcd
that the benchmarks call:

  load(n)          n-th Fibonacci number as a decimal string (the article's loop)
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

import python_common  # the methods, shared with the Python design peers


class Handler(SimpleXMLRPCRequestHandler):
    """SimpleXMLRPCServer's handler (HTTP/1.0, as in the standard library)."""

    rpc_paths = ("/RPC2", "/")


class KeepAliveHandler(Handler):
    """The same, speaking HTTP/1.1 (keep-alive)."""

    protocol_version = "HTTP/1.1"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6677)
    parser.add_argument("--http11", action="store_true",
                        help="speak HTTP/1.1 keep-alive instead of the stdlib's HTTP/1.0")
    args = parser.parse_args()

    server = SimpleXMLRPCServer((args.host, args.port),
                                requestHandler=KeepAliveHandler if args.http11 else Handler,
                                logRequests=False, allow_none=True)
    python_common.register_all(server)
    return python_common.serve(server)


if __name__ == "__main__":
    sys.exit(main())
