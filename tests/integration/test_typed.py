"""C++ methods with typed parameters and results (rapidrpc/convert.hpp),
served by examples/03_typed (build/bin/example_typed, beside rapidrpcd),
called as clients call them: Python's xmlrpc.client at its defaults and
JSON-RPC 2.0 over HTTP.

- Each kind of type both ways over XML-RPC and JSON-RPC: a described struct
  nested in a vector and in a pair, an optional member left out, a described
  enum, a map, a tuple, a fixed-size array, a time point, bytes; a trailing
  optional parameter left out, positionally and by name.
- system.methodSignature derives "struct" and "array".
- -32602 naming where the value does not fit: a missing member, a member of
  the wrong type, an extra array element, an enum name it does not have.
- system.methodHelp shows the members; rpc.discover answers an OpenRPC
  document, of these methods and of rapidrpcd's demo service, that the
  OpenRPC project's validator (@open-rpc/schema-utils-js, installed by
  scripts/setup.sh --tests into the build directory) finds valid.
- A coroutine method (the example's routes.total) waits and calls out with
  rapidrpc's client while the loop serves other calls; the example runs
  the server on its own io_context and ends cleanly on SIGTERM.
- A coroutine method of rapidrpcd's (test.wait) is cancelled past its
  deadline (the caller gets -32001 at once) and when its client closes the
  connection, as test.waiting's count of calls under way shows.
- The demo service's OpenRPC examples are what its calls answer, and the
  OpenRPC project's test coverage (@open-rpc/test-coverage, installed like
  the validator) run against rapidrpcd calls every method and passes.
"""

import base64
import datetime
import json
import os
import signal
import subprocess
import tempfile
import unittest
import urllib.request
import xmlrpc.client

from harness import (HOST, RawClient, call_body, daemon_path, http_request, main, running_daemon,
                     wait_until)

INVALID_PARAMS = -32602
TIMEOUT = -32001


def example_path():
    path = os.path.join(os.path.dirname(daemon_path()), "example_typed")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} is not built (RAPIDRPC_BUILD_EXAMPLES=ON builds it)")
    return path


def jsonrpc_call(url, method, params):
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def run_openrpc_tool(package, script, document, *args, timeout=60):
    """Runs tests/integration/SCRIPT with node on `document` (a JSON file)
    and `args`, with the OpenRPC project's npm `package` (installed by
    scripts/setup.sh --tests into the build directory): its exit status and
    its output."""
    modules = os.path.join(os.path.dirname(daemon_path()), "..", "npm", "node_modules")
    if not os.path.isdir(os.path.join(modules, *package.split("/"))):
        raise RuntimeError(f"{modules} has no {package} (scripts/setup.sh --tests installs it)")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(document, f)
        f.flush()
        out = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   script), f.name, *args],
                             env=dict(os.environ, NODE_PATH=os.path.abspath(modules)),
                             capture_output=True, text=True, timeout=timeout)
    return out.returncode, (out.stdout + out.stderr).strip()


def openrpc_verdict(document):
    """What the OpenRPC project's validator says of `document`: "valid", or
    why not."""
    return run_openrpc_tool("@open-rpc/schema-utils-js", "openrpc_check.js", document)[1]


def openrpc_coverage(document, url):
    """What the OpenRPC project's test coverage (@open-rpc/test-coverage)
    says of the server at `url` and its `document`: its exit status and
    its output (tests/integration/openrpc_coverage.js)."""
    return run_openrpc_tool("@open-rpc/test-coverage", "openrpc_coverage.js", document, url,
                            timeout=120)


def described(document, name):
    (method,) = [m for m in document["methods"] if m["name"] == name]
    return method


