"""Mixed load for 30 s: valid calls from 32 keep-alive connections, every
result checked, beside a stream of hostile requests from other connections.
Every valid call must succeed with the right result, and the daemon's
resident memory (VmRSS, sampled, and its high-water mark VmHWM) must stay
within 64 MiB of what it was at the start.

SOAK_SECONDS overrides the 30 s (for a quick look by hand)."""

import os
import random
import socket
import struct
import threading
import time
import unittest
import zlib

import hostile
from hostile import RawClient, call_body, http_request, parse_result, raw_call_body

harness = hostile.harness

SECONDS = float(os.environ.get("SOAK_SECONDS", "30"))
VALID_CONNECTIONS = 32
HOSTILE_THREADS = 3
RSS_BUDGET_KIB = 64 * 1024
# Floors, in calls per second of soak for each client: on a 2-core machine
# under a load average of 20, each valid connection made 38-58 calls a
# second and each hostile thread about 6 requests; a sanitizer slows both
# several times. A valid client starved by the hostile traffic, or a client
# held by one request up to a timeout (10-15 s), falls below these.
VALID_PER_CONNECTION_PER_S = 2
HOSTILE_PER_THREAD_PER_S = 0.5


def _bomb():
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join([z.compress(bytes(1 << 20)) for _ in range(64)] + [z.flush()])


def _nested(depth):
    return "<value><array><data>" * depth + "<value>x</value>" + "</data></array></value>" * depth


