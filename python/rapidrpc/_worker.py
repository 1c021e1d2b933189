"""The Python worker process of `rapidrpcd --python MODULE[:HOOK]`.

rapidrpcd does the HTTP, XML-RPC, JSON-RPC, TLS and connections; this
program runs the Python methods, one call at a time, in a worker process of
its pool (docs/python.md). Standard library only, so it runs on the
system's python3 as it is.

    _worker.py --module MODULE[:HOOK] [--path DIR]... --describe [--warm-parent]
        prints the method table (an XML-RPC methodResponse holding an array
        of structs: name, help, signature, params, min, max) and exits; an
        import error exits with status 3 and its traceback on stderr, and
        so, with --warm-parent, does a module whose import started threads
        (the workers forked from it would run without them).
    _worker.py --module MODULE[:HOOK] [--path DIR]...
        serves the worker protocol on descriptor 3: each message is a
        4-byte big-endian length and a call, or its answer, in the compact
        form (marshal's, below) or as an XML-RPC document; a call in, one
        answer out; end of stream ends the process.
    _worker.py --module MODULE[:HOOK] [--path DIR]... --warm-parent
        imports the module once and forks the workers, each serving the
        worker protocol as above; descriptor 3 is a SOCK_SEQPACKET socket
        speaking the fork-server protocol (serve_forks()).

The methods: without HOOK, the module's public functions (defined in it,
not imported, and not starting with "_"); with HOOK, what HOOK(server)
registers with SimpleXMLRPCServer's verbs (register_function, plain or as a
decorator, and register_instance).
"""

import argparse
import base64
import datetime
import faulthandler
import gc
import importlib
import inspect
import marshal
import os
import re
import select
import selectors
import signal
import socket
import struct
import sys
import time
import traceback
import typing
import xmlrpc.client

MAX_FRAME = 64 * 1024 * 1024  # as the host's max_worker_frame_bytes

# The compact form (src/worker/marshal.hpp): a frame's first byte says what
# it holds. The host sends b"m" and marshal.dumps((name, params), 2); the
# worker answers b"r" and marshal.dumps(result, 2), or b"f" and
# marshal.dumps((code, text), 2), or an XML-RPC methodResponse for a result
# marshal cannot carry (datetime, Binary, an object's attributes) or that
# XML-RPC writes otherwise (an infinite or NaN float: Python's marshaller
# writes "inf" and "nan", which the host's writer refuses). The worker says
# HELLO when it is ready, so the host knows it reads this form.
HELLO = b"marshal 2"
MARSHAL_VERSION = 2
CALL, RESULT, FAULT = b"m"[0], b"r", b"f"
# A double in marshal form whose exponent bits are all set (infinite, NaN):
# 'g', then 8 bytes little-endian. It may match inside other data as well,
# where the XML-RPC answer it costs is merely slower.
NON_FINITE = re.compile(rb"g[\x00-\xff]{6}[\xf0-\xff][\x7f\xff]")
INT32 = range(-2**31, 2**31)
# Results that cannot be awaited: no need to ask (inspect.isawaitable is a
# good part of a cheap call).
PLAIN_RESULTS = frozenset((int, str, float, bool, type(None), list, tuple, dict, bytes))
INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

TYPE_NAMES = {
    int: "int",
    bool: "boolean",
    float: "double",
    str: "string",
    bytes: "base64",
    bytearray: "base64",
    datetime.datetime: "dateTime.iso8601",
    xmlrpc.client.DateTime: "dateTime.iso8601",
    list: "array",
    tuple: "array",
    dict: "struct",
    type(None): "nil",
    None: "nil",
}


class Registrar:
    """What a HOOK is handed: SimpleXMLRPCServer's registration verbs."""

    def __init__(self):
        self.funcs = {}
        self.instance = None
        self.allow_dotted_names = False

    def register_function(self, function=None, name=None):
        if function is None:  # @server.register_function(name="x")
            return lambda f: self.register_function(f, name)
        self.funcs[name or function.__name__] = function
        return function

    def register_instance(self, instance, allow_dotted_names=False):
        self.instance = instance
        self.allow_dotted_names = allow_dotted_names

    # rapidrpcd answers these itself.
    def register_introspection_functions(self):
        pass

    def register_multicall_functions(self):
        pass


