// `attnlab attention` (issue 12, headless): softmax(q k^T x scale [+ mask]) v on a student's own JSON
// matrices, against a float64 reference written here with plain loops; masks (causal, a 0/1 file, a
// fully blocked row -> zeros); Dv != D; and bad files: one line naming the file, row and column, exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlab-attention-'));
const file = (name, value) => {
  const p = path.join(dir, name);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
};
const run = (...args) => spawnSync(process.execPath, [CLI, 'attention', ...args], { encoding: 'utf8', timeout: 60_000 });

/** The float64 reference: weights [T][S] and output [T][Dv]; allowed[t][s] false blocks a key. */
function reference(q, k, v, scale, allowed) {
  const weights = q.map((qt, t) => {
    const scores = k.map((ks, s) => (allowed && !allowed[t][s] ? -Infinity : scale * qt.reduce((a, x, d) => a + x * ks[d], 0)));
    const max = Math.max(...scores);
    if (max === -Infinity) return scores.map(() => 0);
    const e = scores.map((x) => Math.exp(x - max));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
  const output = weights.map((w) => v[0].map((_, c) => w.reduce((a, ws, s) => a + ws * v[s][c], 0)));
  return { weights, output };
}

let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 4 - 2;
const matrix = (rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.round(random() * 1000) / 1000));

function assertClose(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: rows`);
  actual.forEach((row, r) => row.forEach((x, c) => assert.ok(Math.abs(x - expected[r][c]) <= 1e-6, `${what}[${r}][${c}] = ${x}, expected ${expected[r][c]}`)));
}

test('attention on files matches a float64 reference (T=5, S=7, D=3, Dv=4; default and given scale)', () => {
  const q = matrix(5, 3), k = matrix(7, 3), v = matrix(7, 4);
  const [qf, kf, vf] = [file('q.json', q), file('k.json', k), file('v.json', v)];
  for (const [extra, scale] of [[[], 1 / Math.sqrt(3)], [['--scale', '0.25'], 0.25]]) {
    for (const backend of ['simd', 'scalar']) {
      const r = run('--q', qf, '--k', kf, '--v', vf, '--backend', backend, ...extra);
      assert.equal(r.status, 0, r.stderr);
      const got = JSON.parse(r.stdout), want = reference(q, k, v, scale);
      assertClose(got.weights, want.weights, `weights (${backend}, scale ${scale})`);
      assertClose(got.output, want.output, `output (${backend}, scale ${scale})`);
    }
  }
});

test('masks: causal rows sum to 1 over the allowed keys with blocked weights exactly 0; a fully blocked row is zeros', () => {
  const q = matrix(4, 2), k = matrix(4, 2), v = matrix(4, 3);
  const [qf, kf, vf] = [file('q4.json', q), file('k4.json', k), file('v4.json', v)];
  const causal = JSON.parse(run('--q', qf, '--k', kf, '--v', vf, '--mask', 'causal').stdout);
  const lower = q.map((_, t) => k.map((__, s) => s <= t));
  assertClose(causal.weights, reference(q, k, v, 1 / Math.sqrt(2), lower).weights, 'causal weights');
  causal.weights.forEach((row, t) => {
    row.forEach((w, s) => { if (s > t) assert.equal(w, 0, `blocked weight [${t}][${s}] is exactly 0`); });
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6, `row ${t} sums to 1`);
  });
  const allowed = [[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]];
  const masked = JSON.parse(run('--q', qf, '--k', kf, '--v', vf, '--mask', file('m.json', allowed)).stdout);
  assertClose(masked.weights, reference(q, k, v, 1 / Math.sqrt(2), allowed.map((r) => r.map(Boolean))).weights, 'file-mask weights');
  assert.deepEqual(masked.weights[1], [0, 0, 0, 0]);
  assert.deepEqual(masked.output[1], [0, 0, 0]);
});

test('bad files and flags: one line naming the file, row and column; exit 2', () => {
  const good = { q: file('gq.json', [[1, 0], [0, 1]]), k: file('gk.json', [[1, 0], [0, 1], [1, 1]]), v: file('gv.json', [[1], [2], [3]]) };
  const cases = [
    [['--q', file('nan.json', '[[1, "x"], [0, 1]]'), '--k', good.k, '--v', good.v], /^attnlab: 'nan\.json': row 0, column 1 must be a finite number, got '"x"'$/],
    [['--q', file('ragged.json', [[1, 0], [0]]), '--k', good.k, '--v', good.v], /^attnlab: 'ragged\.json': row 1 has 1 columns; row 0 has 2$/],
    [['--q', file('notjson.json', '[[1, 0],'), '--k', good.k, '--v', good.v], /^attnlab: 'notjson\.json': not JSON/],
    [['--q', file('huge.json', [[1e7, 0]]), '--k', good.k, '--v', good.v], /row 0, column 0 is 10000000: the kernel takes \|x\| <= 1e6$/],
    [['--q', good.q, '--k', file('k3.json', [[1, 0, 0]]), '--v', good.v], /^attnlab: 'k3\.json': keys have 3 columns, the queries \('gq\.json'\) 2: they must match \(D\)$/],
    [['--q', good.q, '--k', good.k, '--v', file('v2.json', [[1], [2]])], /^attnlab: 'v2\.json': values have 2 rows, the keys \('gk\.json'\) 3: they must match \(S\)$/],
    [['--q', good.q, '--k', good.k, '--v', good.v, '--mask', 'causal'], /--mask causal needs as many queries as keys \(T = S\), got T = 2, S = 3/],
    [['--q', good.q, '--k', good.k, '--v', good.v, '--mask', file('m2.json', [[1, 2, 0], [1, 1, 1]])], /'m2\.json': row 0, column 1 must be 0 or 1, got 2$/],
    [['--q', path.join(dir, 'missing.json'), '--k', good.k, '--v', good.v], /^attnlab: --q '.*missing\.json': no such file$/],
    // A misspelt causal is named as the word it was meant to be, not only as a missing file.
    [['--q', good.q, '--k', good.k, '--v', good.v, '--mask', 'casual'], /^attnlab: --mask 'casual': no such file \(for the causal mask, write --mask causal\)$/],
    [['--q', good.q, '--k', good.k], /^attnlab: --v FILE is required$/],
    [['--q', good.q, '--k', good.k, '--v', good.v, '--scale', '-1'], /^attnlab: --scale must be a number in \(0, 1000000\], got '-1'$/],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    const first = r.stderr.split('\n')[0];
    assert.match(first.replace(/'[^']*\/([^/']+)'/g, "'$1'"), message, first); // paths shown by their file name
  }
});
