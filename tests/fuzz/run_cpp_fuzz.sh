#!/usr/bin/env bash
# A fixed, seeded slice of libFuzzer on a C++ reader, built with clang++ -fsanitize=fuzzer,address,undefined
# into build/fuzz/ (FUZZ_OUT to build elsewhere), then run on RUNS inputs mutated from committed seeds.
#   safetensors (default)  tests/fuzz/fuzz_safetensors.cpp: parse_safetensors; seeds tests/fuzz/corpus/safetensors/;
#                          RUNS default 1500000: about 20 s on one core, 80k inputs/s
#   bert_checkpoint        tests/fuzz/fuzz_bert_checkpoint.cpp: config.json, the checkpoint plan, the loader,
#                          a forward and the MLM head; seeds tests/fuzz/corpus/bert/; RUNS default 20000
#                          (about 1,700 inputs/s: the seeds are the tiny checkpoints, up to 114 KB each)
#   torch_checkpoint       tests/fuzz/fuzz_torch_checkpoint.cpp: pytorch_model.bin (the ZIP reader, the restricted
#                          unpickler, the index, strided reads), streamed and whole; seeds tests/fuzz/corpus/torch/
#                          (written by tests/fixtures/make_torch_bin_fixtures.py); RUNS default 1000000
# Exit status 0 when no input crashed, leaked, hit UB, allocated past 64 MB, ran past 10 s or broke an
# invariant; else libFuzzer's status, with the input saved as build/fuzz/crash-* (bert-crash-* for the BERT
# target, torch-crash-* for pytorch_model.bin), which `build/fuzz/fuzz_<target> FILE` replays.
#   tests/fuzz/run_cpp_fuzz.sh [RUNS] [TARGET]
# Installs nothing: clang and its runtime (libclang-rt-14-dev, which holds libFuzzer) come from
# scripts/install_deps.sh; the BERT target also needs Eigen (libeigen3-dev, as the native build does).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${2:-safetensors}
seed=${FUZZ_SEED:-1}

cxx=""
for c in clang++ clang++-14; do command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }; done
if [ -z "$cxx" ]; then
  echo "run_cpp_fuzz: no clang++ (scripts/install_deps.sh installs it)" >&2
  exit 1
fi

out=${FUZZ_OUT:-build/fuzz}
case "$target" in
  safetensors)
    runs=${1:-1500000}
    sources=(tests/fuzz/fuzz_safetensors.cpp core/io/safetensors.cpp core/io/utf8.cpp)
    headers=(core/io/safetensors.h core/io/utf8.h)
    flags=()
    # inputs are at most 4 KB; only a size taken from the file on trust could ask for 64 MB
    max_len=4096
    corpus=tests/fuzz/corpus/safetensors
    dict=tests/fuzz/safetensors.dict
    scratch=$out/corpus
    artifacts=$out/crash-
    what="C++ safetensors parser"
    ;;
  bert_checkpoint)
    runs=${1:-20000}
    # The reader and everything a forward and predict() call (core/models/bert.cpp), as CMakeLists.txt
    # compiles them (-ffp-contract=off), with the fixtures' path for the harness's mode 3.
    sources=(tests/fuzz/fuzz_bert_checkpoint.cpp core/io/safetensors.cpp core/io/safetensors_shards.cpp core/io/utf8.cpp core/io/json.cpp
             core/io/zip_reader.cpp core/io/torch_pickle.cpp core/io/torch_checkpoint.cpp
             core/models/bert_config.cpp core/models/bert_checkpoint.cpp core/models/bert.cpp
             core/models/marian_config.cpp core/models/marian_checkpoint.cpp core/models/marian.cpp
             core/models/checkpoint_loader.cpp core/models/config_json.cpp core/models/model_memory.cpp core/models/model_kinds.cpp core/models/distilbert_checkpoint.cpp core/staged_forward.cpp
             core/layers/layer_norm.cpp core/layers/activations.cpp core/layers/packed_linear.cpp
             core/attention.cpp core/attention_scalar.cpp core/attention_simd128.cpp core/gemm.cpp core/shard_runner.cpp
             core/backend.cpp)
    headers=(core/*.h core/io/*.h core/models/*.h core/layers/*.h)
    flags=(-I/usr/include/eigen3 -ffp-contract=off -pthread "-DBERT_FIXTURES_DIR=\"$PWD/tests/fixtures/bert_tiny\"")
    # the largest seed is the modern checkpoint (114,092 bytes and the mode byte)
    max_len=131072
    corpus=tests/fuzz/corpus/bert
    dict=tests/fuzz/bert_checkpoint.dict
    scratch=$out/corpus-bert
    artifacts=$out/bert-crash-
    what="C++ BERT checkpoint reader"
    ;;
  torch_checkpoint)
    runs=${1:-1000000}
    sources=(tests/fuzz/fuzz_torch_checkpoint.cpp core/io/zip_reader.cpp core/io/torch_pickle.cpp
             core/io/torch_checkpoint.cpp core/io/safetensors.cpp core/io/utf8.cpp)
    headers=(core/io/zip_reader.h core/io/torch_pickle.h core/io/torch_checkpoint.h core/io/safetensors.h core/io/utf8.h)
    flags=()
    # the largest seed is state_dict.bin (10,155 bytes and the mode byte)
    max_len=16384
    corpus=tests/fuzz/corpus/torch
    dict=tests/fuzz/torch_checkpoint.dict
    scratch=$out/corpus-torch
    artifacts=$out/torch-crash-
    what="C++ pytorch_model.bin reader"
    ;;
  *)
    echo "run_cpp_fuzz: unknown target '$target' (safetensors, bert_checkpoint or torch_checkpoint)" >&2
    exit 2
    ;;
esac

bin=$out/fuzz_$target
mkdir -p "$out"
stale=0
[ -x "$bin" ] || stale=1
for s in "${sources[@]}" "${headers[@]}" "$0"; do [ "$s" -nt "$bin" ] && stale=1; done
if [ "$stale" -eq 1 ]; then
  echo "[fuzz] $cxx -fsanitize=fuzzer,address,undefined -> $bin"
  # -fno-sanitize-recover: a UBSan finding stops the run (and fails it) instead of printing and going on.
  "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Icore "${flags[@]}" "${sources[@]}" -o "$bin"
fi

# libFuzzer writes what it finds into its first corpus folder: a scratch one, emptied each run, so the
# committed seeds stay as generated and every run starts from the same place (with -seed=1: the same
# inputs; FUZZ_SEED picks another sequence). -malloc_limit_mb: one allocation over 64 MB is a failure.
# -rss_limit_mb: ASan's quarantine and the growing corpus settle near 500 MB.
rm -rf "$scratch"
mkdir -p "$scratch"
set +e  # the status is libFuzzer's, taken from the pipeline below
"$bin" -seed="$seed" -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
  -dict="$dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
  "$scratch" "$corpus" 2>&1 |
  # Progress lines and the suggested dictionary are noise in a test log; findings and stats are kept.
  awk '/^#[0-9]+[ \t]+(NEW|REDUCE|pulse)/ {next} /^[ \t]+NEW_FUNC/ {next} /Recommended dictionary/ {skip=1} !skip {print} /End of recommended/ {skip=0}'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -eq 0 ]; then
  echo "[fuzz] $what: $runs inputs (seed $seed), no failure"
else
  echo "[fuzz] $what: FAILED (status $status); the input is in ${artifacts}*" >&2
fi
exit "$status"
