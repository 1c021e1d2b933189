#!/usr/bin/env bash
# Sets everything up, builds with the tests, and runs them all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh" --tests
ctest --test-dir "${RAPIDRPC_BUILD_DIR:-$root/build}" --output-on-failure -j2 "$@"
