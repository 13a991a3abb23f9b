// Switch heads off in the Writing lab (issue 39, item 4) with the tiny GPT-2: a click on a head of the
// section's grid writes the text again with it off (the greedy text becomes PyTorch's with that head's z
// zeroed: tests/fixtures/make_ablation_fixtures.py), the next-token line says the likeliest token's logit
// before and after, and Head roles' induction experiment gives the loss on the repeated half with every
// head (attnlab heads's number) and with the top induction heads off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, waitConfigured, TINY_GPT2, TINY_GPT2_FILES } from './support.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(TINY_GPT2, '..', '..');
const ablation = parseSafetensors(readFileSync(path.join(FIXTURES, 'ablation_reference.safetensors'))).tensors;
const { metadata } = parseSafetensors(readFileSync(path.join(FIXTURES, 'gpt2_tiny_reference.safetensors')));

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('Writing: a click switches head 0.1 off, the text is PyTorch\'s greedy one with it zeroed; the induction experiment', async () => {
  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${lab.url}?lab=writing&text=${encodeURIComponent(metadata['prompt.text'])}&temperature=0&maxNewTokens=12&shown=12`);
  await page.waitForSelector('#open-files', { state: 'attached' });
  await page.setInputFiles('#open-files', TINY_GPT2_FILES);
  await waitConfigured(page, 60000);
  // Before: the whole model's greedy text.
  await page.waitForFunction((w) => document.querySelector('[data-figure="written-ids"]')?.textContent.trim().endsWith(`written: ${w}`),
    Array.from(ablation['gpt2.none.greedy.ids'].data).join(' '), { timeout: 20000 });
  const grid = page.locator('canvas[data-figure="ablate-grid"]');
  await grid.scrollIntoViewIfNeeded();
  const cells = JSON.parse(await grid.getAttribute('data-cells'));
  const cell = cells.find((c) => c.layer === 0 && c.head === 1);
  const k = await grid.evaluate((c) => c.getBoundingClientRect().width / parseFloat(c.style.width));
  await grid.click({ position: { x: k * (cell.x + cell.w / 2), y: k * (cell.y + cell.h / 2) } });
  await page.waitForFunction(() => document.getElementById('prop-ablate').value === '0.1');
  await page.waitForFunction(() => document.querySelector('[data-figure="ablate-off"]')?.textContent.startsWith('Heads switched off (1): 0.1'), null, { timeout: 20000 });
  // The written text: the ids PyTorch's greedy writes with head 0.1 zeroed, through the page's own writer.
  const want = Array.from(ablation['gpt2.l0h1.greedy.ids'].data);
  const writtenIds = () => page.$eval('[data-figure="written-ids"]', (n) => n.textContent.split('written:')[1].trim().split(' ').filter(Boolean).map(Number));
  await page.waitForFunction((w) => document.querySelector('[data-figure="written-ids"]')?.textContent.trim().endsWith(`written: ${w}`), want.join(' '), { timeout: 20000 })
    .catch(() => {});
  assert.deepEqual(await writtenIds(), want);
  assert.notDeepEqual(want, Array.from(ablation['gpt2.none.greedy.ids'].data));
  const text = await page.textContent('[data-figure="ablate-change"]');
  assert.match(text, /^With the heads off: .+\. The whole model's likeliest next token “.+”: logit -?\d+\.\d{3} → -?\d+\.\d{3} \([+−]\d+\.\d{3}\) with the heads off\. With every head: /, text);
  assert.match(page.url(), /[?&]ablate=0\.1(&|$)/);
  // The induction experiment beside the head roles: the loss with every head is attnlab heads's.
  const cli = spawnSync(process.execPath, ['web/cli/attnlab.mjs', 'heads', '--model', TINY_GPT2, '--json', '--backend', 'simd'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const heads = JSON.parse(cli.stdout);
  const induction = await page.textContent('[data-figure="roles-induction-off"]');
  const m = /loss on the repeated half (\d+\.\d{3}) with every head; (\d+\.\d{3}) with the 3 highest induction heads switched off \((\d+\.\d+), (\d+\.\d+), (\d+\.\d+);/.exec(induction);
  assert.ok(m, induction);
  assert.equal(m[1], heads.loss.secondCopy.toFixed(3));
  assert.notEqual(m[2], m[1]);
  // The three heads named are the three with the highest induction scores.
  const ranked = heads.induction.flatMap((row, l) => row.map((s, h) => [s, `${l}.${h}`])).sort((a, b) => b[0] - a[0]).slice(0, 3).map(([, n]) => n);
  assert.deepEqual(m.slice(3, 6), ranked);
  assert.deepEqual(problems, []);
  await page.close();
});
