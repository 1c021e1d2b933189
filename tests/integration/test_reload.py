"""SIGHUP with --python (docs/operations.md, "Reloading"): the module
imported anew while rapidrpcd serves.

- Under a continuous `rapidrpc bench`, a changed module: no call fails,
  never fewer workers serving than --workers (rapidrpc_worker_processes_up,
  read over and over), the workers replaced one at a time, each counted
  under cause "reload"; then the new code answers, a method added is
  served (with its signature, in system.listMethods and on the API page)
  and a method removed is -32601. With a warm parent the new workers are
  forks of a new parent and the old parent is gone; with
  --python-spawn-workers each new worker imports the module itself, and
  two SIGHUPs in a row both take effect, in order.
- A module that no longer imports leaves the old code serving, the same
  processes, with the traceback logged; a module that the describe step
  imports but a new warm parent cannot leaves the old code serving too,
  and no process of the failed parent behind; a reload after either works.
This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""
import os
import shutil
import signal
import tempfile
import unittest
import urllib.request
import xmlrpc.client

import procs
from harness import HOST, Daemon, main, wait_until
from test_recycling import UpWatch, replacements
from test_upgrade import Bench

METHOD_NOT_FOUND = -32601

FIRST = """\
def add(a: int, b: int) -> int:
    return a + b


def version() -> int:
    return 1


def gone() -> str:
    return "still here"
"""

SECOND = """\
def add(a: int, b: int) -> int:
    return b + a


def version() -> int:
    return 2


def added(text: str) -> str:
    \"\"\"Came with the reload.\"\"\"
    return "new " + text
"""

BROKEN = """\
def version() -> int
    return 3
"""

# Imported by the describe step (which runs with --describe), not by a
# warm parent.
DESCRIBED_ONLY = """\
import sys

if "--describe" not in sys.argv:
    raise RuntimeError("imported outside the describe step")


def version() -> int:
    return 4
