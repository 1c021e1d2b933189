"""The demo methods: load(n) (Fibonacci on the worker pool) and sample.add."""

import sys
import time

import harness
from harness import DaemonTestCase, fib_str


class Load(DaemonTestCase):

    def test_small_values_match_python(self):
        with self.proxy() as p:
            for n in (1, 2, 3, 4, 10, 100, 1000):
                with self.subTest(n=n):
                    result = p.load(n)
                    self.assertIs(type(result), str)
                    self.assertEqual(result, fib_str(n))
        self.assertEqual(fib_str(10), "55")  # the reference loop itself

    def test_150000_matches_python_in_full(self):
        expected = fib_str(150000)
        self.assertEqual(len(expected), 31348)
        with self.proxy() as p:
            t0 = time.monotonic()
            result = p.load(150000)
            elapsed = time.monotonic() - t0
        print(f"\n  load(150000): {elapsed * 1000:.1f} ms round trip", file=sys.stderr, flush=True)
        self.assertEqual(len(result), len(expected))
        self.assertEqual(result, expected)

    def test_zero_and_negative_are_faults(self):
        with self.proxy() as p:
            for n in (0, -1, -2**31):
                with self.subTest(n=n):
                    # Out of range: invalid params (docs/design.md, Errors).
                    self.assertFaultCode(-32602, p.load, n)
        self.assert_still_serving()

    def test_wrong_types_and_counts(self):
        with self.proxy() as p:
            self.assertFaultCode(-32602, p.load, "10")
            self.assertFaultCode(-32602, p.load, 10.0)
            self.assertFaultCode(-32602, p.load, [10])
            self.assertFaultCode(-32602, p.load)
            self.assertFaultCode(-32602, p.load, 10, 10)
        self.assert_still_serving()

    def test_reachable_at_both_paths(self):
        for path in ("/RPC2", "/"):
            with self.subTest(path=path), self.daemon.proxy(path=path) as p:
                self.assertEqual(p.load(10), "55")


class SampleAdd(DaemonTestCase):

    def test_normal(self):
        with self.proxy() as p:
            for a, b in ((1, 2), (-5, 3), (0, 0), (2**31 - 2, 1), (-2**31 + 1, -1),
                         (2**31 - 1, -2**31)):
                with self.subTest(a=a, b=b):
                    result = p.sample.add(a, b)
                    self.assertIs(type(result), int)
                    self.assertEqual(result, a + b)

    def test_overflow_is_a_fault(self):
        with self.proxy() as p:
            for a, b in ((2**31 - 1, 1), (-2**31, -1), (2**31 - 1, 2**31 - 1), (-2**31, -2**31)):
                with self.subTest(a=a, b=b):
                    # An application fault, -32500 (docs/cli.md).
                    fault = self.assertFaultCode(-32500, p.sample.add, a, b)
                    self.assertIn("integer overflow", fault.faultString)
        self.assert_still_serving()

    def test_wrong_types(self):
        with self.proxy() as p:
            for args in (("1", 2), (1, "2"), (1.0, 2), (1, 2.5), ([1], 2), ({"a": 1}, 2),
                         (None, 2), (b"\x01", 2), (True, 1)):
                with self.subTest(args=args):
                    self.assertFaultCode(-32602, p.sample.add, *args)
        self.assert_still_serving()

    def test_wrong_count(self):
        with self.proxy() as p:
            for args in ((), (1,), (1, 2, 3)):
                with self.subTest(args=args):
                    self.assertFaultCode(-32602, p.sample.add, *args)
        self.assert_still_serving()


if __name__ == "__main__":
    harness.main()
