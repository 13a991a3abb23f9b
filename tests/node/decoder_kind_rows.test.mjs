// A decoder kind added in C++ alone (issue 46's proof). The test module (CMakeLists.txt: attnlab-test-kind,
// written to build/wasm/test_kind/attnlab-scalar.*, outside the site) is the scalar build with one more
// kind, "test_decoder": its registry row in core/models/model_kinds.cpp and its name row in
// core/models/decoder_names.cpp (Llama's config reader and spec, under tensor names of its own:
// blocks.N.attn.q, ...), both under ATTNLAB_TEST_DECODER_KIND. No JavaScript is edited for it: a copy of
// web/ differs only in model_kinds.generated.js, written from the test module's rows by
// scripts/gen_model_kinds.mjs's own function, and that copy's CLI (attnlab generate) and the page's
// opener (web/models/registry.js openCheckpoint, which the page's worker calls) open a folder of the new
// kind. The folder is tests/fixtures/llama_tiny under the new names and model_type, so its pass must be
// llama_tiny's bit for bit (the same BF16 weights, the same scalar build's math).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, lab } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { loadAttnLab } from '../../web/loader.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { openCheckpoint } from '../../web/models/registry.js';
import { modelKindsModuleText } from '../../scripts/gen_model_kinds.mjs';

const TEST_KIND_DIR = path.join(REPO_ROOT, 'build', 'wasm', 'test_kind');
const LLAMA = path.join(FIXTURES, 'llama_tiny');
const PROMPT = 'The dog';

// The row model_kinds.cpp adds, as the module writes it.
const TEST_ROW = {
  kind: 'test_decoder', title: 'Test decoder', modelTypes: ['test_decoder'],
  lab: { id: 'writing', title: 'Writing', command: 'attnlab generate' },
  files: { required: ['config.json', 'tokenizer.json | vocab.json + merges.txt'], optional: ['tokenizer_config.json', 'generation_config.json'] },
  tokenizer: 'hf_tokenizers', binding: 'decoder',
};

// Llama's names (decoder_names.cpp's "llama" row) -> the test kind's ("test_decoder" row), role by role.
const RENAMES = [
  [/^model\.embed_tokens\./, 'tok_embed.'],
  [/^model\.layers\.(\d+)\.input_layernorm\./, 'blocks.$1.attn_norm.'],
  [/^model\.layers\.(\d+)\.self_attn\.([qkv])_proj\./, 'blocks.$1.attn.$2.'],
  [/^model\.layers\.(\d+)\.self_attn\.o_proj\./, 'blocks.$1.attn.out.'],
  [/^model\.layers\.(\d+)\.post_attention_layernorm\./, 'blocks.$1.mlp_norm.'],
  [/^model\.layers\.(\d+)\.mlp\.(gate|up|down)_proj\./, 'blocks.$1.mlp.$2.'],
  [/^model\.norm\./, 'final_norm.'],
  [/^lm_head\./, 'unembed.'],
];

// A safetensors file with every tensor renamed and its bytes untouched (BF16, as llama_tiny's): only the
// header is rewritten, since data_offsets count from the end of the header.
function renamedSafetensors(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const renamed = {};
  for (const [name, entry] of Object.entries(header)) {
    const rule = name === '__metadata__' ? [name, name] : RENAMES.find(([from]) => from.test(name));
    assert.ok(rule, `the test kind has no name for llama_tiny's tensor ${name}`);
    renamed[name.replace(...rule)] = entry;
  }
  let text = JSON.stringify(renamed);
  text += ' '.repeat((8 - (Buffer.byteLength(text) % 8)) % 8);  // the data stays 8-byte aligned
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  return Buffer.concat([length, Buffer.from(text), bytes.subarray(8 + n)]);
}

// llama_tiny as a test_decoder folder: its tokenizer files, its weights renamed, its config's model_type.
function testKindFolder() {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-test-kind-'));
  for (const f of ['vocab.json', 'merges.txt', 'tokenizer_config.json']) cpSync(path.join(LLAMA, f), path.join(dir, f));
  writeFileSync(path.join(dir, 'model.safetensors'), renamedSafetensors(readFileSync(path.join(LLAMA, 'model.safetensors'))));
  const config = JSON.parse(readFileSync(path.join(LLAMA, 'config.json'), 'utf8'));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, model_type: 'test_decoder' }, null, 2));
  return dir;
}

