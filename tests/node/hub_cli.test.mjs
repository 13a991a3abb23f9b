// --model by Hub id (issue 25, the CLI's side), from the stand-in Hub of model_hub.mjs (which answers as
// huggingface.co does; the page's client meets it in hub_store_node.test.mjs). The download lands in the Hugging Face cache layout, a
// second run needs no network, HF_HUB_OFFLINE=1 never touches it, a cache written by hand as
// from_pretrained writes it opens offline, and a download that breaks off leaves nothing that looks whole.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { BERT, COMMIT, ENDPOINT, GPT2_CHAT, MARIAN, SHARDED, SHARD_FILES, closeModelHub, requests, sha1, sha256 } from './model_hub.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { hubCacheDir, parseModelId } from '../../web/cli/hub.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
after(closeModelHub);

// Asynchronous: the stand-in Hub answers from this process, so it must not be blocked while attnlab runs.
const attnlab = (args, env) => new Promise((resolve) => {
  execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20, env: { ...process.env, ...env } },
    (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }));
});
const freshCache = () => mkdtempSync(path.join(tmpdir(), 'attnlab-hub-'));
const withoutName = (json) => ({ ...JSON.parse(json.split('\n')[0]), model: undefined });

test('model ids and the cache folder are read as huggingface_hub reads them', () => {
  assert.deepEqual(parseModelId('Helsinki-NLP/opus-mt-en-fr'), { id: 'Helsinki-NLP/opus-mt-en-fr', revision: 'main' });
  assert.deepEqual(parseModelId('bert-base-uncased@v1'), { id: 'bert-base-uncased', revision: 'v1' });
  for (const bad of ['../etc', 'a/b/c', 'a--b/c', 'x@..', '', 'a b']) assert.equal(parseModelId(bad), null, bad);
  assert.equal(hubCacheDir({ HF_HUB_CACHE: '/c' }), '/c');
  assert.equal(hubCacheDir({ HF_HOME: '/h' }), path.join('/h', 'hub'));
  assert.equal(hubCacheDir({ XDG_CACHE_HOME: '/x' }), path.join('/x', 'huggingface', 'hub'));
});

