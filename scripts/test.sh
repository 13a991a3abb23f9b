#!/usr/bin/env bash
# Command 2 of the README: install what is missing, build incrementally, run every test:
#   native doctest (ctest) -> seeded libFuzzer slices of the C++ readers (safetensors, the BERT checkpoint,
#   pytorch_model.bin; one test each) ->
#   Node tests of the WASM module (node --test) -> browser tests (Chromium).
# Prints one closing line "tests: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh || exit 1
bash scripts/build.sh || exit 1

passed=0
failed=0
log=$(mktemp)

echo "== native (ctest + doctest)"
(cd build/native && ctest --output-on-failure) 2>&1 | tee "$log"
./build/native/core_tests --no-intro=true --duration=false --count >"$log.count" 2>&1 || true
native_cases=$(grep -oE 'test cases[^0-9]*[0-9]+' "$log.count" | grep -oE '[0-9]+$' | head -1)
if grep -q "100% tests passed" "$log"; then passed=$((passed + ${native_cases:-1})); else failed=$((failed + 1)); fi

# ~20 s: 1.5M mutated inputs from the committed seeds, under ASan and UBSan (tests/fuzz/run_cpp_fuzz.sh).
echo "== fuzz (C++ safetensors parser, libFuzzer, seed 1)"
if bash tests/fuzz/run_cpp_fuzz.sh 2>&1 | tee "$log"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# The BERT checkpoint loader's libFuzzer target (tests/fuzz/fuzz_bert_checkpoint.cpp) is run by hand
# (docs/reliability.md: 10^6 inputs): building it costs CI ~40 s. The suite fuzzes the same loader
# through the WASM module (tests/node/fuzz_bert.test.mjs, 6,000 mutated checkpoints). Likewise the
# pytorch_model.bin reader's target (tests/fuzz/fuzz_torch_checkpoint.cpp: 10^6 inputs by hand; the
# native suite's tests/core/test_torch_checkpoint.cpp has every hostile case with its message).

# Two test files at a time, Node and browser: most of a Node file's time is a CLI process starting
# (~1.5 s) or one thread of WASM, and most of a browser file's is waiting on a page, so two cores run two
# files faster (measured at load 6-8 beside other work: the browser files in 16.3 min two at a time,
# 20.6 min one at a time, 253/253 both ways; the Node files 8.5 min, ~12 before). Three at a time gained
# nothing (14.6 against 14.9 min: the browser files are CPU-bound). No test bounds a wall-clock time
# tightly; each waits for the state it needs, and a pace is checked on a clock the test moves. Node 18
# (Debian's own, on a machine that had none) has no --test-concurrency flag and runs them one at a time.
has_concurrency=0
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] && has_concurrency=1

run_node_tests() {
  local label=$1 files=$2
  shift 2
  local concurrency=()
  [ "$has_concurrency" = 1 ] && concurrency=(--test-concurrency="$files")
  echo "== $label"
  node --test "${concurrency[@]}" "$@" 2>&1 | tee "$log"
  local p f
  p=$(grep -E '^# pass [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  f=$(grep -E '^# fail [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-1}))
}

export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/lib/chromium/vk_swiftshader_icd.json}
run_node_tests "node (WASM module, WebGPU on SwiftShader, CLI)" 2 tests/node/*.test.mjs
if compgen -G "tests/browser/*.test.mjs" >/dev/null; then
  run_node_tests "browser (headless Chromium)" 2 tests/browser/*.test.mjs
fi
rm -f "$log" "$log.count"

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
