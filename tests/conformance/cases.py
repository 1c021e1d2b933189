"""The HTTP/1.1 conformance cases: one row per requirement (README.md).

Each case names the section of RFC 9112 (HTTP/1.1) or RFC 9110 (HTTP
Semantics) it checks, the rule in a few words, the bytes sent on a new
connection to rapidrpcd on 127.0.0.1, the status of each response expected
(a tuple for several responses; a set where the RFC allows any of its
codes), and what the connection does after them:

    close   the server closes the connection after the last response, and
            nothing sent after the request (a smuggled request) is answered
    open    the connection stays open: a normal call sent next on it is
            answered with its own result (so nothing was left unread or
            taken as a request)

Where the RFC leaves the server a choice, or where rapidrpcd deliberately differs
from it, `choice` says which behaviour is expected, and docs/limits.md
("HTTP") says why. A case with `run` drives its own exchange (a pause
between head and body, a HEAD compared with a GET); `head` lists the
responses that answer a HEAD request (no content follows them).

The checks made on every response are in RESPONSE_RULES.
"""

import base64
import collections
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from harness import call_body  # noqa: E402

Case = collections.namedtuple(
    "Case", "name section rule send expect after choice run head result daemon",
    defaults=(None, None, (), 42, "default"))

# The daemons the cases run against (test_conformance): rapidrpcd's
# defaults, and with Basic authentication of USER:PASSWORD (--auth-file).
USER, PASSWORD = "alice", "wonderland"

# A normal call and its result: sample.add(20, 22) is 42.
BODY = call_body("sample.add", 20, 22)
# A call whose result (2) would show that it was answered when it must not be.
OTHER_BODY = call_body("sample.add", 1, 1)


def request(start_line, *fields, body=BODY, length=True):
    """The bytes of a request: `start_line`, the `fields` ("Name: value"
    strings or bytes), Content-Length for `body` unless `length` is False
    (or a string, sent as the value), the blank line and `body`."""
    lines = [start_line.encode("latin-1") if isinstance(start_line, str) else start_line]
    for f in fields:
        lines.append(f.encode("latin-1") if isinstance(f, str) else f)
    if length is True:
        lines.append(b"Content-Length: %d" % len(body))
    elif length is not False:
        lines.append(b"Content-Length: " + length.encode("latin-1"))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def post(*fields, target="/RPC2", version="HTTP/1.1", body=BODY, length=True):
    """A POST of `body` with Host and Content-Type, then `fields`."""
    host = ("Host: 127.0.0.1",) if version == "HTTP/1.1" else ()
    return request(f"POST {target} {version}", *host, "Content-Type: text/xml", *fields,
                   body=body, length=length)


def chunks(*pieces, trailer=b""):
    """A chunked body: each piece is (size line, data); then the last chunk
    line "0", `trailer` (field lines, each ending in CRLF) and the CRLF."""
    out = b"".join(line + b"\r\n" + data + b"\r\n" for line, data in pieces)
    return out + b"0\r\n" + trailer + b"\r\n"


def chunked_post(body_bytes, *fields, version="HTTP/1.1"):
    return post("Transfer-Encoding: chunked", *fields, version=version, body=body_bytes,
                length=False)


CREDENTIALS = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

# A request that would be answered (with 2, not 42) if the bytes after a
# framing error were read as a request.
SMUGGLED = post(body=OTHER_BODY)

B = BODY
N = len(BODY)


def hx(n, fmt="%x"):
    return (fmt % n).encode()