class Typed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([example_path(), "0"], stdout=subprocess.PIPE, text=True)
        line = cls.proc.stdout.readline()
        if not line.startswith("listening on port "):
            cls.proc.kill()
            raise AssertionError(f"example_typed said {line!r}")
        # The example listens on localhost: 127.0.0.1 among its addresses.
        cls.url = f"http://{HOST}:{int(line.split()[-1])}/RPC2"
        cls.xml = xmlrpc.client.ServerProxy(cls.url)

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(10)
        cls.proc.stdout.close()

    def jsonrpc(self, method, params):
        return jsonrpc_call(self.url, method, params)

    def both(self, method, *params):
        """The result over XML-RPC and over JSON-RPC (params positional),
        which must be the same value."""
        got = getattr(self.xml, method)(*params)
        reply = self.jsonrpc(method, list(params))
        self.assertIn("result", reply, reply)
        self.assertEqual(got, reply["result"])
        return got

    def fault(self, method, *params):
        """The fault over XML-RPC, checked against JSON-RPC's error."""
        with self.assertRaises(xmlrpc.client.Fault) as raised:
            getattr(self.xml, method)(*params)
        reply = self.jsonrpc(method, list(params))
        self.assertEqual(reply["error"]["code"], raised.exception.faultCode)
        self.assertEqual(reply["error"]["data"], raised.exception.faultString)
        self.assertEqual(raised.exception.faultCode, INVALID_PARAMS)
        return raised.exception.faultString

    ROUTE = {"name": "walk", "stops": [{"x": 0, "y": 0}, {"x": 3, "y": 4}, {"x": 3, "y": 10}],
             "units": "feet", "tags": {"by": "ann"}}

    def test_a_struct_with_a_vector_of_structs_an_enum_and_a_map(self):
        self.assertAlmostEqual(self.both("route.length", self.ROUTE), 11 * 0.3048)
        reversed_ = self.both("route.reversed", self.ROUTE)
        self.assertEqual(reversed_, {
            "name": "walk (reversed)",
            "stops": [{"x": 3.0, "y": 10.0}, {"x": 3.0, "y": 4.0}, {"x": 0.0, "y": 0.0}],
            "units": "feet", "tags": {"by": "ann"}})
        # Members in declaration order, as a C++ reader would expect them.
        self.assertEqual(list(reversed_), ["name", "stops", "units", "tags"])

    def test_an_optional_member_may_be_left_out_and_is_left_out(self):
        route = {"name": "r", "stops": [{"x": 0, "y": 0}, {"x": 3, "y": 4}], "tags": {}}
        self.assertEqual(self.both("route.length", route), 5.0)
        self.assertNotIn("units", self.both("route.reversed", route))

    def test_a_pair_of_structs_and_a_vector_of_doubles(self):
        self.assertEqual(self.both("geo.bounds", [{"x": 1, "y": 5}, {"x": -2, "y": 3.5}]),
                         [{"x": -2.0, "y": 3.5}, {"x": 1.0, "y": 5.0}])
        self.assertEqual(self.both("stats.summary", [1, 2, 2.5]), {"count": 3.0, "mean": 1.8333333333333333})

    def test_a_trailing_optional_parameter_may_be_left_out_positionally_and_by_name(self):
        self.assertEqual(self.both("stats.summary", [1, 2, 2.5], 2), {"count": 3.0, "mean": 1.83})
        self.assertEqual(self.jsonrpc("stats.summary", {"numbers": [1, 2]})["result"],
                         {"count": 2.0, "mean": 1.5})
        self.assertEqual(self.jsonrpc("stats.summary", {"round_to": 0, "numbers": [1, 2]})["result"],
                         {"count": 2.0, "mean": 2.0})
        with self.assertRaises(xmlrpc.client.Fault) as raised:
            self.xml.stats.summary()
        self.assertEqual(raised.exception.faultString, "expected 1 to 2 parameters, got 0")

    def test_a_tuple_and_a_fixed_size_array(self):
        self.assertEqual(self.both("pair.swapped", ["a", 1]), [1, "a"])
        self.assertEqual(self.both("rgb.grey", [30, 60, 90]), 60)

    def test_a_time_point_is_a_date_time(self):
        t = datetime.datetime(2026, 12, 4, 23, 59, 30)
        got = self.xml.time.later(t, 45)
        self.assertEqual(got, xmlrpc.client.DateTime(datetime.datetime(2026, 12, 5, 0, 0, 15)))
        # JSON has no dateTime: JSON-RPC carries it as {"$datetime": ...}
        # (docs/jsonrpc.md).
        self.assertEqual(self.jsonrpc("time.later", [{"$datetime": "2026-12-04T23:59:30"}, 45]),
                         {"jsonrpc": "2.0", "result": {"$datetime": "2026-12-05T00:00:15"}, "id": 1})

    def test_bytes_are_base64(self):
        got = self.xml.bytes.reversed(xmlrpc.client.Binary(b"\x00\x01\xff"))
        self.assertEqual(got, xmlrpc.client.Binary(b"\xff\x01\x00"))
        self.assertEqual(self.jsonrpc("bytes.reversed", [{"$base64": base64.b64encode(b"ab").decode()}]),
                         {"jsonrpc": "2.0", "result": {"$base64": base64.b64encode(b"ba").decode()}, "id": 1})

    def test_signatures_say_struct_and_array(self):
        sig = self.xml.system.methodSignature
        self.assertEqual(sig("route.length"), [["double", "struct"]])
        self.assertEqual(sig("route.reversed"), [["struct", "struct"]])
        self.assertEqual(sig("geo.bounds"), [["array", "array"]])
        self.assertEqual(sig("stats.summary"), [["struct", "array", "int"]])
        self.assertEqual(sig("time.later"), [["dateTime.iso8601", "dateTime.iso8601", "i8"]])
        self.assertEqual(sig("bytes.reversed"), [["base64", "base64"]])
        self.assertEqual(sig("rgb.grey"), [["int", "array"]])

    def test_a_value_that_does_not_fit_is_invalid_params_naming_where(self):
        missing = dict(self.ROUTE, stops=[{"x": 0, "y": 0}, {"x": 3}])
        self.assertEqual(self.fault("route.length", missing),
                         'parameter 1, member "stops", element 1: member "y" is missing')
        wrong = dict(self.ROUTE, stops=[{"x": 0, "y": "north"}])
        self.assertEqual(self.fault("route.length", wrong),
                         'parameter 1, member "stops", element 0, member "y": expected double, got string')
        self.assertEqual(self.fault("rgb.grey", [1, 2, 3, 4]),
                         "parameter 1: expected an array of 3 elements, got 4")
        self.assertEqual(self.fault("pair.swapped", ["a", 1, 2]),
                         "parameter 1: expected an array of 2 elements, got 3")
        self.assertEqual(self.fault("route.length", dict(self.ROUTE, units="miles")),
                         'parameter 1, member "units": expected one of metres, feet; got "miles"')
        self.assertEqual(self.fault("geo.bounds", {"x": 1}),
                         "parameter 1: expected array, got struct")

    def test_method_help_shows_the_members(self):
        self.assertEqual(
            self.xml.system.methodHelp("route.length"),
            "The length of a route, in metres.\n\n"
            'Parameters: {name: string, stops: [{x: double, y: double}], units?: "metres" | "feet", '
            "tags: {string: string}}\nResult: double")
        self.assertEqual(self.xml.system.methodHelp("stats.summary").split("\n\n")[1],
                         "Parameters: numbers: [double], round_to: int or nil\n"
                         "Result: {string: double}")
        # Where the signature says it all, the help is as written.
        self.assertEqual(self.xml.system.methodHelp("system.methodHelp"),
                         "Returns the help text of the named method.")

    def test_rpc_discover_is_a_valid_openrpc_document_of_the_types(self):
        document = self.jsonrpc("rpc.discover", [])["result"]
        self.assertEqual(openrpc_verdict(document), "valid")
        self.assertEqual(document["openrpc"], "1.2.6")
        self.assertNotIn("rpc.discover", [m["name"] for m in document["methods"]])
        length = described(document, "route.length")
        self.assertEqual(length["summary"], "The length of a route, in metres.")
        (param,) = length["params"]
        self.assertEqual(param["name"], "param1")
        self.assertEqual(param["schema"]["required"], ["name", "stops", "tags"])
        self.assertEqual(param["schema"]["properties"]["stops"],
                         {"type": "array", "items": {"type": "object",
                                                     "properties": {"x": {"type": "number"},
                                                                    "y": {"type": "number"}},
                                                     "required": ["x", "y"]}})
        self.assertEqual(param["schema"]["properties"]["units"],
                         {"oneOf": [{"type": "string", "enum": ["metres", "feet"]}, {"type": "null"}]})
        self.assertEqual(length["result"]["schema"], {"type": "number"})
        summary = described(document, "stats.summary")
        self.assertEqual([(p["name"], p["required"]) for p in summary["params"]],
                         [("numbers", True), ("round_to", False)])
        self.assertEqual(summary["paramStructure"], "either")
        self.assertEqual(described(document, "rgb.grey")["params"][0]["schema"]["maxItems"], 3)
        # A tampered document is not valid: the validator can say no.
        described(document, "rgb.grey")["params"][0]["schema"]["type"] = "tuple"
        self.assertIn("invalid", openrpc_verdict(document))


    def test_a_coroutine_method_calls_out_and_answers(self):
        other = {"name": "line", "stops": [{"x": 0, "y": 0}, {"x": 0, "y": 2}], "tags": {}}
        # walk: 5 + 6 feet in metres; line: 2.
        self.assertAlmostEqual(self.both("routes.total", [self.ROUTE, other], 0.01),
                               11 * 0.3048 + 2)
        self.assertEqual(self.both("routes.total", []), 0)
        reply = self.jsonrpc("routes.total", {"routes": [other]})
        self.assertEqual(reply.get("result"), 2, reply)
        self.assertEqual(self.xml.system.methodSignature("routes.total"),
                         [["double", "array", "double"]])
        self.assertIn("parameter 1, element 0: member \"stops\" is missing",
                      self.fault("routes.total", [{"name": "x"}]))

    def test_a_coroutine_waiting_leaves_the_loop_to_other_calls(self):
        # One loop thread: a method that held it for its pause would keep
        # the second call (on a connection opened after the first call was
        # sent) waiting behind it.
        with RawClient(int(self.url.split(":")[-1].split("/")[0]), 30) as slow:
            slow.send(http_request(call_body("routes.total", [self.ROUTE], 3.0)))
            self.assertEqual(self.xml.rgb.grey([3, 6, 9]), 6)
            slow.sock.setblocking(False)
            with self.assertRaises(BlockingIOError, msg="answered before the quick call"):
                slow.sock.recv(1)
            slow.sock.settimeout(30)
            reply = slow.read_response()
        self.assertAlmostEqual(xmlrpc.client.loads(reply.decoded_body())[0][0], 11 * 0.3048)


