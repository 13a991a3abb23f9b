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

test('a link is read in one pass and within bounds: 100,000 unknown parameters, a 300,000-character link, 200,000 heads to switch off', async () => {
  const { MAX_LINK_CHARS, MAX_LINK_PARAMETERS } = await import('../../web/ui/url_state.js');
  const { writingLab } = await import('../../web/labs/07_writing.js');
  // 100,000 unknown names (the page's main thread was blocked 56 s, with a 4 MB notice): the first 200 read,
  // five named, the rest counted, a few lines in all; the settings still read.
  const many = `?seed=3&${Array.from({ length: 100000 }, (_, i) => `p${i}=1`).join('&')}`;
  let r = fromQuery(alignmentLab, many);
  assert.equal(r.values.seed, 3);
  assert.deepEqual(r.problems, [
    `The link is ${many.length.toLocaleString('en')} characters long: only its first ${MAX_LINK_CHARS.toLocaleString('en')} were read.`,
    `The link has more than ${MAX_LINK_PARAMETERS} parameters: only the first ${MAX_LINK_PARAMETERS} were read.`,
    "Unknown parameter 'p0' was ignored.", "Unknown parameter 'p1' was ignored.", "Unknown parameter 'p2' was ignored.",
    "Unknown parameter 'p3' was ignored.", "Unknown parameter 'p4' was ignored.", '194 more unknown parameters were ignored.',
  ]);
  const long = `?seed=4&task=${'x'.repeat(300000)}`;
  r = fromQuery(alignmentLab, long);
  assert.equal(r.values.seed, 4);
  assert.equal(long.length, 300013);
  assert.equal(r.problems[0], `The link is 300,013 characters long: only its first ${MAX_LINK_CHARS.toLocaleString('en')} were read.`);
  // ablate= naming 200,000 heads (15 s before): refused in one line, the default kept.
  r = fromQuery(writingLab, `?lab=writing&ablate=${Array.from({ length: 200000 }, (_, i) => `${i % 1000}.${Math.floor(i / 1000)}`).join(',')}`);
  assert.equal(r.values.ablate, '');
  assert.deepEqual(r.problems.slice(1), ['Heads switched off: the list names 30,485 heads: at most 8,192; using the default (none).'],
    'cut at the link\'s 200,000 characters, the 30,485 heads in them are refused');
  const { parseHeadList } = await import('../../web/labs/head_list.js');
  const list = Array.from({ length: 200000 }, (_, i) => `${i % 1000}.${Math.floor(i / 1000)}`).join(',');
  assert.deepEqual(parseHeadList(list), { error: 'the list names 200,000 heads: at most 8,192' });
  const most = Array.from({ length: 8192 }, (_, i) => `${i % 100}.${Math.floor(i / 100)}`).join(',');
  assert.equal(parseHeadList(most).heads.length, 8192, 'the bound itself is read (a Set finds a repeat: linear)');
});
