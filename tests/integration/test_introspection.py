"""system.* methods: multicall, listMethods, methodHelp, methodSignature,
getCapabilities, and the unknown-method fault."""

import xmlrpc.client

import harness
from harness import DaemonTestCase

DEMO_METHODS = ["load", "sample.add", "sample.sum", "echo", "sleep"]
SYSTEM_METHODS = ["system.listMethods", "system.methodHelp", "system.methodSignature",
                  "system.multicall", "system.getCapabilities"]


class MultiCall(DaemonTestCase):

    def test_results_and_faults_in_order(self):
        calls = [
            {"methodName": "sample.add", "params": [1, 2]},
            {"methodName": "no.such.method", "params": []},
            {"methodName": "echo", "params": ["two"]},
            {"methodName": "sample.add", "params": [2**31 - 1, 1]},
            {"methodName": "sample.add", "params": ["x", 1]},
            {"methodName": "load", "params": [10]},
            {"methodName": "echo", "params": [{"k": [1, None, b"\x00"]}]},
        ]
        with self.proxy() as p:
            results = p.system.multicall(calls)
        self.assertIsInstance(results, list)
        self.assertEqual(len(results), len(calls), results)
        self.assertEqual(results[0], [3])
        self.assertIsInstance(results[1], dict)
        self.assertEqual(results[1].get("faultCode"), -32601, results[1])
        self.assertIsInstance(results[1].get("faultString"), str)
        self.assertEqual(results[2], ["two"])
        self.assertIsInstance(results[3], dict)
        self.assertEqual(results[3].get("faultCode"), -32500, results[3])  # overflow (docs/cli.md)
        self.assertIsInstance(results[4], dict)
        self.assertEqual(results[4].get("faultCode"), -32602, results[4])
        self.assertEqual(results[5], ["55"])
        self.assertEqual(results[6], [{"k": [1, None, b"\x00"]}])

    def test_python_multicall_object(self):
        with self.proxy() as p:
            mc = xmlrpc.client.MultiCall(p)
            for i in range(20):
                mc.sample.add(i, i)
            mc.echo("last")
            results = list(mc())
        self.assertEqual(results, [2 * i for i in range(20)] + ["last"])

    def test_python_multicall_raises_fault_at_the_failing_entry(self):
        with self.proxy() as p:
            mc = xmlrpc.client.MultiCall(p)
            mc.echo(1)
            mc.nosuch()
            mc.echo(3)
            it = mc()
            self.assertEqual(it[0], 1)
            with self.assertRaises(xmlrpc.client.Fault) as cm:
                it[1]
            self.assertEqual(cm.exception.faultCode, -32601)
            self.assertEqual(it[2], 3)

    def test_empty_multicall(self):
        with self.proxy() as p:
            self.assertEqual(p.system.multicall([]), [])

    def test_malformed_entries_fault_individually(self):
        calls = [
            {"methodName": "echo", "params": [1]},
            {"params": [1]},                      # no methodName
            {"methodName": "echo"},               # no params
            "not a struct",
            {"methodName": "echo", "params": [2]},
        ]
        with self.proxy() as p:
            results = p.system.multicall(calls)
        # Each malformed entry is a -32600 slot (not a valid call); the
        # others run.
        self.assertEqual(len(results), 5, results)
        self.assertEqual(results[0], [1])
        for r in results[1:4]:
            self.assertIsInstance(r, dict, results)
            self.assertEqual(r.get("faultCode"), -32600, results)
        self.assertEqual(results[4], [2])

    def test_wrong_param_is_invalid_params(self):
        with self.proxy() as p:
            self.assertFaultCode(-32602, p.system.multicall, "not an array")
            self.assertFaultCode(-32602, p.system.multicall)

    def test_nested_multicall_is_an_invalid_request_slot(self):
        # docs/limits.md: a nested multicall is a -32600 slot; the others run.
        inner = [{"methodName": "echo", "params": [1]}]
        with self.proxy() as p:
            results = p.system.multicall(
                [{"methodName": "system.multicall", "params": [inner]},
                 {"methodName": "echo", "params": [2]}])
        self.assertEqual(len(results), 2, results)
        self.assertIsInstance(results[0], dict, results)
        self.assertEqual(results[0].get("faultCode"), -32600, results)
        self.assertEqual(results[1], [2])
        self.assert_still_serving()


class Introspection(DaemonTestCase):

    def test_list_methods(self):
        with self.proxy() as p:
            methods = p.system.listMethods()
        self.assertIsInstance(methods, list)
        for m in DEMO_METHODS + SYSTEM_METHODS:
            self.assertIn(m, methods)
        self.assertTrue(all(isinstance(m, str) for m in methods))
        self.assertEqual(len(methods), len(set(methods)), "duplicates in listMethods")

    def test_method_help(self):
        with self.proxy() as p:
            for m in DEMO_METHODS + SYSTEM_METHODS:
                with self.subTest(method=m):
                    self.assertIsInstance(p.system.methodHelp(m), str)
            self.assertFaultCode(-32601, p.system.methodHelp, "no.such.method")

    def test_method_signature(self):
        with self.proxy() as p:
            self.assertEqual(p.system.methodSignature("sample.add"), [["int", "int", "int"]])
            load_sig = p.system.methodSignature("load")
            self.assertEqual(load_sig, [["string", "int"]])
            self.assertFaultCode(-32601, p.system.methodSignature, "no.such.method")

    def test_get_capabilities(self):
        with self.proxy() as p:
            caps = p.system.getCapabilities()
        self.assertIsInstance(caps, dict)
        self.assertIn("faults_interop", caps)
        fi = caps["faults_interop"]
        self.assertIsInstance(fi, dict)
        self.assertIn("specUrl", fi)
        self.assertIn("specVersion", fi)

    def test_unknown_method(self):
        with self.proxy() as p:
            fault = self.assertFaultCode(-32601, p.no.such.method)
            self.assertFaultCode(-32601, getattr(p, "system.noSuchThing"))
            self.assertFaultCode(-32601, getattr(p, "Echo"), 1)  # names are case-sensitive
        self.assertTrue(fault.faultString)
        self.assert_still_serving()


if __name__ == "__main__":
    harness.main()
