// The home page's words (issue 38, item 5), at a laptop's 1280x800 and a phone's 390x844: it says how
// many labs train, counted (four since the Induction lab; it said "Each lab trains", when four did not), that a
// Hub download is a request the student makes (it said "nothing is sent anywhere"), and the Writing lab's card says it goes past the
// course's notebooks (it said "Follows course notebook beyond the notebooks: GPT-2"). The words are on
// the first screen, inside it, in boxes that do not clip them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LABS } from '../../web/labs/registry.js';
import { startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const size of SCREENS) {
  test(`home at ${size.width}x${size.height}: what the labs do, counted; what leaves the machine; each card's place in the course`, async () => {
    const page = await lab.context.newPage();
    await page.setViewportSize(size);
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await page.goto(lab.url);
    await page.waitForSelector('.lab-card');
    const what = await page.textContent('#home-what');
    const trains = LABS.filter((l) => l.trainer).length, opens = LABS.filter((l) => !l.trainer && l.open).length;
    assert.equal(trains, 4);
    assert.equal(what, 'Four labs train a small attention model in your browser and draw what it learns; one computes attention step by step '
      + 'on inputs you edit; three open a pretrained model and show every layer and head at work.');
    assert.equal(opens, 3);
    const privacy = await page.textContent('#home-privacy');
    assert.doesNotMatch(privacy, /nothing is sent anywhere/);
    assert.match(privacy, /nothing is uploaded/);
    assert.match(privacy, /a model opened by its Hugging Face Hub id is downloaded from huggingface\.co/);
    const notes = await page.$$eval('.lab-card', (cards) => Object.fromEntries(cards.map((c) => [c.dataset.lab, c.querySelector('.lab-card-notebook').textContent])));
    assert.equal(notes.writing, 'Beyond the course notebooks: a decoder-only model (GPT-2, Llama, Qwen 2) writing token by token');
    assert.equal(notes.count, 'Follows course notebook 05_one_query_more_twos_than_fours');
    assert.equal(notes.induction, 'Beyond the course notebooks: a two-layer transformer trained live: induction heads and their phase change');
    for (const [id, note] of Object.entries(notes)) assert.doesNotMatch(note, /notebook beyond|null|undefined/, `${id}: ${note}`);
    // The two sentences are read where they are: on the first screen, inside its width, not cut by their boxes.
    const boxes = await page.evaluate(() => ['#home-what', '#home-privacy'].map((s) => {
      const e = document.querySelector(s);
      const r = e.getBoundingClientRect();
      return { s, top: r.top, bottom: r.bottom, left: r.left, right: r.right, clipped: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1 };
    }));
    for (const b of boxes) {
      assert.ok(b.top >= 0 && b.bottom <= size.height && b.left >= 0 && b.right <= size.width, `${b.s}: ${JSON.stringify(b)} in ${size.width}x${size.height}`);
      assert.equal(b.clipped, false, b.s);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}
