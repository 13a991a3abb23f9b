// The page loads from the served URL, shows the module version and the backends, and nothing fails:
// no console error, no uncaught exception, no failed request, no HTTP error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

test('page loads, shows version and backends, with no console error or failed request', async () => {
  const { page, problems } = await openPage(lab);
  await page.waitForFunction(() => document.getElementById('badge-version').dataset.version);
  const version = await page.getAttribute('#badge-version', 'data-version');
  assert.match(version, /^\d+\.\d+\.\d+/);
  assert.match(await page.textContent('#badge-version'), /SIMD128 build|scalar build/);
  assert.match(await page.textContent('#badge-cpu'), /scalar.*SIMD128/);
  assert.match(await page.textContent('#badge-backend'), /ran$/);
  assert.ok((await page.textContent('#badge-reason')).length > 0, 'the badge says why this backend');
  // Every control has a label, and the lab's intro explains what to expect.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('#lab input, #lab select')]
    .filter((e) => !e.labels?.length && !e.getAttribute('aria-label')).map((e) => e.id || e.name));
  assert.deepEqual(unlabelled, []);
  assert.match(await page.textContent('#intro'), /diagonal/);
  // Train a few steps too, so the worker's path is exercised before we judge the console.
  await page.click('#step');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.step === '1');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the site works under a sub-path (/attention-lab/) and a task in the link brings its step count', async () => {
  const { startServer } = await import('../../scripts/serve.mjs');
  const server = await startServer({ port: 0, base: '/attention-lab/' });
  try {
    const page = await lab.context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
    await page.goto(`${server.url}?task=reverse&heads=2`);
    await page.waitForFunction(() => document.getElementById('progress-text')?.dataset.step !== undefined);
    assert.ok(page.url().startsWith(server.url), page.url());
    assert.equal(await page.inputValue('#prop-heads'), '2');
    assert.equal(await page.inputValue('#prop-steps'), '250', 'reverse trains 250 steps, as in the notebook');
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await server.close();
  }
});
