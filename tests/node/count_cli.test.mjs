// `attnlab train --lab count` (issue 11, headless): progress lines, then a final record with the
// accuracy on 10,000 fresh sequences, the accuracy on ties and the attention mass on the 2s and 4s;
// the lab's flags come from its property table, and another lab's flag is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
