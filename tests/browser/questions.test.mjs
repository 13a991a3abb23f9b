// Notebook 02's six questions (3.1, 3.2, 4.1, 6.1, 6.2, 6.4) in the Lookup lab, each in the section whose
// figures answer it, with an answer a student opens on purpose; a class's link (?answers=false) shows
// the questions only (issue 28).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const questionsOf = (page) => page.$$eval('.lab-section', (sections) => sections.map((s) => ({
  section: s.dataset.section,
  questions: [...s.querySelectorAll('.question')].map((q) => ({
    number: q.querySelector('strong').textContent.trim(),
    answer: q.querySelector('details.answer') ? { open: q.querySelector('details.answer').open, text: q.querySelector('details.answer p').textContent } : null,
  })),
})).filter((s) => s.questions.length));

test('the Lookup lab poses notebook 02\'s six questions where its figures answer them, answers closed until asked', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup');
  await page.waitForSelector('.question');
  const found = await questionsOf(page);
  assert.deepEqual(found.map((s) => [s.section, s.questions.map((q) => q.number)]),
    [['hard', ['3.1', '3.2']], ['soft', ['4.1']], ['mha', ['6.1', '6.2']], ['trained', ['6.4']]]);
  assert.ok(found.flatMap((s) => s.questions).every((q) => q.answer && !q.answer.open && q.answer.text.length > 80), 'every answer closed, and there');
  await page.click('#question-3-1 summary');
  assert.equal(await page.$eval('#question-3-1 details', (d) => d.open), true);
  assert.match(await page.textContent('#question-3-1'), /K is 100 × 100: one key per database image/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('answers=false: the questions without their answers, for a class working them out', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup&answers=false');
  await page.waitForSelector('.question');
  const found = await questionsOf(page);
  assert.equal(found.flatMap((s) => s.questions).length, 6);
  assert.ok(found.flatMap((s) => s.questions).every((q) => q.answer === null), 'no answer on the page');
  assert.match(page.url(), /answers=0/, 'the link keeps the flag');
  assert.deepEqual(problems, []);
  await page.close();
});
