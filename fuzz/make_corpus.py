#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/ (run from anywhere with Python 3.11).

- http_request: the bytes Python's xmlrpc.client really sends (captured on a
  local socket), alone, pipelined, gzip-encoded, and hand-made variants
  (chunked, Expect, HTTP/1.0, errors). Each file starts with one control byte
  that picks the split point (see http_request.cpp); it is printable so that
  the files stay readable.
- xmlrpc_call, xmlrpc_response: the documents of tests/data/xmlrpc/, plus
  what xmlrpc.client writes for every type, and a few hand-written ones.
- gzip: gzip streams as Python's gzip module writes them, and broken ones.
- worker_message: every message of the worker-host protocol, and broken
  ones (frames separated by NUL bytes; see worker_message.cpp).
- worker_answer: a Python worker's answers in marshal's form, and ones the
  host refuses (see worker_answer.cpp).
- base64: base64 as Python's xmlrpc.client writes it (a line break every 76
  characters) and as one line, and texts to refuse.

Files named regress-* are regression inputs added by hand: this script
leaves them alone. Output is deterministic (gzip mtime 0).
"""
import datetime
import gzip
import pathlib
import socket
import struct
import threading
import xmlrpc.client as x
import zlib

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
DATA = HERE.parent / "tests" / "data" / "xmlrpc"

RESPONSE = x.dumps((5,), methodresponse=True).encode()


def capture(call, transport=None):
    """The bytes xmlrpc.client sends for call(proxy), read off a socket."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    received = []

    def serve():
        conn, _ = listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0]
                     .split(b":")[1])
        while len(body) < length:
            body += conn.recv(65536)
        received.append(head + b"\r\n\r\n" + body)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n"
                     % len(RESPONSE) + RESPONSE)
        conn.close()

    t = threading.Thread(target=serve)
    t.start()
    proxy = x.ServerProxy("http://127.0.0.1:%d/RPC2" % port, transport=transport,
                          allow_none=True)
    call(proxy)
    t.join()
    listener.close()
    # The port differs from run to run, and a gzip body carries the time:
    # make both stable (the mtime is not covered by the gzip CRC).
    data = received[0].replace(b"127.0.0.1:%d" % port, b"127.0.0.1:8080")
    at = data.find(b"\r\n\r\n\x1f\x8b\x08") + 4
    if at >= 4:
        data = data[:at + 4] + b"\0\0\0\0" + data[at + 8:]
    return data


def gz(data):
    return gzip.compress(data, mtime=0)


