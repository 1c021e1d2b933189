"""rapidrpc for Python programs.

    from rapidrpc import SimpleXMLRPCServer

is the standard library's xmlrpc.server.SimpleXMLRPCServer, served by
rapidrpcd: its registered functions run in Python worker processes, one
call per worker at once (docs/python.md). Standard library only.
"""

from rapidrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer, find_rapidrpcd

__all__ = ["SimpleXMLRPCServer", "SimpleXMLRPCRequestHandler", "find_rapidrpcd"]