def load(spec, paths):
    """The methods of MODULE[:HOOK]: {name: callable}."""
    for p in reversed(paths):
        sys.path.insert(0, os.path.abspath(p))
    module_name, _, hook = spec.partition(":")
    module = importlib.import_module(module_name)
    if not hook:
        return {name: f for name, f in vars(module).items()
                if not name.startswith("_") and inspect.isfunction(f)
                and f.__module__ == module.__name__}
    registrar = Registrar()
    getattr(module, hook)(registrar)
    return methods_of(registrar.funcs, registrar.instance, registrar.allow_dotted_names)


# How deep allow_dotted_names looks for methods: instance.a.b.c.method.
MAX_DOTTED_DEPTH = 4


def methods_of(funcs, instance, allow_dotted_names=False):
    """The methods SimpleXMLRPCServer would dispatch to, as {name: callable}:
    the registered functions, and an instance's public methods (with
    allow_dotted_names, those of its attributes too, as "attr.method"). An
    instance with _dispatch(name, params) serves the names its _listMethods()
    gives (else its public methods) through it, with _methodHelp(name) as
    their help. A registered function wins over an instance's method."""
    methods = {}
    if instance is not None:
        dispatch = getattr(instance, "_dispatch", None)
        if callable(dispatch):
            methods = dispatched_methods(instance, dispatch)
        else:
            walk(instance, "", allow_dotted_names, MAX_DOTTED_DEPTH, {id(instance)}, methods)
    methods.update(funcs)
    return methods


def public_names(obj):
    return [name for name in dir(obj) if not name.startswith("_")]


def walk(obj, prefix, dotted, depth, seen, out):
    for name in public_names(obj):
        try:
            attr = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a property that fails is no method
            continue
        if callable(attr):
            out[prefix + name] = attr
        if dotted and depth > 0 and id(attr) not in seen and looked_into(attr):
            walk(attr, prefix + name + ".", dotted, depth - 1, seen | {id(attr)}, out)


def looked_into(attr):
    """With allow_dotted_names, "a.b" reaches instance.a.b where a is a class
    or an object of a user-defined type; builtins and modules are not looked
    into."""
    if inspect.isroutine(attr) or inspect.ismodule(attr):
        return False
    kind = attr if inspect.isclass(attr) else type(attr)
    return getattr(kind, "__module__", "builtins") != "builtins"


def dispatched_methods(instance, dispatch):
    lister = getattr(instance, "_listMethods", None)
    names = list(lister()) if callable(lister) else [
        n for n in public_names(instance) if callable(getattr(instance, n, None))]
    helper = getattr(instance, "_methodHelp", None)
    methods = {}
    for name in names:
        def call(*params, _name=name):
            return dispatch(_name, params)
        call.__name__ = name
        call.__doc__ = helper(name) if callable(helper) else None
        methods[name] = call
    return methods


def type_name(annotation, namespace):
    """The XML-RPC type of an annotation (TYPE_NAMES), "undef" if none. A
    string annotation (every one under `from __future__ import annotations`)
    is read in the function's module, as typing.get_type_hints() reads it; a
    parameterized type counts as its origin: `list[int]` is a list."""
    if annotation is inspect.Signature.empty:
        return "undef"
    for _ in range(2):  # "float", and '"float"' under the __future__ import
        if not isinstance(annotation, str):
            break
        try:
            annotation = eval(annotation, namespace)  # noqa: S307 - the module's own code
        except Exception:  # noqa: BLE001 - a name it cannot resolve is no known type
            return "undef"
    annotation = typing.get_origin(annotation) or annotation
    try:
        return TYPE_NAMES.get(annotation, "undef")
    except TypeError:  # an unhashable annotation, such as [int]
        return "undef"


def signature_of(f):
    """(help, signature list or [], param names, min, max or -1)."""
    help_text = inspect.getdoc(f) or ""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return help_text, [], [], 0, -1
    names, required, most = [], 0, 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
            most += 1
            if p.default is p.empty:
                required += 1
        elif p.kind == p.VAR_POSITIONAL:
            most = -1
    annotated = sig.return_annotation is not sig.empty or any(
        p.annotation is not p.empty for p in sig.parameters.values())
    types = []
    if annotated and most != -1:
        namespace = getattr(inspect.unwrap(f), "__globals__", {})
        types = [type_name(sig.return_annotation, namespace)] + [
            type_name(sig.parameters[n].annotation, namespace) for n in names]
    return help_text, types, names if most != -1 else [], required, most


def describe(methods):
    table = []
    for name, f in sorted(methods.items()):
        help_text, types, names, least, most = signature_of(f)
        table.append({"name": name, "help": help_text, "signature": types,
                      "params": names, "min": least, "max": most})
    return dumps((table,))


