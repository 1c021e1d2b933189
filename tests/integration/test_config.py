"""rapidrpcd's config file (--config FILE, docs/operations.md, "Config file"):

- every setting on the command line is a key of the example,
  packaging/rapidrpcd.toml, and every key there is an option; the example
  is what --print-config prints, and --check-config passes on it;
- the file's values are used, and the command line wins over them;
- an unknown key, a bad value, a value of the wrong type and a TOML syntax
  error stop start-up, naming the file and the line;
- SIGHUP reads the file again: deny-method changes in place, a changed port
  is logged as needing a restart (the old one keeps serving), and a broken
  file is logged and changes nothing; SIGUSR1 (logrotate's) reads nothing.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import tomllib
import unittest
import xmlrpc.client

from harness import HOST, Daemon, daemon_path, main, make_proxy, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.abspath(os.path.join(HERE, "..", "..", "packaging", "rapidrpcd.toml"))

# The options that are no settings (actions, and the config file's own).
NOT_SETTINGS = {"help", "version", "config", "check-config", "print-config", "hash-password",
                "hash-iterations", "curve-keygen"}


def run(*args, timeout=30):
    return subprocess.run([daemon_path(), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


DEFAULT_PORT = 6677  # --print-config's port


def reserved_port():
    """A socket bound to a port of HOST, not listening: while it is open no
    other process can take the port, and a connection to it is refused."""
    s = socket.socket()
    s.bind((HOST, 0))
    return s


class ConfigTestCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.path = os.path.join(self.dir, "rapidrpcd.toml")

    def write(self, text):
        # Replaced, not rewritten in place: a reader never sees half a file.
        tmp = self.path + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)

    def daemon(self, *args, file_port=False):
        """A daemon started with --config and `args`; with `file_port` the
        command line sets no --port, so the file's is used."""
        d = Daemon("--config", self.path, *args, env_args=False)
        if file_port:
            i = d.args.index("--port")
            del d.args[i:i + 2]
        return d


