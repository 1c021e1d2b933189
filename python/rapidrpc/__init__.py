"""rapidrpc for Python programs.

    from rapidrpc import SimpleXMLRPCServer

is the standard library's xmlrpc.server.SimpleXMLRPCServer (and
MultiPathXMLRPCServer, DocXMLRPCServer), its request handling run as the
standard library's, with rapidrpcd in front keeping the connections
(docs/python.md). Standard library only.
"""

from rapidrpc.server import (CGIXMLRPCRequestHandler, DocCGIXMLRPCRequestHandler,
                             DocXMLRPCRequestHandler, DocXMLRPCServer, ForkingMixIn,
                             MultiPathXMLRPCServer, ServerHTMLDoc, SimpleXMLRPCDispatcher,
                             SimpleXMLRPCRequestHandler, SimpleXMLRPCServer, ThreadingMixIn,
                             XMLRPCDocGenerator, find_rapidrpcd, list_public_methods,
                             resolve_dotted_attribute)

__all__ = [
    "SimpleXMLRPCServer", "MultiPathXMLRPCServer", "DocXMLRPCServer",
    "SimpleXMLRPCRequestHandler", "SimpleXMLRPCDispatcher", "DocXMLRPCRequestHandler",
    "CGIXMLRPCRequestHandler", "DocCGIXMLRPCRequestHandler", "ServerHTMLDoc",
    "XMLRPCDocGenerator", "resolve_dotted_attribute", "list_public_methods",
    "ThreadingMixIn", "ForkingMixIn", "find_rapidrpcd",
]