class Marshaller(xmlrpc.client.Marshaller):
    """The standard marshaller, with i8 for integers past 32 bits (it refuses
    them) and nil allowed; an integer past 64 bits cannot be sent."""

    dispatch = dict(xmlrpc.client.Marshaller.dispatch)

    def dump_long(self, value, write):
        if -2**31 <= value < 2**31:
            write("<value><int>%d</int></value>\n" % value)
        elif -2**63 <= value < 2**63:
            write("<value><i8>%d</i8></value>\n" % value)
        else:
            raise OverflowError("int exceeds XML-RPC limits")

    dispatch[int] = dump_long


def dumps(params, allow_none=True):
    """A methodResponse document for a result tuple, or a Fault."""
    body = Marshaller("utf-8", allow_none=allow_none).dumps(params)
    return ("<?xml version='1.0'?>\n<methodResponse>\n" + body +
            "</methodResponse>\n").encode("utf-8")


def fault(code, message):
    return dumps(xmlrpc.client.Fault(code, message))


# The calls the worker is handed come in two forms nearly always: as
# rapidrpc's XML-RPC writer writes them (no whitespace between elements,
# every value typed, <nil/>, and only &lt; &gt; &amp; and &#N; in text),
# and as xmlrpc.client writes them (the host passes an XML-RPC client's
# request on as it came): the same, with a single-quoted declaration and a
# newline after some tags. read_call() reads those forms with one regular
# expression, about twice as fast as xmlrpc.client.loads(), whose handlers
# run in Python for every element; any other document goes to loads().
CALL_HEADS = ('<?xml version="1.0"?>\n<methodCall>', "<?xml version='1.0'?>\n<methodCall>")
XML_SPACE = " \t\r\n"
TOKEN = re.compile(r"<(/?)([A-Za-z0-9.]+)(/?)>([^<]*)")
ENTITY = re.compile(r"&([^;]*);")
NAMED = {"lt": "<", "gt": ">", "amp": "&"}
SKIPPED = frozenset(("value", "param", "params", "member", "data", "methodCall"))


class NotCanonical(Exception):
    """The document is not in the host's form."""


def entity(m):
    name = m.group(1)
    if name in NAMED:
        return NAMED[name]
    if name.startswith("#") and name[1:].isdigit():
        return chr(int(name[1:]))
    raise NotCanonical(name)


def text_of(t):
    return ENTITY.sub(entity, t) if "&" in t else t


def read_call(document, use_builtin_types):
    """(params, method name) of a methodCall."""
    fast = read_canonical_call(document, use_builtin_types)
    return fast if fast is not None else xmlrpc.client.loads(
        document, use_builtin_types=use_builtin_types)


def read_canonical_call(document, use_builtin_types):
    """read_call() of a call in the host's form; None for any other."""
    try:
        text = document.decode("utf-8")
        # A raw CR is a newline to an XML parser (&#13; is a CR).
        if "\r" in text:
            return None
        if not text.startswith(CALL_HEADS) or not text.rstrip(XML_SPACE).endswith("</methodCall>"):
            return None
        return read_tokens(text, use_builtin_types)
    except (NotCanonical, ValueError, IndexError, KeyError):
        return None  # loads() reads it, or says what is wrong with it


def read_tokens(text, use_builtin_types):
    start = len(CALL_HEADS[0]) - len("<methodCall>")
    tokens = TOKEN.findall(text, start)
    if len(tokens) != text.count("<", start):
        raise NotCanonical("markup other than plain elements")  # comments, CDATA, ...
    stack, keys, name, values = [[]], [], None, 0
    for close, tag, empty, tail in tokens:
        if close:
            # Whitespace after an end tag is between elements: not data.
            if tail and tail.strip(XML_SPACE):
                raise NotCanonical("text between elements")
            if tag != "array" and tag != "struct":
                continue
            v = stack.pop()
        elif tag in SKIPPED:
            # In <value> it would be a string; in the others it is nothing.
            if empty or tail and (tag == "value" or tail.strip(XML_SPACE)):
                raise NotCanonical("a value without a type, or text between elements")
            continue
        elif tag == "int" or tag == "i4" or tag == "i8":
            v = int(tail)
        elif tag == "string":
            v = text_of(tail)
        elif tag == "double":
            v = float(tail)
        elif tag == "name":
            keys.append(text_of(tail))
            continue
        elif tag == "struct" and not empty:
            stack.append({})
            continue
        elif tag == "array" and not empty:
            stack.append([])
            continue
        elif tag == "boolean" and (tail == "0" or tail == "1"):
            v = tail == "1"
        elif tag == "nil" and empty:
            v = None
        elif tag == "base64":
            data = base64.b64decode(tail)
            v = data if use_builtin_types else xmlrpc.client.Binary(data)
        elif tag == "dateTime.iso8601":
            v = (datetime.datetime.strptime(tail, "%Y%m%dT%H:%M:%S") if use_builtin_types
                 else xmlrpc.client.DateTime(tail))
        elif tag == "methodName" and name is None:
            name = text_of(tail)
            continue
        else:
            return None
        values += 1
        top = stack[-1]
        if type(top) is dict:
            if not keys:
                return None
            top[keys.pop()] = v
        else:
            top.append(v)
    # Every <value> gave one value: none was empty or untyped.
    if len(stack) != 1 or keys or name is None or values != text.count("<value>", start):
        return None
    return tuple(stack[0]), name


