// `attnlab attribute|patch --png/--svg` (issue 44, item 4): the page's own figures of a circuits run, drawn
// in headless Chromium, on the Induction lab's trained export (tests/fixtures/induction_trained.safetensors)
// and its repeated-random-tokens pair. Each grid's cells are the record's numbers in the page's diverging
// scale, in row order (layers down, heads or positions across); the PNG is the SVG's figure at 2x; one
// figure is FILE itself, several FILE-NAME beside it; a --png in a missing folder is refused before the
// model is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { FIXTURES, torchReference } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { colorAt } from '../../web/shared/palette.js';
import { tokenLabels } from '../../web/labs/token_labels.js';
import { visibleToken } from '../../web/labs/visible_text.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT, timeout: 120_000 });
const { file } = torchReference('hooked_circuits_reference.safetensors');
const meta = (key) => file.metadata[key];
const m = 'induction';
const model = ['--model', path.join(FIXTURES, meta(`${m}.file`)), '--answer', meta(`${m}.answer.text`),
  '--wrong', meta(`${m}.wrong.text`), '--json'];

/** An SVG's heatmap cells (the rects of its `cells` group), in drawing order -> their [r, g, b]. */
function cellColours(svg) {
  const group = /<g class="cells">(.*?)<\/g>/.exec(svg);
  assert.ok(group, 'the SVG has a group of heatmap cells');
  return [...group[1].matchAll(/<rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"/g)].map((x) => [Number(x[1]), Number(x[2]), Number(x[3])]);
}

/** The grid's cells against the record's values in the diverging scale of [-reach, reach]. */
function assertCells(svg, values, reach, what) {
  const flat = values.flat();
  const colours = cellColours(svg);
  assert.equal(colours.length, flat.length, `${what}: one cell per value`);
  flat.forEach((v, i) => {
    const want = colorAt('diverging', v, -reach, reach);
    assert.ok(want.every((c, k) => Math.abs(c - colours[i][k]) <= 1), `${what} cell ${i}: ${colours[i]} is not ${want} (${v})`);
  });
}

function assertTwice(pngFile, svg) {
  const image = PNG.sync.read(readFileSync(pngFile));
  const [, width, height] = svg.match(/<svg[^>]*width="(\d+)" height="(\d+)"/);
  assert.deepEqual([image.width, image.height], [2 * Number(width), 2 * Number(height)], `${pngFile} is the SVG at 2x`);
}

test('attnlab patch --png/--svg: a grid per site, FILE-SITE beside FILE, its cells the record\'s recovered fractions', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-circuits-'));
  const png = path.join(dir, 'patch.png'), svg = path.join(dir, 'patch.svg');
  const out = run('patch', '--clean', meta(`${m}.clean.text`), '--corrupt', meta(`${m}.corrupt.text`), ...model,
    '--what', 'resid_pre,z', '--png', png, '--svg', svg);
  assert.equal(out.status, 0, out.stderr);
  const [record, ...written] = out.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(written.map((w) => w.figure), [`wrote ${dir}/patch-resid_pre.png (the page's figure at 2x)`,
    `wrote ${dir}/patch-resid_pre.svg`, `wrote ${dir}/patch-z.png (the page's figure at 2x)`, `wrote ${dir}/patch-z.svg`]);
  assert.ok(!existsSync(png), 'two figures: no FILE itself');
  // The positions' ticks as the page writes them: a space shown as ␣, a repeated token numbered by its place.
  const positions = tokenLabels(record.clean.tokens.map(visibleToken));
  for (const [site, xTicks] of [['resid_pre', positions], ['z', ['0', '1']]]) {
    const text = readFileSync(path.join(dir, `patch-${site}.svg`), 'utf8');
    const grid = record.grids[site].values;
    const reach = Math.max(1, ...grid.flat().map(Math.abs));
    assertCells(text, grid, reach, site);
    for (const label of [`${site} (${record.grids[site].hook.replace('{L}', 'L')})`, 'layer', ...xTicks.slice(0, 3)]) {
      assert.ok(text.includes(`>${label.replace('<', '&lt;').replace('>', '&gt;')}<`), `${site}: the SVG writes "${label}"`);
    }
    assertTwice(path.join(dir, `patch-${site}.png`), text);
  }
  // One site: FILE itself.
  const one = path.join(dir, 'z-only.png');
  const single = run('patch', '--clean', meta(`${m}.clean.text`), '--corrupt', meta(`${m}.corrupt.text`), ...model,
    '--what', 'z', '--png', one);
  assert.equal(single.status, 0, single.stderr);
  assert.ok(existsSync(one), 'one figure: FILE');
});

test('attnlab attribute --svg: FILE-heads (each head\'s share, written in its cell) and FILE-layers', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-circuits-'));
  const svg = path.join(dir, 'dla.svg');
  const out = run('attribute', '--text', meta(`${m}.clean.text`), ...model, '--svg', svg);
  assert.equal(out.status, 0, out.stderr);
  const r = JSON.parse(out.stdout.trim().split('\n')[0]);
  const heads = readFileSync(path.join(dir, 'dla-heads.svg'), 'utf8');
  const reach = Math.max(1e-6, ...r.heads.flat().map(Math.abs));
  assertCells(heads, r.heads, reach, 'heads');
  for (const x of r.heads.flat()) assert.ok(heads.includes(`>${x.toFixed(1)}<`), `the cell writes ${x.toFixed(1)}`);
  const layers = readFileSync(path.join(dir, 'dla-layers.svg'), 'utf8');
  for (const label of ['Direct share per layer', 'embed', '0 attn', '1 attn']) {
    assert.ok(layers.includes(`>${label}<`), `the bars name "${label}"`);
  }
});

test('attnlab patch --png in a folder that does not exist: one line, exit 2, before the model is read', () => {
  const out = run('patch', '--clean', meta(`${m}.clean.text`), '--corrupt', meta(`${m}.corrupt.text`), ...model,
    '--png', path.join(tmpdir(), 'no-such-folder-attnlab', 'p.png'));
  assert.equal(out.status, 2, out.stderr);
  assert.match(out.stderr, /^attnlab: --png '.*p\.png': the folder '.*no-such-folder-attnlab' does not exist\n$/);
});
