"""Struct members come back in the order they were sent: echo of an XML-RPC
struct (from Python's xmlrpc.client, whose dicts keep insertion order, and
from hand-written XML) and of a JSON-RPC object returns the members as sent,
not sorted by name. A name repeated in one struct or object is refused."""

import json
import urllib.request
import xmlrpc.client

import harness
from harness import DaemonTestCase, exchange, http_request, parse_result, raw_call_body


def shape(v):
    """`v` with every dict replaced by its list of (name, shape) pairs, so
    that comparing two shapes compares the order of the members too."""
    if isinstance(v, dict):
        return [(k, shape(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [shape(x) for x in v]
    return v


# Not in name order at any level, with names that sort differently as bytes
# and as text, an empty name, and enough members (300) to be past the size
# where a struct starts to find its members through an index.
UNSORTED = {
    "zulu": 1,
    "alpha": {"yankee": [{"quebec": True, "charlie": None}], "bravo": "x", "": 2.5},
    "\u00e9t\u00e9": "non-ASCII name",
    "Mike": [],
    "many": {f"m{(i * 37) % 300:03d}": i for i in range(300)},
    "empty": {},
}


def member_xml(name, value_xml):
    return f"<member><name>{name}</name>{value_xml}</member>"


class XmlRpcStructOrder(DaemonTestCase):

    def test_python_client_dict_comes_back_in_insertion_order(self):
        with self.proxy() as p:
            result = p.echo(UNSORTED)
        self.assertEqual(shape(result), shape(UNSORTED))
        self.assertNotEqual(list(result), sorted(result), "the case must not be in name order")

    def test_echo_writes_the_struct_bytes_it_read(self):
        # Written the way the server writes values, so the answer must hold
        # exactly these bytes.
        inner = "<value><struct>" + "".join([
            member_xml("y", "<value><int>1</int></value>"),
            member_xml("b", "<value><array><data><value><string>z</string></value>"
                            "<value><struct></struct></value></data></array></value>"),
            member_xml("", "<value><boolean>0</boolean></value>"),
        ]) + "</struct></value>"
        value_xml = "<value><struct>" + "".join([
            member_xml("z", "<value><string>last letter</string></value>"),
            member_xml("a", inner),
            member_xml("&lt;&amp;&gt;", "<value><nil/></value>"),
            member_xml("m", "<value><double>2.5</double></value>"),
        ]) + "</struct></value>"
        response = exchange(self.daemon, http_request(raw_call_body("echo", value_xml)))
        self.assertEqual(response.status, 200, response.body[:300])
        self.assertIn(b"<param>" + value_xml.encode() + b"</param>", response.body)
        result = parse_result(response.body)
        self.assertEqual(list(result), ["z", "a", "<&>", "m"])

    def test_multicall_slots_keep_their_order(self):
        with self.proxy() as p:
            multi = xmlrpc.client.MultiCall(p)
            multi.echo({"second": 2, "first": 1})
            multi.echo({"b": {"d": 4, "c": 3}, "a": 0})
            results = list(multi())
        self.assertEqual(shape(results), [[("second", 2), ("first", 1)],
                                          [("b", [("d", 4), ("c", 3)]), ("a", 0)]])

    def test_a_repeated_member_name_is_refused(self):
        value_xml = ("<value><struct>" + member_xml("k", "<value><int>1</int></value>")
                     + member_xml("k", "<value><int>2</int></value>") + "</struct></value>")
        response = exchange(self.daemon, http_request(raw_call_body("echo", value_xml)))
        fault = harness.parse_fault(response.body)
        self.assertEqual(fault.faultCode, -32600)
        self.assertIn("duplicate member", fault.faultString)
        self.assert_still_serving()


class JsonRpcStructOrder(DaemonTestCase):

    def post(self, text):
        req = urllib.request.Request(self.url, data=text.encode("utf-8"), method="POST")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=harness.CALL_TIMEOUT) as resp:
            self.assertEqual(resp.status, 200)
            return resp.read().decode("utf-8")

    def test_echo_writes_the_object_text_it_read(self):
        # Compact and in the writer's forms (no escapes it would not write),
        # so the answer must hold exactly this text.
        param = json.dumps(UNSORTED, separators=(",", ":"), ensure_ascii=False)
        answer = self.post('{"jsonrpc":"2.0","method":"echo","params":[%s],"id":7}' % param)
        self.assertIn('"result":' + param, answer)
        result = json.loads(answer)["result"]
        self.assertEqual(shape(result), shape(UNSORTED))

    def test_named_params_reach_the_method_by_name_in_any_order(self):
        for params in ('{"b":-5,"a":8}', '{"a":8,"b":-5}'):
            with self.subTest(params=params):
                answer = json.loads(self.post(
                    '{"jsonrpc":"2.0","method":"sample.add","params":%s,"id":1}' % params))
                self.assertEqual(answer.get("result"), 3, answer)

    def test_an_unknown_named_parameter_is_named_as_sent(self):
        answer = json.loads(self.post(
            '{"jsonrpc":"2.0","method":"sample.add","params":{"z":0,"a":1,"b":2,"c":3},"id":1}'))
        self.assertEqual(answer["error"]["code"], -32602, answer)
        self.assertEqual(answer["error"].get("data"), "unknown parameter 'z'", answer)

    def test_a_repeated_member_name_is_refused(self):
        answer = json.loads(self.post(
            '{"jsonrpc":"2.0","method":"echo","params":[{"k":1,"j":0,"k":2}],"id":2}'))
        self.assertEqual(answer["error"]["code"], -32602, answer)
        self.assertEqual(answer["id"], 2)


if __name__ == "__main__":
    harness.main()
