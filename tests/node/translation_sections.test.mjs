// The Translation lab's "Translate, word by word" section and the beams under the cross-attention
// (web/labs/06_translation_sections.js, tokenDetails) as text: a beam with no possible next token (score -Infinity, at the length limit) is counted as ended,
// never printed as "-Infinity"; the translation carries no verdict mark (a check said nothing about
// its quality).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SECTIONS, tokenDetails } from '../../web/labs/06_translation_sections.js';

const translate = SECTIONS.find((s) => s.id === 'translate');
const result = (steps) => ({ beams: 2, steps, score: -1.2, translation: 'le chat', targetPieces: ['▁le', '▁chat'], sourcePieces: ['▁the', '▁cat', '</s>'] });

test('beam scores: finite ones with two decimals, -Infinity ones counted as ended', () => {
  const r = result([{ text: ['le', 'la'], scores: [-1.5, -Infinity], finished: [] }, { text: ['le chat', 'la chat'], scores: [-Infinity, -Infinity], finished: [0, 1] }]);
  const beams = (shown) => tokenDetails(r, shown).find((f) => f.id === 'beams').text;
  assert.equal(beams(1), 'Beams after step 1 (summed log-probability): “le” -1.50 · 1 ended. Best final score (÷ length): -1.200.');
  assert.equal(beams(2), 'Step 2: no beam can go on · 2 finished with </s> at this step. Best final score (÷ length): -1.200.');
  assert.doesNotMatch(beams(1) + beams(2), /Infinity/);
  assert.equal(translate.figures(r, { shown: 0 }).find((f) => f.id === 'translation').status, undefined, 'no verdict on the translation');
  // The translation's section holds the translation only: the pieces and beams are under the heatmap.
  assert.deepEqual(translate.figures(r, { shown: 0 }).map((f) => f.id), ['translation']);
});
