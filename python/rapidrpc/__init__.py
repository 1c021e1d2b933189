"""rapidrpc for Python programs.

    from rapidrpc import SimpleXMLRPCServer

is the standard library's xmlrpc.server.SimpleXMLRPCServer (and
MultiPathXMLRPCServer, DocXMLRPCServer), its request handling run as the
standard library's, with rapidrpcd in front keeping the connections
(docs/python.md). Standard library only.
"""

from rapidrpc.server import *  # noqa: F403 - the names server.__all__ gives
from rapidrpc.server import __all__  # noqa: F401
