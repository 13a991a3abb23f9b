// Questions that take an answer (issue 28; issue 39, item 3). Notebook 02's six questions sit in the
// Lookup lab's sections whose figures answer them; each takes a choice, a number or a shape, says right
// or wrong and why beside its Check button (a live region, in view after answering, at a laptop's and a
// phone's size), and only then opens its explanation. A training lab asks "predict, then run" beside
// Play (the Lookup under its retrieval grid); the Scaled, Pretrained, Translation and Writing labs in the
// section of their main action. A class's link: answers=false shows the questions alone, questions=false none of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage, setField, startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', 'axe-core', 'axe.min.js');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const questionsOf = (page) => page.$$eval('.lab-section', (sections) => sections.map((s) => ({
  section: s.dataset.section,
  numbers: [...s.querySelectorAll('.questions .question')].map((q) => q.querySelector('strong').textContent.trim()),
})).filter((s) => s.numbers.length));

/**
 * Gives an answer as a student does (a choice's index, or text typed in the field), presses Check, and
 * reads what the page shows: the verdict, where it is, and the explanation's state.
 */
async function answer(page, id, given) {
  const question = `#${id}`;
  if (typeof given === 'number') await page.check(`${question} input[type=radio] >> nth=${given}`);
  else await page.fill(`${question} input.question-input`, given);
  await page.click(`${question} button.question-check`);
  return page.$eval(question, (q) => {
    const feedback = q.querySelector('.question-feedback');
    const box = feedback.getBoundingClientRect();
    const check = q.querySelector('.question-check').getBoundingClientRect();
    const explanation = q.querySelector('details.answer');
    return {
      state: q.dataset.state,
      text: feedback.textContent,
      live: feedback.getAttribute('role') === 'status' && feedback.getAttribute('aria-live') === 'polite',
      inView: box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight && box.left >= 0 && box.right <= window.innerWidth,
      // Beside the button that asked: on its row or just under it.
      besideCheck: Math.abs(box.top - check.top) < 120,
      explanation: explanation.hidden ? 'hidden' : explanation.open ? 'open' : 'closed',
    };
  });
}

