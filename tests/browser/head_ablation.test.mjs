// Switch heads off on the page (issue 39, item 4), in the Pretrained lab with the tiny BERT: a click on a
// head of the "Switch heads off" grid switches it off; the [MASK] guesses become PyTorch's with that
// head's z zeroed (tests/fixtures/make_ablation_fixtures.py), the whole model's first guess's logit is
// shown before and after, the link carries ablate=, a second click switches it back on; a head the
// model lacks is refused in the section under its field. Screenshots at 1280x800 and 390x844.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, waitConfigured, setField, screenshotIfAsked, TINY_BERT, TINY_BERT_FILES } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(TINY_BERT, '..', '..');
const ablation = parseSafetensors(readFileSync(path.join(FIXTURES, 'ablation_reference.safetensors'))).tensors;
const bert = parseSafetensors(readFileSync(path.join(FIXTURES, 'bert_tiny_reference.safetensors')));
const MASK = Number(bert.metadata['pair.mask_index']);
const T = bert.tensors['pair.input_ids'].data.length;
const vocab = readFileSync(path.join(TINY_BERT, 'vocab.txt'), 'utf8').split('\n');

// The reference's [MASK] row of a case: its logits, the five likeliest token strings, and its argmax.
function maskRow(c) {
  const all = ablation[`bert.${c}.mlm_logits`].data, V = all.length / T;
  const row = Array.from(all.subarray(MASK * V, (MASK + 1) * V));
  const order = row.map((x, id) => [x, id]).sort((a, b) => b[0] - a[0]);
  return { row, top5: order.slice(0, 5).map(([, id]) => vocab[id]), first: order[0][1] };
}

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`a click switches a head off: the [MASK] guesses and the first guess's logit are PyTorch's with it zeroed (${viewport.width}x${viewport.height})`, async () => {
    const page = await lab.context.newPage();
    await page.setViewportSize(viewport);
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${lab.url}?lab=pretrained&text=${encodeURIComponent('the cat sat on the [MASK] .')}&pair=${encodeURIComponent('a dog ran .')}`);
    await page.waitForSelector('#open-drop');
    await page.setInputFiles('#open-files', TINY_BERT_FILES);
    await waitConfigured(page);
    const grid = page.locator('canvas[data-figure="ablate-grid"]');
    await grid.scrollIntoViewIfNeeded();
    assert.equal(await page.textContent('[data-figure="ablate-off"]'), 'Every head is on: click a head above to switch it off.');
    const none = maskRow('none');
    await page.waitForFunction((first) => (document.querySelector('canvas[data-figure="ablate-guesses-0"]')?.getAttribute('aria-label') ?? '').includes(`: ${first},`), none.top5[0]);

    // Click layer 1, head 0.
    const cells = JSON.parse(await grid.getAttribute('data-cells'));
    const cell = cells.find((c) => c.layer === 1 && c.head === 0);
    await grid.click({ position: { x: cell.x + cell.w / 2, y: cell.y + cell.h / 2 } });
    await page.waitForFunction(() => document.getElementById('prop-ablate').value === '1.0');
    await page.waitForFunction(() => /logit/.test(document.querySelector('[data-figure="ablate-change-0"]')?.textContent ?? ''), null, { timeout: 15000 });
    assert.match(page.url(), /[?&]ablate=1\.0(&|$)/);
    assert.match(await page.textContent('[data-figure="ablate-off"]'), /^Heads switched off \(1\): 1\.0 /);
    assert.match(await grid.getAttribute('aria-label'), /Switched off: layer 1, head 0\./);
    // The guesses with the head off: PyTorch's five, in its order.
    const off = maskRow('l1h0');
    const label = await page.getAttribute('canvas[data-figure="ablate-guesses-0"]', 'aria-label');
    const shown = /: (.*)$/.exec(label.split('. ')[0])[1].split(', ').map((s) => s.replace(/ \d+\.\d%$/, ''));
    assert.deepEqual(shown, off.top5, label);
    // The whole model's first guess, its logit before and after (3 decimals: PyTorch's to 5e-4 at worst).
    const text = await page.textContent('[data-figure="ablate-change-0"]');
    const m = /first guess “(.+)”: logit (-?\d+\.\d{3}) → (-?\d+\.\d{3}) \(([+−])(\d+\.\d{3})\)/.exec(text);
    assert.ok(m, text);
    assert.equal(m[1], vocab[none.first]);
    assert.ok(Math.abs(Number(m[2]) - none.row[none.first]) <= 5.1e-4, `before ${m[2]} vs ${none.row[none.first]}`);
    assert.ok(Math.abs(Number(m[3]) - off.row[none.first]) <= 5.1e-4, `after ${m[3]} vs ${off.row[none.first]}`);
    assert.ok(text.startsWith(`With every head: ${none.top5[0]} `), text);
    if (viewport.width === 1280) {
      await screenshotIfAsked(page.locator('[data-section="ablate"], #section-ablate').first(), 'ablate-1280.png').catch(() => {});
    } else {
      await screenshotIfAsked(page, 'ablate-390.png');
    }

    // A second click switches it back on: the whole model's guesses again.
    await grid.click({ position: { x: cell.x + cell.w / 2, y: cell.y + cell.h / 2 } });
    await page.waitForFunction(() => document.getElementById('prop-ablate').value === '');
    await page.waitForFunction(() => document.querySelector('[data-figure="ablate-off"]')?.textContent.startsWith('Every head is on'));
    assert.doesNotMatch(page.url(), /ablate=/);

    // A head this model does not have: refused in the section, under its field, naming it.
    await setField(page, 'ablate', '0.5');
    const section = page.locator('.lab-section', { has: page.locator('#prop-ablate') });
    await page.waitForFunction(() => document.querySelector('.lab-section:has(#prop-ablate)')?.dataset.state === 'error');
    assert.match(await section.locator('.section-status').textContent(), /head 0\.5: this model's heads are 0 to 1 in each layer/);
    // A malformed list: the field says so.
    await setField(page, 'ablate', '1-0');
    assert.match(await page.textContent('#prop-ablate-error'), /Heads switched off: '1-0' is not a head: write layer\.head/);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
