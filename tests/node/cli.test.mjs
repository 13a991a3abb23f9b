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
import { PALETTES } from '../../web/shared/palette.js';
import { BUILDS } from '../../web/labs/builds/registry.js';

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

function diagonalRows(values, n) {
  // values[row][col] in 0..1 -> the rows whose brightest cell is not on the diagonal.
  return values.map((row, r) => (row.indexOf(Math.max(...row)) === r ? null : `row ${r}: ${row.map((v) => v.toFixed(2))}`)).filter(Boolean);
}

test('copy, defaults, seed 0: >= 99% and diagonal mass >= 0.7; the PNG and SVG are the page\'s figure', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-'));
  const png = path.join(dir, 'copy.png'), svg = path.join(dir, 'copy.svg');
  const r = attnlab('train', '--task', 'copy', '--seed', '0', '--backend', 'simd', '--json', '--png', png, '--svg', svg);
  assert.equal(r.code, 0, r.stderr);
  const f = finalRecord(r.stdout);
  assert.equal(f.steps, 200);
  assert.equal(f.backend, 'simd128');
  assert.ok(f.accuracy >= 0.99, `accuracy ${f.accuracy}`);
  assert.ok(f.patternMass >= 0.7, `diagonal mass ${f.patternMass}`);
  assert.equal(f.attention.length, 16);
  // The SVG: title, axis titles, token ticks, and one rect per cell (16 x 16, in row order).
  const text = readFileSync(svg, 'utf8');
  for (const label of ['Head mean — step 200', 'key = input position', 'query = output position', '1.0']) {
    assert.ok(text.includes(label), `the SVG has "${label}"`);
  }
  const cells = [...text.matchAll(/<rect x="[^"]*" y="[^"]*" width="(\d+)" height="\1" fill="rgb\((\d+),(\d+),(\d+)\)"/g)]
    .filter((m) => Number(m[1]) > 4).map((m) => valueOf(Number(m[2]), Number(m[3]), Number(m[4])));
  assert.equal(cells.length, 256);
  const grid = Array.from({ length: 16 }, (_, row) => cells.slice(row * 16, row * 16 + 16));
  assert.deepEqual(diagonalRows(grid, 16), []);
  grid.forEach((row, i) => assert.ok(Math.abs(row[i] - f.attention[i][i]) < 0.02, 'cells match the matrix'));
  // The PNG is that figure at 2x.
  const image = PNG.sync.read(readFileSync(png));
  const [, width, height] = text.match(/<svg[^>]*width="(\d+)" height="(\d+)"/);
  assert.deepEqual([image.width, image.height], [2 * Number(width), 2 * Number(height)]);
});

