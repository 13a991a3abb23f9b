// Values that are explored, not typed (issue 29): layer, head, query token and tokens shown are steppers
// (− and + beside the field, the arrow keys in it) and Scaled's token count a slider with its value in
// view; each step answers at once (the figure follows, no Enter), stops at the open model's last layer
// and head, and the link carries the value under the same name as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, waitConfigured, waitDrawn, dropFiles, TINY_BERT_FILES, TINY_MARIAN_FILES } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

async function openWith(query, files) {
  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.goto(`${lab.url}${query}`);
  await page.waitForSelector('#open-drop');
  await dropFiles(page, files);
  await waitConfigured(page);
  await waitDrawn(page);
  return { page, problems };
}

/** The − and + of a stepper field. */
const more = (name) => `.control[data-property="${name}"] .step-button[aria-label$="one more"]`;
const less = (name) => `.control[data-property="${name}"] .step-button[aria-label$="one less"]`;
const labelOf = (page, figure) => page.getAttribute(`canvas[data-figure="${figure}"]`, 'aria-label');

test('pretrained: layer, head and query token step with − and + (and the arrow keys), at once, up to the model\'s last layer and head', async () => {
  const { page, problems } = await openWith('?lab=pretrained', TINY_BERT_FILES);
  for (const name of ['layer', 'head', 'token']) {
    assert.equal(await page.getAttribute(`#prop-${name}`, 'role'), 'spinbutton', `${name} is a spin button`);
    assert.equal(await page.isVisible(more(name)), true, `${name} has a + button`);
  }
  // The tiny BERT has 2 layers x 2 heads: + stops at 1.
  assert.equal(await page.isDisabled(less('layer')), true, 'no layer below 0');
  await page.click(more('layer'));
  await page.waitForFunction(() => /layer 1, head 0/.test(document.querySelector('canvas[data-figure="head-lines"]')?.getAttribute('aria-label') ?? ''));
  assert.equal(await page.inputValue('#prop-layer'), '1');
  assert.equal(await page.isDisabled(more('layer')), true, 'layer 1 is the last of 2');
  assert.equal(await page.getAttribute('#prop-layer', 'aria-valuemax'), '1');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '1');
  await page.click(more('head'));
  await page.waitForFunction(() => /layer 1, head 1/.test(document.querySelector('canvas[data-figure="head-lines"]')?.getAttribute('aria-label') ?? ''));
  assert.equal(await page.isDisabled(more('head')), true, 'head 1 is the last of 2');
  // The arrow keys in the field step as the buttons do.
  await page.focus('#prop-layer');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => /layer 0, head 1/.test(document.querySelector('canvas[data-figure="head-lines"]')?.getAttribute('aria-label') ?? ''));
  assert.equal(await page.inputValue('#prop-layer'), '0');
  // The query token of the neuron view: + moves to the next token.
  const before = await page.textContent('[data-figure="neuron-what"]');
  assert.match(before, /query token 1 /);
  await page.click(more('token'));
  await page.waitForFunction(() => /query token 2 /.test(document.querySelector('[data-figure="neuron-what"]')?.textContent ?? ''));
  await page.waitForFunction(() => new URLSearchParams(location.search).get('token') === '2');
  // Typing still works, and a link opens with the value under the same name.
  await setField(page, 'token', 4);
  await page.waitForFunction(() => /query token 4 /.test(document.querySelector('[data-figure="neuron-what"]')?.textContent ?? ''));
  assert.deepEqual(problems, []);
  await page.close();
});

test('translation: tokens shown, layer and head step at once; the layer stops at the decoder\'s last', async () => {
  const { page, problems } = await openWith('?lab=translation&maxLength=32&crossView=one', TINY_MARIAN_FILES);
  assert.match(await labelOf(page, 'cross-heatmap'), /layer 0, head 0/);
  await page.click(more('layer'));
  await page.waitForFunction(() => /layer 1, head 0/.test(document.querySelector('canvas[data-figure="cross-heatmap"]')?.getAttribute('aria-label') ?? ''));
  assert.equal(await page.isDisabled(more('layer')), true, 'layer 1 is the last of 2');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '1');
  // Tokens shown: from 0 (all) + shows the first generated token, + again the first two.
  const rows = async () => (await page.$eval('canvas[data-figure="cross-heatmap"]', (c) => JSON.parse(c.dataset.layout))).rows;
  const all = await rows();
  assert.ok(all > 2, `the translation has ${all} tokens`);
  await page.click(more('shown'));
  await page.waitForFunction(() => JSON.parse(document.querySelector('canvas[data-figure="cross-heatmap"]').dataset.layout).rows === 1);
  await page.click(more('shown'));
  await page.waitForFunction(() => JSON.parse(document.querySelector('canvas[data-figure="cross-heatmap"]').dataset.layout).rows === 2);
  assert.equal(await page.inputValue('#prop-shown'), '2');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('shown') === '2');
  for (const name of ['viewLayer', 'viewHead', 'head']) assert.equal(await page.getAttribute(`#prop-${name}`, 'role'), 'spinbutton', `${name} is a spin button`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('scaled: the token count is a slider with its value beside it; moving it redraws the step-by-step matrices at once', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled');
  assert.equal(await page.getAttribute('#prop-tokens', 'type'), 'range');
  assert.equal(await page.textContent('.control[data-property="tokens"] .slider-value'), '5');
  // The rows of the first input matrix (Q): one per token.
  const rows = () => page.$eval('[data-figure="inputs"] [data-matrix]', (m) => m.querySelectorAll('tr[data-row]').length);
  assert.equal(await rows(), 5);
  await page.focus('#prop-tokens');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.textContent('.control[data-property="tokens"] .slider-value'), '6');
  await page.waitForFunction(() => document.querySelector('[data-figure="inputs"] [data-matrix]').querySelectorAll('tr[data-row]').length === 6);
  await page.waitForFunction(() => new URLSearchParams(location.search).get('tokens') === '6');
  assert.deepEqual(problems, []);
  await page.close();
});
