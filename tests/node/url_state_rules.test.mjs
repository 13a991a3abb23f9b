// Links say what is wrong, briefly (issue 16 §5): a parameter given twice uses the last value and says
// so (it used to say "using the default" while using another value); a bad value or an unknown name is
// quoted in at most 40 characters (one link made a 22,700-pixel-wide notice).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ECHO_CHARS, echo, fromQuery } from '../../web/ui/url_state.js';
import { alignmentLab } from '../../web/labs/01_alignment.js';

test('?heads=abc&heads=2: the last value counts, and the notice says so (not "using the default")', () => {
  const { values, problems } = fromQuery(alignmentLab, '?heads=abc&heads=2');
  assert.equal(values.heads, 2);
  assert.deepEqual(problems, ["'heads' is given 2 times; the last one counts (2)."]);
  const bad = fromQuery(alignmentLab, '?heads=2&heads=abc');
  assert.equal(bad.values.heads, 4, 'the last value is invalid: the default');
  assert.equal(bad.problems.length, 2);
  assert.match(bad.problems[0], /given 2 times; the last one counts \(abc\)/);
  assert.match(bad.problems[1], /using the default 4/);
});

test(`a 5,000-character value or name is quoted in at most ${ECHO_CHARS} characters`, () => {
  const long = 'x'.repeat(5000);
  const { problems } = fromQuery(alignmentLab, `?task=${long}&${'y'.repeat(5000)}=1&seed=${'9'.repeat(5000)}`);
  assert.equal(problems.length, 3);
  for (const p of problems) assert.ok(p.length < 200, `${p.length} characters: ${p.slice(0, 80)}…`);
  assert.match(problems[0], /got 'x{39}…'; using the default copy\./);
  assert.match(problems[1], /^Unknown parameter 'y{39}…' was ignored\.$/);
});

test('echo escapes control characters, so a notice stays one line', () => {
  assert.equal(echo('a\nb\u0007'), 'a\\x0ab\\x07');
  assert.equal(echo('z'.repeat(41)), `${'z'.repeat(39)}…`);
  assert.equal(echo('z'.repeat(40)), 'z'.repeat(40));
});

test('a renamed setting in an older link opens the view it was made for (Translation: average=false is one layer and head)', async () => {
  const { translationLab } = await import('../../web/labs/06_translation.js');
  const { fromQuery } = await import('../../web/ui/url_state.js');
  let r = fromQuery(translationLab, '?lab=translation&average=false&layer=1&head=1');
  assert.deepEqual([r.values.crossView, r.values.layer, r.values.head, r.problems], ['one', 1, 1, []]);
  r = fromQuery(translationLab, '?lab=translation&average=true');
  assert.deepEqual([r.values.crossView, r.problems], ['all', []]);
  r = fromQuery(translationLab, '?lab=translation&average=false&crossView=last');
  assert.equal(r.values.crossView, 'last', 'the new name wins where both are given');
});
