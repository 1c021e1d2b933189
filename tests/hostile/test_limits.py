"""The limits of docs/limits.md set away from their defaults, and the
Expect header (docs/limits.md, "HTTP").

Each limit option is set once above its default and once below it: a
request exactly at the new limit is served, and one a step past it gets
the documented answer:

- `--max-header-bytes` (request line + header block, 16 KiB): HTTP 431 and
  the connection closed. The block counts up to and including the blank
  line that ends it.
- `--max-header-fields` (100): HTTP 431 and the connection closed.
- `--max-batch` (1000 JSON-RPC requests in a batch): one error -32600 (id
  null), and nothing runs.

`Expect: 100-continue` is answered with `100 Continue`; any other Expect
value is 417 (the request's body is read all the same, so a keep-alive
connection stays in step and its next request is answered).
"""

import json

import hostile
from hostile import RawClient, call_body, http_request, parse_result
import harness

DEFAULT_HEADER_BYTES = 16 * 1024
DEFAULT_HEADER_FIELDS = 100
DEFAULT_BATCH = 1000
INVALID_REQUEST = -32600


def sized_head_request(total, body):
    """A POST of `body` whose request line and header block (up to and
    including its blank line) are exactly `total` bytes, padded with one
    X-Pad field."""
    base = http_request(body, headers=[("X-Pad", "")])
    head_len = len(base) - len(body)
    pad = total - head_len
    if pad < 0:
        raise ValueError(f"a head of {total} bytes is too small for the request itself")
    return http_request(body, headers=[("X-Pad", "p" * pad)])


def fields_request(count, body):
    """A POST of `body` with exactly `count` header fields (Host,
    Content-Length and Content-Type included)."""
    own = 3
    extra = [(f"X-F{i}", "v") for i in range(count - own)]
    req = http_request(body, headers=extra)
    head = req[:len(req) - len(body)].decode("latin-1")
    assert len(head.split("\r\n")) - 3 == count, "miscounted the fields"  # line, "", ""
    return req


def batch_request(n):
    batch = [{"jsonrpc": "2.0", "method": "sample.add", "params": [i, 1], "id": i} for i in range(n)]
    return http_request(json.dumps(batch).encode(), headers=[("Content-Type", "application/json")])


class LimitsTestCase(hostile.HostileTestCase):

    def assert_served(self, request):
        with RawClient(self.daemon) as c:
            c.send(request)
            resp = c.read_response()
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), 42)

    def assert_batch_served(self, n):
        with RawClient(self.daemon, timeout=30) as c:
            c.send(batch_request(n))
            resp = c.read_response()
        self.assertEqual(resp.status, 200, resp)
        answers = json.loads(resp.decoded_body())
        self.assertIsInstance(answers, list, resp)
        self.assertEqual(len(answers), n)
        self.assertEqual(sorted(a["id"] for a in answers), list(range(n)))
        for a in answers:
            self.assertEqual(a.get("result"), a["id"] + 1, a)

    def assert_batch_refused(self, n):
        with RawClient(self.daemon, timeout=30) as c:
            c.send(batch_request(n))
            resp = c.read_response()
        self.assertEqual(resp.status, 200, resp)
        answer = json.loads(resp.decoded_body())
        # One error object, not a list: nothing of the batch ran.
        self.assertIsInstance(answer, dict, f"a batch past --max-batch got {resp.body[:300]!r}")
        self.assertEqual(answer["error"]["code"], INVALID_REQUEST, answer)
        self.assertIsNone(answer["id"], answer)
        self.assertNotIn("result", answer)


