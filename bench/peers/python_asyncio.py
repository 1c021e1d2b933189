#!/usr/bin/python3
"""Python design "asyncio": an asyncio streams server, handlers run inline in the loop.

The loop reads the HTTP request, parses the XML-RPC call
(xmlrpc.client.loads), runs the method in the loop thread itself and writes
the response (xmlrpc.client.dumps); one request per connection (HTTP/1.0).
A CPU-bound call such as load(150000) blocks the loop for its whole
duration, so this serves one load() at a time, like the reference server.

  python_asyncio.py --host 127.0.0.1 --port PORT
Prints "listening on HOST:PORT" once the socket is bound.
"""

import asyncio
import sys

import python_common


def main():
    args = python_common.parse_args(__doc__.splitlines()[0])
    python_common.exit_on_sigterm()
    dispatcher = python_common.make_dispatcher()

    async def call(name, params):
        return dispatcher._dispatch(name, params)  # inline: blocks the loop

    try:
        asyncio.run(python_common.serve_asyncio(args.host, args.port, call))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
