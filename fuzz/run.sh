#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ and runs each one for
# MINUTES minutes on a scratch copy of its corpus, with its dictionary.
#
#   fuzz/run.sh [--keep] MINUTES [TARGET...]     (default: every target)
#
# Environment: CC/CXX (default clang-14/clang++-14), BUILD_DIR (default
# build-fuzz in the checkout), JOBS (parallel fuzzing jobs per target,
# default 1: a target gets MINUTES x JOBS CPU minutes). New inputs stay in
# the scratch directory (printed); with --keep, those that reach code the
# checked-in corpus does not are merged into fuzz/corpus/TARGET afterwards
# (libFuzzer's -merge=1: the smallest inputs that add coverage), so the
# corpus grows by what the run found and no more.
#
# The summary gives each target's CPU minutes as measured (user + system time
# of the fuzzing processes), which is less than MINUTES x JOBS when the
# machine is shared.
#
# Exits non-zero if a target crashed (a failed invariant, a sanitizer report,
# a leak, a timeout or running out of memory); the input is saved in the
# scratch directory as crash-*/timeout-*/oom-*/leak-*.
set -euo pipefail

keep=0
if [[ ${1:-} == --keep ]]; then
  keep=1
  shift
fi
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ || $1 -lt 1 ]]; then
  echo "usage: $0 [--keep] MINUTES [TARGET...]" >&2
  exit 2
fi
minutes=$1
shift

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${BUILD_DIR:-$root/build-fuzz}
all_targets=(http_request xmlrpc_call xmlrpc_response gzip jsonrpc exchange worker_message worker_answer base64)
targets=("${@:-${all_targets[@]}}")

# The exchange target reads both protocols: it gets both dictionaries.
declare -A dict=([http_request]=http.dict [xmlrpc_call]=xmlrpc.dict
                 [xmlrpc_response]=xmlrpc.dict [gzip]="" [jsonrpc]=json.dict
                 [exchange]="xmlrpc.dict json.dict" [worker_message]="" [worker_answer]="" [base64]="")
declare -A max_len=([http_request]=16384 [xmlrpc_call]=8192 [xmlrpc_response]=8192
                    [gzip]=8192 [jsonrpc]=8192 [exchange]=8192 [worker_message]=8192
                    [worker_answer]=8192 [base64]=8192)
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
declare -A execs cov kept cpu
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
  cp "$here/corpus/$t/"* "$scratch/$t/corpus/"
  args=(-max_total_time=$((minutes * 60)) -max_len="${max_len[$t]}" -timeout=10
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$scratch/$t/artifacts/")
  if [[ -n ${dict[$t]} ]]; then
    for d in ${dict[$t]}; do cat "$here/$d"; done >"$scratch/$t/dict"
    args+=(-dict="$scratch/$t/dict")
  fi
  if [[ ${JOBS:-1} -gt 1 ]]; then
    args+=(-jobs="$JOBS" -workers="$JOBS")
  fi
  echo "== $t: ${minutes} min =="
  log=$scratch/$t/fuzz.log
  set +e
  # Run in a child shell that reports the CPU time of everything it waited
  # for: the fuzzer and, with -jobs, its workers.
  (cd "$scratch/$t" && "$build/bin/fuzz_$t" "${args[@]}" corpus >"$log" 2>&1
   rc=$?; times >"$scratch/$t/times"; exit $rc)
  rc=$?
  set -e
  # `times` prints the shell's own line, then its children's: "XmYs XmYs".
  cpu[$t]=$(awk 'NR == 2 {
      n = 0
      for (i = 1; i <= 2; i++) {split($i, p, "m"); n += p[1] * 60 + p[2]}
      printf "%.1f", n / 60}' "$scratch/$t/times")
  # With -jobs the workers log to fuzz-N.log in the working directory.
  execs[$t]=$(cat "$log" "$scratch/$t"/fuzz-*.log 2>/dev/null |
              awk '/stat::number_of_executed_units/ {n += $2} END {print n + 0}' || true)
  # The last "cov: N ft: M" any process printed (with -jobs, the largest).
  cov[$t]=$(cat "$log" "$scratch/$t"/fuzz-*.log 2>/dev/null |
            awk '{for (i = 1; i < NF; i++) {if ($i == "cov:" && $(i+1) + 0 > c) c = $(i+1) + 0;
                                            if ($i == "ft:" && $(i+1) + 0 > f) f = $(i+1) + 0}}
                 END {print c + 0 " / " f + 0}' || true)
  tail -n 4 "$log"
  if [[ $rc -ne 0 ]] || compgen -G "$scratch/$t/artifacts/*" >/dev/null; then
    failed+=("$t")
    echo "!! $t failed (exit $rc); log: $log; inputs:" "$scratch/$t/artifacts/"*
  elif [[ $keep -eq 1 ]]; then
    before=$(find "$here/corpus/$t" -type f | wc -l)
    "$build/bin/fuzz_$t" -merge=1 -max_len="${max_len[$t]}" -rss_limit_mb=2048 \
      "$here/corpus/$t" "$scratch/$t/corpus" >"$scratch/$t/merge.log" 2>&1
    kept[$t]=$(($(find "$here/corpus/$t" -type f | wc -l) - before))
  fi
done

echo
echo "target            CPU min  executions   cov / ft        kept"
for t in "${targets[@]}"; do
  printf '%-17s %-8s %-12s %-15s %s\n' "$t" "${cpu[$t]:-}" "${execs[$t]}" "${cov[$t]:-}" \
    "${kept[$t]:--}"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]} (see $scratch)"
  exit 1
fi
echo "no crashes; new corpus inputs in $scratch/<target>/corpus"
