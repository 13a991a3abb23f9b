// tokenizer.json is a user's file (issue 48): a seeded fuzz of its structure. Each case replaces one field
// of the Llama 3 and GPT-2 fixtures' files (any depth, the vocabulary's and merges' insides left out) by a
// hostile value (null, -1, 2^32, 1e308, strings, lists, objects, an unbalanced regex, one that backtracks
// without bound), or flips, cuts or repeats characters of the text. Every case must either open and then
// tokenize and decode two sentences, or be refused with an Error that names tokenizer.json: never a hang
// (a pattern runs under web/tokenizers/regex_guard.js's deadline), never a bare TypeError from inside the
// library. The found failures it guards: a post-processor's special token without an id, a Split's
// non-string behavior (both "Cannot ..." from the library at a text; now refused at opening, named).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';

const CASES = 160; // a file each; the watcher's deadline (2 s) bounds a backtracking case
const VALUES = [null, -1, 0, 2 ** 32, 1e308, 'x', '', [], {}, true, [1, 2], { type: 'Split' }, { Regex: '(' },
  { Regex: '(a+)+$' }, { String: '' }, 'Sequence', { type: 'Sequence', pretokenizers: null }];

const PATTERNS = ['\\s+|\\S+', '(\\w+\\s?)+$', '(a|aa)+b', '(x+x+)+y|\\S+|\\s+', '[', '\\p{L}+|\\p{N}{1,3}', '(?i:\'s|\'t)|\\w+|.', ''];

function random(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

/** Every path to a field, leaving out the vocabulary's and the merges' own entries (thousands, all alike). */
function fieldPaths(json) {
  const out = [];
  const walk = (o, p) => {
    if (!o || typeof o !== 'object') return;
    for (const k of Object.keys(o)) {
      out.push([...p, k]);
      if (!(p.length === 1 && p[0] === 'model' && (k === 'vocab' || k === 'merges'))) walk(o[k], [...p, k]);
    }
  };
  walk(json, []);
  return out;
}

/** -> 'opened' or the refusal's message; throws (the test fails) for anything else. */
async function outcome(text) {
  let tokenizer;
  try {
    tokenizer = await HfTokenizer.fromFiles({ tokenizerJson: text }).watchPatterns();
  } catch (error) {
    assert.ok(error instanceof Error, `not an Error: ${error}`);
    assert.match(error.message, /tokenizer\.json/, `a refusal that does not name the file: ${error.message}`);
    return error.message;
  }
  for (const sentence of ['Attention is all you need.', 'It\'s 12:30 — déjà vu, 中文 😀!\n\n  ok']) {
    try {
      const { ids } = tokenizer.encode(sentence);
      if (ids.length) tokenizer.decode(ids);
    } catch (error) {
      assert.match(error.message, /^tokenizer\.json/, `opened, then a text failed without naming the file: ${error.message}`);
    }
  }
  return 'opened';
}

for (const name of ['llama3', 'gpt2']) {
  test(`fuzz: ${CASES} mutations of the ${name} fixture's tokenizer.json open and tokenize, or are refused naming it`, async (t) => {
    const text = readFileSync(path.join(FIXTURES, 'tokenizers', name, 'tokenizer.json'), 'utf8');
    const base = JSON.parse(text);
    const paths = fieldPaths(base);
    const next = random(name === 'gpt2' ? 2 : 3);
    const pick = (list) => list[Math.floor(next() * list.length)];
    const counts = { opened: 0, refused: 0, backtracking: 0 };
    for (let i = 0; i < CASES; i++) {
      let mutated;
      if (i % 16 === 5) {
        // A Split in front of the pre-tokenizer with a pattern drawn from real, broken and backtracking ones.
        const json = structuredClone(base);
        json.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: pick(PATTERNS) },
          behavior: pick(['Isolated', 'Removed', 'MergedWithNext']), invert: next() < 0.3 }, ...(json.pre_tokenizer ? [json.pre_tokenizer] : [])] };
        mutated = JSON.stringify(json);
      } else if (i % 4 === 3) {
        // The text itself: a character flipped, the file cut, or a stretch repeated.
        const at = Math.floor(next() * text.length);
        mutated = [() => text.slice(0, at) + String.fromCharCode(Math.floor(next() * 128)) + text.slice(at + 1),
          () => text.slice(0, at), () => text.slice(0, at) + text.slice(at, at + 40).repeat(3) + text.slice(at)][i % 3]();
      } else {
        const json = structuredClone(base);
        const p = pick(paths);
        let o = json;
        for (const k of p.slice(0, -1)) o = o[k];
        o[p.at(-1)] = structuredClone(pick(VALUES));
        mutated = JSON.stringify(json);
      }
      const said = await outcome(mutated);
      counts[said === 'opened' ? 'opened' : / backtracks without bound/.test(said) ? 'backtracking' : 'refused'] += 1;
    }
    // Both outcomes occur: the mutations reach the parts that matter and the ones that do not.
    t.diagnostic(JSON.stringify(counts));
    assert.ok(counts.opened > CASES / 10 && counts.refused > CASES / 10, JSON.stringify(counts));
  });
}
