"""Runs one Python test module as ctest runs it (tests/CMakeLists.txt,
rapidrpc_daemon_tests), from the module's folder:

    python3 tests/run_unittest.py test_http

- A test marked by harness.not_applicable (skip_in_modes, only_in_modes:
  the serving mode, a sanitizer build) is left out: it does not apply to
  this configuration, which the registration chose, so it is neither run
  nor counted as skipped. The list of what was left out, and why, is printed
  first. A module none of whose tests applies is an error: its registration
  must leave it out (rapidrpc_daemon_tests_in_modes' EXCLUDE).
- The others run as `python3 -m unittest -v` runs them.
- Exit status: 1 if any failed; else 77 if any skipped itself (a tool or
  a right the environment lacks), each printed as `SKIPPED <test>: <reason>`
  at the end, which ctest counts as a skipped test (SKIP_RETURN_CODE) and
  tests/check_skips.py holds against tests/skips.allowed; else 0.

Run by hand, `python3 -m unittest -v test_http` still works: there a test
that does not apply skips itself, saying why.
"""

import os
import sys
import unittest

SKIP_STATUS = 77


def _tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


def not_applicable_reason(test):
    """Why `test` does not apply here (harness.not_applicable), or None."""
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    for holder in (method, type(test)):
        reason = getattr(holder, "__rapidrpc_not_applicable__", None)
        if reason:
            return reason
    return None


def main(argv):
    if len(argv) != 2:
        sys.exit(f"usage: {argv[0]} MODULE (run in the module's folder)")
    sys.path.insert(0, os.getcwd())
    module = argv[1]
    # A module that cannot be imported is loaded as a failing test.
    loaded = unittest.defaultTestLoader.loadTestsFromName(module)
    applicable, left_out = unittest.TestSuite(), []
    for test in _tests(loaded):
        reason = not_applicable_reason(test)
        if reason:
            left_out.append((test.id(), reason))
        else:
            applicable.addTest(test)
    if left_out:
        print(f"{len(left_out)} test(s) of {module} do not apply here and are left out:", file=sys.stderr)
        for name, reason in left_out:
            print(f"  {name}: {reason}", file=sys.stderr)
    if applicable.countTestCases() == 0:
        print(f"no test of {module} applies here: leave the module out of this registration "
              "(rapidrpc_daemon_tests_in_modes' EXCLUDE, tests/CMakeLists.txt)", file=sys.stderr)
        return 1
    result = unittest.TextTestRunner(verbosity=2).run(applicable)
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        sys.stdout.flush()
        print(f"\n{len(result.skipped)} test(s) of {module} skipped themselves; the others passed:",
              file=sys.stderr)
        for test, reason in result.skipped:
            # A class skipped in setUpClass is reported as
            # "setUpClass (module.Class)": named by its class.
            name = test.id()
            if name.startswith("setUpClass (") and name.endswith(")"):
                name = name[len("setUpClass ("):-1]
            print(f"SKIPPED {name}: {reason}", file=sys.stderr)
        return SKIP_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