def hostile_requests():
    """(name, bytes) of one hostile request each; all are answered with an
    error, or cut off, and none may disturb the valid calls."""
    laughs = ('<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">' +
              "".join(f'<!ENTITY {c}{i} "' + "&a;" * 10 + '">' for i, c in enumerate("bcdefgh")) +
              "]><methodCall><methodName>echo</methodName></methodCall>").encode()
    return [
        ("doctype", http_request(laughs)),
        ("deep nesting", http_request(raw_call_body("echo", _nested(5000)))),
        ("bad literal", http_request(raw_call_body("echo", "<value><i4>2147483648</i4></value>"))),
        ("invalid utf-8", http_request(raw_call_body("echo", "<value>\udcff</value>"
                                                     .encode("utf-8", "surrogateescape")
                                                     .decode("latin-1")).replace(b"\xc3\xbf", b"\xff"))),
        ("huge method name", http_request(call_body("m" * 100_000))),
        ("multicall 1001", http_request(call_body(
            "system.multicall", [{"methodName": "echo", "params": [i]} for i in range(1001)]))),
        ("nested multicall", http_request(call_body(
            "system.multicall", [{"methodName": "system.multicall", "params": [[]]}] * 1000))),
        ("smuggling", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"
                      b"\r\n0\r\n\r\n" + http_request(call_body("echo", "smuggled"))),
        ("duplicate length", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n"
                             b"\r\nabc"),
        ("bad chunk", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("long request line", b"POST /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("header flood", http_request(b"", headers=[("X", "y")] * 200)),
        ("huge header", http_request(b"", headers=[("X", "y" * 20000)])),
        ("oversize", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999\r\n\r\n"),
        ("gzip bomb", http_request(_bomb(), headers=[("Content-Encoding", "gzip")])),
        ("lying gzip bomb", http_request(_bomb()[:-4] + struct.pack("<I", 1000),
                                         headers=[("Content-Encoding", "gzip")])),
        ("broken gzip", http_request(b"\x1f\x8b\x08\x00garbage", headers=[("Content-Encoding", "gzip")])),
        ("throw-away partial", b"POST /RPC2 HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n<meth"),
    ]


class MixedLoad(unittest.TestCase):

    def test_valid_calls_all_succeed_beside_hostile_traffic_in_bounded_memory(self):
        with harness.running_daemon(env_args=False) as d:
            pid = d.proc.pid
            start_rss = hostile.rss_kib(pid)
            stop = threading.Event()
            errors = []
            counts = {"valid": 0, "hostile": 0}
            per_connection = [0] * VALID_CONNECTIONS
            per_attacker = [0] * HOSTILE_THREADS
            lock = threading.Lock()
            peak = [start_rss]

            def valid(k):
                rng = random.Random(k)
                c = None
                try:
                    while not stop.is_set():
                        if c is None:
                            c = RawClient(d, timeout=20)
                        kind = rng.randrange(4)
                        if kind == 0:
                            a, b = rng.randrange(-10**6, 10**6), rng.randrange(-10**6, 10**6)
                            body, want = call_body("sample.add", a, b), a + b
                        elif kind == 1:
                            want = {"k": k, "s": "<&>" * rng.randrange(50), "l": [1.5, True, None]}
                            body = call_body("echo", want)
                        elif kind == 2:
                            n = rng.randrange(1, 2000)
                            body, want = call_body("load", n), harness.fib_str(n)
                        else:
                            body, want = call_body("sleep", 0.01), True
                        c.send(http_request(body))
                        resp = c.read_response()
                        if resp.status != 200:
                            raise AssertionError(f"HTTP {resp.status}: {resp!r}")
                        got = parse_result(resp.decoded_body())
                        if got != want:
                            raise AssertionError(f"wrong result {got!r:.200} for {body[:200]!r}")
                        if "close" in resp.connection_tokens():
                            c.close()
                            c = None
                        with lock:
                            counts["valid"] += 1
                            per_connection[k] += 1
                except Exception as err:  # noqa: BLE001 - reported by the test
                    errors.append(f"valid connection {k}: {err!r}")
                    stop.set()
                finally:
                    if c is not None:
                        c.close()

            def attacker(k):
                rng = random.Random(1000 + k)
                reqs = hostile_requests()
                while not stop.is_set():
                    name, req = rng.choice(reqs)
                    try:
                        with RawClient(d, timeout=15) as c:
                            try:
                                c.send(req)
                            except (BrokenPipeError, ConnectionResetError):
                                pass
                            if name == "throw-away partial":
                                if rng.random() < 0.5:
                                    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                      struct.pack("ii", 1, 0))
                                continue
                            resp = c.read_response()
                            if resp.status == 200 and name == "nested multicall":
                                slots = parse_result(resp.decoded_body())
                                if {s["faultCode"] for s in slots} != {-32600}:
                                    raise AssertionError(f"{name}: {slots[:3]!r}")
                            elif resp.status == 200:
                                hostile.parse_fault(resp.decoded_body())
                            elif resp.status < 400:
                                raise AssertionError(f"{name}: {resp!r}")
                    except (harness.IncompleteResponse, ConnectionResetError):
                        pass  # cut off: allowed for hostile requests
                    except Exception as err:  # noqa: BLE001
                        errors.append(f"hostile {name}: {err!r}")
                        stop.set()
                    with lock:
                        counts["hostile"] += 1
                        per_attacker[k] += 1

            threads = [threading.Thread(target=valid, args=(k,), daemon=True)
                       for k in range(VALID_CONNECTIONS)]
            threads += [threading.Thread(target=attacker, args=(k,), daemon=True)
                        for k in range(HOSTILE_THREADS)]
            for t in threads:
                t.start()
            end = time.monotonic() + SECONDS
            while time.monotonic() < end and not stop.is_set():
                time.sleep(0.25)
                d.assert_alive()
                peak[0] = max(peak[0], hostile.rss_kib(pid))
            stop.set()
            for t in threads:
                t.join(30)
            self.assertFalse([t for t in threads if t.is_alive()], "a client thread hung")
            # VmHWM: the true peak, including any between the samples.
            peak[0] = max(peak[0], hostile.rss_kib(pid), hostile.peak_rss_kib(pid))
            print(f"\nsoak: {counts['valid']} valid calls, {counts['hostile']} hostile requests "
                  f"in {SECONDS:.0f} s; RSS {start_rss} KiB at start, peak {peak[0]} KiB")
            print(f"soak: calls per valid connection: min {min(per_connection)}, max "
                  f"{max(per_connection)}; requests per hostile thread: {per_attacker}")
            self.assertFalse(errors, "\n".join(errors[:10]))
            self.assertGreaterEqual(min(per_connection), VALID_PER_CONNECTION_PER_S * SECONDS,
                                    f"a valid connection was starved: {per_connection}")
            self.assertGreaterEqual(min(per_attacker), HOSTILE_PER_THREAD_PER_S * SECONDS,
                                    f"a hostile thread was held up: {per_attacker}")
            self.assertLess(peak[0] - start_rss, RSS_BUDGET_KIB,
                            f"RSS grew from {start_rss} KiB to {peak[0]} KiB")


if __name__ == "__main__":
    harness.main()
