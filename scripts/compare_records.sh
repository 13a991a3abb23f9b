#!/usr/bin/env bash
# The CLI's --json records of every checkpoint command on every fixture, here and at an earlier revision,
# compared byte for byte (cmp): a refactor that must not change what a user gets (issue 46) shows it.
# Both run on this checkout's built modules (public/build), so only the JavaScript differs.
#   bash scripts/compare_records.sh REV      (REV: the revision before the change, e.g. a commit)
# Prints a line per record that differs, then "N records, M differ"; exits 1 if any differs.
set -uo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: compare_records.sh REV}
here=$(pwd)
work=$(mktemp -d)
git worktree add -q "$work/base" "$rev" || exit 2
trap 'git worktree remove --force "$work/base"; rm -rf "$work"' EXIT
# The earlier revision's tree with this checkout's build (ignored files: not in a worktree).
ln -s "$here/node_modules" "$work/base/node_modules"
mkdir -p "$work/base/public" && ln -s "$here/public/build" "$work/base/public/build"
for f in web/webgpu/shaders.generated.js web/models/model_kinds.generated.js web/labs/alignment_steps.generated.js; do cp "$here/$f" "$work/base/$f"; done

F=$here/tests/fixtures
commands=()
for m in gpt2_tiny/hub gpt2_tiny/lm gpt2_tiny/chat gpt2_tiny/hub_bin llama_tiny qwen2_tiny llama_tiny_sharded; do
  commands+=("generate --model $F/$m --text 'a b c d a b' --temperature 0 --max-new-tokens 5 --backend simd")
  commands+=("generate --model $F/$m --text 'hello there' --seed 3 --max-new-tokens 4 --backend scalar")
  commands+=("heads --model $F/$m --backend simd")
done
commands+=("generate --model $F/gpt2_tiny/chat --chat hi --max-new-tokens 3 --backend simd")
for m in bert_tiny/modern bert_tiny/bin bert_tiny/bf16 bert_tiny/legacy bert_tiny/sharded distilbert_tiny/base distilbert_tiny/mlm; do
  commands+=("pretrained --model $F/$m --text 'the [MASK] sat' --backend simd")
  commands+=("pretrained --model $F/$m --text 'a dog ran' --ablate 0.1 --backend scalar")
done
commands+=("translate --model $F/marian_tiny --backend simd")
commands+=("translate --model $F/marian_tiny --text 'The dog.' --beams 2 --ablate 0.0 --backend scalar")

differ=0
for i in "${!commands[@]}"; do
  for side in base here; do
    root=$([ $side = base ] && echo "$work/base" || echo "$here")
    (cd "$root" && eval "node web/cli/attnlab.mjs ${commands[$i]} --json" >"$work/$side.$i.out" 2>"$work/$side.$i.err"; echo $? >>"$work/$side.$i.err")
  done
  if ! cmp -s "$work/base.$i.out" "$work/here.$i.out" || ! cmp -s "$work/base.$i.err" "$work/here.$i.err"; then
    echo "differs: attnlab ${commands[$i]} --json"
    differ=$((differ + 1))
  fi
done
echo "${#commands[@]} records, $differ differ"
[ "$differ" = 0 ]
