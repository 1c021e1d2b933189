#!/usr/bin/env bash
# The library, the tools, the examples and the fuzz targets against the
# checked-in .clang-tidy (clang-tidy 14, as Debian 12 ships it), with the
# compile commands of a configured build: fails on any warning.
#   scripts/check_tidy.sh [BUILD_DIR]   (default build/; CI runs it after test.sh)
#
# A file found clean is remembered in a cache in the home directory
# (RAPIDRPC_TIDY_CACHE, default ~/.cache/rapidrpc/clang-tidy), under a key
# made of what clang-tidy would read: the file preprocessed as its compile
# command compiles it (directives only: every included file's text, comments
# and so NOLINT kept, and the macros defined, in a tenth of the time of a
# full preprocessing; the clone's folder written as @ROOT@, so that clones
# in other folders share the cache), that command, every .clang-tidy above
# the file and `clang-tidy --version`. A file whose
# key is there is not checked again; a finding is never remembered, so it
# is reported on every run until it is fixed. RAPIDRPC_TIDY_CACHE=off
# checks every file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
command -v clang-tidy >/dev/null || { echo "check_tidy: clang-tidy is not installed (scripts/setup.sh --tests installs it)" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] || { echo "check_tidy: no $build/compile_commands.json (configure a build first: scripts/setup.sh --tests)" >&2; exit 2; }
cache="${RAPIDRPC_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rapidrpc/clang-tidy}"
exec python3 - "$root" "$build" "$cache" <<'EOF'
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time

root, build, cache = sys.argv[1:4]
use_cache = cache != "off"
# Tests are left out: GoogleTest's macros are what most of their hits would be.
selected = re.compile("^" + re.escape(root) + "/(src|tools|examples|fuzz)/")
with open(os.path.join(build, "compile_commands.json")) as f:
    entries = [e for e in json.load(f) if selected.match(e["file"])]
if not entries:
    sys.exit(f"check_tidy: no file of src, tools, examples or fuzz in {build}/compile_commands.json")

version = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True, check=True).stdout


def tidy_configs(path):
    """The content of every .clang-tidy clang-tidy could read for `path`."""
    parts = []
    d = os.path.dirname(path)
    while True:
        config = os.path.join(d, ".clang-tidy")
        if os.path.isfile(config):
            with open(config, "rb") as f:
                parts.append(config.encode() + b"\0" + f.read())
        if d == root or d == os.path.dirname(d):
            return b"\0".join(parts)
        d = os.path.dirname(d)


def preprocess_args(entry):
    """The entry's compile command, writing its input preprocessed (the
    directives only) to stdout: no object file, no dependency file."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = [args[0]]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif a in ("-c", "-MD", "-MMD") or a.startswith(("-o", "-MF", "-MT", "-MQ")):
            pass
        else:
            out.append(a)
    return out + ["-E", "-fdirectives-only", "-o", "-"]


def key_of(entry):
    args = preprocess_args(entry)
    pre = subprocess.run(args, cwd=entry["directory"], capture_output=True)
    if pre.returncode != 0:
        return None  # clang-tidy will say what is wrong
    h = hashlib.sha256()
    for part in (version.encode(), tidy_configs(entry["file"]), " ".join(args).encode(),
                 entry["directory"].encode(), pre.stdout):
        h.update(part.replace(root.encode(), b"@ROOT@"))
        h.update(b"\0")
    return h.hexdigest()


def check(entry):
    key = key_of(entry) if use_cache else None
    path = os.path.join(cache, key[:2], key) if key else None
    if path and os.path.exists(path):
        os.utime(path)  # still in use: kept by the pruning below
        return entry["file"], True, ""
    r = subprocess.run(["clang-tidy", "-p", build, "--quiet", entry["file"]],
                       capture_output=True, text=True)
    text = r.stdout + r.stderr
    clean = r.returncode == 0 and not re.search(r"(warning|error):", text)
    if clean and path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w"):
            pass
    return entry["file"], False, "" if clean else text


start = time.monotonic()
findings = []
cached = 0
with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
    for file, hit, text in pool.map(check, entries):
        cached += hit
        if text:
            findings.append((file, text))
if use_cache and os.path.isdir(cache):
    # Entries unused for 30 days are of sources long gone.
    old = time.time() - 30 * 86400
    for d, _, files in os.walk(cache):
        for name in files:
            p = os.path.join(d, name)
            if os.path.getmtime(p) < old:
                os.remove(p)
took = f"{len(entries)} files, {cached} of them clean in the cache ({cache}), {time.monotonic() - start:.0f} s"
if findings:
    lines = set()
    for file, text in findings:
        hits = [l for l in text.splitlines() if re.search(r"(warning|error):", l)]
        lines.update(hits or [f"{file}:\n{text}"])
    print("\n".join(sorted(lines)), file=sys.stderr)
    print(f"check_tidy: findings above in {len(findings)} file(s) (.clang-tidy says which checks run and "
          f"why some do not); {took}", file=sys.stderr)
    sys.exit(1)
print(f"check_tidy: src, tools, examples and fuzz follow .clang-tidy ({took})")
EOF
