// Grading that copying the page cannot pass, on the page (issue 45, items 1a and 1b), at 1280x800 and
// 390x844: a course's link per student (?lab=scaled&student=ID) shows that student's own input as the
// Python lines `attnlab check --list --student ID` gives, and its steps' tensors; PyTorch's right step on
// that input (tests/fixtures/build_check_student) is judged right there and the fixed input's is not. With
// answers=0 the lab's own step tensors are left off the page (no number of them in the document) while a
// paste is still judged, a wrong one told where it differs without the lab's number. A link with an ID that is not one is refused in words and the fixed input kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPage, screenshotIfAsked, startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';
import { buildByName, inputPython, referenceSteps, stateDictData } from '../../web/labs/builds/registry.js';
import { forStudent } from '../../web/labs/builds/student_input.js';
import { printTensor } from '../../web/ui/tensor_figure.js';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const STUDENT = 'ada.lovelace@uni.example';
const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures');
const SECTION = 'build-simple';
const BUILD = buildByName('simple-attention');

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const shown = (page) => page.waitForFunction((sid) => document.getElementById(`section-${sid}`)?.dataset.state === 'shown',
  SECTION, { timeout: 30000 });

/**
 * Opens a step's torch.save file for the section; -> the verdict beside Check. The file is read before
 * it is judged, so the verdict before it (another text in these tests) is waited past.
 */
async function checkFile(page, file) {
  const before = await page.textContent(`#${SECTION}-tensor-verdict`);
  await page.setInputFiles(`#${SECTION}-tensor-file`, file);
  await page.waitForFunction(([sid, was]) => {
    const v = document.getElementById(`${sid}-tensor-verdict`);
    return v && /^(ok|bad)$/.test(v.dataset.status) && !/^Checking/.test(v.textContent) && v.textContent !== was;
  }, [SECTION, before], { timeout: 20000 });
  return page.$eval(`#${SECTION}-tensor-verdict`, (v) => ({ status: v.dataset.status, text: v.textContent }));
}

for (const viewport of SCREENS) {
  test(`a student's link at ${viewport.width}x${viewport.height}: their own input and steps; their right step passes, the fixed input's does not`, async () => {
    const { page, problems } = await openPage(lab, `?lab=scaled&student=${encodeURIComponent(STUDENT)}`, { viewport });
    try {
      await shown(page);
      const mine = forStudent(BUILD, STUDENT);
      assert.equal(await page.inputValue('#prop-student'), STUDENT);
      assert.match(await page.textContent(`[data-figure="${SECTION}-input"]`), new RegExp(`Your own input \\(student ${STUDENT.replace(/\./g, '\\.')}\\), to paste in your notebook`));
      assert.equal((await page.textContent(`[data-figure="${SECTION}-input"] pre`)).trim(), inputPython(mine).join('\n'));
      const want = mine.compute(mine.input, stateDictData(mine));
      assert.equal((await page.textContent(`[data-figure="${SECTION}-scores"] pre`)).trim(), printTensor(want.scores, [1, 5, 5]));
      await page.locator(`#section-${SECTION}`).scrollIntoViewIfNeeded();
      await screenshotIfAsked(page.locator(`#section-${SECTION}`), `build-student-${viewport.width}.png`);
      const ok = await checkFile(page, path.join(FIXTURES, 'build_check_student', 'simple-attention', 'scores.pt'));
      assert.equal(ok.status, 'ok', ok.text);
      const copied = await checkFile(page, path.join(FIXTURES, 'build_check', 'simple-attention', 'right', 'scores.pt'));
      assert.equal(copied.status, 'bad', 'the fixed input\'s scores do not pass for this student');
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways}px`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}

test('answers=0: the lab\'s step tensors are left off the page, and a paste is still judged', async () => {
  const { page, problems } = await openPage(lab, '?lab=scaled&answers=0');
  try {
    await shown(page);
    const fixed = referenceSteps(BUILD);
    for (const step of BUILD.steps) {
      const figure = page.locator(`[data-figure="${SECTION}-${step.name}"]`);
      assert.match(await figure.locator('figcaption').textContent(), new RegExp(`shape \\(${step.shape.join(', ')}\\)$`));
      assert.equal(await figure.locator('pre').count(), 0, `${step.name}: no numbers`);
      assert.match(await figure.textContent(), /The lab's numbers are not shown on this page: paste or open yours above/);
    }
    // None of the lab's printed numbers is anywhere in the section (the input's lines are the student's to copy).
    const text = await page.textContent(`#section-${SECTION}`);
    const printed = printTensor(fixed.weights, [1, 5, 5]).match(/0\.\d{4}/g).filter((x) => x !== '0.0000' && x !== '1.0000');
    assert.ok(printed.length > 3);
    for (const x of printed) assert.ok(!text.includes(x), `${x} of the weights is on the page`);
    const ok = await checkFile(page, path.join(FIXTURES, 'build_check', 'simple-attention', 'right', 'scores.pt'));
    assert.equal(ok.status, 'ok', ok.text);
    // A wrong one is told where it first differs, and its own number, not the lab's.
    const wrong = await checkFile(page, path.join(FIXTURES, 'build_check', 'simple-attention', 'no_scale', 'scores.pt'));
    assert.equal(wrong.status, 'bad');
    assert.match(wrong.text, /^The shape \(1, 5, 5\) is right; the numbers first differ at \[0, 0, 0\]: yours -?\d+\.\d{4}\. /);
    assert.doesNotMatch(wrong.text, /the lab's -?\d/);
    assert.doesNotMatch(await page.textContent(`#section-${SECTION}`), /the lab's -?\d/);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('a link whose student ID is not one: refused in words, the fixed input kept', async () => {
  const { page } = await openPage(lab, '?lab=scaled&student=%3Cscript%3E');
  try {
    await shown(page);
    assert.match(await page.textContent('body'), /Student ID: "<script>" is not a student ID: 1 to 64 letters, digits/);
    assert.match(await page.textContent(`[data-figure="${SECTION}-input"]`), /The fixed input, to paste in your notebook/);
  } finally {
    await page.close();
  }
});
