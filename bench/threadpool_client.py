#!/usr/bin/env python3
"""A Python load client: N calls of load(150000) from a thread pool.

The client of the article
"XML-RPC: speeding up a server with Python's standard library only":
the calls are submitted to a ThreadPoolExecutor(max_workers=20);
each call makes a new xmlrpc.client.ServerProxy (so a new TCP connection per
call, path /RPC2), calls the method by name and closes it; socket timeout 500 s.
On top of the article's client, every result is checked against Python's own loop
(computed once, before the clock starts).

  threadpool_client.py --url http://127.0.0.1:PORT/RPC2 [--calls 200] [--threads 20]

Prints the elapsed seconds, then a machine-readable line:
  CLIENT_RESULT calls=N threads=T n=150000 elapsed_s=S ok=N failed=N
Exit status 1 if any call failed or returned a wrong value.
"""

import argparse
import concurrent.futures
import socket
import sys
import time
import xmlrpc.client

TIMEOUT_S = 500  # the article's client timeout


def fib_str(n):
    """The article's load(n): the n-th Fibonacci number as a decimal string."""
    fib1 = fib2 = 1
    n -= 2
    while n > 0:
        fib1, fib2 = fib2, fib1 + fib2
        n -= 1
    return str(fib2)


def call(url, method, arg):
    with xmlrpc.client.ServerProxy(url) as proxy:
        return getattr(proxy, method)(arg)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:6677/RPC2")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--n", type=int, default=150000, help="argument of load (150000)")
    args = parser.parse_args()

    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # 31,348 digits > Python 3.11's default 4300
    socket.setdefaulttimeout(TIMEOUT_S)
    expected = fib_str(args.n)

    ok = failed = 0
    first_problem = None
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.threads) as pool:
        futures = [pool.submit(call, args.url, "load", args.n) for _ in range(args.calls)]
        for future in concurrent.futures.as_completed(futures):
            try:
                result = future.result()
            except Exception as e:  # a fault, an HTTP error, a socket error
                failed += 1
                first_problem = first_problem or "call failed: %r" % e
                continue
            if result == expected:
                ok += 1
            else:
                failed += 1
                first_problem = first_problem or "wrong result: %r..." % str(result)[:80]
    elapsed = time.perf_counter() - start

    print("%.3f s for %d calls of load(%d) with %d threads" % (elapsed, args.calls, args.n,
                                                               args.threads))
    if first_problem:
        print("FAILED: %d of %d calls; first: %s" % (failed, args.calls, first_problem))
    print("CLIENT_RESULT calls=%d threads=%d n=%d elapsed_s=%.6f ok=%d failed=%d"
          % (args.calls, args.threads, args.n, elapsed, ok, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
