// The questions that take an answer (issue 39, item 3): a shape or a number is read the ways a student
// writes it, text that cannot be read is never judged (the message quotes it and says what was read),
// and every question the labs declare is well formed: one right choice, each choice with its reason,
// an expected answer that the checker itself reads back as right.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeAnswer, readNumber, readShape, shapeText } from '../../web/ui/answer_check.js';
import { LABS } from '../../web/labs/registry.js';
import { defaultValues } from '../../web/shared/properties.js';

test('one shape, however it is written', () => {
  for (const text of ['(4, 1, 1, 100)', '4,1,1,100', '[4, 1, 1, 100]', 'torch.Size([4, 1, 1, 100])', ' 4 x 1 x 1 x 100 ',
    '4×1×1×100', '4 1 1 100', '(4,1,1,100,)', 'Size([4,1,1,100])']) {
    assert.deepEqual(readShape(text), { shape: [4, 1, 1, 100] }, text);
  }
  assert.deepEqual(readShape('(5,)'), { shape: [5] });
  assert.equal(shapeText([5]), '(5,)');
  assert.equal(shapeText([4, 10, 5]), '(4, 10, 5)');
});

test('a shape that cannot be read says what was read and where it stopped', () => {
  assert.match(readShape('').error, /^Nothing to read/);
  assert.equal(readShape('(4, 1, one, 100)').error,
    'Could not read a shape from “(4, 1, one, 100)”: read 4, 1, then “one”, which is not a whole number. Write the sizes separated by commas, e.g. (4, 10, 5).');
  assert.match(readShape('4,,5').error, /read 4, then an empty place between separators/);
  assert.match(readShape('(4, -1)').error, /“-1”, which is not a whole number/);
  assert.match(readShape('box').error, /^Could not read a shape from “box”: “box”/);
  assert.match(readShape('2.5, 3').error, /“2\.5”, which is not a whole number/);
  // A long paste is quoted cut, not whole.
  const long = readShape(`(${'x'.repeat(500)})`).error;
  assert.ok(long.length < 250, long);
});

test('a number, however it is written, and what it was read as', () => {
  const cases = [['0.1', 0.1, null], ['.5', 0.5, null], ['1e-4', 1e-4, null], ['10%', 0.1, '0.1'], ['1/10', 0.1, '0.1'],
    ['1,000', 1000, '1000'], ['0,5', 0.5, '0.5'], [' 3 ', 3, null], ['-2', -2, null]];
  for (const [text, value, read] of cases) assert.deepEqual(readNumber(text), { value, read }, text);
  assert.match(readNumber('ten').error, /^Could not read a number from “ten”/);
  assert.match(readNumber('1/0').error, /Could not read a number/);
  assert.match(readNumber('').error, /^Nothing to read/);
});

const SHAPE = { kind: 'shape', prompt: 'shape', expected: [4, 1, 1, 100], right: 'Batch, heads, queries, keys.',
  wrong: 'Count the axes again.', near: [{ shape: [4, 1, 100], why: 'That is the heads averaged.' }] };
const NUMBER = { kind: 'number', prompt: 'n', expected: 0.1, tolerance: 0.005, right: 'One tenth each.', wrong: 'Ten positions share 1.',
  near: [{ value: 1, why: 'That is the sum of all ten.' }] };
const CHOICE = { kind: 'choice', prompt: 'c', choices: [{ label: 'a diagonal', right: true, why: 'Output t reads input t.' },
  { label: 'a uniform grey', why: 'That is step 0.' }] };