class Worker:
    """Answers calls of `methods`. `allow_none` and `use_builtin_types` are
    SimpleXMLRPCServer's: None in a result, and bytes and datetime (rather
    than xmlrpc.client's Binary and DateTime) in parameters."""

    def __init__(self, methods, allow_none=True, use_builtin_types=True):
        self.methods = methods
        self.allow_none = allow_none
        self.use_builtin_types = use_builtin_types
        self.loop = None  # made for the first async def method

    def call(self, name, params):
        f = self.methods.get(name)
        if f is None:
            return fault(METHOD_NOT_FOUND, "method not found")
        try:
            result = self.run(f, params)
        except xmlrpc.client.Fault as f_:
            return fault(f_.faultCode, f_.faultString)
        except Exception:  # noqa: BLE001 - every failure is answered
            return self.raised(name)
        return self.encode(name, result)

    def call_compact(self, name, params):
        """call(), answered in the compact form where it can be."""
        f = self.methods.get(name)
        if f is None:
            return FAULT + marshal.dumps((METHOD_NOT_FOUND, "method not found"), MARSHAL_VERSION)
        try:
            result = self.run(f, params)
        except xmlrpc.client.Fault as f_:
            code, text = f_.faultCode, f_.faultString
            if type(code) is int and code in INT32 and type(text) is str:
                return FAULT + marshal.dumps((code, text), MARSHAL_VERSION)
            return fault(code, text)
        except Exception:  # noqa: BLE001 - every failure is answered
            return self.raised(name)
        if self.allow_none:  # else the XML-RPC marshaller refuses a None in it
            try:
                body = marshal.dumps(result, MARSHAL_VERSION)
            except ValueError:  # a type marshal does not know: the marshaller may
                pass
            else:
                if b"g" not in body or NON_FINITE.search(body) is None:
                    return RESULT + body
        return self.encode(name, result)

    def run(self, f, params):
        result = f(*params)
        if type(result) not in PLAIN_RESULTS and inspect.isawaitable(result):
            if self.loop is None:
                import asyncio  # here: a worker without async methods is smaller
                self.loop = asyncio.new_event_loop()
            result = self.loop.run_until_complete(result)
        return result

    @staticmethod
    def raised(name):
        print(f"rapidrpc python worker {os.getpid()}: {name} raised:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        return fault(INTERNAL_ERROR, "internal error")

    def encode(self, name, result):
        try:
            return dumps((result,), self.allow_none)
        except Exception:  # noqa: BLE001
            print(f"rapidrpc python worker {os.getpid()}: the result of {name} cannot be "
                  "encoded:", file=sys.stderr)
            traceback.print_exc()
            sys.stderr.flush()
            return fault(INTERNAL_ERROR, "internal error: the result cannot be encoded")

    def answer(self, frame):
        """The answer to one frame of the host's: a call in the compact form
        or an XML-RPC methodCall."""
        try:
            if frame[0] == CALL and self.use_builtin_types:
                name, params = marshal.loads(memoryview(frame)[1:])
                return self.call_compact(name, params)
            params, name = read_call(frame, self.use_builtin_types)
        except Exception:  # noqa: BLE001 - the host sends well-formed calls
            return fault(INTERNAL_ERROR, "internal error: the worker cannot read the call")
        return self.call(name, params)


def serve(worker, fd):
    """Says it is ready on `fd` (HELLO, or an empty frame from a worker that
    wants Binary and DateTime objects, which only the XML-RPC form gives; the
    host sends no call before), then answers calls there until end of
    stream; returns the exit status. The host may send calls ahead of the
    one running: each is answered in turn, its answer written whole before
    the next call starts, so that the host knows, if this process dies,
    which calls it had not started. A host that closes the socket first (it
    stopped, or replaced this worker before it was ready) ends it quietly
    too."""
    try:
        return serve_frames(worker, fd)
    except (BrokenPipeError, ConnectionResetError):
        return 0


FRAME_LENGTH = struct.Struct(">I")


def serve_frames(worker, fd):
    # Per call, the loop's own Python is a good part of a cheap call's cost:
    # the frames read are sliced from one bytes object at an offset, and
    # what it calls is looked up once.
    read, write, answer = os.read, os.write, worker.answer
    length_of, length = FRAME_LENGTH.unpack_from, FRAME_LENGTH.pack
    hello = HELLO if worker.use_builtin_types else b""
    write(fd, length(len(hello)) + hello)
    buf, at = b"", 0  # what is read and not yet taken starts at buf[at]
    while True:
        if len(buf) - at < 4:
            chunk = read(fd, 1 << 16)
            if not chunk:
                return 1 if len(buf) > at else 0
            buf, at = buf[at:] + chunk, 0
            continue
        n = length_of(buf, at)[0]
        if n > MAX_FRAME:
            return 1
        end = at + 4 + n
        if len(buf) < end:  # the rest of a frame, grown in place: large ones come in parts
            pending = bytearray(memoryview(buf)[at:])
            while len(pending) < 4 + n:
                chunk = read(fd, max(1 << 16, 4 + n - len(pending)))
                if not chunk:
                    return 1
                pending += chunk
            buf, at = bytes(pending), 0
            continue
        body = answer(buf[at + 4:end])
        at = end
        frame = length(len(body)) + body
        done = write(fd, frame)
        if done < len(frame):
            frame = memoryview(frame)
            while done < len(frame):
                done += write(fd, frame[done:])


def die_with_host(fd):
    """SIGKILL this process when the host goes (a busy worker would not see
    its socket close until its call ends).

    The host is the process that made `fd`, one end of a socket pair
    (SO_PEERCRED), not our parent now: a host killed while this interpreter
    started has left us to another parent already, which getppid() would
    take for the host."""
    with socket.socket(fileno=os.dup(fd)) as s:
        host = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                struct.calcsize("3i")))[0]
    die_with_parent(host)