CASES = [
    # -- message format and the request line (RFC 9112 2, 3) ----------------
    Case("origin_form", "9112 3.2.1",
         "a request in origin-form is served",
         post(), 200, "open"),
    Case("absolute_form", "9112 3.2.2",
         "a server MUST accept the absolute-form of request-target",
         post(target="http://127.0.0.1/RPC2"), 200, "open"),
    Case("absolute_form_with_port_and_query", "9112 3.2.2",
         "absolute-form with a port and a query: the path is the target's",
         post(target="http://127.0.0.1:8080/RPC2?x=1"), 200, "open"),
    Case("absolute_form_ignores_host", "9112 3.2.2",
         "an origin server MUST ignore Host when the target is in absolute-form",
         request("POST http://127.0.0.1/RPC2 HTTP/1.1", "Host: elsewhere.example",
                 "Content-Type: text/xml"), 200, "open"),
    Case("absolute_form_empty_path", "9112 3.2.2; 9110 4.2.3",
         "an absolute-form target with an empty path names \"/\" (a served path)",
         post(target="http://127.0.0.1"), 200, "open"),
    Case("asterisk_form_options", "9112 3.2.4; 9110 9.3.7",
         "OPTIONS * asks about the server: nothing to announce, no such resource",
         request("OPTIONS * HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False),
         404, "open", choice="404: no options are announced (docs/limits.md)"),
    Case("options_on_a_path", "9110 9.3.7; 15.5.6",
         "OPTIONS on the RPC path: 405 with Allow (MUST list the methods)",
         request("OPTIONS /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False),
         405, "open"),
    Case("authority_form_connect", "9112 3.2.3; 9110 9.3.6",
         "CONNECT is for proxies: no tunnel is opened",
         request("CONNECT 127.0.0.1:80 HTTP/1.1", "Host: 127.0.0.1:80", body=b"",
                 length=False), 404, "open", choice="404: no resource of that name"),
    Case("method_is_case_sensitive", "9110 9.1",
         "the method token is case-sensitive: \"post\" is not POST",
         request("post /RPC2 HTTP/1.1", "Host: 127.0.0.1", "Content-Type: text/xml"),
         405, "open"),
    Case("unknown_method", "9110 9.1; 15.5.6",
         "a method the server does not implement is refused (405 with Allow)",
         request("BREW /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False),
         405, "open", choice="405 rather than the SHOULD's 501 (docs/limits.md)"),
    Case("method_not_a_token", "9112 3.1",
         "method = token: a request line with a separator in it is invalid",
         request("P@ST /RPC2 HTTP/1.1", "Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("target_with_space", "9112 3.2",
         "no whitespace in a request-target: the request line is invalid",
         request("POST /RP C2 HTTP/1.1", "Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("two_spaces_in_request_line", "9112 3",
         "request-line = method SP request-target SP HTTP-version",
         request("POST  /RPC2 HTTP/1.1", "Host: 127.0.0.1") + SMUGGLED, 400, "close",
         choice="400: not parsed on whitespace boundaries (a MAY)"),
    Case("tabs_in_request_line", "9112 3",
         "the request line's parts are separated by SP",
         request("POST\t/RPC2\tHTTP/1.1", "Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("missing_target", "9112 3",
         "a request line without a target is invalid",
         request("POST HTTP/1.1", "Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("bare_lf_after_request_line", "9112 2.2",
         "a line ending in a bare LF",
         b"POST /RPC2 HTTP/1.1\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % N + B
         + SMUGGLED, 400, "close", choice="400: bare LF is not taken as a line end (a MAY)"),
    Case("empty_line_before_request_line", "9112 2.2",
         "a CRLF before the request line",
         b"\r\n" + post(), 400, "close",
         choice="400: the SHOULD to ignore it is not followed (docs/limits.md)"),
    Case("whitespace_before_first_field", "9112 2.2",
         "whitespace between the start-line and the first field: MUST reject or ignore the line",
         request("POST /RPC2 HTTP/1.1", " Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("target_too_long", "9112 3",
         "a target longer than the server parses: MUST respond 414",
         post(target="/" + "a" * 9000), 414, "close"),

    # -- the protocol version (RFC 9112 2.3; RFC 9110 2.5, 15.6.6) -----------
    Case("http_1_1", "9110 2.5",
         "HTTP/1.1 is served, and persists by default (9112 9.3)",
         post(), 200, "open"),
    Case("http_1_0", "9110 2.5; 9112 9.3",
         "HTTP/1.0 is served and not persistent without keep-alive",
         post(version="HTTP/1.0"), 200, "close"),
    Case("http_1_2", "9110 2.5",
         "a higher minor version of HTTP/1",
         post(version="HTTP/1.2") + SMUGGLED, 505, "close",
         choice="505: the SHOULD to serve it as HTTP/1.1 is not followed (docs/limits.md)"),
    Case("http_2_0", "9110 2.5; 15.6.6",
         "a request line of major version 2: 505 HTTP Version Not Supported",
         post(version="HTTP/2.0") + SMUGGLED, 505, "close"),
    Case("http_3_0", "9110 2.5; 15.6.6",
         "a request line of major version 3: 505",
         post(version="HTTP/3.0") + SMUGGLED, 505, "close"),
    Case("http_0_9_version", "9110 2.5; 15.6.6",
         "HTTP/0.9 is not served",
         post(version="HTTP/0.9") + SMUGGLED, 505, "close"),
    Case("version_lower_case", "9112 2.3",
         "HTTP-name is case-sensitive \"HTTP\"",
         post(version="http/1.1") + SMUGGLED, 400, "close"),
    Case("version_two_digit_minor", "9112 2.3",
         "HTTP-version = HTTP-name \"/\" DIGIT \".\" DIGIT",
         post(version="HTTP/1.10") + SMUGGLED, 400, "close"),

    # -- Host (RFC 9112 3.2; RFC 9110 7.2) -----------------------------------
    Case("host_missing_http_1_1", "9112 3.2",
         "an HTTP/1.1 request without Host: MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Content-Type: text/xml") + SMUGGLED, 400, "close"),
    Case("host_missing_http_1_0", "9112 3.2",
         "Host is required of HTTP/1.1 requests only",
         post(version="HTTP/1.0"), 200, "close"),
    Case("host_twice", "9112 3.2",
         "more than one Host field line: MUST respond 400",
         post("Host: 127.0.0.1") + SMUGGLED, 400, "close"),
    Case("host_twice_http_1_0", "9112 3.2",
         "more than one Host, in any version: MUST respond 400",
         post("Host: a", "Host: b", version="HTTP/1.0") + SMUGGLED, 400, "close"),
    Case("host_with_space", "9112 3.2; 9110 7.2",
         "an invalid Host value (a space): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: local host", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_with_userinfo", "9112 3.2; 9110 7.2",
         "an invalid Host value (userinfo): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: user@127.0.0.1", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_with_path", "9112 3.2; 9110 7.2",
         "an invalid Host value (a path): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: 127.0.0.1/RPC2", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_with_bad_port", "9112 3.2; 9110 7.2",
         "an invalid Host value (port not digits): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: 127.0.0.1:8o", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_unclosed_ip_literal", "9112 3.2; 9110 7.2",
         "an invalid Host value (\"[::1\"): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: [::1", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_bad_percent_encoding", "9112 3.2; 9110 7.2",
         "an invalid Host value (\"%4\"): MUST respond 400",
         request("POST /RPC2 HTTP/1.1", "Host: a%4", "Content-Type: text/xml")
         + SMUGGLED, 400, "close"),
    Case("host_empty", "9112 3.2",
         "an empty Host value is valid (a target without authority)",
         request("POST /RPC2 HTTP/1.1", "Host:", "Content-Type: text/xml"), 200, "open"),
    Case("host_ip_literal_and_port", "9110 7.2",
         "Host: [::1]:8080 is valid",
         request("POST /RPC2 HTTP/1.1", "Host: [::1]:8080", "Content-Type: text/xml"),
         200, "open"),
    Case("host_reg_name_characters", "9110 7.2",
         "a reg-name of unreserved, sub-delims and pct-encoded characters, empty port",
         request("POST /RPC2 HTTP/1.1", "Host: a-b.c_d~e!%41:", "Content-Type: text/xml"),
         200, "open"),

    # -- field syntax (RFC 9112 5; RFC 9110 5.5) ---------------------------------
    Case("space_before_colon", "9112 5.1",
         "whitespace between a field name and the colon: MUST respond 400",
         post("Content-Length : %d" % N, length=False) + SMUGGLED, 400, "close"),
    Case("tab_before_colon", "9112 5.1",
         "a tab between a field name and the colon: MUST respond 400",
         post("X-Note\t: a") + SMUGGLED, 400, "close"),
    Case("obs_fold", "9112 5.2",
         "obs-fold in a request: MUST reject with 400 or replace with SP",
         post("X-Note: a", " b") + SMUGGLED, 400, "close",
         choice="400, the preferred of the two (docs/limits.md)"),
    Case("obs_fold_of_empty_value", "9112 5.2",
         "obs-fold after an empty first line",
         post("X-Note:", "\tb") + SMUGGLED, 400, "close"),
    Case("bare_cr_in_value", "9112 2.2; 9110 5.5",
         "a bare CR in a field value: MUST reject or replace with SP",
         post(b"X-Note: a\rb") + SMUGGLED, 400, "close", choice="400"),
    Case("nul_in_value", "9110 5.5",
         "a NUL in a field value: MUST reject or replace with SP",
         post(b"X-Note: a\x00b") + SMUGGLED, 400, "close", choice="400"),
    Case("field_without_colon", "9112 5",
         "field-line = field-name \":\" OWS field-value OWS",
         post("X-Note a") + SMUGGLED, 400, "close"),
    Case("separator_in_field_name", "9110 5.1",
         "field-name = token",
         post("X(Note): a") + SMUGGLED, 400, "close"),
    Case("obs_text_in_value", "9110 5.5",
         "obs-text (bytes 0x80-0xFF) is allowed in a field value",
         post(b"X-Note: caf\xe9"), 200, "open"),
    Case("header_too_large", "9110 5.4; RFC 6585 5",
         "a header larger than the server processes: MUST respond with a 4xx (431)",
         post("X-Note: " + "a" * 20000), 431, "close"),
    Case("too_many_fields", "9110 5.4; RFC 6585 5",
         "more header fields than the server processes: a 4xx (431)",
         post(*["X-N%d: a" % i for i in range(120)]), 431, "close"),

    # -- message body length (RFC 9112 6; RFC 9110 8.6) -------------------------
    Case("field_names_any_case", "9110 5.1",
         "field names are case-insensitive",
         request("POST /RPC2 HTTP/1.1", "hOST: 127.0.0.1", "content-TYPE: text/xml",
                 "content-LENGTH: %d" % N, length=False), 200, "open"),
    Case("whitespace_around_value", "9112 5.1; 9110 5.5",
         "OWS around a field value is not part of it",
         post(length=" \t %d \t" % N), 200, "open"),
    Case("content_coding_any_case", "9110 8.4.1",
         "content-coding names are case-insensitive",
         post("Content-Encoding: GZip", body=gzip.compress(B)), 200, "open"),
    Case("content_length_with_leading_zeros", "9110 8.6",
         "Content-Length = 1*DIGIT: leading zeros are digits",
         post(length="000%d" % N), 200, "open"),
    Case("content_length_and_transfer_encoding", "9112 6.1; 6.3",
         "Content-Length with Transfer-Encoding: reject, or chunked wins; MUST close after",
         post("Transfer-Encoding: chunked", body=chunks((hx(N), B)), length="5") + SMUGGLED,
         400, "close", choice="400 (docs/limits.md)"),
    Case("transfer_encoding_in_http_1_0", "9112 6.1",
         "Transfer-Encoding in HTTP/1.0: MUST treat the framing as faulty and close",
         chunked_post(chunks((hx(N), B)), version="HTTP/1.0") + SMUGGLED, 400, "close"),
    Case("chunked_not_final", "9112 6.3",
         "chunked not the final transfer coding: MUST respond 400 and close",
         post("Transfer-Encoding: chunked, gzip", body=chunks((hx(N), B)), length=False)
         + SMUGGLED, 400, "close"),
    Case("unknown_transfer_coding", "9112 6.1",
         "a transfer coding the server does not understand",
         post("Transfer-Encoding: gzip, chunked", body=chunks((hx(N), B)), length=False)
         + SMUGGLED, 400, "close", choice="400 rather than the SHOULD's 501 (docs/limits.md)"),
    Case("chunked_twice", "9112 6.1",
         "chunked applied more than once",
         post("Transfer-Encoding: chunked", "Transfer-Encoding: chunked",
              body=chunks((hx(N), B)), length=False) + SMUGGLED, 400, "close"),
    Case("transfer_coding_name_any_case", "9112 7",
         "transfer-coding names are case-insensitive",
         post("Transfer-Encoding: Chunked", body=chunks((hx(N), B)), length=False),
         200, "open"),
    Case("content_length_twice_differing", "9112 6.3",
         "differing Content-Length values: MUST respond 400 and close",
         post("Content-Length: %d" % (N + 1)) + SMUGGLED, 400, "close"),
    Case("content_length_twice_equal", "9112 6.3",
         "two equal Content-Length field lines",
         post("Content-Length: %d" % N) + SMUGGLED, 400, "close",
         choice="400: the list exception is not taken (docs/limits.md)"),
    Case("content_length_list", "9112 6.3",
         "a Content-Length list of equal values",
         post(length="%d, %d" % (N, N)) + SMUGGLED, 400, "close",
         choice="400: the list exception is not taken (docs/limits.md)"),
    Case("content_length_signed", "9112 6.3; 9110 8.6",
         "an invalid Content-Length (+N): MUST respond 400 and close",
         post(length="+%d" % N) + SMUGGLED, 400, "close"),
    Case("content_length_negative", "9112 6.3; 9110 8.6",
         "an invalid Content-Length (-1): MUST respond 400 and close",
         post(length="-1") + SMUGGLED, 400, "close"),
    Case("content_length_hex", "9112 6.3; 9110 8.6",
         "an invalid Content-Length (0x..): MUST respond 400 and close",
         post(length="0x%x" % N) + SMUGGLED, 400, "close"),
    Case("content_length_empty", "9112 6.3; 9110 8.6",
         "an empty Content-Length: MUST respond 400 and close",
         post(length="") + SMUGGLED, 400, "close"),
    Case("content_length_overflow", "9112 6.3; 9110 8.6",
         "a Content-Length past 2^64: no overflow, 400 (or 413) and close",
         post(length="18446744073709551617") + SMUGGLED, {400, 413}, "close"),
    Case("body_too_large", "9110 15.5.14",
         "a body larger than the server takes: 413 (refused from Content-Length)",
         post(length="17000000", body=b""), 413, "close"),
    Case("post_without_length", "9110 15.5.12; 9112 6.3",
         "a POST with neither Content-Length nor chunked",
         post(length=False, body=b""), 411, "close",
         choice="411 (docs/limits.md): its body, if any, cannot be delimited"),
    Case("body_read_before_next_request", "9112 9.3; 6.3",
         "a refused request's body is read in full (MUST), not taken as a request",
         post(target="/nowhere", body=SMUGGLED), 404, "open"),
    Case("get_without_length_has_no_body", "9112 6.3",
         "a request without Content-Length or chunked has no body",
         request("GET /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False),
         405, "open"),

    # -- chunked transfer coding (RFC 9112 7.1) ----------------------------------
    Case("chunked", "9112 7.1",
         "a recipient MUST be able to parse the chunked transfer coding",
         chunked_post(chunks((hx(N), B))), 200, "open"),
    Case("chunk_sizes_hex_any_case_leading_zeros", "9112 7.1",
         "chunk-size = 1*HEXDIG: upper and lower case, leading zeros",
         chunked_post(b"0001\r\n" + B[:1] + b"\r\n"
                      + b"0000" + hx(26, "%X") + b"\r\n" + B[1:27] + b"\r\n"
                      + hx(N - 27, "%x") + b"\r\n" + B[27:] + b"\r\n"
                      + b"000\r\n\r\n"),
         200, "open"),
    Case("chunk_extensions_ignored", "9112 7.1.1",
         "a recipient MUST ignore unrecognized chunk extensions",
         chunked_post(chunks((hx(N // 2) + b';a=b;c="d;e"', B[:N // 2]),
                             (hx(N - N // 2) + b" ; name", B[N // 2:]))),
         200, "open"),
    Case("trailer_fields", "9112 7.1.2",
         "trailer fields after the last chunk are read (and may be discarded)",
         chunked_post(chunks((hx(N), B), trailer=b"X-Checksum: 1\r\nX-Other: 2\r\n")),
         200, "open"),
    Case("trailer_not_merged", "9110 6.5.1",
         "a recipient MUST NOT merge trailer fields into the header (type, coding, expectation)",
         chunked_post(chunks((hx(N), B), trailer=b"Content-Type: application/json\r\n"
                             b"Content-Encoding: gzip\r\nExpect: nothing\r\n")),
         200, "open"),
    Case("trailer_framing_field", "9110 6.5.1; 6.5",
         "a field that frames the message cannot be a trailer (Connection)",
         chunked_post(chunks((hx(N), B), trailer=b"Connection: close\r\n")) + SMUGGLED,
         400, "close", choice="400: refused, not acted on (docs/limits.md)"),
    Case("chunk_size_overflow", "9112 7.1",
         "MUST anticipate large hex numerals: no integer overflow",
         chunked_post(b"10000000000000001\r\n" + B) + SMUGGLED, 400, "close"),
    Case("chunk_size_not_hex", "9112 7.1",
         "chunk-size = 1*HEXDIG",
         chunked_post(b"zz\r\n" + B + b"\r\n0\r\n\r\n") + SMUGGLED, 400, "close"),
    Case("chunk_size_negative", "9112 7.1",
         "chunk-size = 1*HEXDIG (no sign)",
         chunked_post(b"-1\r\n" + B + b"\r\n0\r\n\r\n") + SMUGGLED, 400, "close"),
    Case("chunk_size_missing", "9112 7.1",
         "a chunk line without a size",
         chunked_post(b"\r\n" + B + b"\r\n0\r\n\r\n") + SMUGGLED, 400, "close"),
    Case("chunk_data_longer_than_size", "9112 7.1",
         "chunk-data is chunk-size octets, then CRLF",
         chunked_post(chunks((hx(N - 1), B))) + SMUGGLED, 400, "close"),
    Case("chunk_line_bare_lf", "9112 7.1; 2.2",
         "a chunk line ending in a bare LF",
         chunked_post(hx(N) + b"\n" + B + b"\r\n0\r\n\r\n") + SMUGGLED, 400, "close",
         choice="400 (docs/limits.md)"),

    # -- Expect (RFC 9110 10.1.1, 15.2) ------------------------------------------
    Case("expect_100_continue", "9110 10.1.1",
         "100-continue in HTTP/1.1: MUST send 100 or a final status without waiting for the body",
         post("Expect: 100-continue"), (100, 200), "open", run="continue_then_body"),
    Case("expect_100_continue_http_1_0", "9110 10.1.1; 15.2",
         "100-continue in HTTP/1.0 MUST be ignored; no 1xx to an HTTP/1.0 client",
         post("Expect: 100-continue", version="HTTP/1.0"), 200, "close",
         run="pause_then_body"),
    Case("expect_unknown", "9110 10.1.1",
         "an expectation other than 100-continue",
         post("Expect: teapot"), 417, "open", choice="417 (a MAY; docs/limits.md)"),

    # -- methods and responses (RFC 9110 9.3, 8.6, 15) --------------------------------
    Case("head_has_no_content", "9110 9.3.2; 9112 6.3",
         "a response to HEAD MUST NOT carry content (the next response follows the head)",
         request("HEAD /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False)
         + post(), (405, 200), "open", head=(0,)),
    Case("head_404_has_no_content", "9110 9.3.2",
         "no content in an error response to HEAD either",
         request("HEAD /nowhere HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False)
         + post(), (404, 200), "open", head=(0,)),
    Case("head_same_fields_as_get", "9110 9.3.2; 8.6",
         "HEAD: the fields of GET; Content-Length, if sent, MUST be GET's content length",
         b"", (200, 200), "open", run="head_like_get", head=(1,), result=None),
    Case("get_not_served_on_rpc_path", "9110 9.1; 15.5.6",
         "GET on the RPC path (not a browser): 405 with Allow",
         request("GET /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=b"", length=False), 405, "open",
         choice="405: not a general-purpose server (docs/limits.md)"),
    Case("get_with_body", "9112 6.3; 9.3",
         "a GET's body (Content-Length) is read, not taken as the next request",
         request("GET /RPC2 HTTP/1.1", "Host: 127.0.0.1", body=SMUGGLED), 405, "open"),

    Case("range_on_post_ignored", "9110 14.2",
         "a server MUST ignore Range on a method for which range handling is not defined",
         post("Range: bytes=0-9"), 200, "open"),
    Case("preconditions_on_rpc_post", "9110 13.1.1; 13.2.1",
         "If-Match / If-Unmodified-Since on a call",
         post('If-Match: "x"', "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT"),
         200, "open", choice="ignored: a call selects no representation (docs/limits.md)"),

    # -- connections (RFC 9112 9) --------------------------------------------------------
    Case("connection_close", "9112 9.6",
         "\"close\": MUST close after the response and process no further request",
         post("Connection: close") + SMUGGLED, 200, "close"),
    Case("connection_close_in_list", "9112 9.6; 9110 7.6.1",
         "\"close\" among other connection options",
         post("Connection: x-option, close") + SMUGGLED, 200, "close"),
    Case("http_1_0_keep_alive", "9112 9.3",
         "HTTP/1.0 persists only with \"keep-alive\"",
         post("Connection: keep-alive", version="HTTP/1.0"), 200, "open"),
    Case("pipelined_in_order", "9112 9.3.2",
         "pipelined requests: MUST answer in the order received",
         post() + post(body=OTHER_BODY) + post(body=call_body("sample.add", 2, 2)),
         (200, 200, 200), "open", run="pipelined"),
    Case("upgrade_ignored", "9110 7.8",
         "a server MAY ignore Upgrade: the request is served over HTTP/1.1",
         post("Connection: Upgrade", "Upgrade: h2c"), 200, "open"),
    Case("upgrade_ignored_http_1_0", "9110 7.8",
         "a server MUST ignore Upgrade in an HTTP/1.0 request",
         post("Connection: Upgrade", "Upgrade: h2c", version="HTTP/1.0"), 200, "close"),

    # -- authentication (RFC 9110 11), with --auth-file ------------------------------
    Case("unauthorized_has_challenge", "9110 11.6.1; 15.5.2",
         "a 401 MUST carry WWW-Authenticate with at least one challenge",
         post() + SMUGGLED, 401, "close", daemon="auth",
         choice="closed: the body of a refused request is not read (docs/access.md)"),
    Case("credentials_accepted", "9110 11.6.2",
         "a request with valid Basic credentials is served",
         post("Authorization: Basic " + CREDENTIALS), 200, "open", daemon="auth"),
    Case("auth_scheme_any_case", "9110 11.1",
         "the authentication scheme is a case-insensitive token",
         post("Authorization: bAsIc " + CREDENTIALS), 200, "open", daemon="auth"),
]

# Checked on every response of every case (test_conformance.check_response).
RESPONSE_RULES = [
    ("9112 4; 9110 2.5", "status line `HTTP/1.1 NNN reason`: a version the server conforms to"),
    ("9110 6.6.1", "Date (an IMF-fixdate, within a minute of the clock) on every 2xx, 3xx and 4xx"),
    ("9110 8.6", "no Content-Length in a 1xx or 204; one, of digits, on every other response"),
    ("9110 15.5.6", "a 405 carries Allow"),
    ("9110 11.6.1", "a 401 carries WWW-Authenticate"),
    ("9110 15.2", "no 1xx response to an HTTP/1.0 request"),
    ("9112 9.6", "a response with `Connection: close` is the last: the connection ends after it"),
    ("9112 6.1", "no Transfer-Encoding in a response to HTTP/1.0"),
]