test('right and wrong, each with its reason; unread text is not judged', () => {
  assert.deepEqual(judgeAnswer(SHAPE, '4,1,1,100'), { status: 'right', text: 'Right: (4, 1, 1, 100). Batch, heads, queries, keys.' });
  assert.deepEqual(judgeAnswer(SHAPE, '[4, 1, 100]'), { status: 'wrong', text: 'Not quite: (4, 1, 100). That is the heads averaged.' });
  assert.deepEqual(judgeAnswer(SHAPE, '(100, 4)'), { status: 'wrong', text: 'Not quite: (100, 4). Count the axes again.' });
  assert.equal(judgeAnswer(SHAPE, '(4, 1, 1, a)').status, 'unread');
  assert.deepEqual(judgeAnswer(NUMBER, '10%'), { status: 'right', text: 'Right: 10% (read as 0.1). One tenth each.' });
  assert.deepEqual(judgeAnswer(NUMBER, '1'), { status: 'wrong', text: 'Not quite: 1. That is the sum of all ten.' });
  assert.deepEqual(judgeAnswer(NUMBER, '0.5'), { status: 'wrong', text: 'Not quite: 0.5. Ten positions share 1.' });
  assert.equal(judgeAnswer(NUMBER, 'a tenth').status, 'unread');
  assert.deepEqual(judgeAnswer(CHOICE, 0), { status: 'right', text: 'Right: a diagonal. Output t reads input t.' });
  assert.deepEqual(judgeAnswer(CHOICE, 1), { status: 'wrong', text: 'Not quite: a uniform grey. That is step 0.' });
  assert.equal(judgeAnswer(CHOICE, undefined).status, 'unread');
});

/** Every question a lab declares: its sections' and, for each value of its settings that changes it, its prediction. */
function declaredQuestions() {
  const found = [];
  for (const lab of LABS) {
    for (const section of lab.sections ?? []) {
      // A list, or a function of the values (the Lookup's 3.1 and 3.2 follow the database size): at its ends and default.
      const sizes = [10, 100, 1000].map((databaseSize) => ({ ...defaultValues(lab.properties), databaseSize }));
      const lists = typeof section.questions === 'function' ? sizes.map(section.questions) : [section.questions ?? []];
      for (const list of lists) for (const q of list) found.push({ where: `${lab.id}/${section.id}`, q });
    }
    if (!lab.predict) continue;
    const base = defaultValues(lab.properties);
    const variants = [base, ...lab.properties.filter((p) => p.type === 'choice' || p.type === 'bool').flatMap((p) => (p.type === 'bool'
      ? [{ ...base, [p.name]: !base[p.name] }] : p.choices.map((c) => ({ ...base, [p.name]: c.value }))))];
    for (const values of variants) {
      const q = lab.predict(values);
      if (q && !found.some((f) => f.q.number === q.number && f.where.startsWith(lab.id))) found.push({ where: `${lab.id}/predict`, q });
    }
  }
  return found;
}

test('every declared question is well formed and its own answer is judged right', () => {
  const found = declaredQuestions();
  assert.ok(found.length >= 7 + 6 + 4, `the notebooks' 7 questions, the training labs' predictions and the other labs' 4 (${found.length})`);
  for (const lab of LABS) assert.ok(lab.predict?.(defaultValues(lab.properties)), `${lab.id} asks for a prediction before its main action`);
  for (const { where, q } of found) {
    const name = `${where} ${q.number}`;
    assert.ok(q.text && q.answer && q.ask?.prompt, `${name}: text, answer (the explanation) and ask.prompt`);
    if (q.ask.kind === 'choice') {
      assert.equal(q.ask.choices.filter((c) => c.right).length, 1, `${name}: exactly one right choice`);
      assert.ok(q.ask.choices.length >= 2 && q.ask.choices.every((c) => c.label && c.why?.length > 20), `${name}: each choice says why`);
      q.ask.choices.forEach((c, i) => assert.equal(judgeAnswer(q.ask, i).status, c.right ? 'right' : 'wrong', name));
    } else if (q.ask.kind === 'shape') {
      assert.equal(judgeAnswer(q.ask, shapeText(q.ask.expected)).status, 'right', name);
      for (const n of q.ask.near ?? []) assert.equal(judgeAnswer(q.ask, shapeText(n.shape)).status, 'wrong', `${name}: ${n.shape}`);
      assert.ok(q.ask.right && q.ask.wrong, `${name}: says why right and why wrong`);
    } else {
      assert.equal(q.ask.kind, 'number', name);
      assert.equal(judgeAnswer(q.ask, String(q.ask.expected)).status, 'right', name);
      for (const n of q.ask.near ?? []) assert.equal(judgeAnswer(q.ask, String(n.value)).status, 'wrong', `${name}: ${n.value}`);
      assert.ok(q.ask.right && q.ask.wrong, `${name}: says why right and why wrong`);
    }
  }
});
