#!/usr/bin/env bash
# A fixed, seeded slice of libFuzzer on the C++ safetensors parser: builds tests/fuzz/fuzz_safetensors.cpp
# with clang++ -fsanitize=fuzzer,address,undefined into build/fuzz/, then runs RUNS inputs (default
# 1500000: about 20 s on one core, 80k inputs/s) mutated from the committed seeds in tests/fuzz/corpus/safetensors/.
# Exit status 0 when no input crashed, leaked, hit UB, allocated past 64 MB or broke an invariant; else
# libFuzzer's status, with the input saved as build/fuzz/crash-*.
#   tests/fuzz/run_cpp_fuzz.sh [RUNS]
# Installs nothing: clang and its runtime (libclang-rt-14-dev, which holds libFuzzer) come from
# scripts/install_deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-1500000}
seed=${FUZZ_SEED:-1}

cxx=""
for c in clang++ clang++-14; do command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }; done
if [ -z "$cxx" ]; then
  echo "run_cpp_fuzz: no clang++ (scripts/install_deps.sh installs it)" >&2
  exit 1
fi

out=build/fuzz
bin=$out/fuzz_safetensors
sources=(tests/fuzz/fuzz_safetensors.cpp core/io/safetensors.cpp core/io/safetensors.h)
mkdir -p "$out"
stale=0
[ -x "$bin" ] || stale=1
for s in "${sources[@]}" "$0"; do [ "$s" -nt "$bin" ] && stale=1; done
if [ "$stale" -eq 1 ]; then
  echo "[fuzz] $cxx -fsanitize=fuzzer,address,undefined -> $bin"
  # -fno-sanitize-recover: a UBSan finding stops the run (and fails it) instead of printing and going on.
  "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Icore tests/fuzz/fuzz_safetensors.cpp core/io/safetensors.cpp -o "$bin"
fi

# libFuzzer writes what it finds into its first corpus folder: a scratch one, emptied each run, so the
# committed seeds stay as generated and every run starts from the same place (with -seed=1: the same
# inputs; FUZZ_SEED picks another sequence). -malloc_limit_mb: one allocation over 64 MB is a failure
# (inputs are at most 4 KB; only a size taken from the file on trust could ask for that much).
# -rss_limit_mb: ASan's quarantine and the growing corpus settle near 500 MB.
scratch=$out/corpus
rm -rf "$scratch"
mkdir -p "$scratch"
set +e  # the status is libFuzzer's, taken from the pipeline below
"$bin" -seed="$seed" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
  -dict=tests/fuzz/safetensors.dict -artifact_prefix="$out/crash-" -print_final_stats=1 \
  "$scratch" tests/fuzz/corpus/safetensors 2>&1 |
  # Progress lines and the suggested dictionary are noise in a test log; findings and stats are kept.
  awk '/^#[0-9]+[ \t]+(NEW|REDUCE|pulse)/ {next} /^[ \t]+NEW_FUNC/ {next} /Recommended dictionary/ {skip=1} !skip {print} /End of recommended/ {skip=0}'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -eq 0 ]; then
  echo "[fuzz] C++ safetensors parser: $runs inputs (seed $seed), no failure"
else
  echo "[fuzz] C++ safetensors parser: FAILED (status $status); the input is in $out/crash-*" >&2
fi
exit "$status"
