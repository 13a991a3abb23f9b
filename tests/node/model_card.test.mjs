// The tiny checkpoints of tests/fixtures are labelled as random test weights in their folders (issue 45,
// item 3): each folder with a config.json has a model card (README.md, tests/fixtures/make_model_cards.py)
// whose front matter's tags the page reads (web/models/model_card.js). The reader takes the Hub's two
// layouts of a tag list and nothing else: hostile cards (no end, huge, binary, another key) have no tag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { cardTags, isRandomWeightsCard, MAX_CARD_CHARACTERS } from '../../web/models/model_card.js';

function checkpointFolders(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) checkpointFolders(p, out);
  }
  if (readdirSync(dir).includes('config.json')) out.push(dir);
  return out;
}

test('every tiny checkpoint folder in tests/fixtures says in its README.md that its weights are random', () => {
  const folders = checkpointFolders(FIXTURES);
  assert.ok(folders.length >= 16, folders.join(' '));
  for (const folder of folders) {
    const card = path.join(folder, 'README.md');
    let text = '';
    try {
      text = readFileSync(card, 'utf8');
    } catch {
      assert.fail(`${path.relative(FIXTURES, folder)} has no README.md: run python3 tests/fixtures/make_model_cards.py`);
    }
    assert.ok(isRandomWeightsCard(text), `${card}: tagged random-weights`);
    assert.match(text, /# Random test weights, not a trained model/);
  }
});

test('the card reader: both tag layouts; anything else has no tags', () => {
  assert.deepEqual(cardTags('---\ntags:\n- a\n- "b"\nlicense: mit\n---\n# x'), ['a', 'b']);
  assert.deepEqual(cardTags('---\r\nlanguage: en\r\ntags: [random-weights, \'x\']\r\n---\r\n'), ['random-weights', 'x']);
  assert.equal(isRandomWeightsCard('# A real model\n\ntags: random-weights'), false, 'tags outside front matter');
  assert.equal(isRandomWeightsCard('---\ntags:\n- random-weights\n'), false, 'front matter that never ends');
  assert.equal(isRandomWeightsCard(`---\n${'x: y\n'.repeat(MAX_CARD_CHARACTERS)}tags: [random-weights]\n---\n`), false, 'past the characters read');
  assert.equal(isRandomWeightsCard('---\nnot_tags:\n- random-weights\n---\n'), false);
  assert.equal(isRandomWeightsCard(String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => i % 256))), false);
  assert.equal(isRandomWeightsCard(null), false);
  assert.ok(cardTags(`---\ntags:\n${'- t\n'.repeat(10_000)}---\n`).length <= 100);
});
