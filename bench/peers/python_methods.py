"""The Python methods bench/python_hosting serves with rapidrpcd:

  rapidrpcd --python python_methods:register --python-path bench/peers

register(server) is the HOOK: it registers, with SimpleXMLRPCServer's verb,
the methods the Python peers serve (python_common.py) and two more for the
crash measurement:

  load(n)          n-th Fibonacci number as a decimal string (the article's loop)
  sample.add(a, b) a + b
  echo(v)          v
  pid()            the process id of the worker that ran the call
  crash()          os.abort(): the worker dies from SIGABRT in the middle of the call

Standard library only.  Importing python_common lifts Python 3.11's
4300-digit limit on int -> str in each worker (load(150000) has 31,348 digits).
"""

import os

import python_common


def pid():
    """Return the process id of the worker that ran this call."""
    return os.getpid()


def crash():
    """Abort the worker process (SIGABRT) in the middle of this call."""
    os.abort()


def register(server):
    """Register load, sample.add, echo, pid and crash on server."""
    for name, func in python_common.METHODS.items():
        server.register_function(func, name)
    server.register_function(pid, "pid")
    server.register_function(crash, "crash")
