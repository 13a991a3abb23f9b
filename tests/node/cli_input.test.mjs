// attnlab's user errors (issue 16, section 5): each is one line on stderr and a non-zero exit (2 for
// what the user can fix), never a stack trace; numbers are read only as written in plain decimal; file
// flags are checked before training; --load refuses weights whose metadata names another lab, task or
// head count. Every run here is at most a few steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { stateDictBytes } from '../../web/io/state_dict.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const NOTEBOOK_WEIGHTS = path.join(REPO_ROOT, 'tests', 'fixtures', 'notebook_copy_model.safetensors');

function attnlab(args, env = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const copy = (...args) => attnlab(['train', '--task', 'copy', '--backend', 'simd', '--steps', '1', ...args]);
const tempDir = () => mkdtempSync(path.join(tmpdir(), 'attnlab-input-'));

/** A refusal: exit `code`, nothing trained, and a first line that matches; with `oneLine`, nothing else. */
function assertRefused(r, message, { code = 2, oneLine = true, what = '' } = {}) {
  assert.equal(r.code, code, `${what}: exit ${r.code}, stderr ${r.stderr}`);
  assert.equal(r.stdout, '', `${what}: nothing runs`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.match(lines[0], message, what);
  if (oneLine) assert.equal(lines.length, 1, `${what}: one line, got ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${what}: no stack trace`);
}

test('integer flags take plain decimal digits only: 0x10, 1e3, +5, " 5", 5.0, 0b1, Infinity exit 2', () => {
  for (const value of ['0x10', '1e3', '+5', ' 5', '5 ', '5.0', '0b1', '0o7', 'Infinity', 'NaN', '']) {
    const r = copy('--every', value);
    assertRefused(r, /^attnlab: --every must be an integer in \[1, 100000\], got '.*' \(plain decimal digits\)$/,
      { oneLine: false, what: `--every '${value}'` });
  }
  const r = attnlab(['train', '--task', 'copy', '--steps', '0x10']);
  assertRefused(r, /--steps must be an integer in \[1, 100000\], got '0x10' \(plain decimal digits\)/, { oneLine: false, what: '--steps 0x10' });
});

test('--lr takes plain decimal or exponent notation, not hex, binary, Infinity or NaN', () => {
  for (const value of ['0x1', '0b1', 'Infinity', '-Infinity', 'NaN', '+0.01', ' 0.01', '1e', '.']) {
    assertRefused(copy('--lr', value), /^attnlab: --lr must be a number in \(0, 1\], got '.*' \(plain decimal, e\.g\. 0\.003 or 3e-3\)$/,
      { oneLine: false, what: `--lr '${value}'` });
  }
  for (const value of ['.003', '3e-3', '3E-3', '1.']) {
    const r = copy('--lr', value, '--json');
    assert.equal(r.code, 0, `--lr ${value}: ${r.stderr}`);
  }
});

test('an empty file name is refused: --load, --save, --png, --svg (also as --flag=)', () => {
  for (const flag of ['--load', '--save', '--png', '--svg']) {
    for (const args of [[flag, ''], [`${flag}=`]]) {
      assertRefused(copy(...args), new RegExp(`^attnlab: ${flag} needs a file name, got an empty one$`), { oneLine: false, what: args.join(' ') });
    }
  }
});

test('output paths are checked before training: a missing folder, a folder, a file for a folder, one file twice', () => {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'plain-file'), '');
  const missing = path.join(dir, 'no', 'such', 'dir', 'x.safetensors');
  for (const [args, message] of [
    [['--save', missing], /^attnlab: --save '.*x\.safetensors': the folder '.*\/no\/such\/dir' does not exist$/],
    [['--png', path.join(dir, 'nope', 'a.png')], /^attnlab: --png '.*a\.png': the folder '.*nope' does not exist$/],
    [['--svg', path.join(dir, 'nope', 'a.svg')], /^attnlab: --svg '.*a\.svg': the folder '.*nope' does not exist$/],
    [['--save', dir], /^attnlab: --save '.*': is a folder; give a file name$/],
    [['--png', `${dir}/`], /^attnlab: --png '.*': is a folder; give a file name$/],
    [['--svg', path.join(dir, 'plain-file', 'a.svg')], /^attnlab: --svg '.*a\.svg': '.*plain-file' is not a folder$/],
    [['--png', path.join(dir, 'a.png'), '--svg', path.join(dir, 'a.png')], /^attnlab: --svg '.*a\.png': --png writes the same file$/],
  ]) {
    assertRefused(copy(...args), message, { what: args.join(' ') });
  }
  assert.ok(!existsSync(path.join(dir, 'a.png')), 'nothing was written');
});

test('attnlab train --lab lookup: --save into a missing folder is refused before training; --load of another model is refused', () => {
  const dir = tempDir();
  const lookup = (...args) => attnlab(['train', '--lab', 'lookup', '--backend', 'simd', '--steps', '1', ...args]);
  assertRefused(lookup('--save', path.join(dir, 'nope', 'l.safetensors')), /^attnlab: --save '.*l\.safetensors': the folder '.*nope' does not exist$/,
    { what: 'lookup --save' });
  assertRefused(lookup('--save', ''), /^attnlab: --save needs a file name/, { oneLine: false, what: "lookup --save ''" });
  // The notebook's copy model (metadata heads=4) into the Lookup lab: refused on its metadata; and a
  // bare file of another model: its tensors do not fit, and the message lists them.
  assertRefused(lookup('--load', NOTEBOOK_WEIGHTS), /^attnlab: '.*' holds weights for heads=4 \(metadata\); this run has 1 heads: pass --heads 4$/, { what: 'lookup --load of copy weights' });
  const bare = path.join(dir, 'bare-copy.safetensors');
  writeFileSync(bare, stateDictBytes(parseSafetensors(readFileSync(NOTEBOOK_WEIGHTS)).tensors, {}));
  assertRefused(lookup('--load', bare), /^attnlab: cannot load '.*': the weights do not fit this model: missing keys: .*img_mlp\.0\.weight/, { what: 'lookup --load of bare copy weights' });
  assertRefused(lookup('--steps', '1e3'), /--steps must be an integer .* \(plain decimal digits\)/, { oneLine: false, what: 'lookup --steps 1e3' });
});