_prctl = None


def load_prctl():
    """libc's prctl(), or False where there is none; loaded once, in the
    parent, rather than in each forked worker."""
    global _prctl
    if _prctl is None:
        try:
            import ctypes
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = False
    return _prctl


def die_with_parent(parent, sig=signal.SIGKILL):
    """`sig` to this process when `parent`, the process that started it,
    ends (Linux's PR_SET_PDEATHSIG, which fires when the thread that forked
    it ends); if `parent` is gone already, exit now."""
    prctl = load_prctl()
    if prctl:
        prctl(1, int(sig))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it went before the call took effect
        os._exit(1)


def flush_std():
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream
            pass


def fork_worker(serve, close=()):
    """Forks a worker process from this one, its warm parent: the way both
    `rapidrpcd --python`'s warm parent (serve_forks()) and the drop-in's
    workers=N start a worker. The objects this process holds are frozen
    first (gc.freeze()), so that the worker's collections leave the pages it
    shares with its parent alone. The worker closes the descriptors `close`
    (its parent's own), dies with its parent, prints its Python stack on a
    crash and on SIGUSR1 (faulthandler), ignores Ctrl-C (its parent decides
    when it ends), runs serve() and exits with the status that returns, 1
    if it raises, without running the parent's atexit handlers. Returns
    (pid, pidfd) in the parent; never returns in the worker."""
    parent = os.getpid()
    load_prctl()
    gc.freeze()
    flush_std()  # what is buffered is printed once, not once per process
    pid = os.fork()
    if pid:
        return pid, os.pidfd_open(pid)
    status = 1
    try:
        for fd in close:
            os.close(fd)
        die_with_parent(parent)
        faulthandler.enable()
        faulthandler.register(signal.SIGUSR1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        status = serve()
    except BaseException:  # noqa: BLE001 - reported; the parent replaces it
        traceback.print_exc()
    finally:
        flush_std()
        os._exit(status)


# The most a worker that has been told to stop (its socket closed) gets to
# leave when its warm parent ends, before it goes with it.
LEAVE_SECONDS = 2.0


def serve_forks(worker, fd):
    """The warm parent: forks the workers, each with `worker` (the module
    imported once, here), on the host's request. The fork-server protocol,
    on `fd`, a SOCK_SEQPACKET socket: this process says "R" once it can
    fork; the host sends "F" with a descriptor, and this process forks a
    worker that serves the worker protocol on it (serve()) and answers
    "P<pid>" with the worker's pidfd; when a worker ends, this process
    reaps it and says "X<pid> <wait status>". End of stream ends it; its
    workers, whose sockets the host has closed, get LEAVE_SECONDS to leave,
    and then leave with it (PR_SET_PDEATHSIG). Returns the exit status."""
    control = socket.socket(fileno=fd)
    children = {}  # pidfd -> pid
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        try:
            control.send(b"R")
            while True:
                for key, _ in selector.select():
                    if key.fd == fd:
                        message, fds, _, _ = socket.recv_fds(control, 16, 1)
                        if not message:
                            return leave(children)
                        if message != b"F" or len(fds) != 1:
                            for f in fds:
                                os.close(f)
                            print("rapidrpc warm parent: the host sent %r; ending" % message,
                                  file=sys.stderr)
                            return 1
                        pid, pidfd = fork_worker(
                            lambda: serve_forked(worker, fds[0]),
                            [fd, selector.fileno(), *children])
                        os.close(fds[0])
                        children[pidfd] = pid
                        selector.register(pidfd, selectors.EVENT_READ)
                        socket.send_fds(control, [b"P%d" % pid], [pidfd])
                    else:
                        pid = children.pop(key.fd)
                        selector.unregister(key.fd)
                        os.close(key.fd)
                        _, status = os.waitpid(pid, 0)
                        control.send(b"X%d %d" % (pid, status))
        except (BrokenPipeError, ConnectionResetError):
            return leave(children)


def serve_forked(worker, fd):
    """A forked worker: serves on descriptor 3, as a worker the host starts
    itself (the parent's socket there is closed)."""
    gc.enable()  # the parent imported without it (main())
    if fd != 3:
        os.dup2(fd, 3)
        os.close(fd)
    return serve(worker, 3)


def leave(children):
    deadline = time.monotonic() + LEAVE_SECONDS
    for pidfd, pid in children.items():
        left = deadline - time.monotonic()
        if left > 0 and select.select([pidfd], [], [], left)[0]:
            os.waitpid(pid, 0)
    return 0


def started_threads():
    """The Python threads running besides this one (the module's import
    started them)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return []
    return [t.name for t in threading.enumerate() if t is not threading.main_thread()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--module", required=True, help="MODULE or MODULE:HOOK")
    p.add_argument("--path", action="append", default=[], help="added to sys.path (repeatable)")
    p.add_argument("--describe", action="store_true", help="print the method table and exit")
    p.add_argument("--warm-parent", action="store_true",
                   help="fork the workers from this process (descriptor 3: serve_forks())")
    args = p.parse_args()
    if args.warm_parent:
        # Nothing collected while the module is imported leaves no freed
        # holes in the pages its workers share; they collect (serve_forked()).
        gc.disable()
    # A crash (segfault, abort) prints the Python stack first; so does
    # SIGUSR1, which the host may send a runaway before it kills it.
    faulthandler.enable()
    faulthandler.register(signal.SIGUSR1)
    try:
        methods = load(args.module, args.path)
    except BaseException:  # noqa: BLE001 - reported to the operator as it is
        print(f"rapidrpc: cannot load the Python methods of {args.module}:", file=sys.stderr)
        traceback.print_exc()
        return 3
    if args.warm_parent and started_threads():
        names = ", ".join(started_threads())
        print(f"rapidrpc: {args.module} started threads when imported ({names}): the workers "
              "are forked from the one process that imports it, and a fork copies no thread. "
              "Start them in the worker (on its first call), or serve with "
              "--python-spawn-workers (each worker imports the module itself).",
              file=sys.stderr)
        return 3
    if args.describe:
        sys.stdout.buffer.write(describe(methods))
        return 0
    # Ctrl-C goes to the whole process group; the host decides when workers end.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_host(3)
    if args.warm_parent:
        return serve_forks(Worker(methods), 3)
    return serve(Worker(methods), 3)


if __name__ == "__main__":
    sys.exit(main())
