"""The option combinations rapidrpcd refuses: one table, one row a
combination, each the library's sentence (rapidrpc::options_refusal) with
the flags' names, and exit status 2 before anything is bound or started.
The rows are every combination the daemon refused with its own checks
before those moved into the library, the ones only the library refused
(exit status 1 then), and the CurveZMQ keys given where they would be
ignored. The last rows are combinations that must start.

This file picks its own modes: RAPIDRPCD_ARGS does not apply to it.
"""

import os
import subprocess
import tempfile
import unittest

from harness import HOST, daemon_path, main

HERE = os.path.dirname(os.path.abspath(__file__))
SERVICE_DIR = os.path.join(HERE, "python_service")

ZMQ = "tcp://127.0.0.1:*"
FRONT = "tcp://127.0.0.1:1"  # never reached: the refusals come first

# (what the row guards, its arguments, what rapidrpcd says). KEY, PUB and
# USERS stand for files made in setUpClass.
REFUSED = [
    ("isolate outside async-pool", ["--isolate", "--mode", "fork"],
     "--isolate (worker processes) needs --mode async-pool, not fork"),
    ("max-requests without worker processes", ["--max-requests", "5"],
     "--max-requests is used with --isolate only"),
    ("a worker lifetime without worker processes", ["--max-worker-lifetime", "60"],
     "--max-worker-lifetime is used with --isolate only"),
    ("a worker memory limit without worker processes", ["--max-worker-memory", "500"],
     "--max-worker-memory is used with --isolate only"),
    ("max-requests jitter without max-requests", ["--isolate", "--max-requests-jitter", "5"],
     "--max-requests-jitter is used with --max-requests only"),
    ("back-off outside prefork", ["--mode", "fork", "--respawn-backoff", "0.5"],
     "--respawn-backoff and --respawn-backoff-max are used with --mode prefork only, not fork"),
    ("back-off maximum outside prefork", ["--respawn-backoff-max", "1"],
     "--respawn-backoff and --respawn-backoff-max are used with --mode prefork only, not "
     "async-pool"),
    ("relay with python", ["--relay", "/tmp/r.sock", "--python", "service",
                           "--python-path", SERVICE_DIR],
     "--relay answers no call itself: it does not go with --python"),
    ("relay with isolate", ["--relay", "/tmp/r.sock", "--isolate"],
     "--relay answers no call itself: it does not go with --isolate"),
    ("relay with zmq", ["--relay", "/tmp/r.sock", "--zmq", ZMQ],
     "--relay answers no call itself: it does not go with --zmq"),
    ("relay on a front", ["--relay", "/tmp/r.sock", "--worker-listen", ZMQ],
     "--relay answers no call itself: it does not go with --worker-listen"),
    ("relay on a worker host", ["--relay", "/tmp/r.sock", "--worker-connect", FRONT],
     "--relay answers no call itself: it does not go with --worker-connect"),
    ("relay outside async-pool", ["--relay", "/tmp/r.sock", "--mode", "async"],
     "--relay needs --mode async-pool, not async"),
    ("relay-keep-pid without relay", ["--relay-keep-pid", "1"],
     "--relay-keep-pid is used with --relay only"),
    ("python outside async-pool", ["--mode", "prefork", "--python", "service",
                                   "--python-path", SERVICE_DIR],
     "--python needs --mode async-pool"),
    ("worker hosts outside async-pool", ["--worker-listen", ZMQ, "--mode", "async"],
     "worker hosts (--worker-listen, --worker-connect) need --mode async-pool, not async"),
    ("front and host at once", ["--worker-listen", ZMQ, "--worker-connect", FRONT],
     "--worker-listen and --worker-connect do not go together"),
    ("curve key without worker hosts", ["--worker-curve-key", "KEY"],
     "--worker-curve-key is used with --worker-listen or --worker-connect only"),
    ("curve public keys without a secret key", ["--worker-connect", FRONT,
                                                "--worker-curve-front", "PUB"],
     "--worker-curve-front and --worker-curve-allow need --worker-curve-key"),
    ("curve front without its hosts' keys", ["--worker-listen", ZMQ, "--worker-curve-key", "KEY"],
     "--worker-curve-key on a front needs --worker-curve-allow"),
    ("curve host without the front's key", ["--worker-connect", FRONT,
                                            "--worker-curve-key", "KEY"],
     "--worker-curve-key on a worker host needs --worker-curve-front"),
    ("curve front given a front's key", ["--worker-listen", ZMQ, "--worker-curve-key", "KEY",
                                         "--worker-curve-allow", "PUB",
                                         "--worker-curve-front", "PUB"],
     "--worker-curve-front is used on a worker host (--worker-connect) only"),
    ("curve host given hosts' keys", ["--worker-connect", FRONT, "--worker-curve-key", "KEY",
                                      "--worker-curve-front", "PUB",
                                      "--worker-curve-allow", "PUB"],
     "--worker-curve-allow is used on a front (--worker-listen) only"),
    ("zmq outside async-pool and async", ["--zmq", ZMQ, "--mode", "sequential"],
     "ZeroMQ endpoints (--zmq) need --mode async-pool or async, not sequential"),
    ("zmq with passwords", ["--zmq", ZMQ, "--auth-file", "USERS"],
     "ZeroMQ endpoints (--zmq) carry no credentials"),
    ("admin address without a port", ["--admin", "127.0.0.1"],
     '--admin: "127.0.0.1" is not HOST:PORT'),
]

