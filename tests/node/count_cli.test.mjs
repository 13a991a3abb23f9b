// `attnlab train --lab count` (issue 11, headless): progress lines, then a final record with the
// accuracy on 10,000 fresh sequences, the accuracy on ties and the attention mass on the 2s and 4s;
// the lab's flags come from its property table, and another lab's flag is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const attnlab = (...args) => spawnSync(process.execPath, [CLI, 'train', '--lab', 'count', ...args], { encoding: 'utf8', timeout: 120_000 });

test('attnlab train --lab count --lr 1e-3 --steps 1000 --seed 3 --json: >= 99%, ties included, from the lab\'s own flags', () => {
  const r = attnlab('--lr', '1e-3', '--steps', '1000', '--seed', '3', '--every', '500', '--backend', 'simd', '--json');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.filter((l) => l.type === 'progress').map((l) => l.step), [500, 1000]);
  const final = lines.at(-1);
  assert.equal(final.type, 'final');
  assert.equal(final.lab, 'count');
  assert.equal(final.evaluatedOn, 10000);
  assert.ok(final.accuracy >= 0.99, `accuracy ${final.accuracy}`);
  assert.ok(final.tieAccuracy >= 0.97, `tie accuracy ${final.tieAccuracy}`);
  assert.ok(final.accuracy > final.majority, 'beats always answering no');
  assert.ok(final.massOn24 > 0 && final.massOn24 <= 1 && Math.abs(final.uniformMassOn24 - 0.2) < 0.01, JSON.stringify(final));
});

test('attnlab train --lab count: another lab\'s flag and a bad value exit 2 with one line', () => {
  for (const [args, message] of [
    [['--task', 'copy'], /^attnlab: --task does not apply to --lab count/],
    [['--batch', '0'], /^attnlab: --batch must be an integer in \[1, 10000\], got '0'/],
  ]) {
    const r = attnlab(...args);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr.split('\n')[0], message);
  }
});

test('attnlab train --lab count --embedding one-hot: the notebook\'s alternative embedding trains from the lab\'s property, its start record says so; a bad value names the choices', () => {
  const r = attnlab('--embedding', 'one-hot', '--lr', '1e-3', '--steps', '1000', '--seed', '3', '--every', '1000', '--backend', 'simd', '--json');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines[0].type, 'start');
  assert.equal(lines[0].embedding, 'one-hot');
  const final = lines.at(-1);
  assert.ok(final.accuracy >= 0.99, `accuracy ${final.accuracy}`);
  const bad = attnlab('--embedding', 'onehot');
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.split('\n')[0], 'attnlab: --embedding must be one of embedding, one-hot, got \'onehot\'');
});

test('attnlab train --lab count --embed-dim 1 --att-dim 1 --hidden 8: the notebook\'s sizes as flags; saved and loaded with those shapes; a size too large for the batch is refused', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlab-count-sizes-'));
  try {
    const file = path.join(dir, 'small.safetensors');
    const r = attnlab('--embed-dim', '1', '--att-dim', '1', '--hidden', '8', '--lr', '1e-3', '--seed', '2',
      '--every', '5001', '--backend', 'simd', '--save', file, '--json');
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual([lines[0].embedDim, lines[0].attDim, lines[0].hidden], [1, 1, 8]);
    assert.ok(lines.at(-1).accuracy >= 0.99, `accuracy ${lines.at(-1).accuracy}`); // one number per digit is enough
    // The file holds the notebook's names at these sizes: evaluated at them, it gives the run's figures; at the
    // notebook's sizes it is refused, every shape named (as --load with another lab's sizes, docs/weights.md).
    const sizes = ['--embed-dim', '1', '--att-dim', '1', '--hidden', '8'];
    const evaluate = (...args) => spawnSync(process.execPath, [CLI, 'evaluate', '--lab', 'count', '--weights', file,
      '--build', 'simd', '--backend', 'simd', ...args, '--json'], { encoding: 'utf8', timeout: 120_000 });
    const evaluated = evaluate(...sizes);
    assert.equal(evaluated.status, 0, evaluated.stderr);
    assert.equal(JSON.parse(evaluated.stdout).accuracy, lines.at(-1).accuracy);
    const refused = evaluate();
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /WK\.weight: the model needs shape \[5, 5\], the file has \[1, 1\]; .*nn\.0\.bias: the model needs shape \[200\], the file has \[8\]/);
    const plain = attnlab('--embed-dim', '1', '--steps', '2', '--backend', 'simd');
    assert.match(plain.stdout, /embed_dim 1, att_dim 5, hidden 200/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const big = attnlab('--batch', '10000', '--att-dim', '64', '--steps', '1');
  assert.equal(big.status, 2);
  assert.match(big.stderr.split('\n')[0], /^attnlab: these settings need about \d+ MB to train; the lab allows 64 MB: lower batch \(10000\) or attDim \(64\)$/);
  const zero = attnlab('--att-dim', '0');
  assert.equal(zero.status, 2);
  assert.equal(zero.stderr.split('\n')[0], 'attnlab: --att-dim must be an integer in [1, 64], got \'0\'');
});
