"""Shared helpers for the side-by-side benchmarks (bench/throughput, bench/cpu_bound, ...).

Starts each server under test on 127.0.0.1 and a free port, waits until it
answers a real XML-RPC call, and stops it again by its own pid.  Nothing
here talks to any address but 127.0.0.1.
"""

import datetime
import json
import http.client
import os
import platform
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
HOST = "127.0.0.1"

SAMPLE_ADD_BODY = (
    '<?xml version="1.0"?>\n'
    "<methodCall><methodName>sample.add</methodName><params>"
    "<param><value><int>3</int></value></param>"
    "<param><value><int>5</int></value></param>"
    "</params></methodCall>\n"
)


class BenchError(Exception):
    """A server could not be built, started or reached."""


def log(msg):
    """Progress goes to stderr so stdout stays pure Markdown."""
    print(msg, file=sys.stderr, flush=True)


def log_round_start(number, rounds, what):
    """Says which round of how many starts, and on what (a server, a load),
    before it runs: "round 2 of 5: rapidrpcd --python".  A round's figures
    are logged after it; this line says what a long wait is spent on."""
    log("round %d of %d: %s" % (number, rounds, what))


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def default_python():
    """Debian's interpreter if present (the documented reference), else ours."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def default_rapidrpcd():
    return os.environ.get("RAPIDRPCD", os.path.join(REPO_DIR, "build", "bin", "rapidrpcd"))


def default_rapidrpc():
    return os.environ.get("RAPIDRPC", os.path.join(REPO_DIR, "build", "bin", "rapidrpc"))


def rapidrpc_bench(binary, url, method, params, connections, threads=1, seconds=None,
                   requests=None, keep_alive=True, timeout=10.0, expect=None,
                   protocol="xmlrpc", in_flight=None, rate=None, cacert=None):
    """Runs `rapidrpc bench --json` (for `seconds`, or `requests` calls) and
    returns its JSON summary plus "cmd".  `params` are rapidrpc literals
    ("i/3"); `expect` is the expected result as JSON text (default: the
    warm-up call's answer); `protocol` is "xmlrpc" or "jsonrpc"; `in_flight`
    is the calls kept in flight on each connection (--in-flight, for
    transports that have more than one at once); `rate` makes it an open
    loop starting that many calls per second in all (--rate); `cacert` the
    certificate an https URL's server is verified with.  Raises BenchError
    if it could not run."""
    cmd = [binary, "bench", "--json", "-t", str(threads), "-c", str(connections),
           "--timeout", "%g" % timeout]
    cmd += ["-n", str(requests)] if requests else ["-d", "%g" % seconds]
    if not keep_alive:
        cmd.append("--no-keep-alive")
    if expect is not None:
        cmd += ["--expect", expect]
    if protocol != "xmlrpc":
        cmd += ["--protocol", protocol]
    if in_flight is not None:
        cmd += ["--in-flight", str(in_flight)]
    if rate:
        cmd += ["--rate", "%g" % rate]
    if cacert:
        cmd += ["--cacert", cacert]
    cmd += [url, method, "--"] + list(params)
    limit = (seconds or 0) + (timeout if requests else 0) * max(1, requests or 0) + 60
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=min(limit, 3600))
    try:
        r = json.loads(proc.stdout)
    except ValueError:
        shown = [a if len(a) < 200 else a[:60] + "..." for a in cmd]
        raise BenchError("rapidrpc bench failed (status %d): %s\n%s%s"
                         % (proc.returncode, " ".join(shown), proc.stdout[-2000:],
                            proc.stderr[-2000:])) from None
    r["cmd"] = cmd
    return r


WRK_SAMPLE_ADD = os.path.join(BENCH_DIR, "wrk", "sample_add.lua")


def wrk_sample_add(url, connections, seconds, threads=1, timeout=5.0, wrk="wrk"):
    """Runs `wrk -tT -cC -dSs -s bench/wrk/sample_add.lua URL` (keep-alive,
    POST sample.add(3, 5), every answer checked for 8) and returns rps,
    requests (answered), p50_us, p99_us, errors (their total), error_kinds
    and sample (the first bad answer, if any).  Raises BenchError if it
    could not run."""
    cmd = [wrk, "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds,
           "--timeout", "%gs" % timeout, "-s", WRK_SAMPLE_ADD, url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"^WRK_RESULT (.*)$", proc.stdout, re.M)
    if proc.returncode != 0 or not m:
        raise BenchError("wrk failed (status %d): %s\n%s%s" % (proc.returncode, " ".join(cmd),
                                                             proc.stdout, proc.stderr))
    w = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    # Every non-200 or wrong answer is in "bad" (the Lua response() hook sees
    # all of them, wrk's own "status" count is a subset); add socket errors.
    errors = {"bad answer": w["bad"], "connect": w["connect"], "read": w["read"],
              "write": w["write"], "timeout": w["timeout"]}
    sample = "\n".join(l for l in proc.stdout.splitlines() if l.startswith("bad responses"))
    return {"rps": w["requests"] / (w["duration_us"] / 1e6), "requests": w["requests"],
            "p50_us": w["p50_us"], "p99_us": w["p99_us"], "errors": sum(errors.values()),
            "error_kinds": errors, "sample": sample}


def ab_post(url, body_file, concurrency, seconds=None, requests=None, ab="ab"):
    """Runs `ab -c C (-t S | -n N) -p BODY_FILE -T text/xml URL` (a new
    connection per call: no -k) and returns rps, p50_us and p99_us (ab has
    whole milliseconds), complete, failed, non2xx and errors (failed +
    non-2xx).  Raises BenchError if it could not run."""
    # -t before -n: -t alone caps the run at 50000 requests.
    cmd = [ab, "-q", "-c", str(concurrency)]
    cmd += ["-t", "%g" % seconds, "-n", "100000000"] if seconds else ["-n", str(requests)]
    cmd += ["-p", body_file, "-T", "text/xml", url]
    log("  $ " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=(seconds or 600) + 60)
    rps = re.search(r"Requests per second:\s+([\d.]+)", proc.stdout)
    if proc.returncode != 0 or not rps:
        raise BenchError("ab failed (status %d):\n%s%s"
                         % (proc.returncode, proc.stdout, proc.stderr))

    def count(label):
        m = re.search(r"%s:\s+(\d+)" % label, proc.stdout)
        return int(m.group(1)) if m else 0

    pct = dict(re.findall(r"^\s+(\d+)%\s+(\d+)", proc.stdout, re.M))
    failed, non2xx = count("Failed requests"), count("Non-2xx responses")
    return {"rps": float(rps.group(1)), "complete": count("Complete requests"),
            "failed": failed, "non2xx": non2xx, "errors": failed + non2xx,
            "p50_us": int(pct.get("50", 0)) * 1000, "p99_us": int(pct.get("99", 0)) * 1000}


def fmt_latency(us):
    """A latency in microseconds as the tables show it: us, ms or s."""
    if us < 1000:
        return "%.0f us" % us
    if us < 1000000:
        return "%.2f ms" % (us / 1e3)
    return "%.2f s" % (us / 1e6)


def build_abyss_server(workdir):
    """Compile bench/peers/abyss_server.cpp with g++ into workdir; return its path."""
    config = shutil.which("xmlrpc-c-config")
    if not config:
        raise BenchError("xmlrpc-c-config not found (apt-get install libxmlrpc-c++8-dev)")
    flags = subprocess.run([config, "c++2", "abyss-server", "--cflags", "--libs"],
                           check=True, capture_output=True, text=True).stdout.split()
    out = os.path.join(workdir, "abyss_server")
    cmd = [os.environ.get("CXX", "g++"), "-std=c++20", "-O2", "-o", out,
           os.path.join(BENCH_DIR, "peers", "abyss_server.cpp")] + flags + ["-lgmp"]
    log("building the Abyss peer: " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError("building abyss_server failed:\n" + proc.stderr)
    return out


def xmlrpc_post(port, body, timeout=5.0, tls=None):
    """POST body to /RPC2 (over HTTPS with the ssl.SSLContext `tls`); return
    (status, response body as text)."""
    if tls is None:
        conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    else:
        conn = http.client.HTTPSConnection(HOST, port, timeout=timeout, context=tls)
    try:
        conn.request("POST", "/RPC2", body=body.encode(), headers={"Content-Type": "text/xml"})
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


class Server:
    """One server under test, started on 127.0.0.1:port and stopped by pid.

    name:  label in the tables
    argv:  command line, with {port} and {prefix} filled in at start
    setup: optional callable(prefix, port) run before start (writes config)
    tls:   the ssl.SSLContext a client verifies it with, if it serves HTTPS
    """

    def __init__(self, name, argv, setup=None, tls=None):
        self.name = name
        self.argv = argv
        self.setup = setup
        self.tls = tls
        self.proc = None
        self.port = None
        self.prefix = None
        self.log_path = None

    def start(self, timeout=15.0):
        self.port = free_port()
        self.prefix = tempfile.mkdtemp(prefix="rapidrpc-bench-%s-" % self.name.split()[0].lower())
        if self.setup:
            self.setup(self.prefix, self.port)
        argv = [a.format(port=self.port, prefix=self.prefix) for a in self.argv]
        self.log_path = os.path.join(self.prefix, "server.log")
        log("starting %s: %s" % (self.name, " ".join(argv)))
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_ready(timeout)

    def _wait_ready(self, timeout):
        """Ready = answers sample.add(3, 5) with 8 (as <int> or <i4>)."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError("%s exited with status %s before answering; log:\n%s"
                                 % (self.name, self.proc.returncode, self.log_tail()))
            try:
                status, body = xmlrpc_post(self.port, SAMPLE_ADD_BODY, timeout=2.0, tls=self.tls)
                if status == 200 and ("<int>8</int>" in body or "<i4>8</i4>" in body):
                    return
                last = "status %d body %r" % (status, body[:300])
            except OSError as e:
                last = str(e)
            time.sleep(0.05)
        raise BenchError("%s did not answer sample.add(3, 5) correctly within %.0f s (%s); log:\n%s"
                         % (self.name, timeout, last, self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, n=20):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self):
        """SIGTERM the process we started (nginx's master takes its workers
        with it), SIGKILL it after 5 s; returns its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def cleanup(self):
        """Remove the temporary prefix (config, logs) after stop()."""
        if self.prefix:
            shutil.rmtree(self.prefix, ignore_errors=True)


def rapidrpcd_server(path, extra_args=()):
    return Server("rapidrpcd", [path, "--host", HOST, "--port", "{port}"] + list(extra_args))


def python_server(python):
    return Server("Python SimpleXMLRPCServer",
                  [python, os.path.join(BENCH_DIR, "peers", "python_server.py"),
                   "--host", HOST, "--port", "{port}"])


def abyss_server(path, extra_args=()):
    return Server("xmlrpc-c Abyss", [path, "--host", HOST, "--port", "{port}"] + list(extra_args))


def nginx_server(nginx="nginx", pki=None):
    """bench/nginx's config; serving HTTPS with pki's certificate and key
    (make_certificate()), if given: TLS 1.2 and 1.3 as rapidrpcd (this
    nginx's default has no 1.3), its default ciphers."""
    template = os.path.join(BENCH_DIR, "nginx", "nginx.conf.in")

    def setup(prefix, port):
        with open(template) as f:
            text = f.read()
        if pki is not None:
            listen = "listen %s:@PORT@;" % HOST
            if listen not in text:
                raise BenchError("bench/nginx's config has no %r to serve HTTPS on" % listen)
            text = text.replace(listen, "listen %s:@PORT@ ssl;\n        ssl_certificate %s;\n"
                                "        ssl_certificate_key %s;\n"
                                "        ssl_protocols TLSv1.2 TLSv1.3;"
                                % (HOST, pki["cert"], pki["key"]))
        with open(os.path.join(prefix, "nginx.conf"), "w") as f:
            f.write(text.replace("@PREFIX@", prefix).replace("@PORT@", str(port)))

    return Server("nginx fixed body", [nginx, "-p", "{prefix}", "-c", "{prefix}/nginx.conf"],
                  setup=setup, tls=pki["client"] if pki is not None else None)


def make_certificate(directory):
    """A self-signed ECDSA P-256 certificate for HOST and its key in
    `directory`, made with the openssl command: {"cert", "key", "client"
    (an ssl.SSLContext that trusts it)}."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "2", "-subj", "/CN=%s" % HOST, "-addext",
                        "subjectAltName=IP:%s" % HOST],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise BenchError("cannot make the TLS certificate with openssl: %s" % e) from None
    return {"cert": cert, "key": key, "client": ssl.create_default_context(cafile=cert)}


def machine_description():
    """'N cores, CPU model, kernel' for the report header."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d cores (nproc), %s, Linux %s" % (os.cpu_count() and len(os.sched_getaffinity(0)),
                                               model, platform.release())


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def loadavg():
    """The 1, 5 and 15 minute load averages, as text (other work on the
    machine skews every figure; this records how busy it was)."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def machine_busy_ticks():
    """CPU ticks spent in user or system mode or stolen by the hypervisor,
    summed over all CPUs (from /proc/stat).  irq and softirq time is left
    out: loopback TCP is processed there on behalf of the server and wrk,
    but charged to no process."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, _irq, _softirq, steal = (
            int(x) for x in f.readline().split()[1:9])
    return user + nice + system + steal


