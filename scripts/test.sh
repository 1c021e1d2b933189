#!/usr/bin/env bash
# Sets everything up, builds with the tests, and runs them all.
#   scripts/test.sh [--sanitize] [ctest options...]
#     --sanitize  in build-sanitize/, with AddressSanitizer and UBSan
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
setup=(--tests)
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  setup+=(--sanitize)
  export RAPIDRPC_BUILD_DIR="${RAPIDRPC_BUILD_DIR:-$root/build-sanitize}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
"$root/scripts/setup.sh" "${setup[@]}"
ctest --test-dir "${RAPIDRPC_BUILD_DIR:-$root/build}" --output-on-failure -j2 "$@"
