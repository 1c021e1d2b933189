"""JSON-RPC 2.0 against the real daemon, with urllib as the client.

The examples of the specification's "Examples" section
(https://www.jsonrpc.org/specification#examples), rewritten against demo
methods of the same shape:

  subtract(minuend, subtrahend)  -> sample.add(a, b) with the second
                                     argument negated (named: {"a", "b"})
  sum(1, 2, 4)                   -> sample.sum(1, 2, 4)
  update(1, 2, 3, 4, 5)          -> sample.sum(1, 2, 3, 4, 5), a notification
  notify_hello(7)                -> echo(7), a notification
  get_data()                     -> system.listMethods() (no params, an array)
  foobar, foo.get                -> no such method

Then: the same typed method through both protocols, parameter checks, and
hostile JSON, each followed by a normal call."""

import json
import socket
import urllib.error
import urllib.request
import xmlrpc.client

import harness
from harness import DaemonTestCase

METHODS = None  # system.listMethods(), filled in by setUpClass


class JsonRpcTestCase(DaemonTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        global METHODS
        with cls.daemon.proxy() as p:
            METHODS = p.system.listMethods()

    def post(self, body, path="/RPC2", content_type="application/json"):
        """POSTs `body` (bytes or str); returns (status, headers, text)."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        req = urllib.request.Request(self.url.replace("/RPC2", path), data=body, method="POST")
        if content_type:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=harness.CALL_TIMEOUT) as resp:
                return resp.status, resp.headers, resp.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode("utf-8", "replace")

    def rpc(self, body, **kw):
        """POSTs JSON text; returns the decoded answer (None for 204)."""
        status, headers, text = self.post(body, **kw)
        if status == 204:
            self.assertEqual(text, "")
            return None
        self.assertEqual(status, 200, text)
        self.assertEqual(headers.get_content_type(), "application/json")
        return json.loads(text)

    def assert_error(self, answer, code, id=None):
        self.assertEqual(answer["jsonrpc"], "2.0", answer)
        self.assertNotIn("result", answer)
        self.assertEqual(answer["error"]["code"], code, answer)
        self.assertIsInstance(answer["error"]["message"], str)
        self.assertEqual(answer["id"], id, answer)

    def tearDown(self):
        self.assert_still_serving()
        answer = self.rpc('{"jsonrpc":"2.0","method":"sample.add","params":[1,2],"id":"after"}')
        self.assertEqual(answer, {"jsonrpc": "2.0", "result": 3, "id": "after"})
        super().tearDown()


class SpecificationExamples(JsonRpcTestCase):

    def test_positional_parameters(self):
        self.assertEqual(self.rpc('{"jsonrpc": "2.0", "method": "sample.add", "params": [42, -23], "id": 1}'),
                         {"jsonrpc": "2.0", "result": 19, "id": 1})
        self.assertEqual(self.rpc('{"jsonrpc": "2.0", "method": "sample.add", "params": [23, -42], "id": 2}'),
                         {"jsonrpc": "2.0", "result": -19, "id": 2})

    def test_named_parameters(self):
        self.assertEqual(self.rpc('{"jsonrpc": "2.0", "method": "sample.add", "params": {"b": -23, "a": 42}, "id": 3}'),
                         {"jsonrpc": "2.0", "result": 19, "id": 3})
        self.assertEqual(self.rpc('{"jsonrpc": "2.0", "method": "sample.add", "params": {"a": 42, "b": -23}, "id": 4}'),
                         {"jsonrpc": "2.0", "result": 19, "id": 4})

    def test_notifications(self):
        self.assertIsNone(self.rpc('{"jsonrpc": "2.0", "method": "sample.sum", "params": [1,2,3,4,5]}'))
        self.assertIsNone(self.rpc('{"jsonrpc": "2.0", "method": "foobar"}'))

    def test_non_existent_method(self):
        answer = self.rpc('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}')
        self.assert_error(answer, -32601, "1")
        self.assertEqual(answer["error"]["message"], "Method not found")

    def test_invalid_json(self):
        answer = self.rpc('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')
        self.assert_error(answer, -32700)
        self.assertEqual(answer["error"]["message"], "Parse error")

    def test_invalid_request_object(self):
        answer = self.rpc('{"jsonrpc": "2.0", "method": 1, "params": "bar"}')
        self.assert_error(answer, -32600)
        self.assertEqual(answer["error"]["message"], "Invalid Request")

    def test_batch_invalid_json(self):
        answer = self.rpc('''[
          {"jsonrpc": "2.0", "method": "sample.sum", "params": [1,2,4], "id": "1"},
          {"jsonrpc": "2.0", "method"
        ]''')
        self.assert_error(answer, -32700)

    def test_empty_array(self):
        self.assert_error(self.rpc("[]"), -32600)

    def test_invalid_batch_but_not_empty(self):
        answer = self.rpc("[1]")
        self.assertEqual(len(answer), 1)
        self.assert_error(answer[0], -32600)

    def test_invalid_batch(self):
        answer = self.rpc("[1,2,3]")
        self.assertEqual(len(answer), 3)
        for a in answer:
            self.assert_error(a, -32600)

    def test_batch(self):
        answer = self.rpc('''[
          {"jsonrpc": "2.0", "method": "sample.sum", "params": [1,2,4], "id": "1"},
          {"jsonrpc": "2.0", "method": "echo", "params": [7]},
          {"jsonrpc": "2.0", "method": "sample.add", "params": [42,-23], "id": "2"},
          {"foo": "boo"},
          {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
          {"jsonrpc": "2.0", "method": "system.listMethods", "id": "9"}
        ]''')
        self.assertEqual(len(answer), 5, answer)
        self.assertEqual(answer[0], {"jsonrpc": "2.0", "result": 7, "id": "1"})
        self.assertEqual(answer[1], {"jsonrpc": "2.0", "result": 19, "id": "2"})
        self.assert_error(answer[2], -32600, None)
        self.assert_error(answer[3], -32601, "5")
        self.assertEqual(answer[4], {"jsonrpc": "2.0", "result": METHODS, "id": "9"})

    def test_batch_all_notifications(self):
        status, _, text = self.post('''[
          {"jsonrpc": "2.0", "method": "sample.sum", "params": [1,2,4]},
          {"jsonrpc": "2.0", "method": "echo", "params": [7]}
        ]''')
        self.assertEqual(status, 204)
        self.assertEqual(text, "")


class BothProtocols(JsonRpcTestCase):
    """One registry: the same methods, results and parameter checks."""

    CALLS = [
        ("sample.add", [3, 5]),
        ("sample.sum", [1, 2, 4]),
        ("sample.sum", [2**30, 2**30, 2**30]),  # an i8 result
        ("echo", [{"a": [1, 2.5, "x\u00e9\n<&>", None, True], "b": {"c": []}}]),
        ("load", [90]),
        ("sleep", [0.01]),
        ("system.methodSignature", ["sample.add"]),
        ("system.methodHelp", ["load"]),
    ]

    def test_equal_results(self):
        with self.proxy() as p:
            for i, (method, params) in enumerate(self.CALLS):
                with self.subTest(method=method):
                    via_xml = getattr(p, method)(*params)
                    answer = self.rpc(json.dumps({"jsonrpc": "2.0", "method": method,
                                                  "params": params, "id": i}))
                    self.assertEqual(answer.get("result"), via_xml, answer)
                    self.assertEqual(answer["id"], i)

    def test_invalid_params_in_both(self):
        for method, params in [("sample.add", [1]), ("sample.add", ["x", 1]),
                               ("load", [1, 2]), ("echo", []), ("sample.sum", [1.5])]:
            with self.subTest(method=method, params=params):
                with self.proxy() as p:
                    with self.assertRaises(xmlrpc.client.Fault) as cm:
                        getattr(p, method)(*params)
                self.assertEqual(cm.exception.faultCode, -32602)
                answer = self.rpc(json.dumps({"jsonrpc": "2.0", "method": method,
                                              "params": params, "id": 7}))
                self.assert_error(answer, -32602, 7)
                self.assertEqual(answer["error"]["message"], "Invalid params")
                self.assertEqual(answer["error"]["data"], cm.exception.faultString)

    def test_named_parameter_errors(self):
        for params in ({"a": 1}, {"a": 1, "b": 2, "c": 3}, {"x": 1, "y": 2}):
            with self.subTest(params=params):
                answer = self.rpc(json.dumps({"jsonrpc": "2.0", "method": "sample.add",
                                              "params": params, "id": 1}))
                self.assert_error(answer, -32602, 1)
        # Named parameters for a method without names.
        answer = self.rpc('{"jsonrpc":"2.0","method":"system.methodHelp","params":{"name":"load"},"id":2}')
        self.assert_error(answer, -32602, 2)

    def test_application_fault(self):
        answer = self.rpc('{"jsonrpc":"2.0","method":"sample.add","params":[2147483647,1],"id":1}')
        self.assert_error(answer, -32500, 1)
        self.assertIn("overflow", answer["error"]["message"])

    def test_ids_echoed_exactly(self):
        for id_text in ('1', '-7', '1.50', '1e3', '123456789012345678901234567890', '"abc"', '""', 'null'):
            with self.subTest(id=id_text):
                status, _, text = self.post('{"jsonrpc":"2.0","method":"sample.add","params":[1,1],"id":%s}'
                                            % id_text)
                self.assertEqual(status, 200)
                self.assertTrue(text.endswith('"id":%s}' % id_text), text)

    def test_binary_and_dates_travel_as_markers(self):
        with self.proxy() as p:
            via_xml = p.echo(xmlrpc.client.Binary(b"\x00\xffhi"))
        self.assertEqual(bytes(getattr(via_xml, "data", via_xml)), b"\x00\xffhi")
        answer = self.rpc('{"jsonrpc":"2.0","method":"echo","params":[{"$base64":"AP9oaQ=="}],"id":1}')
        self.assertEqual(answer["result"], {"$base64": "AP9oaQ=="})
        answer = self.rpc('{"jsonrpc":"2.0","method":"echo","params":[{"$datetime":"2024-01-31T12:30:00"}],"id":1}')
        self.assertEqual(answer["result"], {"$datetime": "2024-01-31T12:30:00"})

    def test_content_type_and_paths(self):
        body = '{"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1}'
        expected = {"jsonrpc": "2.0", "result": 8, "id": 1}
        self.assertEqual(self.rpc(body, content_type="application/json; charset=utf-8"), expected)
        self.assertEqual(self.rpc(body, content_type=None), expected)  # sniffed
        self.assertEqual(self.rpc(body, path="/jsonrpc", content_type="text/plain"), expected)
        self.assertEqual(self.rpc(body, path="/"), expected)
        # text/xml means XML-RPC, whatever the body looks like.
        status, _, text = self.post(body, content_type="text/xml")
        self.assertEqual(status, 200)
        self.assertIn("<fault>", text)
        # /jsonrpc speaks JSON only.
        status, _, text = self.post(harness.call_body("sample.add", 1, 2), path="/jsonrpc",
                                    content_type="text/xml")
        self.assert_error(json.loads(text), -32700)

    def test_gzip_request(self):
        import gzip
        body = gzip.compress(b'{"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1}')
        req = urllib.request.Request(self.url, data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Content-Encoding", "gzip")
        with urllib.request.urlopen(req, timeout=harness.CALL_TIMEOUT) as resp:
            self.assertEqual(json.loads(resp.read()), {"jsonrpc": "2.0", "result": 8, "id": 1})


class HostileJson(JsonRpcTestCase):
    """Malformed and hostile texts each get the specified error object and
    leave the server serving (tearDown checks with both protocols)."""

    def test_malformed(self):
        for text in ['{', '[', '{"jsonrpc":"2.0",}', "{'a':1}", '[1,]', 'NaN', '{"a":01}',
                     '{"jsonrpc":"2.0","method":"m","id":1} x', '\ufeff{}', '"\\x"', '']:
            with self.subTest(text=text):
                self.assert_error(self.rpc(text, content_type="application/json"), -32700)

    def test_invalid_utf8_and_lone_surrogates(self):
        for body in [b'{"jsonrpc":"2.0","method":"echo","params":["\xff"],"id":1}',
                     b'{"jsonrpc":"2.0","method":"echo","params":["\xed\xa0\x80"],"id":1}',
                     b'{"jsonrpc":"2.0","method":"echo","params":["\\ud800"],"id":1}',
                     b'{"jsonrpc":"2.0","method":"echo","params":["\\udc00x"],"id":1}']:
            with self.subTest(body=body):
                self.assert_error(self.rpc(body), -32700)

    def test_invalid_requests(self):
        for text, id in [('{"jsonrpc":"1.0","method":"echo","params":[1],"id":1}', 1),
                         ('{"method":"echo","params":[1],"id":1}', 1),
                         ('{"jsonrpc":"2.0","params":[1],"id":1}', 1),
                         ('{"jsonrpc":"2.0","method":"echo","params":7,"id":1}', 1),
                         ('{"jsonrpc":"2.0","method":"echo","id":[1]}', None),
                         ('{"jsonrpc":"2.0","method":"echo","id":true}', None),
                         ('"just a string"', None), ('42', None), ('null', None)]:
            with self.subTest(text=text):
                self.assert_error(self.rpc(text), -32600, id)

    def test_nul_and_control_characters_in_method_names(self):
        for name in ["echo\\u0000", "\\u0000", "ec\\nho", "x" * 300]:
            with self.subTest(name=name[:20]):
                answer = self.rpc('{"jsonrpc":"2.0","method":"%s","params":[1],"id":3}' % name)
                self.assert_error(answer, -32600, 3)
                self.assertNotIn("x" * 100, json.dumps(answer))

    def test_duplicate_keys(self):
        answer = self.rpc('{"jsonrpc":"2.0","method":"echo","method":"load","params":[1],"id":1}')
        self.assert_error(answer, -32600, None)
        answer = self.rpc('{"jsonrpc":"2.0","method":"echo","params":[{"k":1,"k":2}],"id":2}')
        self.assert_error(answer, -32602, 2)

    def test_numbers_out_of_range(self):
        for number in ["1e400", "-1e400", "9223372036854775808", "1" * 40]:
            with self.subTest(number=number):
                answer = self.rpc('{"jsonrpc":"2.0","method":"echo","params":[%s],"id":1}' % number)
                self.assert_error(answer, -32602, 1)

    def test_deep_nesting(self):
        ok = '{"jsonrpc":"2.0","method":"echo","params":%s,"id":1}' % ("[" * 64 + "]" * 64)
        self.assertIn("result", self.rpc(ok))
        deep = '{"jsonrpc":"2.0","method":"echo","params":%s,"id":1}' % ("[" * 65 + "]" * 65)
        self.assert_error(self.rpc(deep), -32600, None)
        self.assert_error(self.rpc("[" * 200000), -32600, None)

    def test_huge_batches(self):
        one = '{"jsonrpc":"2.0","method":"sample.add","params":[1,1],"id":1}'
        answer = self.rpc("[" + ",".join([one] * 1000) + "]")
        self.assertEqual(len(answer), 1000)
        self.assertTrue(all(a["result"] == 2 for a in answer))
        self.assert_error(self.rpc("[" + ",".join([one] * 1001) + "]"), -32600, None)
        self.assert_error(self.rpc("[" + ",".join(["1"] * 1001) + "]"), -32600, None)

    def test_batch_cannot_amplify_past_the_limit_with_multicall(self):
        # A batch of multicalls stays within both limits, entry by entry: a
        # multicall of 1001 calls is -32602 (--multicall-max) inside the
        # batch too, one of 1000 beside it runs, and a multicall nested in
        # one is a -32600 slot (docs/limits.md).
        def multicall(entries, id):
            return ('{"jsonrpc":"2.0","method":"system.multicall","params":[%s],"id":%d}'
                    % (json.dumps(entries), id))
        add = {"methodName": "sample.add", "params": [1, 1]}
        nested = {"methodName": "system.multicall", "params": [[add]]}
        answer = self.rpc("[" + ",".join([multicall([add] * 1001, 1), multicall([add] * 1000, 2),
                                          multicall([nested, add], 3)]) + "]")
        self.assertIsInstance(answer, list, answer)
        by_id = {a["id"]: a for a in answer}
        self.assertEqual(sorted(by_id), [1, 2, 3], answer)
        self.assert_error(by_id[1], -32602, 1)
        self.assertEqual(by_id[2]["result"], [[2]] * 1000)
        slots = by_id[3]["result"]
        self.assertEqual(len(slots), 2, slots)
        self.assertEqual(slots[0]["faultCode"], -32600, slots)
        self.assertEqual(slots[1], [2])
        # The batch limit counts requests, not the calls inside them: 1001
        # multicalls of one call each are refused whole.
        self.assert_error(self.rpc("[" + ",".join([multicall([add], i) for i in range(1001)]) + "]"),
                          -32600, None)

    def test_truncated_body(self):
        # A Content-Length longer than the body: the client gives up; the
        # server times the request out on its own and keeps serving.
        with self.daemon.socket() as s:
            s.sendall(b"POST /RPC2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"jsonrpc\":")
            s.shutdown(socket.SHUT_WR)
            self.assertEqual(s.recv(100), b"")


if __name__ == "__main__":
    harness.main()