def process_tree_cpu(pid):
    """(utime, stime) of pid and its descendants (nginx's workers), in ticks:
    user and system time apart; (0, 0) for pid None (no server process: the
    benchmark serves itself)."""
    user = system = 0
    if pid is None:
        return user, system
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            user += int(fields[11])
            system += int(fields[12])
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError, IndexError):
            pass
    return user, system


def process_tree_ticks(pid):
    """utime + stime of pid and its descendants, in ticks (process_tree_cpu)."""
    return sum(process_tree_cpu(pid))


def own_ticks():
    """CPU ticks used by this process and its waited-for children (wrk, the client)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        ru = resource.getrusage(who)
        total += ru.ru_utime + ru.ru_stime
    return total * CLOCK_TICKS


class OtherLoad:
    """Measures how much CPU the rest of the machine used during a run:
    all busy time minus the server's, ours and our children's (wrk's).
    server_pid may be None when the run has no server process.  A shared
    machine makes every figure lower; this says by how much it was shared.

        probe = OtherLoad(server_pid); ...run...; pct = probe.stop()
    """

    def __init__(self, server_pid):
        self.pid = server_pid
        self.t0 = time.monotonic()
        self.busy0 = machine_busy_ticks()
        self.server_cpu0 = process_tree_cpu(server_pid)
        self.own0 = own_ticks()

    def stop(self):
        """Percent of the whole machine (all cores) used by other processes.
        Also sets server_seconds: the CPU time the server's process tree
        used meanwhile (user + system, 1/CLOCK_TICKS resolution), and
        server_user_seconds and server_system_seconds, its two parts."""
        elapsed = time.monotonic() - self.t0
        busy = machine_busy_ticks() - self.busy0
        user, system = (now - before for now, before in
                        zip(process_tree_cpu(self.pid), self.server_cpu0))
        server = user + system
        self.server_seconds = server / CLOCK_TICKS
        self.server_user_seconds = user / CLOCK_TICKS
        self.server_system_seconds = system / CLOCK_TICKS
        ours = server + (own_ticks() - self.own0)
        capacity = elapsed * CLOCK_TICKS * len(os.sched_getaffinity(0))
        return max(0.0, 100.0 * (busy - ours) / capacity) if capacity else 0.0


def wait_idle(max_seconds, threshold=90.0, sample=1.0, needed=3):
    """Wait (at most max_seconds) until the machine is >= threshold % idle for
    `needed` consecutive samples; returns True if it was."""
    deadline = time.monotonic() + max_seconds
    streak = 0
    ncpu = len(os.sched_getaffinity(0))
    while time.monotonic() < deadline:
        b0 = machine_busy_ticks()
        time.sleep(sample)
        idle = 100.0 - 100.0 * (machine_busy_ticks() - b0) / (sample * CLOCK_TICKS * ncpu)
        streak = streak + 1 if idle >= threshold else 0
        if streak >= needed:
            return True
    return False


def describe_binary(path):
    """'path (built YYYY-MM-DD HH:MM UTC, md5 0123abcd)': which build was measured."""
    import hashlib
    try:
        with open(path, "rb") as f:
            digest = hashlib.md5(f.read()).hexdigest()[:12]
        built = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
        shown = os.path.relpath(path, REPO_DIR) if os.path.abspath(path).startswith(
            REPO_DIR + os.sep) else path
        return "%s (built %s, md5 %s)" % (shown, built.strftime("%Y-%m-%d %H:%M UTC"), digest)
    except OSError as e:
        return "%s (%s)" % (path, e)


DOCS_FILE = os.path.join(REPO_DIR, "docs", "benchmarks.md")


def add_report_options(parser, section, floors=True):
    """The options the scripts share: --report-only (floors are reported, not
    judged; errors still fail), for a script with floors, and --write-docs /
    --docs (the report replaces the script's own section of
    docs/benchmarks.md, between <!-- SECTION:begin --> and <!-- SECTION:end -->)."""
    if floors:
        parser.add_argument("--report-only", action="store_true",
                            help="report the floors without judging them: a missed floor does "
                                 "not change the exit status (errors and wrong answers still do)")
    parser.add_argument("--write-docs", action="store_true",
                        help="also write the report into docs/benchmarks.md, between "
                             "<!-- %s:begin --> and <!-- %s:end -->" % (section, section))
    parser.add_argument("--docs", default=DOCS_FILE,
                        help="the file --write-docs writes (docs/benchmarks.md)")


def command_line(script):
    """The command as the report shows it: bench/NAME and its arguments."""
    import shlex
    return " ".join(["bench/" + script] + [shlex.quote(a) for a in sys.argv[1:]])


def exit_status(errors, missed, report_only, missed_status=1):
    """0 all good; 1 errors (always); missed_status (1 unless the script says
    otherwise) a missed floor, unless report_only."""
    if errors:
        return 1
    return missed_status if missed and not report_only else 0


def floors_lines(missed, report_only):
    """The report's closing words on missed floors."""
    if not missed:
        return []
    return ["", "Missed floors%s:" % (" (reported only, --report-only)" if report_only else ""),
            ] + ["- " + m.strip() for m in missed]


def write_docs(path, section, lines):
    """Replace what is between <!-- SECTION:begin --> and <!-- SECTION:end -->
    in path with lines (appended at the end when the markers are absent)."""
    begin, end_mark = "<!-- %s:begin -->" % section, "<!-- %s:end -->" % section
    block = "\n".join([begin] + list(lines) + [end_mark]) + "\n"
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    b, e = text.find(begin), text.find(end_mark)
    if b != -1 and e > b:
        end = e + len(end_mark)
        if text[end:end + 1] == "\n":
            end += 1
        text = text[:b] + block + text[end:]
    else:
        text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block
    tmp = "%s.%s.tmp" % (path, section)
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    log("wrote the %s section of %s" % (section, path))
