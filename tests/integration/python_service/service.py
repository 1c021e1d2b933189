"""The Python methods test_python serves with `rapidrpcd --python`.

Without a hook (`--python service`) its public functions are the methods;
with `--python service:register` the hook registers them under the demo
service's names, SimpleXMLRPCServer's way.
"""

import ctypes
import datetime
import os
import sys
import time
import xmlrpc.client


def load(n: int) -> str:
    """The n-th Fibonacci number in decimal, by the plain loop."""
    fib1 = fib2 = 1
    n -= 2
    while n > 0:
        fib1, fib2 = fib2, fib1 + fib2
        n -= 1
    return str(fib2)


def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


def echo(value):
    return value


def huge():
    """An integer past 64 bits: it cannot be sent."""
    return 2**64


def fault42():
    raise xmlrpc.client.Fault(42, "x")


def divide(a: int, b: int) -> float:
    return a / b


def crash():
    """Dies from SIGSEGV."""
    ctypes.string_at(0)


def abort():
    os.abort()


def spin(seconds: float) -> bool:
    """Burns CPU for that long."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return True


def pid_after(seconds: float) -> int:
    """This worker's process id, after holding it for that long."""
    time.sleep(seconds)
    return os.getpid()


async def later(seconds: float, value):
    """Returns value after that long, as an async def."""
    import asyncio
    await asyncio.sleep(seconds)
    return value


IMPORTED_BY = os.getpid()


def imported_by() -> int:
    """The process that imported this module: the warm parent, which forks
    the workers."""
    return IMPORTED_BY


def note(path, token):
    """Appends token to the file at path, a line of its own: a call that
    runs twice writes it twice."""
    with open(path, "a") as f:
        f.write(token + "\n")
    return token


def maybe_crash(crash: bool) -> bool:
    """Quick, unless crash: then dies from SIGSEGV."""
    if crash:
        ctypes.string_at(0)
    return False


def maybe_spin(seconds: float) -> bool:
    """Quick for 0; else spins for that long."""
    return spin(seconds) if seconds else False


def a_set():
    """A set: XML-RPC has no such type."""
    return {1, 2}


def int_keys():
    return {1: "one"}


def surrogate():
    """A lone surrogate, which no UTF-8 document can hold."""
    return ["ok", "\ud800"]


def not_finite():
    return [float("inf"), float("-inf"), float("nan")]


def when():
    return datetime.datetime(2026, 12, 6, 7, 8, 9)


def garbled(value):
    """Returns value, whose answer in marshal form the worker cuts short:
    the worker program (__main__) marshals with the `marshal` it imported,
    replaced here for one answer."""
    worker = sys.modules["__main__"]
    real = worker.marshal

    class CutShort:
        loads = staticmethod(real.loads)

        @staticmethod
        def dumps(v, version):
            worker.marshal = real
            return real.dumps(v, version)[:-1]

    worker.marshal = CutShort
    return value


def _private():
    return "not a method"


def register(server):
    """The hook: the demo service's names, registered with
    SimpleXMLRPCServer's verbs."""
    server.register_function(load)
    server.register_function(add, "sample.add")
    server.register_function(echo)
    server.register_function(huge)
    server.register_function(fault42)

    @server.register_function(name="sample.sum")
    def total(*numbers: int) -> int:
        """The sum of any number of integers."""
        return sum(numbers)

    class Maths:
        def square(self, x: int) -> int:
            """x squared."""
            return x * x

    server.register_instance(Maths())
    server.register_introspection_functions()
    server.register_multicall_functions()
