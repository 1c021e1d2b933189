"""The Python peer of the client's interop tests.

Python's standard SimpleXMLRPCServer on 127.0.0.1 and a free port, with nil
(allow_none), introspection and system.multicall, serving echo, sample.add and
sleep. Threaded, so that a sleeping call holds up no other call. Prints
`listening on 127.0.0.1:PORT` once it accepts connections; SIGTERM ends it.

Like every SimpleXMLRPCServer it speaks HTTP/1.0 (one request per
connection), answers unknown methods and bad parameters with fault code 1,
gzips responses past 1400 bytes for clients that accept gzip, and cannot
send integers beyond 32 bits.
"""

import socketserver
import time
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer


class Handler(SimpleXMLRPCRequestHandler):
    rpc_paths = ("/RPC2", "/")

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class Server(socketserver.ThreadingMixIn, SimpleXMLRPCServer):
    daemon_threads = True
    # The tests open 50 connections at once; the default backlog of 5 would
    # drop SYNs and stall them by a second.
    request_queue_size = 128


def echo(value):
    return value


def add(a, b):
    return a + b


def sleep(seconds):
    time.sleep(seconds)
    return True


def main():
    server = Server(("127.0.0.1", 0), requestHandler=Handler, logRequests=False,
                    allow_none=True, use_builtin_types=True)
    server.register_introspection_functions()
    server.register_multicall_functions()
    server.register_function(echo, "echo")
    server.register_function(add, "sample.add")
    server.register_function(sleep, "sleep")
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