def chunked(head, body, pieces=2):
    out = head + b"Transfer-Encoding: chunked\r\n\r\n"
    step = max(1, len(body) // pieces)
    for i in range(0, len(body), step):
        part = body[i:i + step]
        out += b"%x;ext=1\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\nX-Trailer: t\r\n\r\n"


def post(body, headers=b"", target=b"/RPC2", version=b"1.1"):
    return (b"POST " + target + b" HTTP/" + version + b"\r\nHost: h\r\nContent-Type: text/xml\r\n" +
            headers + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def clean(target):
    d = CORPUS / target
    if d.exists():
        for f in d.iterdir():
            if not f.name.startswith("regress-"):
                f.unlink()


def http_request():
    clean("http_request")
    add = capture(lambda p: p.sample.add(2, 3))
    echo = capture(lambda p: p.echo("h\u00e9llo", [1, 2.5, True], {"k": None}))
    transport = x.Transport()
    transport.encode_threshold = 0  # gzip every request body
    gzipped = capture(lambda p: p.echo("x" * 2000), transport=transport)
    multicall = capture(lambda p: (lambda m: (m.sample.add(1, 2), m.echo("a"), m()))(
        x.MultiCall(p)))
    body = add.partition(b"\r\n\r\n")[2]
    w = lambda name, control, data: write("http_request", name, control + data)
    w("python-add", b"~", add)
    w("python-echo", b"P", echo)
    w("python-gzip", b"~", gzipped)
    w("python-multicall", b"0", multicall)
    w("python-pipelined", b"~", add + echo + add)
    w("python-pipelined-split-in-second", b"\xc0", add + echo)
    w("chunked", b"~", chunked(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\n", body))
    w("chunked-gzip", b"P", chunked(b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\n",
                                     gz(body), 3))
    w("gzip-two-members", b"~", post(gz(body[:40]) + gz(body[40:]),
                                     b"Content-Encoding: x-gzip\r\nAccept-Encoding: gzip;q=0.5\r\n"))
    w("expect-continue", b"~", post(body, b"Expect: 100-continue\r\n"))
    w("expect-other", b"~", post(body, b"Expect: something\r\n"))
    w("http10", b"~", post(body, b"Connection: keep-alive\r\n", version=b"1.0"))
    w("accept-encoding", b"~", post(body, b"Accept-Encoding: br, gzip;q=0, *;q=0.5\r\n"))
    w("content-encoding-unsupported", b"~", post(body, b"Content-Encoding: br\r\n"))
    w("get-then-post", b"~", b"GET /RPC2?x=1 HTTP/1.1\r\nHost: h\r\n\r\n" + add)
    w("post-without-length", b"~", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\n\r\n")
    w("length-and-chunked", b"~", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
                                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    w("duplicate-length", b"~", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
                                b"Content-Length: 2\r\n\r\nab")
    w("no-host", b"~", b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab")
    w("chunk-line-bare-lf", b"~", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\n"
      b"Transfer-Encoding: chunked\r\n\r\n1\nA\n0\n\n")
    w("chunk-line-long", b"\x80", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\n"
      b"Transfer-Encoding: chunked\r\n\r\n001;" + b"e" * 1100 + b"\r\nA\r\n0\r\n\r\n")
    w("truncated-body", b"~", add[:-10])
    w("chunk-extension-unterminated-quote", b"~", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\n"
      b"Transfer-Encoding: chunked\r\n\r\n2a;e=\"x\r\n" + body[:42] + b"\r\n0\r\n\r\n")
    w("bad-version", b"~", b"POST / HTTP/2.0\r\nContent-Length: 0\r\n\r\n")
    w("connection-close", b"~", post(body, b"Connection: close\r\n") + add)


def xmlrpc_documents():
    for target, sub in (("xmlrpc_call", "call"), ("xmlrpc_response", "response")):
        clean(target)
        for f in sorted((DATA / sub).glob("*.xml")):
            write(target, f.name, f.read_bytes())
    everything = ("s", "", "a\r\nb", "\u00e9\U0001F600", 7, -2147483648, True, 1.5, -0.0,
                  1e300, None, b"\x00\xff", datetime.datetime(2024, 2, 29, 23, 59, 59),
                  [1, [2, []]], {"a": {"b": [{}]}, "": 0})
    call = x.dumps(everything, "system.multicall", allow_none=True, encoding="utf-8")
    write("xmlrpc_call", "python-everything.xml", call.encode())
    write("xmlrpc_call", "hand-markup.xml",
          b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c --><methodCall><?pi x?>"
          b"<methodName>m</methodName><params><param><value><![CDATA[<x>]]>&#x1F600;&amp;"
          b"</value></param><param><value><ex:i8 xmlns:ex=\"http://ws.apache.org/xmlrpc/"
          b"namespaces/extensions\">-9223372036854775808</ex:i8></value></param></params>"
          b"</methodCall>")
    write("xmlrpc_call", "hand-deep.xml",
          b"<methodCall><methodName>m</methodName><params><param>" +
          b"<value><array><data>" * 8 + b"<value><struct><member><name>n</name><value/>"
          b"</member></struct></value>" + b"</data></array></value>" * 8 +
          b"</param></params></methodCall>")
    write("xmlrpc_call", "hand-doctype.xml",
          b"<!DOCTYPE m [<!ENTITY a \"aaaa\">]><methodCall><methodName>&a;</methodName>"
          b"</methodCall>")
    write("xmlrpc_call", "hand-literals.xml",
          b"<methodCall><methodName>m</methodName><params><param><value><double>-0.0</double>"
          b"</value></param><param><value><double>1e-320</double></value></param><param><value>"
          b"<dateTime.iso8601>2024-02-29T00:00:60</dateTime.iso8601></value></param><param>"
          b"<value><base64>AA==\n</base64></value></param><param><value><i4>+007</i4></value>"
          b"</param></params></methodCall>")
    response = x.dumps((list(everything),), methodresponse=True, allow_none=True,
                       encoding="utf-8")
    write("xmlrpc_response", "python-everything.xml", response.encode())
    fault = x.dumps(x.Fault(-32603, "line\r\nbreak <&> \u00e9"), methodresponse=True)
    write("xmlrpc_response", "python-fault-markup.xml", fault.encode())


def xmlrpc_encoded_documents():
    """Documents in other encodings than UTF-8 (the python-encoding-* ones
    come from tests/data/xmlrpc/): bytes that are no character of the
    declared encoding, broken UTF-16, names nothing reads."""
    def call(encoding, text):
        return (b"<?xml version='1.0' encoding='" + encoding + b"'?>\n<methodCall><methodName>"
                b"echo</methodName><params><param><value><string>" + text +
                b"</string></value></param></params></methodCall>\n")
    write("xmlrpc_call", "hand-latin1-everything.xml",
          call(b"latin1", bytes(range(0x20, 0x7f)).replace(b"<", b"").replace(b"&", b"") +
               bytes(range(0x80, 0x100))))
    write("xmlrpc_call", "hand-cp1252-undefined-byte.xml", call(b"windows-1252", b"\x80\x81"))
    write("xmlrpc_call", "hand-ascii-high-byte.xml", call(b"US-ASCII", b"caf\xe9"))
    write("xmlrpc_call", "hand-unknown-encoding.xml", call(b"x-nonsense", b"a"))
    write("xmlrpc_call", "hand-multibyte-encoding.xml", call(b"Shift_JIS", b"a"))
    utf16 = call(b"utf-16", "\u00e9\U0001F600".encode()).decode().encode("utf-16")
    write("xmlrpc_call", "hand-utf16-lone-surrogate.xml",
          utf16.replace("\u00e9".encode("utf-16-le"), b"\x00\xdc"))
    write("xmlrpc_call", "hand-utf16-odd-length.xml", utf16 + b"\n")
    write("xmlrpc_call", "hand-utf16be-no-mark.xml",
          call(b"UTF-16BE", "\u00e9".encode()).decode().encode("utf-16-be"))
    write("xmlrpc_response", "hand-iso-8859-15-fault.xml",
          b"<?xml version=\"1.0\" encoding=\"iso-8859-15\"?><methodResponse><fault><value><struct>"
          b"<member><name>faultCode</name><value><int>1</int></value></member><member><name>"
          b"faultString</name><value>\xa4\xbd</value></member></struct></value></fault>"
          b"</methodResponse>")


def gzip_streams():
    clean("gzip")
    body = x.dumps((2, 3), "sample.add").encode()
    w = lambda name, data: write("gzip", name, data)
    w("python-call.gz", gz(body))
    w("two-members.gz", gz(body[:50]) + gz(body[50:]))
    w("empty.gz", gz(b""))
    w("truncated.gz", gz(body)[:-6])
    w("trailing-garbage.gz", gz(body) + b"garbage")
    w("bad-crc.gz", gz(body)[:-8] + b"\0\0\0\0" + gz(body)[-4:])
    w("zeros-100k.gz", gz(bytes(100 * 1024)))  # too large for the small limit
    w("zeros-1m.gz", gz(bytes(1024 * 1024)))  # too large for both
    # Every optional header field: FTEXT|FHCRC|FEXTRA|FNAME|FCOMMENT.
    head = b"\x1f\x8b\x08\x1f" + struct.pack("<I", 0) + b"\x00\xff"
    head += struct.pack("<H", 4) + b"ab\x00\x00" + b"name\x00" + b"comment\x00"
    head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = c.compress(body) + c.flush()
    w("all-header-fields.gz", head + raw + struct.pack("<II", zlib.crc32(body), len(body)))
    w("not-gzip", body)


def jsonrpc_texts():
    """The specification's examples (as requests and as responses), and the
    edges of the codec: markers, ids, numbers, escapes, limits."""
    clean("jsonrpc")
    texts = {
        "spec-positional": '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
        "spec-named": '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
        "spec-notification": '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
        "spec-bad-json": '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
        "spec-bad-request": '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
        "spec-empty-batch": "[]",
        "spec-invalid-batch": "[1,2,3]",
        "spec-batch": '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
                      '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
                      '{"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
                      '{"foo": "boo"},'
                      '{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
                      '{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]',
        "spec-result": '{"jsonrpc": "2.0", "result": 19, "id": 1}',
        "spec-error": '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}',
        "error-data": '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":"x"},"id":null}',
        "markers": '{"jsonrpc":"2.0","method":"echo","params":[{"$base64":"AP9oaQ=="},'
                   '{"$datetime":"2024-01-31T12:30:00"},{"$base64":"SGk"},{"$datetime":"20240131T12:30:00"}],"id":7}',
        "ids": '[{"jsonrpc":"2.0","method":"m","id":1.50},{"jsonrpc":"2.0","method":"m","id":123456789012345678901234567890},'
               '{"jsonrpc":"2.0","method":"m","id":"\\u00e9"},{"jsonrpc":"2.0","method":"m","id":null},'
               '{"jsonrpc":"2.0","method":"m","id":[1]}]',
        "numbers": '{"jsonrpc":"2.0","method":"m","params":[0,-0,2147483648,-9223372036854775808,'
                   '9223372036854775808,1e400,1e-400,-0.0,2.5e-3,1E+2],"id":1}',
        "escapes": '{"jsonrpc":"2.0","method":"m\\u002e\\u0078","params":["\\"\\\\\\/\\b\\f\\n\\r\\t",'
                   '"\\ud83d\\ude00","\\u0000","\\ud800"],"id":"x"}',
        "duplicates": '{"jsonrpc":"2.0","method":"m","params":[{"k":1,"k":2}],"method":"n","id":1}',
        "deep": '{"jsonrpc":"2.0","method":"m","params":' + "[" * 6 + "{}" + "]" * 6 + ',"id":1}',
        "extra-member": '{"jsonrpc":"2.0","method":"m","params":{},"id":1,"x":true}',
    }
    for name, text in sorted(texts.items()):
        write("jsonrpc", name + ".json", text.encode("utf-8"))
    write("jsonrpc", "utf8-bad.json", b'{"jsonrpc":"2.0","method":"m","params":["\xff\xed\xa0\x80"],"id":1}')


def worker_messages():
    clean("worker_message")
    call = x.dumps((2, 3), "sample.add").encode()
    messages = {
        "ready": [b"READY", b"1", b"8"], "ready-max": [b"READY", b"1", b"4096"],
        "ready-over": [b"READY", b"1", b"4097"], "ready-version": [b"READY", b"2", b"8"],
        "ready-leading-zero": [b"READY", b"1", b"008"], "ready-negative": [b"READY", b"1", b"-1"],
        "ready-zero": [b"READY", b"1", b"0"], "heartbeat": [b"HB"], "leaving": [b"BYE"],
        "who": [b"WHO"], "heartbeat-field": [b"HB", b"x"], "empty": [b""],
        "call": [b"CALL", b"12345678", call], "reply": [b"REPLY", b"12345678", RESPONSE],
        "call-short-id": [b"CALL", b"1234567", b"<x/>"], "reply-no-document": [b"REPLY", b"12345678"],
    }
    for name, frames in messages.items():
        write("worker_message", name, b"\0".join(frames))


def worker_answers():
    """Answers in marshal's form as the Python worker writes them, and ones
    the host refuses."""
    import marshal
    clean("worker_answer")
    results = {
        "int": 8, "i8": 2**40, "i8-min": -2**63, "past-64-bits": 2**64, "float": 0.1,
        "negative-zero": -0.0, "nan": float("nan"), "string": "caf\xe9 <&>", "empty": "",
        "bytes": b"\x00\xff", "none": None, "booleans": [True, False],
        "tuple": (1, (2, 3)), "nested": {"a": [1, {"b": []}], "c": {}},
        "surrogate": "\ud800", "set": {1}, "complex": 1j, "int-key": {1: 2},
        "deep": [[[[[[]]]]]],
    }
    for name, v in results.items():
        write("worker_answer", name, b"r" + marshal.dumps(v, 2))
    write("worker_answer", "fault", b"f" + marshal.dumps((42, "x"), 2))
    write("worker_answer", "fault-not-pair", b"f" + marshal.dumps((42,), 2))
    write("worker_answer", "version-4", b"r" + marshal.dumps(["a", "a"], 4))
    write("worker_answer", "cut-short", b"r" + marshal.dumps([1, 2], 2)[:-1])
    write("worker_answer", "trailing", b"r" + marshal.dumps(1, 2) + b"N")
    write("worker_answer", "xml", b"<?xml version='1.0'?><methodResponse/>")


def base64_texts():
    """base64 as the clients write it, in blocks of every length around
    the block codecs' 16 and 32 characters, and texts to refuse."""
    import base64
    clean("base64")
    data = bytes((i * 37 + 11) & 0xFF for i in range(300))
    write("base64", "python-lines", base64.encodebytes(data))
    write("base64", "one-line", base64.b64encode(data))
    for n in (11, 12, 13, 23, 24, 25):
        write("base64", "length-%d" % n, base64.b64encode(data[:n]))
    write("base64", "crlf-spaces", b"\r\n ".join(base64.b64encode(data)[i:i + 40]
                                                for i in range(0, 400, 40)))
    write("base64", "bad-in-block", base64.b64encode(data[:48])[:20] + b"-" +
          base64.b64encode(data[:48])[21:])
    write("base64", "padding-inside", base64.b64encode(b"a") + base64.b64encode(data[:48]))
    write("base64", "unused-bits", b"YR==")
    write("base64", "url-alphabet", base64.urlsafe_b64encode(data[:96]))


def main():
    base64_texts()
    worker_answers()
    worker_messages()
    http_request()
    xmlrpc_documents()
    xmlrpc_encoded_documents()
    jsonrpc_texts()
    gzip_streams()


if __name__ == "__main__":
    main()
