#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each one for
# MINUTES minutes on a scratch copy of its corpus, with its dictionary.
#
#   fuzz/run.sh MINUTES [TARGET...]     (default: every target)
#
# Environment: CC/CXX (default clang-14/clang++-14), BUILD_DIR (default
# build-fuzz in the checkout), JOBS (parallel fuzzing jobs per target,
# default 1). New inputs stay in the scratch directory (printed), so the
# checked-in corpus is not flooded; copy the ones worth keeping by hand.
#
# Exits non-zero if a target crashed (a failed invariant, a sanitizer report,
# a leak, a timeout or running out of memory); the input is saved in the
# scratch directory as crash-*/timeout-*/oom-*/leak-*.
set -euo pipefail

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ || $1 -lt 1 ]]; then
  echo "usage: $0 MINUTES [TARGET...]" >&2
  exit 2
fi
minutes=$1
shift

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD_DIR:-$root/build-fuzz}
all_targets=(http_request xmlrpc_call xmlrpc_response gzip jsonrpc)
targets=("${@:-${all_targets[@]}}")

declare -A dict=([http_request]=http.dict [xmlrpc_call]=xmlrpc.dict
                 [xmlrpc_response]=xmlrpc.dict [gzip]= [jsonrpc]=json.dict)
declare -A max_len=([http_request]=16384 [xmlrpc_call]=8192 [xmlrpc_response]=8192
                    [gzip]=8192 [jsonrpc]=8192)
for t in "${targets[@]}"; do
  [[ -v "max_len[$t]" ]] || { echo "unknown target: $t (known: ${all_targets[*]})" >&2; exit 2; }
done

CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAPIDRPC_BUILD_FUZZERS=ON \
  -DRAPIDRPC_BUILD_TOOLS=OFF -DRAPIDRPC_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target "${targets[@]/#/fuzz_}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rapidrpc-fuzz.XXXXXX")
echo "scratch directory: $scratch"
failed=()
declare -A execs
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
  cp "$here/corpus/$t/"* "$scratch/$t/corpus/"
  args=(-max_total_time=$((minutes * 60)) -max_len="${max_len[$t]}" -timeout=10
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$scratch/$t/artifacts/")
  [[ -n ${dict[$t]} ]] && args+=(-dict="$here/${dict[$t]}")
  if [[ ${JOBS:-1} -gt 1 ]]; then
    args+=(-jobs="$JOBS" -workers="$JOBS")
  fi
  echo "== $t: ${minutes} min =="
  log=$scratch/$t/fuzz.log
  set +e
  (cd "$scratch/$t" && "$build/bin/fuzz_$t" "${args[@]}" corpus) >"$log" 2>&1
  rc=$?
  set -e
  # With -jobs the workers log to fuzz-N.log in the working directory.
  execs[$t]=$(cat "$log" "$scratch/$t"/fuzz-*.log 2>/dev/null |
              awk '/stat::number_of_executed_units/ {n += $2} END {print n + 0}' || true)
  tail -n 4 "$log"
  if [[ $rc -ne 0 ]] || compgen -G "$scratch/$t/artifacts/*" >/dev/null; then
    failed+=("$t")
    echo "!! $t failed (exit $rc); log: $log; inputs:" "$scratch/$t/artifacts/"*
  fi
done

echo
echo "target            executions"
for t in "${targets[@]}"; do printf '%-17s %s\n' "$t" "${execs[$t]}"; done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]} (see $scratch)"
  exit 1
fi
echo "no crashes; new corpus inputs in $scratch/<target>/corpus"
