#!/usr/bin/env bash
# Sets everything up, builds with the tests, and runs them all.
#   scripts/test.sh [--sanitize | --tsan] [--build-only | ctest options...]
#     --sanitize  in build-sanitize/, with AddressSanitizer and UBSan: every
#                 test but the three a sanitizer build does not register,
#                 which measure what the sanitizer changes (hostile
#                 test_soak and test_memory: the daemon's memory under load)
#                 or need what it takes (faults test_descriptors: a free
#                 descriptor for UBSan); the others run whole, bar a few
#                 memory bounds and one out-of-descriptors case (each says
#                 so, on RAPIDRPCD_SANITIZED)
#     --tsan      in build-tsan/, with ThreadSanitizer: the concurrency tests
#                 only (the registry's unit tests, the client's async tests,
#                 the ZeroMQ client's tests, integration test_concurrency,
#                 test_shutdown and test_zmq)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
setup=(--tests)
# Four tests at once on two cores: the suite mostly waits (timeouts, drains,
# slow clients, worker restarts) and uses less than one core on average.
# Measured on 2 cores: 373 -> 275 s plain, 382 -> 281 s sanitized.
jobs=4
select=()
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  setup+=(--sanitize)
  export RAPIDRPC_BUILD_DIR="${RAPIDRPC_BUILD_DIR:-$root/build-sanitize}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  # Six at once: sanitized, the suite computes more than it waits (a
  # sanitized rapidrpcd takes 0.12 s of CPU to start and leak-check its
  # exit, a plain one 0.02 s), so four leave the CPU partly idle. Measured on
  # 2 cores, the 52 tests of integration's fork and prefork modes and of
  # hostile-modes (none RUN_SERIAL; position-independent executables then):
  # -j3 126 s, -j4 129 s (CPU 85% busy), -j6 110 s (97%). The RUN_SERIAL
  # tests run alone whatever -j says.
  jobs=6
fi
if [[ "${1:-}" == "--tsan" ]]; then
  shift
  setup+=(--tsan)
  export RAPIDRPC_BUILD_DIR="${RAPIDRPC_BUILD_DIR:-$root/build-tsan}"
  # halt_on_error: the first race fails the test that met it (a daemon
  # stopped by the harness must exit 0). Only what uninstrumented libzmq
  # does inside itself is suppressed (tests/tsan.supp says why); Asio's
  # fences are left out of this build (CMakeLists.txt says why).
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/tsan.supp}"
  jobs=2  # ThreadSanitizer's tests are the CPU-heavy concurrency ones
  select=(-R '^(registry_test\.|client_test\.ZmqEndpoint|client_loopback_test\.(ClientAsync|ZmqNoServer)|client_zmq_test\.|integration\.test_(concurrency|shutdown|zmq|worker_hosts)$)')
fi
start=$SECONDS
"$root/scripts/setup.sh" "${setup[@]}"
built=$SECONDS
echo "test.sh: setup and build took $((built - start)) s"
# --build-only: set up and build, no test (.ci/run builds the sanitizer
# trees while other steps run, and tests them afterwards).
[[ "${1:-}" == "--build-only" ]] && exit 0
build="${RAPIDRPC_BUILD_DIR:-$root/build}"
# A test that skipped itself for want of a tool or a right is counted by
# ctest as skipped; the run then fails unless tests/skips.allowed allows
# that skip (tests/check_skips.py), so that what the environment lacks is
# never mistaken for a pass.
junit="$build/Testing/junit.xml"
rm -f "$junit"
status=0
ctest --test-dir "$build" --output-on-failure -j"$jobs" --output-junit "$junit" "${select[@]}" "$@" || status=$?
echo "test.sh: the tests took $((SECONDS - built)) s"
if [[ -f $junit ]]; then
  python3 "$root/tests/check_skips.py" "$junit" || status=1
fi
exit "$status"
