"""A SimpleXMLRPCServer script for test_python_server.py: a decorator, a
closure, a lambda and an instance, on 127.0.0.1 at a free port.

    served.py [--workers N] [--method-timeout S] [--path P]... [--any-path]
              [--allow-none] [--builtin-types] [--log-requests]
              [--encode-threshold N] [--no-fault-details]

--workers is 2 unless given; 0 serves in the script's own process.
Prints "port N" when listening, serves until Ctrl-C, then prints
"interrupted" from its own except KeyboardInterrupt and exits 0; or until
a call of `stop` (shutdown() from a registered function), then prints
"stopped" and exits 0. `sleep` says "sleeping" on standard error as it
begins.
"""

import argparse
import os
import sys
import time
import xmlrpc.client

from rapidrpc import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer


def scaler(k):
    def scale(x):
        """x times the closure's k."""
        return x * k
    return scale


class Service:
    def mul(self, x, y):
        """x times y."""
        return x * y

    def _hidden(self):
        return "never served"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--method-timeout", type=float)
    p.add_argument("--path", action="append")
    p.add_argument("--any-path", action="store_true")
    p.add_argument("--allow-none", action="store_true")
    p.add_argument("--builtin-types", action="store_true")
    p.add_argument("--log-requests", action="store_true")
    p.add_argument("--encode-threshold", type=int)
    p.add_argument("--no-fault-details", action="store_true")
    args = p.parse_args()

    class Handler(SimpleXMLRPCRequestHandler):
        rpc_paths = () if args.any_path else tuple(args.path or ("/", "/RPC2"))
        if args.encode_threshold is not None:
            encode_threshold = args.encode_threshold

    started = time.time()  # a closure's state, captured before the workers fork
    with SimpleXMLRPCServer(("127.0.0.1", 0), requestHandler=Handler, logRequests=args.log_requests,
                            allow_none=args.allow_none, use_builtin_types=args.builtin_types,
                            workers=args.workers or None, method_timeout=args.method_timeout,
                            fault_details=not args.no_fault_details) as server:
        server.register_introspection_functions()
        server.register_multicall_functions()

        @server.register_function(name="sample.add")
        def add(a: int, b: int) -> int:
            """Return a + b."""
            return a + b

        server.register_function(scaler(3), "scale3")
        server.register_function(lambda: started, "started")
        server.register_function(os.getpid, "pid")
        @server.register_function(name="sleep")
        def sleep(seconds):
            print("sleeping", file=sys.stderr, flush=True)
            time.sleep(seconds)
            return seconds

        server.register_function(lambda: server.shutdown() or "stopping", "stop")
        server.register_function(lambda v: type(v).__name__, "kind")
        server.register_function(lambda: None, "none")
        server.register_function(lambda n: "y" * n, "text")
        server.register_function(os.abort, "abort")

        @server.register_function
        def spin():
            while True:
                pass

        @server.register_function
        def fault():
            raise xmlrpc.client.Fault(42, "x")

        @server.register_function
        def fail():
            return 1 / 0

        server.register_instance(Service())
        print("port", server.server_address[1], flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