for (const size of SCREENS) {
  test(`Lookup at ${size.width}x${size.height}: notebook 02's questions take a shape, a number or a choice, say right or wrong and why, then explain`, async () => {
    const { page, problems } = await openPage(lab, '?lab=lookup', { viewport: size });
    await page.waitForSelector('.question');
    assert.deepEqual(await questionsOf(page),
      [{ section: 'hard', numbers: ['3', '3.1', '3.2'] }, { section: 'soft', numbers: ['4.1'] }, { section: 'mha', numbers: ['6.1', '6.2'] }, { section: 'trained', numbers: ['6.4'] }]);
    // Nothing explained before an answer: every explanation hidden, every field labelled.
    assert.deepEqual(await page.$$eval('.questions .question details.answer', (ds) => ds.map((d) => d.hidden && !d.checkVisibility())), Array(7).fill(true));
    assert.equal(await page.$$eval('.question-input', (inputs) => inputs.filter((i) => !document.querySelector(`label[for="${i.id}"]`)?.textContent).length), 0);
    assert.equal(await page.$$eval('.question-choices', (sets) => sets.filter((f) => !f.querySelector('legend')?.textContent).length), 0);

    // 6.2, a shape: the heads averaged is wrong, and says why; the notebook's shape, written another way, is right.
    let r = await answer(page, 'question-6-2', '4, 1, 100');
    assert.equal(r.state, 'wrong');
    assert.match(r.text, /^Not quite: \(4, 1, 100\)\. That is the shape with the heads averaged \(the default, average_attn_weights=True\)/);
    assert.ok(r.live && r.inView && r.besideCheck, JSON.stringify(r));
    assert.equal(r.explanation, 'open');
    r = await answer(page, 'question-6-2', 'torch.Size([4, 1, 1, 100])');
    assert.equal(r.state, 'right');
    assert.match(r.text, /^Right: \(4, 1, 1, 100\)\. Batch 4, heads 1, queries 1, keys 100/);
    assert.ok(r.inView && r.besideCheck, JSON.stringify(r));
    assert.match(await page.textContent('#question-6-2 details.answer'), /\(4, 1, 1, 100\), one map per head/);

    // 3.1: text that is not a shape is not judged; the message says what was read, and nothing opens.
    r = await answer(page, 'question-3-1', '(100, hundred)');
    assert.equal(r.state, 'unread');
    assert.equal(r.text, 'Could not read a shape from “(100, hundred)”: read 100, then “hundred”, which is not a whole number. Write the sizes separated by commas, e.g. (4, 10, 5).');
    assert.equal(r.explanation, 'hidden');
    assert.ok(r.inView, JSON.stringify(r));
    r = await answer(page, 'question-3-1', '100 x 784');
    assert.equal(r.state, 'wrong');
    assert.match(r.text, /^Not quite: \(100, 784\)\. That is V/);
    assert.equal(r.explanation, 'open');
    assert.match(await page.textContent('#question-3-1 details.answer'), /K is 100 × 100: one key per database image/);

    // 3.2, a number; 4.1, a choice.
    r = await answer(page, 'question-3-2', '100');
    assert.match(r.text, /^Not quite: 100\. That would need every key to equal the query/);
    r = await answer(page, 'question-3-2', '1');
    assert.equal(r.state, 'right');
    assert.ok(r.inView, JSON.stringify(r));
    r = await answer(page, 'question-4-1', 1);
    assert.equal(r.state, 'wrong');
    assert.match(r.text, /^Not quite: softmax picking one image at random\. Softmax never picks/);
    assert.ok(r.inView && r.besideCheck, JSON.stringify(r));
    r = await answer(page, 'question-4-1', 0);
    assert.equal(r.state, 'right');
    assert.match(r.text, /^Right: an average of many different images\./);
    assert.ok(r.inView, JSON.stringify(r));
    // 3, the notebook's "(why?)" about one-hot keys: the softmax note is true but not the reason.
    r = await answer(page, 'question-3', 1);
    assert.equal(r.state, 'wrong');
    assert.match(r.text, /^Not quite: one-hot scores already sum to 1, so no softmax is needed\. True \(the notebook's note\), but/);
    r = await answer(page, 'question-3', 0);
    assert.equal(r.state, 'right');
    assert.match(await page.textContent('#question-3 details.answer'), /two equal keys would both score 1/);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`Alignment at ${size.width}x${size.height}: predict, then run: the question beside Play is judged beside its Check and follows the task`, async () => {
    const { page, problems } = await openPage(lab, '?lab=alignment', { viewport: size });
    await page.waitForSelector('.prediction .question');
    // In the Training panel, under Play and its progress, on the first screen.
    const place = await page.$eval('.transport', (t) => {
      const q = t.querySelector('.prediction').getBoundingClientRect(), play = t.querySelector('#play').getBoundingClientRect();
      return { under: q.top >= play.bottom && q.top - play.bottom < 120, inView: q.bottom <= window.innerHeight };
    });
    assert.deepEqual(place, { under: true, inView: true });
    assert.match(await page.textContent('#question-predict-copy'), /Predict, then run: Copy: which picture will the attention make once trained\?/);
    let r = await answer(page, 'question-predict-copy', 2);
    assert.equal(r.state, 'wrong');
    assert.match(r.text, /^Not quite: a uniform grey\. Grey means every output position takes the same average/);
    assert.ok(r.live && r.inView && r.besideCheck, JSON.stringify(r));
    r = await answer(page, 'question-predict-copy', 0);
    assert.equal(r.state, 'right');
    assert.match(r.text, /^Right: a diagonal\. Copy writes input token t at output position t/);
    // A prediction's explanation is there, folded: the heatmap the run draws stays on the screen.
    assert.equal(r.explanation, 'closed');
    assert.ok(await page.$eval('#heatmap-main', (h) => h.getBoundingClientRect().top < window.innerHeight), 'the heatmap still starts on the screen');
    assert.ok(r.inView, JSON.stringify(r));
    // Another task asks its own question, unanswered.
    await setField(page, 'task', 'reverse');
    await page.waitForSelector('#question-predict-reverse');
    assert.equal(await page.$eval('#question-predict-reverse', (q) => q.dataset.state), 'unanswered');
    r = await answer(page, 'question-predict-reverse', 0);
    assert.match(r.text, /^Not quite: a diagonal\. A diagonal is copy's picture/);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('the One query lab asks which digits the query will attend to before it trains; the Lookup asks under its retrieval grid', async () => {
  // At a database size of 300 (the link's): 3.1's and 3.2's answers count the database the figures show.
  const lookup = await openPage(lab, '?lab=lookup&databaseSize=300', { viewport: SCREENS[1] });
  await lookup.page.waitForSelector('#section-pairs .prediction #question-predict-lookup');
  // On a phone's first screen under the grid (issue 45, item 4: it began at y = 1070 under eight rows of
  // pairs; the grid keeps four pairs a row, at smaller digits).
  await lookup.page.waitForSelector('canvas[data-figure="pairs-grid"][data-drawn]');
  const firstScreen = await lookup.page.$eval('#section-pairs .prediction', (q) => {
    window.scrollTo(0, 0);
    const grid = document.querySelector('canvas[data-figure="pairs-grid"]').getBoundingClientRect();
    return { underGrid: q.getBoundingClientRect().top >= grid.bottom, startsInView: q.getBoundingClientRect().top + 40 < window.innerHeight };
  });
  assert.deepEqual(firstScreen, { underGrid: true, startsInView: true });
  const w = await answer(lookup.page, 'question-predict-lookup', 1);
  assert.match(w.text, /^Not quite: a blur of all digits\. That is the untrained layer/);
  assert.ok(w.inView && w.besideCheck, JSON.stringify(w));
  await lookup.page.waitForFunction(() => /K 300 × 300,/.test(document.querySelector('[data-figure="hard-shapes"]')?.textContent ?? ''));
  let k = await answer(lookup.page, 'question-3-1', '(100, 100)');
  assert.match(k.text, /^Not quite: \(100, 100\)\. K holds one key per database image \(300 rows\)/);
  k = await answer(lookup.page, 'question-3-1', '300 x 300');
  assert.equal(k.state, 'right');
  assert.match(await lookup.page.textContent('#question-3-1 details.answer'), /K is 300 × 300.*The notebook's database has 100 images/);
  assert.match(await lookup.page.textContent('#question-3-2'), /how many of the 300 scores in QKᵀ are 1\?/);
  assert.equal(await lookup.page.$$eval('.transport .prediction', (n) => n.length), 0, 'asked once, where the lab says');
  assert.deepEqual(lookup.problems, []);
  await lookup.page.close();

  const { page, problems } = await openPage(lab, '?lab=count');
  await page.waitForSelector('.transport #question-predict-count');
  const r = await answer(page, 'question-predict-count', 0);
  assert.equal(r.state, 'right');
  assert.match(r.text, /^Right: the 2s and 4s\. They are the only digits that change the answer/);
  // Notebook 05's question in the build checker takes a shape.
  const e = await answer(page, 'question-Embedding', '(4, 10)');
  assert.match(e.text, /^Not quite: \(4, 10\)\. That is x: the embedding adds an axis/);
  assert.deepEqual(problems, []);
  await page.close();
});

// The labs without training ask before their main action (issue 39, item 3): the Scaled lab under
// section 1's figures, before the student unticks the scale; the checkpoint labs before a checkpoint is
// open (the question waits in its section: tests/node/predictions.test.mjs checks on the tiny
// checkpoints that each right answer is what the lab then shows). One page, four links, at a phone's size.
const EXPLORING = [
  { id: 'scaled', section: 'steps', holds: ['entropy', 'saturation'], wrong: [1, /^Not quite: flatter: closer to an even 1\/5 for every key\. Flatter would need the scores to shrink/],
    right: [0, /^Right: sharper: one key takes almost all the weight\. Each score q·k adds up d_k products/] },
  { id: 'pretrained', section: 'model', wrong: [0, /^Not quite: no: only on itself and the words before it\. That is a causal mask/],
    right: [1, /^Right: yes: on every token, before and after it\. BERT's encoder has no causal mask/] },
  { id: 'translation', section: 'translate', wrong: [2, /^Not quite: only the source tokens it has already translated\. That would be a causal mask/],
    right: [1, /^Right: every source token, <\/s> included\. The encoder has read the whole source/] },
  { id: 'writing', section: 'roles', above: true, wrong: [1, /^Not quite: p − n, the same token in the first copy\. Close: p − n holds the same token/],
    right: [2, /^Right: p − n \+ 1, the token after its first occurrence\. The token at p first appeared at p − n/] },
];

test('Scaled, Pretrained, Translation, Writing: predict, then run, in the section of the action, judged beside its Check, then explained (folded)', async () => {
  const page = await lab.context.newPage();
  await page.setViewportSize(SCREENS[1]);
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  // What a held-back figure shows (section_panel.js coverHeld): its cover's note, or its own drawing.
  const heldState = (ids) => page.$$eval('[data-figure]', (nodes, want) => want.map((id) => {
    const f = nodes.find((n) => n.dataset.figure === id);
    const node = f.closest('.held-back, figure') ?? f;
    const cover = node.querySelector(':scope > .held-cover');
    const box = cover?.getBoundingClientRect(), own = node.getBoundingClientRect();
    return { id, cover: cover ? cover.textContent : null, coversIt: !!box && box.width >= own.width - 1 && box.height >= own.height - 1,
      figureVisible: getComputedStyle(f).visibility === 'visible' && getComputedStyle(f).color !== 'rgba(0, 0, 0, 0)',
      drawn: f.tagName === 'CANVAS' ? !!f.dataset.drawn && f.width > 0 : f.textContent.length > 0 };
  }), ids);
  for (const { id, section, above, holds, wrong, right } of EXPLORING) {
    await page.goto(`${lab.url}?lab=${id}`);
    const q = `#section-${section} .prediction #question-predict-${id}`;
    await page.waitForSelector(q);
    assert.match(await page.textContent(`${q} > p`), /^Predict, then run: /, id);
    // Under the section's figures, or above them where they would answer it (the Writing lab's head roles).
    const place = await page.$eval(`#section-${section}`, (s) => {
      const p = s.querySelector('.prediction'), board = s.querySelector('.figure-board');
      return p.compareDocumentPosition(board) & Node.DOCUMENT_POSITION_FOLLOWING ? 'above' : 'under';
    });
    assert.equal(place, above ? 'above' : 'under', id);
    // A checkpoint lab's section waits for one (its buttons disabled): the question is there before the action.
    // The Scaled lab's question comes after its figures: answered once they are drawn, as a student reads them.
    await page.waitForFunction(({ s, want }) => document.getElementById(`section-${s}`).dataset.state === want,
      { s: section, want: id === 'scaled' ? 'shown' : 'waiting' });
    // The figures that answer it (the Scaled lab's entropy line and chart) are there but covered until it is answered.
    if (holds) {
      for (const h of await heldState(holds)) {
        assert.match(h.cover ?? '', /^Held back: it answers the prediction below\. Answer it first — or Show me$/, `${id}: ${JSON.stringify(h)}`);
        assert.ok(h.coversIt && !h.figureVisible && h.drawn, `${id}: ${JSON.stringify(h)}`);
      }
    }
    let r = await answer(page, `question-predict-${id}`, wrong[0]);
    assert.equal(r.state, 'wrong', id);
    // Answered (wrong is an answer too): the held figures show.
    if (holds) {
      for (const h of await heldState(holds)) assert.ok(h.cover === null && h.figureVisible && h.drawn, `${id} after the answer: ${JSON.stringify(h)}`);
    }
    assert.match(r.text, wrong[1]);
    assert.ok(r.live && r.inView && r.besideCheck, `${id}: ${JSON.stringify(r)}`);
    assert.equal(r.explanation, 'closed', `${id}: a prediction's explanation opens folded`);
    r = await answer(page, `question-predict-${id}`, right[0]);
    assert.equal(r.state, 'right', id);
    assert.match(r.text, right[1]);
    assert.ok(r.inView, `${id}: ${JSON.stringify(r)}`);
    // Nothing cut off on a phone: the question's text and choices wrap inside the section.
    const overflow = await page.$eval(q, (n) => {
      const box = n.closest('.lab-section').getBoundingClientRect();
      return [...n.querySelectorAll('p, label, button')].filter((e) => e.getBoundingClientRect().right > box.right + 0.5 || e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent.slice(0, 30));
    });
    assert.deepEqual(overflow, [], id);
  }
  // Show me, before answering: every held figure shows, for good; the question still waits for an answer.
  const { holds } = EXPLORING.find((e) => e.id === 'scaled');
  await page.goto(`${lab.url}?lab=scaled`);
  await page.waitForSelector('.held-show');
  await page.click('.held-show');
  for (const h of await heldState(holds)) assert.ok(h.cover === null && h.figureVisible && h.drawn, `after Show me: ${JSON.stringify(h)}`);
  assert.equal(await page.$eval('#question-predict-scaled', (q) => q.dataset.state), 'unanswered', 'Show me is not an answer');
  const drawnAt = await page.$eval('canvas[data-figure="saturation"]', (c) => c.dataset.drawn);
  await setField(page, 'dk', 64);
  await page.waitForFunction((t) => document.querySelector('canvas[data-figure="saturation"]').dataset.drawn !== t, drawnAt);
  assert.equal(await page.$$eval('.held-cover', (c) => c.length), 0, 'redrawn figures stay shown');
  assert.deepEqual(problems, []);
  await page.close();
});

test('answers=false: the questions without anything to check or explain, for a class working them out', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&answers=false');
  await page.waitForSelector('.question');
  assert.equal((await questionsOf(page)).flatMap((s) => s.numbers).length, 7);
  assert.equal(await page.$$eval('.question-ask, details.answer', (n) => n.length), 0, 'no control, no explanation on the page');
  assert.match(page.url(), /answers=0/, 'the link keeps the flag');
  assert.deepEqual(problems, []);
  await page.close();
});

test('questions=false: no question at all, in the sections or above Play, and the link keeps it', async () => {
  for (const id of ['lookup', 'alignment', 'count']) {
    const { page, problems } = await openPage(lab, `?lab=${id}&questions=false`);
    await page.waitForSelector('.lab-section');
    await page.waitForSelector('#play');
    assert.equal(await page.$$eval('.question, .questions, .prediction', (n) => n.length), 0, `${id}: none shows`);
    assert.match(page.url(), /questions=0/, 'the link keeps the flag');
    await page.click('#copy-link');
    assert.match(await page.$eval('#copy-link', (b) => b.dataset.link), /questions=0/);
    assert.deepEqual(problems, []);
    await page.close();
  }
  // The labs without training: the page is built (its sections waiting or shown) and asks nothing.
  const page = await lab.context.newPage();
  for (const { id } of EXPLORING) {
    await page.goto(`${lab.url}?lab=${id}&questions=false`);
    await page.waitForFunction(() => document.querySelectorAll('.lab-section[data-state]').length > 0);
    assert.equal(await page.$$eval('.question, .questions, .prediction', (n) => n.length), 0, `${id}: none shows`);
    assert.match(page.url(), /questions=0/, `${id}: the link keeps the flag`);
  }
  await page.close();
});

test('axe: the questions, answered right, wrong and unreadably, in the light and the dark theme, have no serious violation', async () => {
  for (const theme of ['light', 'dark']) {
    const { page, problems } = await openPage(lab, `?lab=lookup&theme=${theme}`);
    await page.waitForSelector('#question-predict-lookup');
    await answer(page, 'question-3-1', 'K is square');
    await answer(page, 'question-3-2', '0');
    await answer(page, 'question-4-1', 0);
    await answer(page, 'question-predict-lookup', 2);
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => (await window.axe.run(document.querySelector('main') ?? document, { iframes: false })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`));
    assert.deepEqual(violations, [], theme);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
