"""The test install.python: cmake --install puts the Python package where
Debian's python3 finds it, and both ways of serving Python methods work from
the installed tree: `from rapidrpc import SimpleXMLRPCServer`, and an
installed rapidrpcd --python running the installed worker program.

    python_check.py BUILD_DIR WORK_DIR
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import xmlrpc.client


def fail(message):
    sys.exit(f"install.python: {message}")


def main():
    build, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    print(f"== cmake --install {build} --prefix {prefix}", flush=True)
    subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)

    found = [os.path.join(d, "rapidrpc") for d, dirs, _ in os.walk(prefix) if "rapidrpc" in dirs
             and os.path.isfile(os.path.join(d, "rapidrpc", "__init__.py"))]
    if len(found) != 1:
        fail(f"the package is installed {len(found)} times: {found}")
    site = os.path.dirname(found[0])
    relative = os.path.relpath(site, prefix)
    print(f"== the package is in PREFIX/{relative}", flush=True)
    looked_in = [os.path.join(p, relative) for p in ("/usr/local", "/usr")]
    if not any(p in sys.path for p in looked_in):
        fail(f"{sys.executable} looks in none of {looked_in} (its path: {sys.path})")

    env = dict(os.environ, PYTHONPATH=site, RAPIDRPCD=os.path.join(prefix, "bin", "rapidrpcd"))
    print("== from rapidrpc import SimpleXMLRPCServer", flush=True)
    program = textwrap.dedent(f"""
        import threading, xmlrpc.client
        import rapidrpc
        assert rapidrpc.__file__.startswith({site!r}), rapidrpc.__file__
        k = 3
        with rapidrpc.SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, workers=1) as s:
            s.register_function(lambda x: x * k, "scale")
            t = threading.Thread(target=s.serve_forever)
            t.start()
            with xmlrpc.client.ServerProxy(f"http://127.0.0.1:{{s.server_address[1]}}/RPC2") as p:
                assert p.scale(14) == 42
            s.shutdown()
            t.join()
        print("answered")
        """)
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0 or "answered" not in r.stdout:
        fail(f"the installed package did not serve:\n{r.stdout}{r.stderr}")

    print("== installed rapidrpcd --python", flush=True)
    module_dir = os.path.join(work, "module")
    os.makedirs(module_dir)
    with open(os.path.join(module_dir, "twice.py"), "w") as f:
        f.write("def twice(x):\n    return 2 * x\n")
    d = subprocess.Popen([env["RAPIDRPCD"], "--python", "twice", "--python-path", module_dir,
                          "--host", "127.0.0.1", "--port", "0", "--workers", "1"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        line = d.stdout.readline()
        m = re.search(r"listening on \S+:(\d+)", line)
        if not m:
            fail(f"rapidrpcd --python did not start: {line}{d.stderr.read()}")
        with xmlrpc.client.ServerProxy(f"http://127.0.0.1:{m.group(1)}/RPC2") as p:
            if p.twice(21) != 42:
                fail("twice(21) is not 42")
        workers = subprocess.run(["ps", "-o", "args=", "--ppid", str(d.pid)], capture_output=True,
                                 text=True).stdout
        program = os.path.realpath(os.path.join(found[0], "_worker.py"))
        if program not in workers:
            fail(f"the worker does not run {program}: {workers}")
    finally:
        d.terminate()
        d.wait(30)
    print("== both ways served from the installed tree")


if __name__ == "__main__":
    main()
