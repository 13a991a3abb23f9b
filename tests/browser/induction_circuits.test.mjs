// The Induction lab's Circuits section in the browser (issue 44), at 1280x800 and 390x844, on the model
// tests/fixtures/make_induction_fixtures.py trained (induction_trained.safetensors, opened with the
// Weights panel as a student opens an export): with the fields empty, the repeated pair is cut from the
// probe sequence and patching one layer-1 head's z brings back most of the answer, named in words; with
// the pair of tests/fixtures/make_hooked_circuits_fixtures.py typed in, the z and resid_pre grids' pixels
// are PyTorch's, a cell's value shows on hover and by keyboard, a corrupted prompt of another length is
// refused in one sentence, and the downloaded cache (safetensors and JSON) is `attnlab patch --cache`'s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLab, openPage, waitDrawn, setField, readHeatmap, screenshotIfAsked } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures');
const MODEL = path.join(FIXTURES, 'induction_trained.safetensors');
const { tensors: ref, metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, 'hooked_circuits_reference.safetensors')));
const PAIR = Object.fromEntries(['clean', 'corrupt', 'answer', 'wrong'].map((k) => [k, metadata[`induction.${k}.text`]]));
const T = ref['induction.clean.ids'].data.length;

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const grid = (site) => `canvas[data-figure="circuits-patch-${site}"]`;
const shown = (page) => page.waitForFunction(() => document.getElementById('section-circuits').dataset.state === 'shown',
  null, { timeout: 60000 });

/** The grid's cells from their pixels: the diverging palette's place mapped back onto the figure's range, ±max(1, |x|). */
async function readGrid(page, site, want) {
  const hi = Math.max(1, ...want.map(Math.abs)), lo = -hi;
  return (await readHeatmap(page, grid(site), 'diverging')).map((row) => row.map((v) => lo + v * (hi - lo))).flat();
}

/** What `attnlab patch` writes for the pair: {json: the record, cache: the --cache safetensors' tensors}. */
function cliPatch() {
  const cache = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-induction-circuits-')), 'cache.safetensors');
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), 'patch', '--model', MODEL,
    '--clean', PAIR.clean, '--corrupt', PAIR.corrupt, '--answer', PAIR.answer, '--wrong', PAIR.wrong,
    '--what', 'resid_pre,z', '--json', '--cache', cache], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return { cache: parseSafetensors(readFileSync(cache)).tensors };
}

