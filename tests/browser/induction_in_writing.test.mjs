// The model the student trained, opened in the Writing lab (issue 44, item 3): the Induction lab's export
// (tests/fixtures/induction_trained.safetensors, one .safetensors file) chosen as a file, at 1280x800 and
// 390x844. The page names it a TransformerLens model, writes a repeat's continuation greedily (an induction
// head copying), and its Circuits section on the repeated-random-tokens pair draws PyTorch's z grid
// (tests/fixtures/make_hooked_circuits_fixtures.py): layer 1's heads bring the answer back, layer 0's do not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, waitConfigured, waitDrawn, readHeatmap, screenshotIfAsked } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const EXPORT = path.join(FIXTURES, 'induction_trained.safetensors');
const { tensors: ref, metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, 'hooked_circuits_reference.safetensors')));
const m = (key) => metadata[`induction.${key}`];
// A repeat cut short: the model writes the rest of it (the same ids `attnlab generate` writes).
const PROMPT = '9 18 59 49 10 14 29 25 3 40 9 18 59';
const CONTINUATION = [49, 10, 14, 29, 25, 3, 40, 9];
const QUERY = `?lab=writing&text=${encodeURIComponent(PROMPT)}&temperature=0&maxNewTokens=8&shown=8&circuits=true`
  + `&clean=${encodeURIComponent(m('clean.text'))}&corrupt=${encodeURIComponent(m('corrupt.text'))}`
  + `&answer=${m('answer.text')}&wrong=${m('wrong.text')}&what=resid_pre,z`;

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`the Induction export in the Writing lab at ${viewport.width}x${viewport.height}: named, it copies the repeat, PyTorch's z patching grid`, async () => {
    const page = await lab.context.newPage();
    await page.setViewportSize(viewport);
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
    try {
      await page.goto(lab.url + QUERY);
      await page.waitForSelector('#open-files', { state: 'attached' });
      await page.setInputFiles('#open-files', [EXPORT]);
      await waitConfigured(page, 60000);
      assert.match(await page.textContent('#open-status'), /induction_trained\.safetensors/);
      await page.waitForFunction((w) => document.querySelector('[data-figure="written-ids"]')?.textContent.trim().endsWith(`written: ${w}`),
        CONTINUATION.join(' '), { timeout: 20000 });
      const grid = 'canvas[data-figure="circuits-patch-z"]';
      await page.waitForSelector(grid, { timeout: 60000 });
      await waitDrawn(page);
      const want = Array.from(ref['induction.patch.z'].data);
      const hi = Math.max(1, ...want.map(Math.abs));
      const got = (await readHeatmap(page, grid, 'diverging')).flat().map((v) => -hi + v * 2 * hi);
      got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.02 * hi, `z[${i}]: ${g.toFixed(3)} drawn, PyTorch ${want[i].toFixed(3)}`));
      assert.ok(want[2] + want[3] > 0.9 && Math.abs(want[0]) < 0.05, 'layer 1 carries the answer');
      const sum = await page.textContent('[data-figure="circuits-sum"]');
      assert.match(sum, new RegExp(`after the clean prompt: ${ref['induction.dla.logit_diff'].data[0].toFixed(3)}\\.`));
      // No final norm: the constant is b_U's difference, and no scale divides the parts.
      assert.match(sum, /\(with b_U, [+−-]\d+\.\d{2}\)\.$/);
      assert.doesNotMatch(await page.textContent('[data-figure="circuits-dla-what"]'), /hook_scale/);
      await screenshotIfAsked(page, `induction-in-writing-${viewport.width}.png`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}
