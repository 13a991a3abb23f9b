// The headless lab: `attnlab train ...` reaches issue 4's targets on fixed seeds, writes a heatmap PNG
// that shows the pattern, reproduces a run from its seed, and refuses bad flags with exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { PALETTES } from '../../web/ui/palette.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');

function attnlab(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function finalRecord(stdout) {
  const lines = stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.some((l) => l.type === 'progress'), 'progress lines come before the final record');
  const final = lines.at(-1);
  assert.equal(final.type, 'final');
  return final;
}

// The value (0..1) whose viridis colour is nearest to an RGB pixel.
function valueOf(r, g, b) {
  const lut = PALETTES.viridis;
  let best = 0, bestDistance = Infinity;
  for (let i = 0; i < 256; i++) {
    const d = (lut[3 * i] - r) ** 2 + (lut[3 * i + 1] - g) ** 2 + (lut[3 * i + 2] - b) ** 2;
    if (d < bestDistance) { bestDistance = d; best = i; }
  }
  return best / 255;
}

test('copy, defaults, seed 0: >= 99% and diagonal mass >= 0.7; the PNG shows the diagonal', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-'));
  const png = path.join(dir, 'copy.png');
  const r = attnlab('train', '--task', 'copy', '--seed', '0', '--backend', 'simd', '--json', '--png', png);
  assert.equal(r.code, 0, r.stderr);
  const f = finalRecord(r.stdout);
  assert.equal(f.steps, 200);
  assert.equal(f.backend, 'simd128');
  assert.ok(f.accuracy >= 0.99, `accuracy ${f.accuracy}`);
  assert.ok(f.patternMass >= 0.7, `diagonal mass ${f.patternMass}`);
  assert.equal(f.attention.length, 16);
  // The PNG: 16 x 16 cells of 24 px at a 16 px margin. The diagonal cell is the brightest in its row.
  const image = PNG.sync.read(readFileSync(png));
  for (let row = 0; row < 16; row++) {
    const values = [];
    for (let col = 0; col < 16; col++) {
      const x = 16 + col * 24 + 12, y = 16 + row * 24 + 12, o = (y * image.width + x) * 4;
      values.push(valueOf(image.data[o], image.data[o + 1], image.data[o + 2]));
    }
    assert.equal(values.indexOf(Math.max(...values)), row, `row ${row}: ${values.map((v) => v.toFixed(2))}`);
    assert.ok(Math.abs(values[row] - f.attention[row][row]) < 0.02, 'pixels match the matrix');
  }
});

test('reverse, defaults, seed 0: >= 99% and anti-diagonal mass >= 0.7', () => {
  const f = finalRecord(attnlab('train', '--task', 'reverse', '--seed', '0', '--json').stdout);
  assert.ok(f.accuracy >= 0.99, `accuracy ${f.accuracy}`);
  assert.ok(f.patternMass >= 0.7, `anti-diagonal mass ${f.patternMass}`);
});

test('pointer, keys with replacement, seed 0: within 0.02 of the Bayes ceiling, best head >= 0.85', () => {
  const f = finalRecord(attnlab('train', '--task', 'pointer', '--seed', '0', '--json').stdout);
  assert.ok(f.bayesCeiling < 0.75, `ceiling ${f.bayesCeiling}: duplicates make certainty impossible`);
  assert.ok(f.accuracy >= f.bayesCeiling - 0.02, `accuracy ${f.accuracy} vs ceiling ${f.bayesCeiling}`);
  assert.ok(f.bestHeadMass >= 0.85, `best head ${f.bestHeadMass}`);
});

test('pointer, unique keys, seed 0: >= 99% and best head >= 0.95 on the correct key', () => {
  const f = finalRecord(attnlab('train', '--task', 'pointer', '--unique-keys', '--seed', '0', '--json').stdout);
  assert.equal(f.bayesCeiling, 1);
  assert.ok(f.accuracy >= 0.99, `accuracy ${f.accuracy}`);
  assert.ok(f.bestHeadMass >= 0.95, `best head ${f.bestHeadMass}`);
});

test('a seed reproduces a run bit for bit on the same backend', () => {
  // Every line but the timing: losses, accuracies, evaluation, attention matrix.
  const run = (seed) => attnlab('train', '--task', 'reverse', '--steps', '30', '--every', '1', '--seed', seed,
    '--backend', 'scalar', '--json').stdout.trim().split('\n').map((line) => {
    const { stepsPerSecond, ...rest } = JSON.parse(line);
    return JSON.stringify(rest);
  });
  const [a, b, c] = [run('5'), run('5'), run('6')];
  assert.equal(a.length, 32);
  a.forEach((line, i) => assert.ok(line === b[i], `seed 5 twice: line ${i} differs`));
  assert.ok(a.some((line, i) => line !== c[i]), 'seeds 5 and 6 give different runs');
});

test('bad flags get the usage text and exit code 2', () => {
  for (const [args, message] of [
    [['train'], '--task is required'],
    [['train', '--task', 'sort'], "--task must be one of copy, reverse, pointer, got 'sort'"],
    [['train', '--task', 'copy', '--steps', 'ten'], "--steps must be an integer in [1, 100000], got 'ten'"],
    [['train', '--task', 'copy', '--seed', '-1'], "--seed must be an integer in [0, 4294967295], got '-1'"],
    [['train', '--task', 'copy', '--backend', 'cuda'], "--backend must be one of auto, webgpu, simd, scalar, got 'cuda'"],
    [['train', '--task', 'copy', '--frobnicate'], "unknown flag '--frobnicate'"],
    [['train', '--task', 'copy', '--unique-keys'], '--unique-keys applies to --task pointer only'],
    [['fly'], "unknown command 'fly'"],
  ]) {
    const r = attnlab(...args);
    assert.equal(r.code, 2, `${args.join(' ')} exits 2`);
    assert.ok(r.stderr.includes(message), `${args.join(' ')}: ${r.stderr.split('\n')[0]}`);
    assert.ok(r.stderr.includes('usage: attnlab train'), 'prints the usage');
  }
  const r = attnlab('train', '--task', 'copy', '--heads', '5');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /dModel \(32\) must be divisible by heads \(5\)/);
});
