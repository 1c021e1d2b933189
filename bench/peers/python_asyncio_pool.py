#!/usr/bin/python3
"""Python design "asyncio + process pool": HTTP and XML-RPC in the loop, plain
methods in a ProcessPoolExecutor.

The main process's asyncio loop reads each HTTP request, parses the call
(xmlrpc.client.loads) and writes the response (xmlrpc.client.dumps).
Coroutine methods (here the system.* introspection, which needs the
registry) run in the loop; plain methods (load, sample.add, echo) are sent
to a ProcessPoolExecutor(--max_workers) with run_in_executor, so the loop
keeps accepting and parsing while the workers compute.

  python_asyncio_pool.py --host 127.0.0.1 --port PORT --max_workers N
Prints "listening on HOST:PORT" once the socket is bound.
"""

import asyncio
import concurrent.futures
import sys
import xmlrpc.client

import python_common


def main():
    args = python_common.parse_args(__doc__.splitlines()[0], max_workers=True)
    python_common.exit_on_sigterm()
    dispatcher = python_common.make_dispatcher()

    def in_loop(func):
        async def coroutine(*params):
            return func(*params)
        return coroutine

    # name -> coroutine function (runs in the loop) or plain function (runs in the pool)
    methods = dict(python_common.METHODS)
    for name in ("system.listMethods", "system.methodHelp", "system.methodSignature"):
        methods[name] = in_loop(dispatcher.funcs[name])

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=args.max_workers)

    async def call(name, params):
        func = methods.get(name)
        if func is None:
            raise xmlrpc.client.Fault(1, 'method "%s" is not supported' % name)
        if asyncio.iscoroutinefunction(func):
            return await func(*params)
        return await asyncio.get_running_loop().run_in_executor(pool, func, *params)

    try:
        asyncio.run(python_common.serve_asyncio(args.host, args.port, call))
    except KeyboardInterrupt:
        pass
    finally:
        pool.shutdown(cancel_futures=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
