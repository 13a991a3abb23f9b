// What every registered lab must do, one test name per lab (web/labs/registry.js): it loads with no
// console error and a way back and on; its settings survive a link; it embeds at 480x270 and
// 1280x720 without a scroll bar sideways; its charts export as PNG (2x) and SVG; its weights export and
// import back; axe finds no serious violation; and the offline single file trains it. A new lab gets
// all of this by its registry line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LABS, nextLab } from '../../web/labs/registry.js';
import { courseLine } from '../../web/labs/common.js';
import { openCheckpointIfAsked, openFile, openPage, setField, startLab, startOffline, waitConfigured, waitDrawn } from './support.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const AXE = path.join(REPO, 'node_modules', 'axe-core', 'axe.min.js');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

/** Trains `steps` steps from the page's Play button and waits until everything is drawn. */
async function train(page, steps) {
  await setField(page, 'steps', steps);
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 90000, polling: 100 });
  await waitDrawn(page);
}

async function save(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return { name: download.suggestedFilename(), file: await download.path() };
}

test('the home page lists every lab in course order, with its notebook and a link', async () => {
  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.goto(lab.url);
  await page.waitForSelector('.lab-card');
  const cards = await page.$$eval('.lab-card', (nodes) => nodes.map((n) => ({
    id: n.dataset.lab, href: n.querySelector('a').getAttribute('href'), text: n.textContent,
    // the card's picture is drawn: more than one colour on its canvas
    colours: (() => {
      const c = n.querySelector('canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
      return seen.size;
    })(),
  })));
  assert.deepEqual(cards.map((c) => c.id), LABS.map((l) => l.id));
  for (const [i, card] of cards.entries()) {
    assert.equal(card.href, `?lab=${LABS[i].id}`);
    assert.ok(card.text.includes(courseLine(LABS[i])), `${card.id}: names its notebook, or what it adds past them`);
    assert.ok(card.colours > 2, `${card.id}: its picture is drawn`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

// Each lab's checks share its page loads (a page load is most of a browser test's time, and the suite
// runs on a 2-core CI machine): one page is loaded, checked, exported, audited by axe, and then gives
// the link a fresh page opens; one embedded page is measured at two frame sizes.
for (const spec of LABS) {
  const query = `?lab=${spec.id}`;
  // The seed where the lab has one, else its first whole-number setting (the Pretrained lab's layer).
  const [field, value] = spec.properties.some((p) => p.name === 'seed') ? ['seed', 7] : [spec.properties.find((p) => p.type === 'int').name, 1];

  test(`${spec.id}: one page`, async (t) => {
    const { page, problems } = await openPage(lab, query);

    await t.test('loads with no console error, says which backend ran, links back and on', async () => {
      assert.match(await page.textContent('#badge-backend'), / ran$/);
      assert.equal(await page.getAttribute('#nav-home', 'href'), '?');
      const next = nextLab(spec);
      if (next) assert.equal(await page.getAttribute('#nav-next', 'href'), `?lab=${next.id}`);
      else assert.equal(await page.$('#nav-next'), null);
      assert.deepEqual(problems, []);
    });

    if (!spec.trainer) {
      // A lab without training has no loss chart and no weights: its first exportable figure instead.
      await t.test("a section's figure exports as PNG (2x) and SVG", async () => {
        // The first one on show (the Scaled lab holds its entropy chart back until its prediction is answered).
        const id = await page.$$eval('.lab-section .figure-toolbar button[id$="-png"]', (bs) => bs.find((b) => b.checkVisibility({ visibilityProperty: true }))
          .id.replace(/^export-/, '').replace(/-png$/, ''));
        const png = await save(page, `#export-${id}-png`);
        const bytes = readFileSync(png.file);
        assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
        const cssWidth = await page.$eval(`canvas[data-figure="${id}"]`, (c) => c.getBoundingClientRect().width);
        assert.ok(Math.abs(bytes.readUInt32BE(16) - 2 * cssWidth) <= 2, `PNG width ${bytes.readUInt32BE(16)} is twice ${cssWidth}`);
        const svg = readFileSync((await save(page, `#export-${id}-svg`)).file, 'utf8');
        const title = await page.$eval(`canvas[data-figure="${id}"]`, (c) => c.getAttribute('aria-label').split(':')[0]);
        assert.ok(svg.includes(title), `the SVG has the title '${title}' as text`);
        assert.deepEqual(problems, []);
      });
    } else {
      await t.test('the loss chart exports as PNG (2x) and SVG; weights export and import back', async () => {
        await train(page, 5);
        const png = await save(page, '#export-loss-png');
        const bytes = readFileSync(png.file);
        assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
        const cssWidth = await page.$eval('#chart-loss', (c) => c.getBoundingClientRect().width);
        assert.ok(Math.abs(bytes.readUInt32BE(16) - 2 * cssWidth) <= 2, `PNG width ${bytes.readUInt32BE(16)} is twice ${cssWidth}`);
        const svg = readFileSync((await save(page, '#export-loss-svg')).file, 'utf8');
        assert.ok(svg.startsWith('<svg') || svg.includes('<svg'), 'an SVG document');
        assert.ok(svg.includes(spec.metrics.loss.title), `the SVG has the title '${spec.metrics.loss.title}' as text`);
        const weights = await save(page, '#weights-export');
        assert.match(weights.name, /\.safetensors$/);
        await page.setInputFiles('#weights-file', weights.file);
        await page.waitForFunction(() => /^Loaded /.test(document.getElementById('weights-message').textContent), null, { timeout: 30000 });
        assert.deepEqual(problems, []);
      });
    }

    await t.test('axe finds no serious or critical violation', async () => {
      await waitDrawn(page);
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => (await window.axe.run(document, { iframes: false })).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`));
      assert.deepEqual(violations, []);
      assert.deepEqual(problems, []);
    });

    await t.test(`a link carries the settings (${field}) to a fresh page`, async () => {
      await setField(page, field, value);
      await page.waitForFunction((q) => location.search.includes(q), `${field}=${value}`);
      const other = await openPage(lab, new URL(page.url()).search);
      assert.equal(await other.page.inputValue(`#prop-${field}`), String(value));
      assert.ok(new URL(other.page.url()).searchParams.get('lab') === spec.id);
      assert.deepEqual([...problems, ...other.problems], []);
      await other.page.close();
    });
    await page.close();
  });

  test(`${spec.id}: embeds at 480x270 and 1280x720 with nothing cut off sideways`, async (t) => {
    const page = await lab.context.newPage();
    await page.setViewportSize({ width: 480, height: 270 });
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await page.goto(`${lab.url}${query}&embed=1`);
    await openCheckpointIfAsked(page);
    await waitConfigured(page);
    for (const [width, height] of [[480, 270], [1280, 720]]) {
      await t.test(`${width}x${height}`, async () => {
        await page.setViewportSize({ width, height });
        // The embed layout fits itself on resize (embed_layout.js); two frames let it settle.
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${overflow}px wider than the frame`);
        if (spec.trainer) assert.ok(await page.isVisible('#play'), 'the play button is on screen');
        else assert.ok(await page.isVisible('.lab-section'), 'the first section is on screen');
        assert.deepEqual(problems, []);
      });
    }
    await page.close();
  });
}

// The single file, built once for these tests (the single-file test builds its own copy in dist/).
let offline, singleFile;
before(async () => {
  singleFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'attnlab-single-')), 'attention-lab.html');
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build_single_file.mjs'), '--out', singleFile], { cwd: REPO, encoding: 'utf8' });
  offline = await startOffline();
});
after(async () => { await offline?.close(); });

for (const spec of LABS) {
  if (!spec.trainer) {
    test(`${spec.id}: the offline single file (file://, no network) computes every section`, async () => {
      const { page, problems } = await openFile(offline, `${pathToFileURL(singleFile).href}?lab=${spec.id}`);
      await waitConfigured(page);
      assert.match(await page.textContent('#badge-backend'), / ran$/);
      assert.deepEqual(offline.blocked, []);
      assert.deepEqual(problems, []);
      await page.close();
    });
    continue;
  }
  test(`${spec.id}: the offline single file (file://, no network) trains it`, async () => {
    const { page, problems } = await openFile(offline, `${pathToFileURL(singleFile).href}?lab=${spec.id}&steps=5`);
    await page.click('#play');
    await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 90000, polling: 100 });
    assert.equal(await page.getAttribute('#progress-text', 'data-step'), '5');
    assert.deepEqual(offline.blocked, []);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