class RaisedLimits(LimitsTestCase):
    """Every limit twice its default, or so."""

    HEADER_BYTES = 2 * DEFAULT_HEADER_BYTES
    HEADER_FIELDS = 150
    BATCH = 1500
    daemon_args = ("--max-header-bytes", str(HEADER_BYTES),
                   "--max-header-fields", str(HEADER_FIELDS),
                   "--max-batch", str(BATCH))

    def test_a_header_block_at_the_raised_limit_is_served(self):
        self.assert_served(sized_head_request(self.HEADER_BYTES, call_body("sample.add", 20, 22)))

    def test_a_header_block_one_byte_past_the_raised_limit_is_431(self):
        self.assert_http_error(sized_head_request(self.HEADER_BYTES + 1,
                                                  call_body("sample.add", 20, 22)), 431)

    def test_header_fields_at_the_raised_limit_are_served(self):
        self.assert_served(fields_request(self.HEADER_FIELDS, call_body("sample.add", 20, 22)))

    def test_one_header_field_past_the_raised_limit_is_431(self):
        self.assert_http_error(fields_request(self.HEADER_FIELDS + 1,
                                              call_body("sample.add", 20, 22)), 431)

    def test_a_batch_at_the_raised_limit_is_served(self):
        self.assert_batch_served(self.BATCH)

    def test_a_batch_one_past_the_raised_limit_is_one_error(self):
        self.assert_batch_refused(self.BATCH + 1)


class LoweredLimits(LimitsTestCase):
    """Every limit well below its default: what the default allows is refused."""

    HEADER_BYTES = 1024
    HEADER_FIELDS = 10
    BATCH = 5
    daemon_args = ("--max-header-bytes", str(HEADER_BYTES),
                   "--max-header-fields", str(HEADER_FIELDS),
                   "--max-batch", str(BATCH))

    def test_a_header_block_at_the_lowered_limit_is_served(self):
        self.assert_served(sized_head_request(self.HEADER_BYTES, call_body("sample.add", 20, 22)))

    def test_a_header_block_one_byte_past_the_lowered_limit_is_431(self):
        self.assert_http_error(sized_head_request(self.HEADER_BYTES + 1,
                                                  call_body("sample.add", 20, 22)), 431)

    def test_header_fields_at_the_lowered_limit_are_served(self):
        self.assert_served(fields_request(self.HEADER_FIELDS, call_body("sample.add", 20, 22)))

    def test_one_header_field_past_the_lowered_limit_is_431(self):
        self.assert_http_error(fields_request(self.HEADER_FIELDS + 1,
                                              call_body("sample.add", 20, 22)), 431)

    def test_a_batch_at_the_lowered_limit_is_served(self):
        self.assert_batch_served(self.BATCH)

    def test_a_batch_one_past_the_lowered_limit_is_one_error(self):
        self.assert_batch_refused(self.BATCH + 1)


class Expect(hostile.HostileTestCase):

    def test_100_continue_is_answered_with_100_continue(self):
        body = call_body("sample.add", 20, 22)
        with RawClient(self.daemon) as c:
            c.send(http_request(body, headers=[("Expect", "100-continue")])[:-len(body)])
            interim = c.read_response()
            self.assertEqual(interim.status, 100, interim)
            c.send(body)
            resp = c.read_response()
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(parse_result(resp.decoded_body()), 42)

    def test_other_expect_values_are_417(self):
        for value in ("foo", "200-ok", "100-continue-please", "100-continue, foo", "102-processing"):
            with self.subTest(expect=value):
                body = call_body("sample.add", 20, 22)
                resp = self.assert_http_error(
                    http_request(body, headers=[("Expect", value), ("Connection", "close")]), 417)
                self.assertEqual(resp.reason, "Expectation Failed")

    @harness.skip_in_modes("sequential", "answers one request per connection")
    def test_a_417_reads_the_body_and_the_next_request_is_answered(self):
        # The refused request's body must not be taken for a request of its own.
        body = call_body("sample.add", 1, 2)
        with RawClient(self.daemon) as c:
            c.send(http_request(body, headers=[("Expect", "foo")]) +
                   http_request(call_body("sample.add", 20, 22)))
            first = c.read_response()
            self.assertEqual(first.status, 417, first)
            self.assertNotIn("close", first.connection_tokens(),
                             f"a 417 closed the keep-alive connection: {first!r}")
            second = c.read_response()
        self.assertEqual(second.status, 200, second)
        self.assertEqual(parse_result(second.decoded_body()), 42)


if __name__ == "__main__":
    harness.main()