// web/ copied as it is but for the generated table, written from `rows`; wasm_bindings/ and node_modules/
// (which web/ imports by relative paths) and package.json ("type": "module") beside it, as in the repository.
function webCopy(rows) {
  const root = mkdtempSync(path.join(tmpdir(), 'attnlab-test-kind-web-'));
  cpSync(path.join(REPO_ROOT, 'web'), path.join(root, 'web'), { recursive: true });
  for (const shared of ['wasm_bindings', 'node_modules']) symlinkSync(path.join(REPO_ROOT, shared), path.join(root, shared));
  cpSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
  writeFileSync(path.join(root, 'web', 'models', 'model_kinds.generated.js'), modelKindsModuleText(rows));
  return root;
}

// The test module, loaded as the page's worker loads a module (web/loader.js), from its own folder.
async function loadTestModule() {
  const wasm = path.join(TEST_KIND_DIR, 'attnlab-scalar.wasm');
  assert.ok(existsSync(wasm), `${path.relative(REPO_ROOT, wasm)} is missing: bash scripts/build.sh builds it (CMakeLists.txt: attnlab-test-kind)`);
  return loadAttnLab({ build: 'scalar', baseUrl: pathToFileURL(TEST_KIND_DIR + path.sep), wasmBinary: readFileSync(wasm) });
}

const generate = (root, env, folder) => spawnSync(process.execPath, [path.join(root, 'web', 'cli', 'attnlab.mjs'), 'generate',
  '--model', folder, '--text', PROMPT, '--temperature', '0', '--max-new-tokens', '5', '--json'],
{ encoding: 'utf8', cwd: REPO_ROOT, env: { ...process.env, ...env } });

// The prompt's logits and attentions of an opened decoder, each row as the module gives it.
function promptPass(model, tokenizer) {
  const ids = tokenizer.encode(PROMPT).ids;
  model.forward(ids);
  return {
    ids,
    logits: ids.map((_, t) => model.logits(t)),
    attention: [...Array(model.config.layers).keys()].map((l) => model.attention(l)),
  };
}

test('the test module\'s registry is the scalar module\'s rows and one more, test_decoder; a copy of web/ with only that table regenerated opens a folder of it through the CLI and the page\'s opener, with llama_tiny\'s output bit for bit', async (t) => {
  const normal = await lab('scalar');
  const module = await loadTestModule();
  assert.deepEqual(module.modelKinds.slice(0, -1), normal.modelKinds, 'the real kinds\' rows are the same');
  assert.deepEqual(module.modelKinds.at(-1), TEST_ROW);
  const root = webCopy(module.modelKinds);
  const folder = testKindFolder();
  t.after(() => { for (const dir of [root, folder]) rmSync(dir, { recursive: true, force: true }); });

  // The CLI: the repository's refuses the folder (its table has no such model_type); the copy's, on the
  // test module, writes what llama_tiny's folder writes through the repository's CLI.
  const refused = generate(REPO_ROOT, { ATTNLAB_BUILD: 'scalar' }, folder);
  assert.equal(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /model_type is "test_decoder"/);
  const reference = generate(REPO_ROOT, { ATTNLAB_BUILD: 'scalar' }, LLAMA);
  assert.equal(reference.status, 0, reference.stderr);
  const written = generate(root, { ATTNLAB_BUILD_DIR: TEST_KIND_DIR, ATTNLAB_BUILD: 'scalar' }, folder);
  assert.equal(written.status, 0, written.stderr);
  const [want, got] = [JSON.parse(reference.stdout), JSON.parse(written.stdout)];
  assert.equal(got.generated.ids.length, 5);
  assert.deepEqual(got.generated.ids, want.generated.ids, 'the greedy continuation');
  assert.deepEqual(got, want, 'the whole record: prompt, attentions, every step\'s top tokens');

  // The page's way: the copy's openCheckpoint with the test module, against llama_tiny by the repository's.
  const { openCheckpoint: openInCopy } = await import(pathToFileURL(path.join(root, 'web', 'models', 'registry.js')).href);
  const opened = await openInCopy(module, await folderSources(folder), { lab: 'writing' });
  const llama = await openCheckpoint(normal, await folderSources(LLAMA), { lab: 'writing' });
  try {
    assert.deepEqual([opened.kind.kind, opened.kind.title], ['test_decoder', 'Test decoder']);
    assert.equal(llama.kind.kind, 'llama');
    assert.deepEqual(opened.opened.summary.config, llama.opened.summary.config);
    assert.equal(opened.opened.summary.weights, 'BF16', 'held at 16 bits, as llama_tiny is');
    assert.deepEqual(promptPass(opened.opened.model, opened.opened.tokenizer), promptPass(llama.opened.model, llama.opened.tokenizer));
  } finally {
    opened.opened.model.delete();
    llama.opened.model.delete();
  }
});
