"""What the five Python design peers (bench/peers/python_{sequential,asyncio,
fork,process_pool,asyncio_pool}.py) share: the methods, the
command line, and the small HTTP/1.0 + XML-RPC layer of the two asyncio peers.

Standard library only.  The methods are those of the article
"XML-RPC: speeding up a server with Python's standard library only":

  load(n)          n-th Fibonacci number as a decimal string (the article's loop)
  sample.add(a, b) a + b
  echo(v)          v
  system.*         introspection (listMethods, methodHelp, methodSignature)

Importing this module lifts Python 3.11's 4300-digit limit on int -> str
(load(150000) has 31,348 digits); forked workers inherit the setting.
"""

import argparse
import asyncio
import signal
import sys
import xmlrpc.client
from xmlrpc.server import SimpleXMLRPCDispatcher

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

# socketserver's default listen backlog is 5.  The article's client opens 20
# connections at once; with a backlog of 5 the listen queue overflows and some
# calls fail with "connection reset by peer" (3 of 40 on python_fork.py when
# tried).  rapidrpcd and asyncio.start_server listen with >= 100.
LISTEN_BACKLOG = 128

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_HEADER_LINES = 100


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


METHODS = {"load": load, "sample.add": add, "echo": echo}


def register_all(dispatcher):
    """Register introspection and the article's methods on a SimpleXMLRPCDispatcher
    (a SimpleXMLRPCServer is one)."""
    dispatcher.register_introspection_functions()
    for name, func in METHODS.items():
        dispatcher.register_function(func, name)
    return dispatcher


def parse_args(description, processes=False, max_workers=False):
    """--host, --port and, where the design has a pool, --processes or --max_workers."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6677, help="0 picks a free port")
    if processes:
        p.add_argument("--processes", type=int, default=10,
                       help="worker processes (10, as in the article)")
    if max_workers:
        p.add_argument("--max_workers", "--max-workers", dest="max_workers", type=int,
                       default=10, help="ProcessPoolExecutor size (10, as in the article)")
    return p.parse_args()


def announce(host, port):
    print("listening on %s:%d" % (host, port), flush=True)


def serve(server):
    """Announce a socketserver-based server, serve until interrupted, close it."""
    announce(*server.server_address[:2])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def exit_on_sigterm():
    """SIGTERM raises SystemExit in the main thread, so the `finally:` blocks
    run and pool processes are shut down instead of being orphaned."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


# ---------------------------------------------------------------------------
# HTTP/1.0 + XML-RPC over asyncio streams (python_asyncio.py, python_asyncio_pool.py)


class HttpError(Exception):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_request(reader):
    """Read one HTTP request; return (method, path, body).  Raises HttpError."""
    line = await reader.readline()
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise HttpError(400, "Bad Request")
    method, path, _ = parts
    length = None
    for _ in range(MAX_HEADER_LINES):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise HttpError(400, "Bad Request") from None
    else:
        raise HttpError(431, "Request Header Fields Too Large")
    if method != "POST":
        raise HttpError(501, "Not Implemented")
    if path not in ("/RPC2", "/"):
        raise HttpError(404, "Not Found")
    if length is None or length < 0:
        raise HttpError(411, "Length Required")
    if length > MAX_BODY_BYTES:
        raise HttpError(413, "Payload Too Large")
    return method, path, await reader.readexactly(length)


def http_response(status, reason, body=b"", content_type="text/xml"):
    head = ("HTTP/1.0 %d %s\r\nServer: python-asyncio\r\nContent-Type: %s\r\n"
            "Content-Length: %d\r\nConnection: close\r\n\r\n"
            % (status, reason, content_type, len(body)))
    return head.encode("latin-1") + body


def fault_response(code, message):
    return xmlrpc.client.dumps(xmlrpc.client.Fault(code, message),
                               methodresponse=True).encode()


def make_connection_handler(call):
    """An asyncio.start_server callback: one request per connection (HTTP/1.0,
    closed after the response, like the stdlib server).

    call: coroutine (method_name, params) -> result; a raised Fault goes back
    as is, any other exception as Fault(1, "type:message") like
    SimpleXMLRPCDispatcher does."""

    async def handle(reader, writer):
        try:
            try:
                _, _, body = await read_request(reader)
            except HttpError as e:
                writer.write(http_response(e.status, e.reason, e.reason.encode(), "text/plain"))
                return
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            try:
                params, name = xmlrpc.client.loads(body)
                result = await call(name, params)
                payload = xmlrpc.client.dumps((result,), methodresponse=True,
                                              allow_none=True).encode()
            except xmlrpc.client.Fault as f:
                payload = fault_response(f.faultCode, f.faultString)
            except Exception as e:  # the stdlib dispatcher's behaviour
                payload = fault_response(1, "%s:%s" % (type(e), e))
            writer.write(http_response(200, "OK", payload))
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    return handle


def make_dispatcher():
    """A SimpleXMLRPCDispatcher with introspection and the article's methods."""
    return register_all(SimpleXMLRPCDispatcher(allow_none=True, encoding=None))


async def serve_asyncio(host, port, call):
    server = await asyncio.start_server(make_connection_handler(call), host, port,
                                        backlog=LISTEN_BACKLOG)
    announce(*server.sockets[0].getsockname()[:2])
    async with server:
        await server.serve_forever()
