"""Where rapidrpcd listens: the default host, addresses, bind errors, and
a listening socket handed over (--listen-fd)."""

import socket
import subprocess
import unittest

from harness import Daemon, daemon_path, make_proxy, main


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Listen(unittest.TestCase):
    def start(self, host):
        d = Daemon()
        d.args[d.args.index("--host") + 1] = host
        return d.start()

    def test_localhost_serves_ipv4_and_ipv6_loopback(self):
        # "localhost" is the loopback addresses without asking the resolver,
        # so it works even on a machine with no /etc/hosts.
        d = self.start("localhost")
        try:
            with make_proxy(f"http://127.0.0.1:{d.port}/RPC2") as p:
                self.assertEqual(p.sample.add(1, 2), 3)
            if has_ipv6_loopback():
                with make_proxy(f"http://[::1]:{d.port}/RPC2") as p:
                    self.assertEqual(p.sample.add(2, 2), 4)
        finally:
            d.stop()

    def test_listen_fd_serves_the_inherited_socket(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(16)
            port = s.getsockname()[1]
            d = Daemon("--listen-fd", str(s.fileno()), pass_fds=(s.fileno(),)).start()
            try:
                self.assertEqual(d.port, port)
                with make_proxy(f"http://127.0.0.1:{port}/RPC2") as p:
                    self.assertEqual(p.sample.add(1, 2), 3)
            finally:
                d.stop()

    def test_listen_fd_that_is_no_listening_socket_is_refused(self):
        r = subprocess.run([daemon_path(), "--listen-fd", "0"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("descriptor 0 is not a listening TCP socket", r.stderr)

    @unittest.skipUnless(has_ipv6_loopback(), "no IPv6 loopback on this machine")
    def test_ipv6_literal(self):
        d = self.start("::1")
        try:
            with make_proxy(f"http://[::1]:{d.port}/RPC2") as p:
                self.assertEqual(p.sample.add(2, 3), 5)
        finally:
            d.stop()

    def test_unresolvable_host_names_the_host(self):
        r = subprocess.run([daemon_path(), "--host", "no-such-host.invalid", "--port", "0"],
                           capture_output=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"no-such-host.invalid", r.stderr)
        self.assertNotIn(b"/usr/include", r.stderr)  # no library internals in the message


if __name__ == "__main__":
    main()
