"""CPython's own tests of xmlrpc.server, run against rapidrpc's servers.

The system Python's test.test_xmlrpc and test.test_docxmlrpc (Debian's
libpython3.11-testsuite) run in a /usr/bin/python3 subprocess in which
xmlrpc.server's SimpleXMLRPCServer, MultiPathXMLRPCServer and
DocXMLRPCServer are rapidrpc's, put there before the test modules are
imported; nothing else is changed. Each server the tests make starts the
real rapidrpcd (RAPIDRPCD) in front of it, and the tests' clients talk to
rapidrpcd. Every test must pass, except those of EXCLUDED (none today): a
test that reads the server object's private state in its own process in a
way the relay cannot keep would be listed there with its reason, and in
docs/python.md, "CPython's tests".
"""

import json
import os
import subprocess
import sys
import unittest

from harness import daemon_path, main

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_PYTHON = os.path.abspath(os.path.join(HERE, "..", "..", "python"))
SYSTEM_PYTHON = "/usr/bin/python3"
MODULES = ("test.test_xmlrpc", "test.test_docxmlrpc")

# test id -> why it cannot pass with rapidrpcd in front (docs/python.md);
# these are not run (each would hang its server thread or fail). None today.
EXCLUDED: dict[str, str] = {}

RUNNER = r"""
import json, os, sys, unittest, xmlrpc.server
import rapidrpc
xmlrpc.server.SimpleXMLRPCServer = rapidrpc.SimpleXMLRPCServer
xmlrpc.server.MultiPathXMLRPCServer = rapidrpc.MultiPathXMLRPCServer
xmlrpc.server.DocXMLRPCServer = rapidrpc.DocXMLRPCServer
import importlib
modules = [importlib.import_module(name) for name in sys.argv[1:]]

class Result(unittest.TextTestResult):
    outcomes = {}
    def note(self, test, outcome, detail=""):
        self.outcomes[test.id()] = (outcome, detail)
    def addSuccess(self, test):
        super().addSuccess(test); self.note(test, "pass")
    def addFailure(self, test, err):
        super().addFailure(test, err); self.note(test, "fail", self._exc_info_to_string(err, test))
    def addError(self, test, err):
        super().addError(test, err); self.note(test, "error", self._exc_info_to_string(err, test))
    def addSkip(self, test, reason):
        super().addSkip(test, reason); self.note(test, "skip", reason)
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err); self.note(test, "expected failure")
    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test); self.note(test, "unexpected success")
    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.note(test, "fail", self._exc_info_to_string(err, test))

excluded = set(json.loads(os.environ["RAPIDRPC_EXCLUDED"]))

def tests_of(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests_of(t)
        else:
            yield t

loaded = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromModule(m) for m in modules)
suite = unittest.TestSuite(t for t in tests_of(loaded) if t.id() not in excluded)
for t in tests_of(loaded):
    if t.id() in excluded:
        Result.outcomes[t.id()] = ("excluded", "")
unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Result).run(suite)
print(json.dumps(Result.outcomes))
"""


class StdlibSuite(unittest.TestCase):
    def test_cpython_xmlrpc_tests_pass(self):
        if not os.path.exists("/usr/lib/python3.11/test/test_xmlrpc.py"):
            self.fail("CPython's test suite is not installed: scripts/setup.sh --tests installs "
                      "libpython3.11-testsuite")
        env = dict(os.environ, PYTHONPATH=SOURCE_PYTHON, RAPIDRPCD=daemon_path(),
                   RAPIDRPC_EXCLUDED=json.dumps(sorted(EXCLUDED)))
        r = subprocess.run([SYSTEM_PYTHON, "-c", RUNNER, *MODULES], env=env, capture_output=True,
                           text=True, timeout=110)  # within ctest's 120 s
        lines = r.stdout.strip().splitlines()
        self.assertTrue(lines, f"the runner printed nothing; status {r.returncode}\n{r.stderr}")
        outcomes = json.loads(lines[-1])
        counts = {}
        for outcome, _ in outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        print(f"\nCPython's {', '.join(MODULES)} against rapidrpc: {len(outcomes)} tests, "
              + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())), file=sys.stderr)
        self.assertGreater(len(outcomes), 100, "too few tests ran: " + r.stderr[-3000:])
        wrong = {}
        for test, (outcome, detail) in sorted(outcomes.items()):
            if test in EXCLUDED:
                if outcome != "excluded":
                    wrong[test] = f"excluded, but {outcome}"
            elif outcome not in ("pass", "expected failure"):
                wrong[test] = f"{outcome}: {detail}"
        missing = [t for t in EXCLUDED if t not in outcomes]
        self.assertEqual(missing, [], "excluded tests that no longer exist")
        self.assertEqual(wrong, {}, "\n\n".join(f"{t}: {w}" for t, w in wrong.items()))


if __name__ == "__main__":
    main()