# Combinations next to the refused ones that pass the same check
# (--check-config: the options are completed and checked, nothing is bound).
ACCEPTED = [
    ("back-off in prefork", ["--mode", "prefork", "--respawn-backoff", "0.5"]),
    ("max-requests with isolate", ["--isolate", "--max-requests", "5"]),
    ("every recycling limit with isolate",
     ["--isolate", "--max-requests", "5", "--max-requests-jitter", "5", "--max-worker-lifetime",
      "60", "--max-worker-memory", "500"]),
    ("zmq in async", ["--zmq", ZMQ, "--mode", "async"]),
    ("curve front", ["--worker-listen", ZMQ, "--worker-curve-key", "KEY",
                     "--worker-curve-allow", "PUB"]),
    ("curve host", ["--worker-connect", FRONT, "--worker-curve-key", "KEY",
                    "--worker-curve-front", "PUB"]),
    ("admin address", ["--admin", "127.0.0.1:0"]),
]


class Refusals(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        base = os.path.join(cls.dir.name, "k")
        subprocess.run([daemon_path(), "--curve-keygen", base], stdin=subprocess.DEVNULL,
                       capture_output=True, check=True, timeout=30)
        users = os.path.join(cls.dir.name, "users")
        line = subprocess.run([daemon_path(), "--hash-password", "alice", "--hash-iterations",
                               "1000"], input=b"secret\n", capture_output=True, check=True,
                              timeout=30).stdout
        with open(users, "wb") as f:
            f.write(line)
        config = os.path.join(cls.dir.name, "empty.toml")  # for --check-config
        open(config, "w").close()
        cls.files = {"KEY": base + ".key", "PUB": base + ".pub", "USERS": users, "CONFIG": config}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_daemon(self, args, *extra):
        args = [self.files.get(a, a) for a in args]
        return subprocess.run([daemon_path(), "--host", HOST, "--port", "0", *args, *extra],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=30)

    def test_each_combination_is_refused_with_status_2(self):
        for what, args, says in REFUSED:
            with self.subTest(what):
                r = self.run_daemon(args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("rapidrpcd: " + says, r.stderr)
                self.assertNotIn("listening on", r.stdout)

    def test_check_config_refuses_them_too(self):
        r = self.run_daemon(REFUSED[0][1], "--check-config", "--config",
                            self.files["CONFIG"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(REFUSED[0][2], r.stderr)

    def test_the_combinations_beside_them_are_accepted(self):
        for what, args in ACCEPTED:
            with self.subTest(what):
                r = self.run_daemon(args, "--check-config", "--config", self.files["CONFIG"])
                self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    main()
