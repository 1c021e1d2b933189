"""`rapidrpcd --python` options and signatures (docs/python.md):

- `--python-exe PATH` is the interpreter that runs the worker program: a
  wrapper script at a path of the test's that logs each invocation (its pid
  and arguments) and then execs /usr/bin/python3 is run for the method
  table (`--describe`) and for every worker process, and the workers are
  the processes it logged;
- annotations give system.methodSignature its types: `int` int, `str`
  string, `float` double, `bool` boolean, `bytes` base64,
  `datetime.datetime` dateTime.iso8601, `list` and `tuple` array, `dict`
  struct, `None` nil, anything else undef; a parameter left without an
  annotation in an annotated function is undef, and a function with
  `*args` has no signature ("undef"); the same types written as strings
  (`from __future__ import annotations`) and parameterized (`list[int]`)
  give the same, and a name the module does not define is undef.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import os
import stat
import tempfile
import textwrap
import unittest

import procs
from harness import (call_body, exchange, http_request, main, parse_result, running_daemon,
                     wait_until)

TYPED = textwrap.dedent('''\
    """Functions with one annotation type each, for system.methodSignature."""
    import datetime


    class Custom:
        pass


    def f_int(a: int) -> int:
        return a


    def f_str(a: str) -> str:
        return a


    def f_float(a: float) -> float:
        return a


    def f_bool(a: bool) -> bool:
        return a


    def f_bytes(a: bytes) -> bytes:
        return a


    def f_datetime(a: datetime.datetime) -> datetime.datetime:
        return a


    def f_list(a: list) -> list:
        return a


    def f_tuple(a: tuple) -> tuple:
        return a


    def f_dict(a: dict) -> dict:
        return a


    def f_none(a: None) -> None:
        return None


    def f_unknown(a: Custom, b: set) -> Custom:
        return None


    def f_mixed(a: int, b, c: float = 1.0) -> str:
        return ""


    def f_varargs(a: int, *rest: int) -> int:
        return a


    def f_bare(a, b):
        return a


    def f_odd(a: [int]) -> int:  # an annotation that is no type (nor hashable)
        return 0
    ''')

EXPECTED = {
    "f_int": [["int", "int"]],
    "f_str": [["string", "string"]],
    "f_float": [["double", "double"]],
    "f_bool": [["boolean", "boolean"]],
    "f_bytes": [["base64", "base64"]],
    "f_datetime": [["dateTime.iso8601", "dateTime.iso8601"]],
    "f_list": [["array", "array"]],
    "f_tuple": [["array", "array"]],
    "f_dict": [["struct", "struct"]],
    "f_none": [["nil", "nil"]],
    "f_unknown": [["undef", "undef", "undef"]],
    "f_mixed": [["string", "int", "undef", "double"]],
    "f_varargs": "undef",
    "f_bare": "undef",
    "f_odd": [["int", "undef"]],
}


# The same types written as strings: every annotation is one under
# `from __future__ import annotations`, and some are one anyway.
STRINGS = textwrap.dedent('''\
    from __future__ import annotations

    import datetime


    def g_int(a: int, b: "float") -> int:
        return a


    def g_when(a: datetime.datetime, b: bytes) -> None:
        return None


    def g_generic(a: list[int], b: tuple[int, ...], c: dict[str, int]) -> dict:
        return {}


    def g_unresolved(a: NoSuchName, b: "bool") -> bool:  # noqa: F821
        return True
    ''')

EXPECTED_STRINGS = {
    "g_int": [["int", "int", "double"]],
    "g_when": [["nil", "dateTime.iso8601", "base64"]],
    "g_generic": [["struct", "array", "array", "struct"]],
    "g_unresolved": [["boolean", "undef", "boolean"]],
}


class Signatures(unittest.TestCase):
    def signatures(self, module, source, expected):
        """system.methodSignature of every name in `expected`, with `source`
        served as `module`; the names listed are those of `expected`."""
        with tempfile.TemporaryDirectory(prefix="rapidrpc-typed-") as tmp:
            with open(os.path.join(tmp, f"{module}.py"), "w") as f:
                f.write(source)
            with running_daemon("--python", module, "--python-path", tmp, "--workers", "1",
                                env_args=False) as d:
                with d.proxy() as p:
                    listed = p.system.listMethods()
                    got = {name: p.system.methodSignature(name) for name in expected}
                    # The methods are served too (the table is not all there is).
                    self.assertEqual(p.echo_first(2.5), 2.5)
        self.assertEqual(sorted(m for m in listed if m[:2] in ("f_", "g_")), sorted(expected))
        self.assertEqual(got, expected)

    def test_each_annotation_type_gives_its_xmlrpc_type(self):
        self.signatures("typed", TYPED + "\n\ndef echo_first(a, *rest):\n    return a\n",
                        EXPECTED)

    def test_string_annotations_are_read_in_the_module(self):
        self.signatures("strings", STRINGS + "\n\ndef echo_first(a, *rest):\n    return a\n",
                        EXPECTED_STRINGS)


WRAPPER = textwrap.dedent('''\
    #!/bin/sh
    # Logs this invocation, then becomes the system's Python (same pid).
    # The line goes out in one write: the workers start side by side, and
    # writes of a line in pieces would interleave.
    line="$$"
    for a in "$@"; do line="$line $a"; done
    printf '%s\\n' "$line" >> "{log}"
    exec /usr/bin/python3 "$@"
    ''')


class PythonExe(unittest.TestCase):
    def test_the_interpreter_given_runs_the_table_and_every_worker(self):
        service_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_service")
        with tempfile.TemporaryDirectory(prefix="rapidrpc-exe-") as tmp:
            log = os.path.join(tmp, "invocations.log")
            exe = os.path.join(tmp, "my python")  # a space: the path is passed as it is
            with open(exe, "w") as f:
                f.write(WRAPPER.format(log=log))
            os.chmod(exe, stat.S_IRWXU)
            with running_daemon("--python", "service", "--python-path", service_dir,
                                "--workers", "2", "--python-exe", exe, env_args=False) as d:
                def two_workers():
                    pids = sorted(procs.serving(d.proc.pid))
                    return pids if len(pids) == 2 else None

                pids = wait_until(two_workers, 10, "two worker processes")
                resp = exchange(d, http_request(call_body("add", 2, 3),
                                                headers=[("Connection", "close")]))
                self.assertEqual(parse_result(resp.body), 5)
                with open(log) as f:
                    lines = [line.split(" ") for line in f.read().splitlines()]
                logged = {int(fields[0]): fields[1:] for fields in lines}
                # The method table first (--describe), then the warm parent,
                # which forks the workers.
                describe = [args for args in logged.values() if "--describe" in args]
                self.assertEqual(len(describe), 1, lines)
                (parent,) = procs.warm_parents(d.proc.pid)
                self.assertIn(parent, logged, f"the warm parent was not started by {exe}: {lines}")
                self.assertIn("--warm-parent", logged[parent])
                self.assertIn("--module", logged[parent])
                self.assertEqual(logged[parent][logged[parent].index("--module") + 1], "service")
                self.assertTrue(logged[parent][0].endswith("rapidrpc/_worker.py"), logged[parent])
                for pid in [parent] + pids:
                    self.assertTrue(os.readlink(f"/proc/{pid}/exe").startswith("/usr/bin/python3"))
                for pid in pids:
                    self.assertEqual(procs.stat(pid)[0], parent, f"worker {pid}'s parent")


if __name__ == "__main__":
    main()
