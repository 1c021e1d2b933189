#!/usr/bin/env bash
# Installs what rapidrpc needs from Debian's packages (skipping what is
# there) and builds it into build/. Sourced or run by run.sh and test.sh.
#
#   scripts/setup.sh [--tests] [--sanitize | --tsan]
#     --tests     also builds the tests and installs what they need
#     --sanitize  builds with AddressSanitizer and UndefinedBehaviorSanitizer
#     --tsan      builds with ThreadSanitizer, only what the concurrency tests
#                 run (rapidrpcd, registry_test, client_test, client_loopback_test,
#                 client_zmq_test)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RAPIDRPC_BUILD_DIR:-$root/build}"

# python3 is the client the README tries the server with; toml++
# (libtomlplusplus-dev) reads rapidrpcd's config file; fmt (libfmt-dev)
# gives the shortest digits of a double (Dragonbox).
packages=(g++ cmake ninja-build pkg-config libboost1.81-dev libexpat1-dev libgmp-dev
          zlib1g-dev libssl-dev libcli11-dev libtomlplusplus-dev libzmq3-dev cppzmq-dev
          libfmt-dev libsystemd-dev python3)
tests=OFF
sanitize=OFF
tsan=OFF
targets=()
for arg in "$@"; do
  case "$arg" in
    --tests)
      # chromium renders the load generator's HTML report in a test.
      # openssl makes the test certificates of the HTTPS tests.
      # python3-zmq is the ZeroMQ client of the ZeroMQ tests.
      # systemd gives systemd-socket-activate and systemd-analyze (the unit
      # files' tests).
      # libbenchmark-dev (Google Benchmark): a test build also builds
      # bench/micro, which ctest runs once as a check (bench.micro).
      # prometheus (promtool and the server) and python3-prometheus-client
      # (the text-format parser) check the admin listener's /metrics.
      # The benchmark smoke run (bench/smoke, in CI) runs every bench script
      # against its peers: wrk, nginx, ab (apache2-utils), xmlrpc-c's Abyss
      # (libxmlrpc-c++8-dev, built with g++ and GMP), aiozmq (its RPC layer
      # needs msgpack, only a recommendation of the package) and the fixed
      # answer served through io_uring (liburing-dev, built with g++).
      packages+=(libgtest-dev libbenchmark-dev chromium fonts-liberation openssl python3-zmq systemd
                 prometheus python3-prometheus-client
                 wrk nginx-light apache2-utils libxmlrpc-c++8-dev python3-aiozmq
                 python3-msgpack liburing-dev clang-format clang-tidy)
      # chromium-driver and python3-selenium let a test drive the API page
      # in chromium (choose a method, type its parameters, click Call, read
      # the result), which a plain headless run (--dump-dom) cannot.
      packages+=(chromium-driver python3-selenium)
      # haproxy: tests/faults/test_haproxy.py runs packaging/haproxy/haproxy.cfg.
      packages+=(haproxy)
      # libpython3.11-testsuite: CPython's own tests of xmlrpc.server, which
      # tests/integration/test_stdlib_suite.py runs against rapidrpc's servers.
      packages+=(libpython3.11-testsuite)
      # php-cli and php-xmlrpc: tests/integration/test_encodings.py calls
      # rapidrpcd as PHP's xmlrpc extension does at its defaults (documents
      # declared iso-8859-1).
      packages+=(php-cli php-xmlrpc)
      # nodejs: the OpenRPC project's own validator of rpc.discover's
      # document (@open-rpc/schema-utils-js, from npm, below) and its test
      # coverage run against the daemon (@open-rpc/test-coverage); Debian's npm
      # unless a node of another origin brought its own.
      packages+=(nodejs)
      command -v npm >/dev/null || packages+=(npm)
      # ccache: a test build (CI makes three) compiles again only what
      # changed since any earlier build, in this clone or another (below).
      packages+=(ccache)
      tests=ON
      ;;
    --sanitize) sanitize=ON ;;
    --tsan)
      tsan=ON
      targets=(--target rapidrpcd registry_test client_test client_loopback_test client_zmq_test)
      ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: run as root (or install sudo) to install packages" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# A plain run keeps an existing build's settings (so it does not drop the
# tests a test run configured); a first build is lean.
settings=()
if [[ $tests == ON || ! -f "$build_dir/CMakeCache.txt" ]]; then
  settings+=(-DRAPIDRPC_BUILD_TESTS="$tests")
fi
if [[ $sanitize == ON || ! -f "$build_dir/CMakeCache.txt" ]]; then
  settings+=(-DRAPIDRPC_SANITIZE="$sanitize")
fi
if [[ $tsan == ON || ! -f "$build_dir/CMakeCache.txt" ]]; then
  settings+=(-DRAPIDRPC_TSAN="$tsan")
fi
# With ccache installed every build compiles through it, its cache in the
# home directory (~/.cache/ccache, or CCACHE_DIR), so that a fresh clone in
# another folder compiles only what differs from an earlier build: paths
# under the clone are hashed relative to it (base_dir) and the build
# directory's own path is left out of the hash (hash_dir off; the debug
# information of an object compiled first in another clone names that
# clone's folder). Its size is bounded at 2 GiB, several generations of the
# three CI builds (the plain one takes 0.11 GiB of it, compressed), unless
# CCACHE_MAXSIZE or a ccache.conf sets it. RAPIDRPC_CCACHE=0 configures a
# new build without it.
if [[ ${RAPIDRPC_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  launcher="env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache"
  settings+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
  if [[ $(ccache -p) == *"(default) max_size "* ]]; then
    ccache -M 2G >/dev/null
  fi
fi
# The npm packages the tests use, pinned, in the build directory
# (tests/integration/test_typed.py finds them there); npm's own cache
# (~/.npm) serves the next build directory's.
if [[ $tests == ON ]]; then
  npm_packages=(@open-rpc/schema-utils-js@2.2.1 @open-rpc/test-coverage@2.2.4)
  npm_dir="$build_dir/npm"
  if [[ ! -f $npm_dir/installed || $(cat "$npm_dir/installed") != "${npm_packages[*]}" ]]; then
    echo "setup: npm install ${npm_packages[*]}"
    mkdir -p "$npm_dir"
    npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "${npm_packages[@]}"
    echo "${npm_packages[*]}" >"$npm_dir/installed"
  fi
fi
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${settings[@]}"
cmake --build "$build_dir" "${targets[@]}"
