#!/usr/bin/python3
"""Python design "fork": SimpleXMLRPCServer + ForkingMixIn, a child process per request.

The parent accepts and forks; the child handles the whole HTTP + XML-RPC
request and exits.  At most --processes children run at once
(ForkingMixIn.max_children; the parent waits for one to finish before it
forks another).

  python_fork.py --host 127.0.0.1 --port PORT --processes N
Prints "listening on HOST:PORT" once the socket is bound.
"""

import sys
from socketserver import ForkingMixIn
from xmlrpc.server import SimpleXMLRPCServer

import python_common


class ForkingServer(ForkingMixIn, SimpleXMLRPCServer):
    request_queue_size = python_common.LISTEN_BACKLOG


def main():
    args = python_common.parse_args(__doc__.splitlines()[0], processes=True)
    python_common.exit_on_sigterm()
    server = ForkingServer((args.host, args.port), logRequests=False, allow_none=True)
    server.max_children = args.processes
    python_common.register_all(server)
    return python_common.serve(server)


if __name__ == "__main__":
    sys.exit(main())