test('without a browser, --png falls back to the bare heatmap and says so; its pixels show the diagonal', () => {
  const png = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-')), 'copy.png');
  const r = spawnSync(process.execPath, [CLI, 'train', '--task', 'copy', '--seed', '0', '--json', '--png', png],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, CHROMIUM: '/nonexistent/chromium' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /warning: no browser to draw the labelled figure .* heatmap cells and colour bar only/);
  const f = finalRecord(r.stdout);
  // 16 x 16 cells of 24 px at a 16 px margin (web/cli/png.mjs).
  const image = PNG.sync.read(readFileSync(png));
  const grid = Array.from({ length: 16 }, (_, row) => Array.from({ length: 16 }, (_, col) => {
    const x = 16 + col * 24 + 12, y = 16 + row * 24 + 12, o = (y * image.width + x) * 4;
    return valueOf(image.data[o], image.data[o + 1], image.data[o + 2]);
  }));
  assert.deepEqual(diagonalRows(grid, 16), []);
  grid.forEach((row, i) => assert.ok(Math.abs(row[i] - f.attention[i][i]) < 0.02, 'pixels match the matrix'));
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

test('bad flags get one line on stderr (no usage) and exit code 2', () => {
  for (const [args, message] of [
    [['train', '--task', 'sort'], "--task must be one of copy, reverse, pointer, got 'sort'"],
    [['train', '--task', 'copy', '--steps', 'ten'], "--steps must be an integer in [1, 100000], got 'ten' (plain decimal digits)"],
    [['train', '--task', 'copy', '--seed', '-1'], "--seed must be an integer in [0, 4294967295], got '-1'"],
    [['train', '--task', 'copy', '--backend', 'cuda'], "--backend must be one of auto, webgpu, simd, scalar, got 'cuda'"],
    [['train', '--task', 'copy', '--frobnicate'], "unknown flag '--frobnicate'"],
    [['train', '--task', 'copy', '--unique-keys'], '--unique-keys applies to --task pointer only'],
    [['fly'], "unknown command 'fly'"],
    [['pretrained', '--frobnicate'], "unknown flag '--frobnicate' for attnlab pretrained (it takes --text --pair --hide-special --layer --head --average --ablate --backend --model --json --png --svg)"],
    [['generate', '--temperature', '3'], "--temperature must be a number in [0, 2], got '3'"],
    [['heads', '--role-seed', 'x'], "--role-seed must be an integer in [0, 4294967295], got 'x' (plain decimal digits)"],
  ]) {
    const r = attnlab(...args);
    assert.equal(r.code, 2, `${args.join(' ')} exits 2`);
    assert.equal(r.stderr, `attnlab: ${message}\n`, `${args.join(' ')}: one line, as docs/cli.md promises`);
    assert.equal(r.stdout, '');
  }
  const r = attnlab('train', '--task', 'copy', '--heads', '5');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /dModel \(32\) must be divisible by heads \(5\)/);
});

test('attnlab says what it has: no arguments prints the usage; --help and labs list every command (check too)', () => {
  const bare = attnlab();
  assert.equal(bare.code, 0, bare.stderr);
  assert.equal(bare.stderr, '');
  const help = attnlab('--help');
  assert.equal(bare.stdout, help.stdout, 'no arguments: the same usage as --help');
  for (const name of ['check', 'attention', 'pretrained', 'translate', 'generate', 'attribute', 'patch', 'heads']) {
    assert.match(help.stdout, new RegExp(`^       attnlab ${name} \\.\\.\\.$`, 'm'), `--help lists attnlab ${name}`);
    assert.match(help.stdout, new RegExp(`\\(attnlab ${name} --help\\)`), `--help says where ${name}'s flags are`);
  }
  const labs = attnlab('labs');
  assert.equal(labs.code, 0);
  assert.doesNotMatch(labs.stdout, /on the page only/);
  assert.match(labs.stdout, /^writing +Writing .*\[no training: attnlab generate --help, attnlab attribute --help, attnlab patch --help, attnlab heads --help\]$/m);
  // attnlab check, a command of no one lab: each build on its lab's line (the scaled lab has two).
  assert.match(labs.stdout, /^scaled +Scaled .*\[check your build: attnlab check --build simple-attention, attnlab check --build self-attention\]$/m);
  for (const build of BUILDS) {
    const line = labs.stdout.split('\n').find((l) => l.startsWith(`${build.lab} `));
    assert.ok(line?.includes(`attnlab check --build ${build.name}`), `attnlab labs names ${build.name} on the ${build.lab} line: ${line}`);
  }
  assert.doesNotMatch(labs.stdout, /^(pretrained|translation|writing) .*check your build/m, 'a lab without a build names none');
  // --json: the same list as one record; anything else is refused by name.
  const json = attnlab('labs', '--json');
  assert.equal(json.code, 0, json.stderr);
  const { labs: records } = JSON.parse(json.stdout);
  assert.deepEqual(records.map((r) => r.id), labs.stdout.trim().split('\n').map((l) => l.split(' ')[0]));
  const writing = records.find((r) => r.id === 'writing');
  assert.deepEqual([writing.trains, writing.commands], [false, ['generate', 'attribute', 'patch', 'heads']]);
  assert.ok(records.find((r) => r.id === 'scaled').also[0].includes('attnlab check --build simple-attention'));
  assert.deepEqual(records.find((r) => r.id === 'alignment').commands, ['train', 'evaluate']);
  const bad = attnlab('labs', '--all');
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, "attnlab: attnlab labs takes --json alone, not '--all'\n");
});

test('attnlab train without --task trains the task --help names as the default (copy), as the page starts', () => {
  assert.match(attnlab('--help').stdout, /--task copy\|reverse\|pointer\n[^-]*\(default copy\)/);
  const r = attnlab('train', '--steps', '1', '--json', '--backend', 'scalar');
  assert.equal(r.code, 0, r.stderr);
  const start = JSON.parse(r.stdout.split('\n')[0]);
  assert.equal(start.type, 'start');
  assert.equal(start.task, 'copy');
});

test('heads are numbered from 0 in the CLI\'s text, its JSON and the page\'s labels', async () => {
  const r = attnlab('train', '--task', 'copy', '--steps', '5', '--backend', 'scalar', '--json');
  const final = JSON.parse(r.stdout.trim().split('\n').at(-1));
  const text = attnlab('train', '--task', 'copy', '--steps', '5', '--backend', 'scalar').stdout;
  assert.match(text, new RegExp(`best head ${final.bestHead}: ${final.bestHeadMass.toFixed(3)}`), 'the text says the JSON\'s bestHead');
  // The page's words for the same evaluation (the lab's own panel function) say the same head.
  const { alignmentLab } = await import('../../web/labs/01_alignment.js');
  const panel = alignmentLab.views.evaluation({ task: 'copy' }, { ...final, step: 5, samples: final.evaluatedOn, headMass: Float32Array.from(final.headMass) });
  assert.match(panel.headline, new RegExp(`^Best head ${final.bestHead} puts`));
  assert.deepEqual(panel.heads.map((h) => h.label), final.headMass.map((_, h) => `head ${h}`));
});
