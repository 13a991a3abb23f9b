// Settings -> "copy link" -> the link in a new page -> the same settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const SETTINGS = { task: 'reverse', length: 12, vocab: 20, dModel: 48, heads: 3, positional: false, batch: 64, lr: 0.01, steps: 40, seed: 7, backend: 'scalar', palette: 'cividis' };

async function readSettings(page) {
  return page.evaluate((names) => Object.fromEntries(names.map((n) => {
    const e = document.getElementById(`prop-${n}`);
    return [n, e.type === 'checkbox' ? e.checked : e.value];
  })), [...Object.keys(SETTINGS), 'speed']);
}

test('settings survive copy link -> open link in a new page', async () => {
  const { page, problems } = await openPage(lab);
  for (const [name, value] of Object.entries(SETTINGS)) await setField(page, name, value);
  await page.selectOption('#prop-speed', '5');
  await page.click('#copy-link');
  const link = await page.getAttribute('#copy-link', 'data-link');
  assert.ok(link.startsWith(lab.url), link);
  assert.match(link, /[?&]lab=alignment/);
  assert.match(link, /[?&]heads=3/);
  const before = await readSettings(page);

  const other = await lab.context.newPage();
  await other.goto(link);
  await other.waitForFunction(() => document.getElementById('progress-text')?.dataset.step !== undefined);
  assert.deepEqual(await readSettings(other), before);
  assert.equal(before.task, 'reverse');
  assert.equal(before.positional, false);
  assert.equal(await other.textContent('#notices'), '', 'a good link raises no notice');
  // The model was built from the link: 3 heads, and the scalar kernel ran.
  await other.waitForFunction(() => document.querySelectorAll('#heatmap-select option').length === 4);
  assert.equal(await other.textContent('#badge-backend'), 'scalar ran');
  assert.deepEqual(problems, []);
  await other.close();
  await page.close();
});
