#!/usr/bin/env bash
# Builds everything, incrementally: the native core and tests (build/native), both WASM modules
# (build/wasm -> public/build/) and the test module (build/wasm/test_kind/: one more decoder kind, for
# tests/node/decoder_kind_rows.test.mjs; never in public/), the generated shader module, the data
# assets, and copies the web sources into public/build/ so that public/ is the whole static site; last,
# the list of the site's files that the service worker caches for offline use, with the build's id.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

# Emscripten 3.1.6's JS optimizer needs Debian's acorn.
export NODE_PATH=/usr/share/nodejs

if [ "${ATTNLAB_SKIP_NATIVE:-0}" != 1 ]; then
  [ -f build/native/CMakeCache.txt ] || cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j"$jobs"
fi
[ -f build/wasm/CMakeCache.txt ] || emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j"$jobs"

[ -f scripts/gen_shaders.mjs ] && node scripts/gen_shaders.mjs
node scripts/gen_model_kinds.mjs # web/models/model_kinds.generated.js: the C++ registry's rows, for the JS tables
node scripts/gen_alignment_steps.mjs # web/labs/alignment_steps.generated.js: the C++ alignment tasks' step counts, for the lab
[ -f scripts/build_assets.mjs ] && node scripts/build_assets.mjs

# public/build/ mirrors the repository's layout so relative imports work in both places.
mkdir -p public/build/wasm_bindings
rm -rf public/build/web
cp -r web public/build/web
rm -rf public/build/wasm_bindings/js
cp -r wasm_bindings/attnlab.js wasm_bindings/js public/build/wasm_bindings/
# The npm libraries the page imports, each one ES module file with no imports of its own, at the path
# web/ imports it by (../../node_modules/...): @huggingface/tokenizers (web/tokenizers/hf_tokenizer.js)
# and @huggingface/jinja (web/tokenizers/chat_template.js). Nothing comes from a CDN; the site manifest
# below lists them for offline use.
rm -rf public/build/node_modules
for lib in @huggingface/tokenizers/dist/tokenizers.mjs @huggingface/jinja/dist/index.js; do
  mkdir -p "public/build/node_modules/$(dirname "$lib")"
  cp "node_modules/$lib" "public/build/node_modules/$lib"
done
node scripts/build_single_file.mjs # dist/attention-lab.html: the site in one file, for file:// (from the modules as written)
# The hosted page's bundles (esbuild) over web/app.js and the worker's modules; ATTNLAB_BUNDLE=0 keeps the
# modules as written, for development.
if [ "${ATTNLAB_BUNDLE:-1}" != 0 ]; then node scripts/bundle_site.mjs; fi
node scripts/build_site_manifest.mjs # public/build/site_manifest.js (public/sw.js): after every file of public/
node scripts/precompress_site.mjs # file.br and file.gz beside each text and WASM file of that list, for static hosts
echo "[build] done: public/ is the static site"
