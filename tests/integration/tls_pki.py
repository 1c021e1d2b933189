"""Test certificates for the HTTPS tests, made at test time.

make_test_pki() runs the openssl command line in a directory of the test's
own (a temporary one): a test CA, a server certificate it signs for
127.0.0.1 and localhost (subjectAltName IP and DNS), and a second,
unrelated CA that stands for a client trusting someone else. No key lives
anywhere but there.
"""

import os
import shutil
import ssl
import subprocess
import tempfile

OPENSSL = shutil.which("openssl")


def _openssl(*args, cwd):
    r = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {r.stderr.decode(errors='replace')}")


def _ca(directory, name):
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", f"/CN=rapidrpc {name}", cwd=directory)
    return os.path.join(directory, f"{name}.pem")


def make_test_pki(directory):
    """{ca, other_ca, cert, key}: paths of PEM files made in `directory`."""
    ca = _ca(directory, "test-ca")
    other_ca = _ca(directory, "other-ca")
    with open(os.path.join(directory, "server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost",
             cwd=directory)
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "test-ca.pem", "-CAkey", "test-ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
             cwd=directory)
    return {"ca": ca, "other_ca": other_ca,
            "cert": os.path.join(directory, "server.pem"),
            "key": os.path.join(directory, "server.key")}


def client_context(cafile):
    return ssl.create_default_context(cafile=cafile)


class TlsDaemon:
    """Mixed into a DaemonTestCase: makes the test certificates in a
    temporary directory (cls.pki, as make_test_pki() returns them) and
    starts the class's daemon serving HTTPS with server_cert() (cls.cert,
    cls.key)."""

    @classmethod
    def setUpClass(cls):
        cls._dir = tempfile.TemporaryDirectory(prefix="rapidrpc-tls-")
        cls.pki = make_test_pki(cls._dir.name)
        cls.cert, cls.key = cls.server_cert()
        cls.daemon_args = ("--tls-cert", cls.cert, "--tls-key", cls.key)
        try:
            super().setUpClass()
        except BaseException:
            cls._dir.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls._dir.cleanup()

    @classmethod
    def server_cert(cls):
        """(certificate chain file, key file) the daemon serves: by default
        the PKI's server certificate; a class may make another in cls._dir."""
        return cls.pki["cert"], cls.pki["key"]