class Keys(unittest.TestCase):
    def test_every_option_is_a_key_of_the_example_and_every_key_an_option(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        options = set(re.findall(r"^\s+(?:-\w,)?--([a-z][a-z0-9-]*)", r.stdout, re.M))
        self.assertIn("max-body-bytes", options)  # in an option group
        self.assertIn("port", options)
        with open(EXAMPLE, "rb") as f:
            keys = set(tomllib.load(f))
        settings = options - NOT_SETTINGS
        self.assertEqual(sorted(settings - keys), [], "options that are not keys of the example")
        self.assertEqual(sorted(keys - settings), [], "keys of the example that are no options")

    def test_the_example_is_what_print_config_prints(self):
        r = run("--print-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(EXAMPLE) as f:
            self.assertEqual(f.read(), r.stdout,
                             "regenerate it: rapidrpcd --print-config > packaging/rapidrpcd.toml")

    def test_check_config_passes_on_the_example(self):
        r = run("--config", EXAMPLE, "--check-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, f"rapidrpcd: {EXAMPLE}: ok\n")


class StartUp(ConfigTestCase):
    def test_the_files_port_and_paths_are_used(self):
        # The file's port is 0, so the kernel chooses one (no port chosen
        # here could be taken before the daemon binds it); without the
        # file's, the daemon would listen on the default port.
        self.write('port = 0\npath = ["/from-file"]\n')
        with self.daemon(file_port=True).start() as d:
            self.assertNotEqual(d.port, DEFAULT_PORT)
            with make_proxy(f"http://{HOST}:{d.port}/from-file") as p:
                self.assertEqual(p.sample.add(1, 2), 3)

    def test_the_command_line_wins_over_the_file(self):
        with socket.socket() as taken:  # were the file's port used, start-up would fail
            taken.bind((HOST, 0))
            taken.listen(1)
            self.write(f'port = {taken.getsockname()[1]}\npath = ["/from-file"]\n')
            with self.daemon("--path", "/from-command-line").start() as d:
                self.assertNotEqual(d.port, taken.getsockname()[1])
                with d.proxy(path="/from-command-line") as p:
                    self.assertEqual(p.sample.add(1, 2), 3)
                c = d.connection()
                try:
                    c.request("POST", "/from-file", body=b"<methodCall/>")
                    self.assertEqual(c.getresponse().status, 404)
                finally:
                    c.close()

    def test_print_config_shows_the_file_and_the_command_line(self):
        self.write('port = 7000\ndrain-timeout = 2.5\nallow = ["127.0.0.0/8"]\n')
        r = run("--config", self.path, "--port", "8000", "--print-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\nport = 8000\n", r.stdout)
        self.assertIn("\ndrain-timeout = 2.5\n", r.stdout)
        self.assertIn('\nallow = ["127.0.0.0/8"]\n', r.stdout)

    def test_check_config_binds_nothing(self):
        with socket.socket() as taken:
            taken.bind((HOST, 0))
            taken.listen(1)
            self.write(f'host = "{HOST}"\nport = {taken.getsockname()[1]}\n')
            r = run("--config", self.path, "--check-config")
            self.assertEqual(r.returncode, 0, r.stderr)

    def assert_refused(self, text, message):
        """Start-up with the file `text` fails, and standard error holds
        `message` (PATH stands for the file's path)."""
        self.write(text)
        # No --port 0: a file that were taken would bind 1 and fail otherwise.
        r = run("--config", self.path, "--host", HOST, timeout=30)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("rapidrpcd: " + message.replace("PATH", self.path), r.stderr)
        r = run("--config", self.path, "--check-config")
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertNotIn(": ok", r.stdout)

    def test_unknown_key(self):
        self.assert_refused('port = 1\n\nprot = 1\n',
                            'PATH:3:1: unknown key "prot" (did you mean "port"?)')

    def test_bad_value(self):
        self.assert_refused('port = 1\nmode = "fast"\n', 'PATH:2:8: mode: fast not in {async-pool,')
        self.assert_refused('# a comment\nport = 70000\n', "PATH:2:8: port: 70000 is out of range")

    def test_bad_type(self):
        self.assert_refused('host = "x"\nport = "abc"\n',
                            'PATH:2:8: port: expected an integer, got a string ("abc")')
        self.assert_refused('port = 1\nisolate = "yes"\n',
                            'PATH:2:11: isolate: expected true or false, got a string ("yes")')
        self.assert_refused('port = 1\npath = "/x"\n',
                            "PATH:2:8: path: expected an array of strings")

    def test_toml_syntax_error(self):
        self.assert_refused('port = 1\nhost = "x\n', "PATH:2:")

    def test_an_option_without_the_one_it_needs(self):
        self.assert_refused('port = 1\ntls-cert = "server.pem"\n', "PATH:2:12: tls-cert needs tls-key")

    def test_a_file_that_is_not_there(self):
        r = run("--config", self.path, "--port", "0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"rapidrpcd: {self.path}: cannot read it", r.stderr)


class Reload(ConfigTestCase):
    """SIGHUP with --config."""

    def reload(self, d, text):
        """Writes `text`, sends SIGHUP and returns what the daemon logged
        for the reload, once it has read the file."""
        mark = d.stderr_bytes()
        self.write(text)
        d.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            log = d.stderr_since(mark)
            if re.search(r"rapidrpcd: reload: .*( read.*|keeping the running settings)\n", log):
                return log
            time.sleep(0.02)
        self.fail(f"no reload logged within 10 s\n{d.diagnostics()}")

    def assert_denied(self, d, method, *params):
        with d.proxy() as p:
            with self.assertRaises(xmlrpc.client.Fault) as caught:
                getattr(p, method)(*params)
        self.assertEqual(caught.exception.faultCode, -32002)

    def test_deny_method_changes_in_place(self):
        self.write("deny-method = []\n")
        with self.daemon().start() as d:
            with d.proxy() as p:
                self.assertEqual(p.sample.add(1, 2), 3)
            log = self.reload(d, 'deny-method = ["sample.add"]\n')
            self.assertIn('rapidrpcd: reload: deny-method = ["sample.add"]', log)
            self.assertNotIn("needs a restart", log)
            self.assert_denied(d, "sample.add", 1, 2)
            with d.proxy() as p:
                self.assertEqual(p.echo("still served"), "still served")
            self.reload(d, "")
            with d.proxy() as p:
                self.assertEqual(p.sample.add(1, 2), 3)

    def test_sigusr1_reads_nothing(self):
        # logrotate's signal re-opens the access log, and leaves the file
        # unread until a SIGHUP.
        self.write("deny-method = []\n")
        with self.daemon().start() as d:
            mark = d.stderr_bytes()
            self.write('deny-method = ["sample.add"]\n')
            d.send_signal(signal.SIGUSR1)
            wait_until(lambda: "re-opening the access log" in d.stderr_since(mark), 10,
                       "SIGUSR1 logged")
            with d.proxy() as p:
                self.assertEqual(p.sample.add(1, 2), 3)
            log = self.reload(d, 'deny-method = ["sample.add"]\n')
            self.assertIn('rapidrpcd: reload: deny-method = ["sample.add"]', log)
            self.assert_denied(d, "sample.add", 1, 2)

    def test_in_the_process_modes_deny_method_needs_a_restart(self):
        # Their serving processes are forked from a copy of the server taken
        # at start: a new list would not reach them, and the log says so.
        for mode in ("fork", "prefork"):
            with self.subTest(mode=mode):
                self.write("deny-method = []\n")
                with self.daemon("--mode", mode, "--processes", "1").start() as d:
                    log = self.reload(d, 'deny-method = ["sample.add"]\n')
                    self.assertIn("rapidrpcd: reload: deny-method changed in the file; it needs a "
                                  "restart or an upgrade (SIGUSR2), keeping []\n", log)
                    with d.proxy() as p:
                        self.assertEqual(p.sample.add(1, 2), 3)

    def test_a_changed_port_needs_a_restart_and_the_old_one_serves(self):
        self.write("port = 0\n")
        with self.daemon(file_port=True).start() as d, reserved_port() as reserved:
            port, other = d.port, reserved.getsockname()[1]
            log = self.reload(d, f'port = {other}\ndeny-method = ["sample.add"]\n')
            # (The setting kept is the file's 0; the daemon listens on `port`.)
            self.assertIn("rapidrpcd: reload: port changed in the file; it needs a restart or an "
                          "upgrade (SIGUSR2), keeping 0\n", log)
            self.assert_denied(d, "sample.add", 1, 2)  # what can change still does
            with make_proxy(f"http://{HOST}:{port}/RPC2") as p:
                self.assertEqual(p.echo(1), 1)
            with self.assertRaises(ConnectionRefusedError):
                socket.create_connection((HOST, other), timeout=5).close()

    def test_a_broken_file_is_logged_and_changes_nothing(self):
        self.write('deny-method = ["sample.add"]\n')
        with self.daemon().start() as d:
            log = self.reload(d, "deny-method = [\n")
            self.assertIn(f"rapidrpcd: reload: {self.path}:1:", log)
            self.assertIn("; keeping the running settings", log)
            log = self.reload(d, 'deny-method = []\nprot = 1\n')
            self.assertIn(f'rapidrpcd: reload: {self.path}:2:1: unknown key "prot"', log)
            d.assert_alive()
            self.assert_denied(d, "sample.add", 1, 2)
            with d.proxy() as p:
                self.assertEqual(p.echo(2), 2)

    def test_the_access_log_is_still_reopened(self):
        log_path = os.path.join(self.dir, "access.log")
        self.write(f'access-log = "{log_path}"\n')
        with self.daemon().start() as d:
            with d.proxy() as p:
                p.echo(1)
            os.rename(log_path, log_path + ".1")
            self.reload(d, f'access-log = "{log_path}"\n')
            with d.proxy() as p:
                p.echo(2)
            wait_until(lambda: os.path.exists(log_path) and os.path.getsize(log_path), 10,
                       "the access log re-opened")


if __name__ == "__main__":
    main()