async function downloaded(page, id) {
  const button = page.locator(`#${id}`);
  await button.scrollIntoViewIfNeeded();
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

for (const viewport of SCREENS) {
  test(`Induction circuits at ${viewport.width}x${viewport.height}: the repeated pair's answer carried by a layer-1 head; PyTorch's grids, values on hover and by keyboard; a pair of other lengths refused in one sentence; the cache downloaded is the CLI's`, async () => {
    const { page, problems } = await openPage(lab, '?lab=induction&seed=0', { viewport });
    try {
      await page.setInputFiles('#weights-file', MODEL);
      await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 20000 });
      // The section follows the imported model: it names the file.
      await page.waitForFunction(() => /^The model from induction_trained\.safetensors\./
        .test(document.querySelector('[data-figure="circuits-pair"]')?.textContent ?? ''), null, { timeout: 60000 });
      await shown(page);
      await waitDrawn(page);

      // The repeated pair from the probe sequence, and the head that carries its answer, in words.
      const pair = await page.textContent('[data-figure="circuits-pair"]');
      assert.match(pair, /^The model from induction_trained\.safetensors\. Clean: [\d ]+; corrupted: [\d ]+; answer \d+, wrong \d+ \(the repeated pair cut from the probe sequence/);
      const carrier = await page.textContent('[data-figure="circuits-carrier"]');
      const m = /^Patching head (\d)\.(\d)'s output \(blocks\.\1\.attn\.hook_z\) alone brings back (-?\d+)% of the clean answer\. The strongest induction head by its attention score is (\d\.\d) \(/.exec(carrier);
      assert.ok(m, carrier);
      assert.equal(m[1], '1', `the head carrying the answer is in layer 1: ${carrier}`);
      assert.ok(Number(m[3]) >= 40, carrier);
      assert.equal(m[4], `${m[1]}.${m[2]}`, `the head patching names is the strongest induction head: ${carrier}`);
      await screenshotIfAsked(page.locator('#section-circuits'), `induction-circuits-${viewport.width}.png`);

      // The fixture's pair: the grids drawn are PyTorch's.
      for (const [name, value] of Object.entries(PAIR)) await setField(page, name, value);
      const line = `Clean: ${PAIR.clean}; corrupted: ${PAIR.corrupt}; answer ${PAIR.answer}, wrong ${PAIR.wrong}.`;
      await page.waitForFunction((want) => document.querySelector('[data-figure="circuits-pair"]')?.textContent
        .endsWith(want), line, { timeout: 60000 });
      await shown(page);
      await waitDrawn(page);
      for (const site of ['resid_pre', 'z']) {
        const layout = JSON.parse(await page.getAttribute(grid(site), 'data-layout'));
        assert.deepEqual([layout.rows, layout.cols], [2, site === 'z' ? 2 : T], site);
        const want = Array.from(ref[`induction.patch.${site}`].data);
        const got = await readGrid(page, site, want);
        const range = Math.max(1, ...want.map(Math.abs));
        got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.02 * range, `${site}[${i}]: ${g.toFixed(3)} drawn, PyTorch ${want[i].toFixed(3)}`));
      }
      const xTicks = JSON.parse(await page.getAttribute(grid('resid_pre'), 'data-label-boxes'))
        .filter((b) => b.axis === 'x').map((b) => b.text);
      assert.equal(xTicks.length, T);
      // Each id as the tokenizer writes it after others (a space first, shown ␣), numbered by its place where it repeats.
      assert.deepEqual(xTicks.slice(0, 3), ['<start>', '␣9₁', '␣18₂']);

      // Hover: the cell's layer, position and token, and PyTorch's value to the tooltip's 3 decimals.
      const canvas = page.locator(grid('resid_pre'));
      await canvas.scrollIntoViewIfNeeded();
      const layout = JSON.parse(await canvas.getAttribute('data-layout'));
      const box = await canvas.boundingBox();
      const scale = box.width / (await canvas.evaluate((c) => c.width));
      const row = 1, col = 8;
      await page.mouse.move(box.x + (layout.x + (col + 0.5) * layout.cellW) * scale, box.y + (layout.y + (row + 0.5) * layout.cellH) * scale);
      const tip = `${grid('resid_pre')} + .tooltip`;
      await page.waitForFunction(([sel, r, c]) => { const t = document.querySelector(sel); return !t.hidden && t.dataset.row === String(r) && t.dataset.col === String(c); }, [tip, row, col]);
      const value = ref['induction.patch.resid_pre'].data[row * T + col];
      assert.equal(await page.textContent(tip), `layer 1 · position 8 ␣${PAIR.clean.split(' ')[col - 1]} · recovered ${value.toFixed(3)}`);
      // Keyboard: an arrow key moves the cell the tooltip reads.
      await page.mouse.move(0, 0);
      await canvas.focus();
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((sel) => !document.querySelector(sel).hidden, tip);
      const keyed = await page.$eval(tip, (t) => [Number(t.dataset.row), Number(t.dataset.col), t.textContent]);
      assert.match(keyed[2], new RegExp(`^layer ${keyed[0]} · position ${keyed[1]} \\S+ · recovered -?\\d\\.\\d{3}$`));

      // The clean run's cache, downloaded as safetensors and as JSON: the CLI's numbers under the same names.
      const { cache } = cliPatch();
      const st = await downloaded(page, 'circuits-cache-safetensors');
      assert.equal(st.name, 'induction_trained-cache.safetensors');
      const pageCache = parseSafetensors(st.bytes).tensors;
      assert.deepEqual(Object.keys(pageCache).sort(), Object.keys(cache).sort());
      assert.ok('blocks.1.attn.hook_z' in pageCache && 'blocks.0.hook_resid_pre' in pageCache);
      for (const [name, t] of Object.entries(cache)) {
        assert.deepEqual(pageCache[name].shape, t.shape, name);
        assert.deepEqual(Buffer.from(pageCache[name].data.buffer, pageCache[name].data.byteOffset, pageCache[name].data.byteLength),
          Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength), `${name}: the page's float32 bits are the CLI's`);
      }
      const js = await downloaded(page, 'circuits-cache-json');
      assert.equal(js.name, 'induction_trained-cache.json');
      const json = JSON.parse(js.bytes.toString('utf8'));
      const z = json['blocks.1.attn.hook_z'];
      assert.deepEqual(z.shape, cache['blocks.1.attn.hook_z'].shape);
      assert.deepEqual(z.values.flat(Infinity), Array.from(cache['blocks.1.attn.hook_z'].data));
      const scores = json['blocks.0.attn.hook_attn_scores'].values.flat(Infinity);
      assert.ok(scores.includes(null), 'the masked scores are null in the JSON');

      // A corrupted prompt of another length: one sentence, then the figures back with the pair mended.
      await setField(page, 'corrupt', `${PAIR.corrupt} 7`);
      await page.waitForFunction(() => document.getElementById('section-circuits').dataset.state === 'error', null, { timeout: 30000 });
      const said = (await page.textContent('#section-circuits .section-status')).trim();
      assert.match(said, new RegExp(`^the clean prompt is ${T} tokens and the corrupted one ${T + 1}: `));
      assert.equal(said.split(/(?<=\.)\s/).length, 1, said);
      await setField(page, 'corrupt', PAIR.corrupt);
      await shown(page);

      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways}px`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}