test('--load refuses weights whose metadata names another task, lab or head count; a file without it loads', () => {
  const dir = tempDir();
  const copyWeights = path.join(dir, 'copy.safetensors'), lookupWeights = path.join(dir, 'lookup.safetensors');
  assert.equal(copy('--save', copyWeights).code, 0);
  assert.equal(attnlab(['train', '--lab', 'lookup', '--backend', 'simd', '--steps', '1', '--save', lookupWeights]).code, 0);
  const reverse = (...args) => attnlab(['train', '--task', 'reverse', '--backend', 'simd', '--steps', '1', ...args]);
  assertRefused(reverse('--load', copyWeights),
    /^attnlab: '.*copy\.safetensors' holds copy weights \(metadata task=copy\); --task reverse needs reverse weights$/, { what: 'copy into reverse' });
  assertRefused(reverse('--load', NOTEBOOK_WEIGHTS), /holds copy weights \(metadata task=copy\)/, { what: 'the notebook\'s copy into reverse' });
  assertRefused(copy('--load', lookupWeights),
    /^attnlab: '.*lookup\.safetensors' holds lookup weights \(metadata lab=lookup\); --lab alignment needs alignment weights$/, { what: 'lookup into copy' });
  assertRefused(copy('--heads', '2', '--load', copyWeights),
    /^attnlab: '.*copy\.safetensors' holds weights for heads=4 \(metadata\); this run has 2 heads: pass --heads 4$/, { what: '4 heads into 2' });
  // The same task loads; so does a file that says nothing of its task (the notebook's state_dict saved bare).
  assert.equal(copy('--load', copyWeights).code, 0);
  assert.equal(copy('--load', NOTEBOOK_WEIGHTS).code, 0);
  const bare = path.join(dir, 'bare.safetensors');
  writeFileSync(bare, stateDictBytes(parseSafetensors(readFileSync(NOTEBOOK_WEIGHTS)).tensors, {}));
  const r = reverse('--load', bare);
  assert.equal(r.code, 0, r.stderr);
  assert.match(attnlab(['--help']).stdout, /--load FILE[^]*metadata\s+names\s+another\s+lab,\s+task\s+or\s+head\s+count\s+is\s+refused,\s+not\s+followed/);
});

test('--load of a missing file, a folder or a file that does not fit: one line, exit 2', () => {
  const dir = tempDir();
  const notWeights = path.join(dir, 'not-weights.safetensors');
  writeFileSync(notWeights, 'hello');
  assertRefused(copy('--load', path.join(dir, 'missing.safetensors')), /^attnlab: --load '.*missing\.safetensors': no such file$/, { what: 'missing' });
  assertRefused(copy('--load', dir), /^attnlab: --load '.*': is a folder, not a weights file$/, { what: 'folder' });
  assertRefused(copy('--load', notWeights), /^attnlab: cannot load '.*not-weights\.safetensors': /, { what: 'not safetensors' });
  // A state_dict of another model: every problem, on one line.
  const other = path.join(dir, 'other.safetensors');
  writeFileSync(other, stateDictBytes({ 'tok_emb.weight': { shape: [2, 2], data: new Float32Array(4) } }, {}));
  assertRefused(copy('--load', other), /^attnlab: cannot load '.*other\.safetensors': the weights do not fit this model: missing keys: .*; tok_emb\.weight: /,
    { what: 'another model' });
});

test('a message cuts a long user value to 40 characters with "…"', () => {
  const long = 'x'.repeat(500);
  const deep = path.join(tempDir(), 'd'.repeat(200), 'missing', 'x.safetensors');
  for (const [args, shownValue] of [
    [[`--${long}`], `'--${'x'.repeat(37)}…'`],
    [['--task', long], `'${'x'.repeat(39)}…'`],
    [['--steps', `1${long}`], `'1${'x'.repeat(38)}…'`],
    [['--save', deep], `'…${deep.slice(-39)}'`], // a path keeps its end, the file name
  ]) {
    const r = attnlab(['train', '--task', 'copy', ...args]);
    const first = r.stderr.split('\n')[0];
    assert.equal(r.code, 2, first);
    assert.ok(first.includes(shownValue), `${first} shows ${shownValue}`);
    assert.ok(first.length < 160, `${first.length} characters: ${first}`);
  }
  const newline = attnlab(['train', '--task', 'copy\nreverse']);
  assert.match(newline.stderr.split('\n')[0], /got 'copy\\x0areverse'$/, 'a newline in a value stays on the line');
});

test('an error the user did not cause is one line and exit 1; ATTNLAB_DEBUG=1 adds the stack', () => {
  const env = { ATTNLAB_BUILD_DIR: path.join(tempDir(), 'no-build') };
  const args = ['train', '--task', 'copy', '--steps', '1', '--build', 'simd-threads'];
  assertRefused(attnlab(args, env), /^attnlab: build simd-threads needs .*attnlab-simd-threads\.js \(bash scripts\/build\.sh\) and SIMD128$/,
    { code: 1, what: 'no threads build' });
  const debug = attnlab(args, { ...env, ATTNLAB_DEBUG: '1' });
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /^attnlab: build simd-threads needs /);
  assert.match(debug.stderr, /^\s+at loadAttnLabNode /m, 'the stack, for a bug report');
});
