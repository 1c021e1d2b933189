#!/usr/bin/python3
"""Python design "reference": Python's SimpleXMLRPCServer, one request at a time.

One process, one thread; HTTP/1.0 (the connection closes after each
response).  Methods: load, sample.add, echo, system.* (see python_common.py).

  python_sequential.py --host 127.0.0.1 --port PORT
Prints "listening on HOST:PORT" once the socket is bound.
"""

import sys
from xmlrpc.server import SimpleXMLRPCServer

import python_common


class Server(SimpleXMLRPCServer):
    request_queue_size = python_common.LISTEN_BACKLOG


def main():
    args = python_common.parse_args(__doc__.splitlines()[0])
    python_common.exit_on_sigterm()
    server = Server((args.host, args.port), logRequests=False, allow_none=True)
    python_common.register_all(server)
    return python_common.serve(server)


if __name__ == "__main__":
    sys.exit(main())
