#!/usr/bin/env bash
# The C++ sources against the checked-in .clang-format (clang-format 14, as
# Debian 12 ships it): lists every file that differs and fails if any does.
#   scripts/check_format.sh        check (CI runs this)
#   scripts/check_format.sh --fix  rewrite the files that differ
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (scripts/setup.sh --tests installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
drift=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
done
if ((${#drift[@]})); then
  echo "check_format: ${#drift[@]} file(s) differ from .clang-format (scripts/check_format.sh --fix rewrites them):" >&2
  printf '  %s\n' "${drift[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files follow .clang-format"
