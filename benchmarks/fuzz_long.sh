#!/usr/bin/env bash
# The long fuzz runs behind docs/reliability.md ("Fuzzing"): the C++ safetensors parser under libFuzzer
# with ASan and UBSan (tests/fuzz/run_cpp_fuzz.sh) and web/io/safetensors.js under the seeded mutation
# fuzzer (tests/fuzz/js_mutation_fuzz.mjs), each far past the slices that scripts/test.sh runs, and on
# another seed than theirs (2, not 1) so they explore other inputs. Prints the counts; exit status 1 if
# either found a failure (its input is then under build/fuzz/).
#   benchmarks/fuzz_long.sh [CPP_RUNS=10000000] [JS_CASES=1000000]      (~4 minutes on one core)
#   FUZZ_SEED=3 benchmarks/fuzz_long.sh                                  (another sequence)
set -uo pipefail
cd "$(dirname "$0")/.."
cpp_runs=${1:-10000000}
js_cases=${2:-1000000}
seed=${FUZZ_SEED:-2}
status=0

echo "== C++ parse_safetensors: libFuzzer + ASan + UBSan, $cpp_runs inputs, seed $seed"
t0=$(date +%s)
log=$(mktemp)
FUZZ_SEED=$seed bash tests/fuzz/run_cpp_fuzz.sh "$cpp_runs" >"$log" 2>&1 || status=1
# The counts and the verdict; on a failure, libFuzzer's report too (sanitizer lines, the input's path).
grep -E '^(Done|stat::|\[fuzz\]|==[0-9]+==|SUMMARY|invariant|artifact_prefix)|runtime error' "$log"
rm -f "$log"
echo "   ($(($(date +%s) - t0)) s with the build)"

echo "== JS parseSafetensors: mutation fuzzer, $js_cases cases, seed $seed"
node tests/fuzz/js_mutation_fuzz.mjs --seed "$seed" --cases "$js_cases" || status=1
exit "$status"