test('pretrained --model ORG/NAME downloads into the cache layout, then opens offline with the same output', async () => {
  const cache = freshCache();
  const args = ['pretrained', '--model', 'test-org/bert-tiny', '--text', 'the cat sat', '--backend', 'simd', '--json'];
  const fromFolder = await attnlab(['pretrained', '--model', BERT, '--text', 'the cat sat', '--backend', 'simd', '--json'], {});
  let r = await attnlab(args, { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(withoutName(r.stdout), withoutName(fromFolder.stdout), 'the same record as from the folder');
  assert.equal(JSON.parse(r.stdout.split('\n')[0]).model.name, 'test-org/bert-tiny');
  // The layout from_pretrained reads: refs/main -> the commit, snapshots/COMMIT/FILE -> ../../blobs/ETAG.
  const repo = path.join(cache, 'models--test-org--bert-tiny');
  assert.equal(readFileSync(path.join(repo, 'refs', 'main'), 'utf8'), COMMIT);
  const weights = readFileSync(path.join(BERT, 'model.safetensors'));
  assert.equal(readlinkSync(path.join(repo, 'snapshots', COMMIT, 'model.safetensors')), path.join('..', '..', 'blobs', sha256(weights)));
  assert.equal(readlinkSync(path.join(repo, 'snapshots', COMMIT, 'config.json')),
    path.join('..', '..', 'blobs', sha1(readFileSync(path.join(BERT, 'config.json')))));
  assert.deepEqual(readdirSync(path.join(repo, 'blobs')).filter((f) => f.endsWith('.incomplete')), []);
  // Again, with the Hub unreachable: the cache alone (no request made).
  const before = requests.length;
  r = await attnlab(args, { HF_ENDPOINT: 'http://127.0.0.1:9', HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(withoutName(r.stdout), withoutName(fromFolder.stdout));
  assert.equal(requests.length, before, 'no request to the Hub');
});

test('a cache written as from_pretrained writes it opens with HF_HUB_OFFLINE=1; a model not in it is refused by name', async () => {
  const cache = freshCache();
  const repo = path.join(cache, 'models--Helsinki-NLP--opus-mt-tiny');
  mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  mkdirSync(path.join(repo, 'snapshots', COMMIT), { recursive: true });
  mkdirSync(path.join(repo, 'refs'), { recursive: true });
  writeFileSync(path.join(repo, 'refs', 'main'), COMMIT);
  for (const f of ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin']) {
    const bytes = readFileSync(path.join(MARIAN, f));
    writeFileSync(path.join(repo, 'blobs', sha256(bytes)), bytes);
    symlinkSync(path.join('..', '..', 'blobs', sha256(bytes)), path.join(repo, 'snapshots', COMMIT, f));
  }
  const env = { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:9' };
  let r = await attnlab(['translate', '--model', 'Helsinki-NLP/opus-mt-tiny', '--beams', '1', '--backend', 'simd', '--json'], env);
  assert.equal(r.code, 0, r.stderr);
  const fromFolder = await attnlab(['translate', '--model', MARIAN, '--beams', '1', '--backend', 'simd', '--json'], {});
  assert.equal(JSON.parse(r.stdout).translation, JSON.parse(fromFolder.stdout).translation);
  r = await attnlab(['translate', '--model', 'Helsinki-NLP/opus-mt-de-en', '--backend', 'simd'], env);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^attnlab: Helsinki-NLP\/opus-mt-de-en@main is not in the cache \(.*models--Helsinki-NLP--opus-mt-de-en\) and HF_HUB_OFFLINE is set: run once with the network, or give the checkpoint's folder\n$/);
});

test('offline, a kept snapshot without a whole model is named with the command that removes it; after it, the model is not in the cache', async () => {
  // A cache folder with a quote in its name: the command is read back by a shell whole.
  const cache = mkdtempSync(path.join(tmpdir(), "attnlab-hub-it's-"));
  const repo = path.join(cache, 'models--test-org--bert-tiny');
  const snapshot = path.join(repo, 'snapshots', COMMIT);
  mkdirSync(snapshot, { recursive: true });
  mkdirSync(path.join(repo, 'refs'), { recursive: true });
  writeFileSync(path.join(repo, 'refs', 'main'), COMMIT);
  writeFileSync(path.join(snapshot, 'config.json'), readFileSync(path.join(BERT, 'config.json')));  // no weights, no vocab
  const env = { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:9' };
  const args = ['pretrained', '--model', 'test-org/bert-tiny', '--text', 'the cat sat', '--backend', 'simd'];
  let r = await attnlab(args, env);
  assert.equal(r.code, 2);
  const m = /^attnlab: test-org\/bert-tiny@main: the cache's snapshot (.*) does not hold a whole model \(a download that broke off, or one kept by an older version\) and HF_HUB_OFFLINE is set: remove it with (rm -r '.*') and run once with the network\n$/.exec(r.stderr);
  assert.ok(m, r.stderr);
  assert.equal(m[1], snapshot);
  const removed = spawnSync('sh', ['-c', m[2]], { encoding: 'utf8' });
  assert.equal(removed.status, 0, removed.stderr);
  assert.ok(!existsSync(snapshot), 'the command removed the snapshot');
  assert.ok(existsSync(cache), 'and nothing else');
  r = await attnlab(args, env);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /is not in the cache .* and HF_HUB_OFFLINE is set: run once with the network/);
});

test('--model NAME that is no folder here, with no Hub to ask: both said, the folder first', async () => {
  const r = await attnlab(['pretrained', '--model', 'bert-folder', '--text', 'x', '--backend', 'simd'],
    { HF_ENDPOINT: 'http://127.0.0.1:9', HF_HUB_CACHE: freshCache() });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^attnlab: --model bert-folder is not a folder here, and as a Hub id: cannot reach http:\/\/127\.0\.0\.1:9 for bert-folder \([^)]+\); a model opens offline once it is in the cache/);
});

test('translate --model by id falls back to pytorch_model.bin when the Hub has no model.safetensors', async () => {
  const cache = freshCache();
  const r = await attnlab(['translate', '--model', 'test-org/opus-mt-tiny', '--beams', '1', '--backend', 'simd', '--json'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 0, r.stderr);
  const snapshot = path.join(cache, 'models--test-org--opus-mt-tiny', 'snapshots', COMMIT);
  assert.ok(lstatSync(path.join(snapshot, 'pytorch_model.bin')).isSymbolicLink());
  assert.ok(!existsSync(path.join(snapshot, 'model.safetensors')));
});

test('a private model needs HF_TOKEN (sent as Bearer); an unknown id is refused; a broken download resumes with a Range, and nothing whole-looking is left before', async () => {
  const cache = freshCache();
  const run = (id, env = {}) => attnlab(['pretrained', '--model', id, '--text', 'x', '--backend', 'simd'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache, ...env });
  let r = await run('test-org/private-bert');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/private-bert: the Hub refused config.json (HTTP 401): a gated or private model needs a token with access (HF_TOKEN)\n');
  r = await run('test-org/private-bert', { HF_TOKEN: 'hf_secret' });
  assert.equal(r.code, 0, r.stderr);
  r = await run('test-org/no-such-model');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^attnlab: test-org\/no-such-model: no such model on http:\/\/127\.0\.0\.1:\d+ \(config\.json not found at revision main\)\n$/);
  // A download that breaks off keeps what arrived as .incomplete (never as the blob); the next run asks
  // for the rest with a Range and finishes it, as huggingface_hub resumes.
  r = await run('test-org/broken-bert');
  assert.equal(r.code, 2, r.stderr);
  const weightBytes = readFileSync(path.join(BERT, 'model.safetensors'));
  const weights = sha256(weightBytes);
  const half = weightBytes.length >> 1;
  assert.equal(r.stderr.replace(/ \([A-Za-z_]+\);/, ' (ERR);'), `attnlab: test-org/broken-bert: the download of model.safetensors broke off after ${half} bytes (ERR); `
    + `what arrived is kept as ${weights}.incomplete: run the command again to go on from there\n`);
  const blobs = path.join(cache, 'models--test-org--broken-bert', 'blobs');
  assert.ok(!existsSync(path.join(blobs, weights)), 'no blob that looks whole');
  assert.equal(statSync(path.join(blobs, `${weights}.incomplete`)).size, half);
  requests.length = 0;
  r = await run('test-org/broken-bert');
  assert.equal(r.code, 0, r.stderr);
  assert.ok(requests.includes(`GET /cdn/test-org%2Fbroken-bert/model.safetensors bytes=${half}-`), requests.join('\n'));
  assert.equal(sha256(readFileSync(path.join(blobs, weights))), weights, 'the resumed blob is the file');
  assert.ok(!existsSync(path.join(blobs, `${weights}.incomplete`)));
  // A server that answers the Range with the whole file (200): read from the first byte again, not appended.
  r = await run('test-org/rangeless-bert');
  assert.equal(r.code, 2, r.stderr);
  r = await run('test-org/rangeless-bert');
  assert.equal(r.code, 0, r.stderr);
  const rangeless = path.join(cache, 'models--test-org--rangeless-bert', 'blobs');
  assert.equal(sha256(readFileSync(path.join(rangeless, weights))), weights, 'whole, not the first half twice');
  r = await run('test-org/corrupt-bert');
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`^attnlab: test-org/corrupt-bert: the download of model\\.safetensors is not whole \\(its sha256 is [0-9a-f]{64}, the Hub's is ${weights}\\); nothing was kept`));
  assert.deepEqual(readdirSync(path.join(cache, 'models--test-org--corrupt-bert', 'blobs')).filter((f) => f.startsWith(weights)), []);
  r = await run('test-org/bad-config');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/bad-config: its config.json is not JSON\n');
  // Not a folder and not an id: said so.
  r = await run('./no/such/folder/x');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: --model ./no/such/folder/x: not a folder, and not a Hub model id (ORG/NAME or NAME, optionally @REVISION)\n');
});

test('a sharded model by id (issue 37): the index, then each shard once, into the cache; the same writing as the folder, then offline', async () => {
  const cache = freshCache();
  const args = ['generate', '--text', 'The dog', '--temperature', '0', '--max-new-tokens', '4', '--json'];
  const fromFolder = await attnlab([...args, '--model', SHARDED], {});
  assert.equal(fromFolder.code, 0, fromFolder.stderr);
  const before = requests.length;
  let r = await attnlab([...args, '--model', 'test-org/llama-sharded'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).generated, JSON.parse(fromFolder.stdout).generated);
  const gets = requests.slice(before).filter((q) => q.startsWith('GET /cdn/'));
  for (const shard of SHARD_FILES.slice(1)) assert.equal(gets.filter((q) => q.endsWith(`/${shard}`)).length, 1, `${shard} fetched once`);
  const snapshot = path.join(cache, 'models--test-org--llama-sharded', 'snapshots', COMMIT);
  for (const f of SHARD_FILES) assert.ok(lstatSync(path.join(snapshot, f)).isSymbolicLink(), f);
  r = await attnlab([...args, '--model', 'test-org/llama-sharded'], { HF_ENDPOINT: 'http://127.0.0.1:9', HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).generated, JSON.parse(fromFolder.stdout).generated);
});

test('an index that names a shard by a path is refused in one line before any shard is asked for', async () => {
  const cache = freshCache();
  const before = requests.length;
  const r = await attnlab(['generate', '--model', 'test-org/llama-sharded-hostile', '--text', 'The dog'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/llama-sharded-hostile: model.safetensors.index.json: shard "../../secret.safetensors" names a folder: a shard is a plain file name beside the index\n');
  const asked = requests.slice(before);
  assert.ok(asked.every((q) => !/secret|of-00002/.test(q)), asked.join('\n'));
});

test('a gpt2-kind model by id brings tokenizer_config.json and generation_config.json where the Hub has them: --chat works as from its folder', async () => {
  const cache = freshCache();
  const question = 'What is a cat?';
  const args = ['generate', '--chat', question, '--temperature', '0', '--max-new-tokens', '3', '--json'];
  const fromFolder = await attnlab([...args, '--model', GPT2_CHAT], {});
  assert.equal(fromFolder.code, 0, fromFolder.stderr);
  let r = await attnlab([...args, '--model', 'test-org/gpt2-chat'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).prompt, JSON.parse(fromFolder.stdout).prompt);
  assert.deepEqual(JSON.parse(r.stdout).generated, JSON.parse(fromFolder.stdout).generated);
  const snapshot = path.join(cache, 'models--test-org--gpt2-chat', 'snapshots', COMMIT);
  for (const f of ['tokenizer_config.json', 'generation_config.json', 'tokenizer.json']) assert.ok(existsSync(path.join(snapshot, f)), f);
  // A gpt2 repository without them (404 each): it opens as before, and --chat says there is no template.
  r = await attnlab(['generate', '--model', 'test-org/gpt2-plain', '--text', 'The dog', '--max-new-tokens', '2'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 0, r.stderr);
  r = await attnlab(['generate', '--model', 'test-org/gpt2-plain', '--chat', 'Hi'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: --chat: this model has no chat template (tokenizer_config.json\'s chat_template): write a prompt instead\n');
});

test('a ref in the cache is followed only when it is a commit: "../../.." or an escape sequence is refused offline, by its file, and replaced online', async () => {
  for (const bad of ['../../../../tmp/elsewhere', `\u001b[31m${COMMIT.slice(1)}`]) {
    const cache = freshCache();
    const repo = path.join(cache, 'models--test-org--opus-mt-tiny');
    mkdirSync(path.join(repo, 'refs'), { recursive: true });
    writeFileSync(path.join(repo, 'refs', 'main'), bad);
    let r = await attnlab(['translate', '--model', 'test-org/opus-mt-tiny', '--beams', '1', '--backend', 'simd'],
      { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:9' });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `attnlab: test-org/opus-mt-tiny@main: the cache's ref ${path.join(repo, 'refs', 'main')} holds `
      + `${bad.startsWith('..') ? `"${bad}"` : `"\\x1b[31m${COMMIT.slice(1)}"`}, not a commit (40 hexadecimal digits), and HF_HUB_OFFLINE is set: `
      + 'delete that file and run once with the network\n');
    assert.doesNotMatch(r.stderr, /\u001b/, 'no escape sequence reaches the terminal');
    // With the network the model is fetched and the ref written anew.
    r = await attnlab(['translate', '--model', 'test-org/opus-mt-tiny', '--beams', '1', '--backend', 'simd', '--json'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(path.join(repo, 'refs', 'main'), 'utf8'), COMMIT);
  }
});

test('a shard whose HEAD gives no usable size (none, -5, 1e3) is refused before any shard is downloaded; no ref is written', async () => {
  for (const id of ['test-org/llama-sharded-nosize', 'test-org/llama-sharded-negative', 'test-org/llama-sharded-exponent']) {
    const cache = freshCache();
    const before = requests.length;
    const r = await attnlab(['generate', '--model', id, '--text', 'The dog'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
    assert.equal(r.code, 2, `${id}: ${r.stderr}`);
    assert.equal(r.stderr, `attnlab: ${id}: the Hub's answer for the shard ${SHARD_FILES[1]} gives no size (X-Linked-Size or Content-Length), `
      + 'so the shards cannot be summed against the memory a lab holds before they are downloaded; nothing of them was downloaded\n');
    const asked = requests.slice(before);
    assert.ok(!asked.some((line) => /^GET \/cdn\//.test(line)), `${id}: no shard's body asked for: ${asked.join(', ')}`);
    assert.ok(!existsSync(path.join(cache, `models--${id.replace('/', '--')}`, 'refs', 'main')), `${id}: no refs/main`);
  }
});
