// The Writing lab's Circuits section in the browser (issue 44), at 1280x800 and 390x844, on the tiny
// GPT-2 (tests/fixtures/gpt2_tiny/hub) with the prompt pair of tests/fixtures/make_circuits_fixtures.py:
// the attribution's sum line is PyTorch's logit difference; each patching grid is drawn with the clean
// prompt's tokens (or the heads) on its x axis, its pixels PyTorch's grid; a cell's value shows on
// hover and by keyboard (arrow keys), named with its layer and token; a corrupted prompt of another
// token length is refused in one sentence, and the figures come back with the pair mended.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, openPage, waitDrawn, setField, readHeatmap, screenshotIfAsked } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
const { tensors: ref, metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, 'circuits_reference.safetensors')));
const CLEAN = metadata['gpt2.clean.text'], CORRUPT = metadata['gpt2.corrupt.text'];
const ANSWER = metadata['gpt2.answer.text'].trim(), WRONG = metadata['gpt2.wrong.text'].trim();
const L = 2, H = 2, T = ref['gpt2.clean.ids'].data.length;
const QUERY = `?lab=writing&circuits=true&clean=${encodeURIComponent(CLEAN)}&corrupt=${encodeURIComponent(CORRUPT)}`
  + `&answer=${ANSWER}&wrong=${WRONG}&what=resid_pre,z,pattern,attn_out,mlp_out`;

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const grid = (site) => `canvas[data-figure="circuits-patch-${site}"]`;

/** The grid's cells from their pixels: the diverging palette's place mapped back onto the figure's range, ±max(1, |x|). */
async function readGrid(page, site, want) {
  const hi = Math.max(1, ...want.map(Math.abs)), lo = -hi;
  return (await readHeatmap(page, grid(site), 'diverging')).map((row) => row.map((v) => lo + v * (hi - lo)));
}

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`Circuits at ${viewport.width}x${viewport.height}: PyTorch's difference and grids, tokens on the axes, values on hover and by keyboard; a pair of other lengths refused in one sentence`, async () => {
    const { page, problems } = await openPage(lab, QUERY, { viewport });
    try {
      await page.waitForSelector(grid('mlp_out'), { timeout: 60000 });
      await waitDrawn(page);
      const sum = await page.textContent('[data-figure="circuits-sum"]');
      const diff = ref['gpt2.dla.logit_diff'].data[0];
      assert.match(sum, new RegExp(`^logit\\(“␣?${ANSWER}”\\) − logit\\(“␣?${WRONG}”\\) after the clean prompt: ${diff.toFixed(3)}\\. `
        + `The parts below add up to ${diff.toFixed(3)}`));
      for (const site of ['resid_pre', 'z', 'pattern', 'attn_out', 'mlp_out']) {
        const layout = JSON.parse(await page.getAttribute(grid(site), 'data-layout'));
        const byHead = site === 'z' || site === 'pattern';
        assert.deepEqual([layout.rows, layout.cols], [L, byHead ? H : T], site);
        assert.match(await page.getAttribute(grid(site), 'aria-label'), new RegExp(`\\(blocks\\.\\{L\\}\\.(attn\\.)?hook_${site === 'resid_pre' ? 'resid_pre' : site === 'z' ? 'z' : site === 'pattern' ? 'pattern' : site}\\)`));
        const want = Array.from(ref[`gpt2.patch.${site}`].data);
        const got = (await readGrid(page, site, want)).flat();
        const range = Math.max(...want.map(Math.abs), 1);
        got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.02 * range, `${site}[${i}]: ${g.toFixed(3)} drawn, PyTorch ${want[i].toFixed(3)}`));
      }
      // The x axis of a grid by position: the clean prompt's tokens, as drawn.
      const labels = JSON.parse(await page.getAttribute(grid('resid_pre'), 'data-label-boxes'));
      const xTicks = labels.filter((b) => b.axis === 'x').map((b) => b.text);
      assert.equal(xTicks.length, T);
      assert.deepEqual(xTicks.slice(0, 4), ['W', 'he', 'n', '␣cat']);
      await screenshotIfAsked(page.locator('#section-circuits'), `circuits-${viewport.width}.png`);

      // Hover: the cell's layer, position and token, and its value (PyTorch's, to the tooltip's 3 decimals).
      const canvas = page.locator(grid('resid_pre'));
      await canvas.scrollIntoViewIfNeeded();
      const layout = JSON.parse(await canvas.getAttribute('data-layout'));  // in canvas pixels
      const box = await canvas.boundingBox();
      const scale = box.width / (await canvas.evaluate((c) => c.width));  // screen px per canvas px
      const row = 1, col = 8;
      await page.mouse.move(box.x + (layout.x + (col + 0.5) * layout.cellW) * scale, box.y + (layout.y + (row + 0.5) * layout.cellH) * scale);
      const tip = `${grid('resid_pre')} + .tooltip`;
      await page.waitForFunction(([sel, r, c]) => { const t = document.querySelector(sel); return !t.hidden && t.dataset.row === String(r) && t.dataset.col === String(c); }, [tip, row, col]);
      const value = ref['gpt2.patch.resid_pre'].data[row * T + col];
      assert.equal(await page.textContent(tip), `layer 1 · position 8 ␣toy · recovered ${value.toFixed(3)}`);
      // Keyboard: the canvas takes the focus, and an arrow key moves the cell the tooltip reads.
      await page.mouse.move(0, 0);
      await canvas.focus();
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((sel) => !document.querySelector(sel).hidden, tip);
      const keyed = await page.$eval(tip, (t) => [Number(t.dataset.row), Number(t.dataset.col), t.textContent]);
      assert.match(keyed[2], new RegExp(`^layer ${keyed[0]} · position ${keyed[1]} .* · recovered -?\\d\\.\\d{3}$`));

      // A corrupted prompt of another length: one sentence, the section's, then the figures back.
      await setField(page, 'corrupt', `${CORRUPT} and`);
      await page.waitForFunction(() => document.getElementById('section-circuits').dataset.state === 'error');
      const said = (await page.textContent('#section-circuits .section-status')).trim();
      assert.match(said, /^the clean prompt is 11 tokens and the corrupted one 12: patching copies an activation from one run into the same place of the other/);
      assert.equal(said.split(/(?<=\.)\s/).length, 1, said);
      await setField(page, 'corrupt', CORRUPT);
      await page.waitForFunction(() => document.getElementById('section-circuits').dataset.state === 'shown');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}
