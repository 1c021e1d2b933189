"""`rapidrpc call` and `rapidrpc bench` over https, against rapidrpcd with a
test CA made at test time (tests/integration/tls_pki.py)."""

import json
import unittest

from clitest import EXIT_OK, EXIT_TRANSPORT, EXIT_USAGE, describe, harness, run_tool
from tls_pki import OPENSSL, TlsDaemon


@unittest.skipIf(OPENSSL is None, "the openssl command line is not installed")
class CliTls(TlsDaemon, harness.DaemonTestCase):

    def https_url(self, host=harness.HOST):
        return f"https://{host}:{self.daemon.port}/RPC2"

    def test_call_with_the_ca_file(self):
        for host in (harness.HOST, "localhost"):
            p = run_tool("call", "--cacert", self.pki["ca"], self.https_url(host), "sample.add", "i/3", "i/5")
            self.assertEqual(p.returncode, EXIT_OK, describe(p))
            self.assertEqual(p.stdout, "8\n")

    def test_call_without_the_ca_file_is_refused(self):
        p = run_tool("call", self.https_url(), "sample.add", "i/3", "i/5")
        self.assertEqual(p.returncode, EXIT_TRANSPORT, describe(p))
        self.assertIn("certificate verify failed", p.stderr)

    def test_call_with_another_ca_is_refused(self):
        p = run_tool("call", "--cacert", self.pki["other_ca"], self.https_url(), "sample.add", "i/1", "i/1")
        self.assertEqual(p.returncode, EXIT_TRANSPORT, describe(p))
        self.assertIn("certificate verify failed", p.stderr)

    def test_call_insecure(self):
        p = run_tool("call", "--insecure", self.https_url(), "echo", "s/hi")
        self.assertEqual(p.returncode, EXIT_OK, describe(p))
        self.assertEqual(p.stdout, "hi\n")

    def test_cacert_and_insecure_exclude_each_other(self):
        p = run_tool("call", "--insecure", "--cacert", self.pki["ca"], self.https_url(), "echo", "s/hi")
        self.assertEqual(p.returncode, EXIT_USAGE, describe(p))

    def test_a_missing_ca_file_is_a_usage_error(self):
        p = run_tool("call", "--cacert", self.pki["ca"] + ".missing", self.https_url(), "echo", "s/hi")
        self.assertEqual(p.returncode, EXIT_USAGE, describe(p))
        self.assertIn(".missing", p.stderr)

    def test_bench(self):
        for extra in (("--cacert", self.pki["ca"]), ("--insecure",)):
            for keep_alive in ("--keep-alive", "--no-keep-alive"):
                p = run_tool("bench", "--json", *extra, keep_alive, "-c", 4, "-n", 200,
                             self.https_url(), "sample.add", "i/3", "i/5")
                self.assertEqual(p.returncode, EXIT_OK, describe(p))
                r = json.loads(p.stdout)
                self.assertEqual(r["ok"], 200)
                self.assertEqual(r["errors"]["total"], 0)

    def test_a_timed_bench_ends_with_no_error_for_the_calls_it_abandons(self):
        # At the end of a timed run, calls still connecting, in their
        # handshake or being written are abandoned (not counted), as they
        # are over plain HTTP; with a handshake per call, there always are.
        for keep_alive in ("--keep-alive", "--no-keep-alive"):
            p = run_tool("bench", "--json", "--cacert", self.pki["ca"], keep_alive, "-c", 16,
                         "-d", 1, self.https_url(), "sample.add", "i/3", "i/5")
            self.assertEqual(p.returncode, EXIT_OK, describe(p))
            r = json.loads(p.stdout)
            self.assertGreater(r["ok"], 0)
            self.assertEqual(r["errors"]["total"], 0, describe(p))

    def test_bench_without_the_ca_file_does_not_start(self):
        p = run_tool("bench", "-n", 10, self.https_url(), "sample.add", "i/3", "i/5")
        self.assertEqual(p.returncode, EXIT_TRANSPORT, describe(p))
        self.assertIn("certificate verify failed", p.stderr)


if __name__ == "__main__":
    unittest.main()