class OwnIoContext(unittest.TestCase):
    def test_the_example_serves_on_its_io_context_and_ends_on_sigterm(self):
        proc = subprocess.Popen([example_path(), "0"], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            self.assertTrue(line.startswith("listening on port "), line)
            url = f"http://{HOST}:{int(line.split()[-1])}/RPC2"
            with xmlrpc.client.ServerProxy(url) as proxy:
                self.assertEqual(proxy.rgb.grey([1, 2, 3]), 2)
            proc.send_signal(signal.SIGTERM)
            # io.run() returns once the server has stopped, then wait().
            self.assertEqual(proc.wait(20), 0)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()


class Coroutines(unittest.TestCase):
    """rapidrpcd's test.wait, a coroutine method, and test.waiting, how
    many of its calls are under way."""

    def test_past_its_deadline_a_coroutine_is_cancelled_and_the_caller_told(self):
        with running_daemon("--enable-test-methods", "--method-timeout", "0.3",
                            env_args=False) as d:
            with xmlrpc.client.ServerProxy(d.url) as proxy:
                self.assertIs(proxy.test.wait(0.01), True)
                with self.assertRaises(xmlrpc.client.Fault) as raised:
                    proxy.test.wait(600)
                self.assertEqual(raised.exception.faultCode, TIMEOUT)
                self.assertEqual(raised.exception.faultString, "the call took too long")
                # Cancelled, not left waiting ten minutes.
                wait_until(lambda: proxy.test.waiting() == 0, 10, "test.wait ended")

    def test_a_coroutine_whose_client_goes_is_cancelled(self):
        with running_daemon("--enable-test-methods", env_args=False) as d:
            with xmlrpc.client.ServerProxy(d.url) as proxy:
                client = RawClient(d)
                client.send(http_request(call_body("test.wait", 600.0)))
                wait_until(lambda: proxy.test.waiting() == 1, 10, "test.wait under way")
                client.close()
                wait_until(lambda: proxy.test.waiting() == 0, 10, "test.wait cancelled")

    def test_a_request_sent_behind_a_coroutine_call_does_not_cancel_it(self):
        with running_daemon("--enable-test-methods", env_args=False) as d:
            with xmlrpc.client.ServerProxy(d.url) as proxy, RawClient(d) as client:
                client.send(http_request(call_body("test.wait", 1.0)))
                wait_until(lambda: proxy.test.waiting() == 1, 10, "test.wait under way")
                # Bytes while the call runs: the client is there.
                client.send(http_request(call_body("test.waiting")))
                first = client.read_response()
                second = client.read_response()
        self.assertIn(b"<boolean>1</boolean>", first.decoded_body())
        self.assertIn(b"<int>0</int>", second.decoded_body())


class DemoService(unittest.TestCase):
    def test_rpc_discover_is_a_valid_openrpc_document_of_rapidrpcds_methods(self):
        with running_daemon(env_args=False) as d:
            document = jsonrpc_call(d.url, "rpc.discover", [])["result"]
        self.assertEqual(openrpc_verdict(document), "valid")
        add = described(document, "sample.add")
        self.assertEqual([p["name"] for p in add["params"]], ["a", "b"])
        self.assertEqual(add["params"][0]["schema"],
                         {"type": "integer", "minimum": -2147483648, "maximum": 2147483647})
        # sample.sum checks its own parameters: none are declared.
        total = described(document, "sample.sum")
        self.assertEqual(total["params"], [])
        self.assertIn("not declared", total["description"])

    def test_its_examples_are_what_the_calls_answer(self):
        with running_daemon(env_args=False) as d:
            document = jsonrpc_call(d.url, "rpc.discover", [])["result"]
            examples = [(m["name"], e) for m in document["methods"] for e in m.get("examples", [])]
            self.assertGreaterEqual(len(examples), 8, examples)
            for name, example in examples:
                params = [p["value"] for p in example["params"]]
                reply = jsonrpc_call(d.url, name, params)
                self.assertEqual(reply.get("result"), example["result"]["value"],
                                 f"{name} {example['name']}: {reply}")
        self.assertEqual(described(document, "sample.add")["examples"][0]["params"],
                         [{"name": "a", "value": 2}, {"name": "b", "value": 3}])

    def test_openrpc_test_coverage_passes_against_the_demo_service(self):
        with running_daemon(env_args=False) as d:
            document = jsonrpc_call(d.url, "rpc.discover", [])["result"]
            status, said = openrpc_coverage(document, d.url)
        self.assertEqual(status, 0, said)
        # Every method of the document was called.
        called = said.rsplit("methods: ", 1)[-1].split()
        self.assertEqual(called, sorted(m["name"] for m in document["methods"]), said)

    def test_openrpc_test_coverage_fails_a_method_that_errs(self):
        # A document that promises what the server does not keep: sample.add
        # with parameters json-schema-faker fills past what it accepts.
        with running_daemon(env_args=False) as d:
            document = jsonrpc_call(d.url, "rpc.discover", [])["result"]
            add = described(document, "sample.add")
            del add["examples"]
            for param in add["params"]:
                param["schema"] = {"type": "string"}
            status, said = openrpc_coverage(document, d.url)
        self.assertEqual(status, 1, said)
        self.assertIn("failed: sample.add", said)


if __name__ == "__main__":
    main()
