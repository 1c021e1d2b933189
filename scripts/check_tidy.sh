#!/usr/bin/env bash
# The library, the tools, the examples and the fuzz targets against the
# checked-in .clang-tidy (clang-tidy 14, as Debian 12 ships it), with the
# compile commands of a configured build: fails on any warning.
#   scripts/check_tidy.sh [BUILD_DIR]   (default build/; CI runs it after test.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
command -v run-clang-tidy >/dev/null || { echo "check_tidy: clang-tidy is not installed (scripts/setup.sh --tests installs it)" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] || { echo "check_tidy: no $build/compile_commands.json (configure a build first: scripts/setup.sh --tests)" >&2; exit 2; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Tests are left out: GoogleTest's macros are what most of their hits would be.
if ! run-clang-tidy -p "$build" -j "$(nproc)" -quiet "^$root/(src|tools|examples|fuzz)/" >"$log" 2>&1; then
  grep -E "(warning|error):" "$log" | sort -u >&2 || cat "$log" >&2
  echo "check_tidy: findings above (.clang-tidy says which checks run and why some do not)" >&2
  exit 1
fi
echo "check_tidy: src, tools, examples and fuzz follow .clang-tidy"