"""


class Reload(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="rapidrpc-reload-")
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        self.write(FIRST)

    def write(self, text):
        """The module's new text; its cached bytecode goes, so that a file
        rewritten within the same second is not taken for the old one."""
        with open(os.path.join(self.folder, "reloaded.py"), "w") as f:
            f.write(text)
        shutil.rmtree(os.path.join(self.folder, "__pycache__"), ignore_errors=True)

    def start(self, *args):
        d = Daemon("--admin", f"{HOST}:0", "--workers", "2", "--python", "reloaded",
                   "--python-path", self.folder, *args, env_args=False)
        d.start()
        self.addCleanup(d.stop)
        wait_until(lambda: d.metric("rapidrpc_worker_processes_up") == 2, 30, "2 workers up")
        self.proxy = xmlrpc.client.ServerProxy(d.url)
        self.addCleanup(self.proxy("close"))
        return d

    def hup(self, d, outcome, times=1):
        """SIGHUP, then waits for the daemon to say `outcome` once more than
        it had."""
        before = d.stderr_text(limit=10**6).count(outcome)
        os.kill(d.proc.pid, signal.SIGHUP)
        wait_until(lambda: d.stderr_text(limit=10**6).count(outcome) >= before + times, 30,
                   f"{outcome!r} said")

    def workers(self, d):
        return sorted(procs.serving(d.proc.pid))

    def reload_under_load(self, d, reloads=1):
        watch = UpWatch(d)
        watch.start()
        bench = Bench(d.url, 4, "-c", "8")
        bench.cmd[3:6] = ["add", "i/3", "i/5"]
        bench.cmd += ["--expect", "8"]
        bench.start()
        try:
            wait_until(lambda: d.metric("rapidrpc_pool_wait_seconds_count") > 200, 10, "calls flowing")
            self.write(SECOND)
            self.hup(d, "every worker runs the new reloaded", times=reloads)
        finally:
            bench.join(60)
            watch.stop()
        self.assertIsNotNone(bench.result, bench.output)
        self.assertEqual(bench.result["errors"]["total"], 0, bench.result["first_error"])
        self.assertEqual(bench.result["ok"], bench.result["calls"])
        self.assertGreater(bench.result["ok"], 1000)
        self.assertGreater(watch.reads, 20)
        self.assertGreaterEqual(watch.low, 2, "fewer workers serving than --workers")
        # One at a time, each begun once the one before ended.
        self.assertEqual([why for _, why in replacements(d)],
                         ["runs the code from before the reload"] * 2 * reloads)
        self.assertEqual(d.metric("rapidrpc_worker_restarts_total", cause="reload"), 2 * reloads)

    def new_code_serves(self, d):
        p = self.proxy
        self.assertEqual(p.version(), 2)
        self.assertEqual(p.added("one"), "new one")
        self.assertEqual(p.system.methodSignature("added"), [["string", "string"]])
        self.assertEqual(p.system.methodHelp("added"), "Came with the reload.")
        with self.assertRaises(xmlrpc.client.Fault) as gone:
            p.gone()
        self.assertEqual(gone.exception.faultCode, METHOD_NOT_FOUND)
        methods = p.system.listMethods()
        self.assertIn("added", methods)
        self.assertNotIn("gone", methods)
        page = urllib.request.Request(d.url, headers={"Accept": "text/html"})
        with urllib.request.urlopen(page, timeout=10) as r:
            html = r.read().decode()
        self.assertTrue('data-method="added"' in html and 'data-method="gone"' not in html,
                        "the API page lists the methods from before the reload")

    def test_a_changed_module_under_load_with_a_warm_parent(self):
        d = self.start()
        (old_parent,) = procs.warm_parents(d.proc.pid)
        old_workers = self.workers(d)
        self.reload_under_load(d)
        self.new_code_serves(d)
        (parent,) = wait_until(lambda: procs.warm_parents(d.proc.pid) - {old_parent}
                               if len(procs.warm_parents(d.proc.pid)) == 1 else None, 10,
                               "the old warm parent gone")
        workers = self.workers(d)
        self.assertEqual(len(workers), 2)
        self.assertFalse(set(workers) & set(old_workers))
        for pid in workers:
            self.assertEqual(procs.stat(pid)[0], parent)
        self.assertIn(f"reload: the new warm parent {parent} is ready", d.stderr_text(limit=10**6))

    def test_a_changed_module_under_load_with_workers_that_import_it(self):
        d = self.start("--python-spawn-workers")
        self.assertEqual(procs.warm_parents(d.proc.pid), set())
        # Two in a row: the second follows the first.
        self.write(FIRST.replace("return 1", "return 10"))
        os.kill(d.proc.pid, signal.SIGHUP)
        self.reload_under_load(d, reloads=2)
        self.new_code_serves(d)

    def failed_reload(self, text, outcome):
        """A reload of a module of `text` that ends with `outcome` said: the
        same processes serve the old code, nothing else left behind. Then
        the mended module reloads. Returns what the daemon logged."""
        d = self.start()
        parents, workers = procs.warm_parents(d.proc.pid), self.workers(d)
        self.write(text)
        self.hup(d, outcome)
        logged = d.stderr_text(limit=10**6)
        self.assertEqual(self.proxy.version(), 1)
        self.assertEqual(self.proxy.gone(), "still here")
        self.assertEqual(procs.warm_parents(d.proc.pid), parents)
        self.assertEqual(self.workers(d), workers)
        self.assertEqual(set(procs.live_children(d.proc.pid)), parents | set(workers))
        self.assertEqual(d.metric("rapidrpc_worker_restarts_total", cause="reload"), 0)
        self.write(SECOND)
        self.hup(d, "every worker runs the new reloaded")
        self.new_code_serves(d)
        return logged

    def test_a_module_that_no_longer_imports_leaves_the_old_code_serving(self):
        logged = self.failed_reload(BROKEN, "reload: the running code serves on")
        self.assertIn("cannot load --python reloaded", logged)
        self.assertIn("SyntaxError", logged)

    def test_a_new_warm_parent_that_cannot_import_leaves_the_old_code_serving(self):
        logged = self.failed_reload(
            DESCRIBED_ONLY, "reload: the new reloaded did not start; the running code serves on")
        self.assertIn("RuntimeError: imported outside the describe step", logged)
        self.assertIn("reload failed: the new warm parent ended before it was ready", logged)


if __name__ == "__main__":
    main()
