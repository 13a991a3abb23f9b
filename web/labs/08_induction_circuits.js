// The Induction lab's Circuits section (issue 44): on the model this page trained, which head carries the
// repeat's answer. The trained weights are opened as the TransformerLens decoder the Writing lab opens
// an export as (web/models/hooked_transformer.js: the same file, the same numbers as `attnlab patch
// --model induction-stepN.safetensors`), then web/labs/circuits.js's attribution and patching run on a
// prompt pair: by default the repeated-random-tokens pair cut from the probe sequence, clean
// [start, r1 .. rk, r1 .. rj] predicting r(j+1) by induction, and its corrupted twin with r(j+1)'s
// first place holding another token x, so that it predicts x. Patching a head's z from the clean run into the
// corrupted one brings the answer back only through the heads that read the earlier copy: the
// induction head. No DOM here.
import { downloadStem, pageCircuits } from './circuits.js';
import { cacheFigures, circuitsFigures } from './circuits_figures.js';
import { weightsMetadata } from './08_induction_export.js';
import { topHeads } from './ablation_figures.js';
import { openCheckpoint } from '../models/registry.js';
import { stateDictBytes } from '../io/state_dict.js';

// How far into the repeat the clean prompt goes: three tokens are enough for the trained model's
// induction head (on tests/fixtures/induction_trained.safetensors patching its z brings back 0.62 of
// the answer three tokens in, 0.73 fifteen in), and a short pair keeps the position grid readable on
// a phone (the probe's 33 tokens would be drawn at two thirds of its size).
const INTO_REPEAT = 3;

/**
 * The repeated-random-tokens pair of a probe sequence ({tokens, copyStart, segment}: its segment of k
 * tokens r1 .. rk at copyStart - k, copied at copyStart) -> {clean, corrupt, answer, wrong} as ids: clean
 * is the sequence up to the copy's j-th token (j = min(k - 1, INTO_REPEAT)), so its next token is
 * r(j+1) (answer), which only the earlier copy tells; corrupt has, in r(j+1)'s first place, the first
 * token after it (cycling over 1 .. V-1) that the clean prompt does not hold (wrong), so that the
 * earlier copy points there. null when the sequence has no segment of two tokens or uses every token.
 */
export function repeatPairIds({ tokens, copyStart: c, segment: k }, vocabSize) {
  if (!(k >= 2 && c >= k)) return null;
  const j = Math.min(k - 1, INTO_REPEAT);
  const clean = Array.from(tokens.slice(0, c + j));
  const first = c - k + j; // r(j+1)'s place in the first copy
  const answer = clean[first];
  const used = new Set(clean);
  let wrong = -1;
  for (let d = 1; d < vocabSize - 1 && wrong < 0; d++) {
    const x = 1 + ((answer - 1 + d) % (vocabSize - 1));
    if (!used.has(x)) wrong = x;
  }
  if (wrong < 0) return null;
  const corrupt = clean.slice();
  corrupt[first] = wrong;
  return { clean, corrupt, answer, wrong };
}

/** The pair as the prompts' text (the tokenizer's own: ids separated by spaces, or characters). */
function repeatPair(sample, tokenizer) {
  const ids = repeatPairIds(sample, tokenizer.size);
  if (!ids) return null;
  const text = (list) => tokenizer.decode(list);
  return { clean: text(ids.clean), corrupt: text(ids.corrupt), answer: text([ids.answer]), wrong: text([ids.wrong]) };
}

// The trained model as a decoder, kept while its step is the session's (opening it is a few
// milliseconds at the lab's sizes; training on makes it stale). One at a time, as the worker runs one
// request at a time.
let decoder = null; // {session, step, opened: {model, tokenizer}}

async function decoderOf(ctx) {
  const { session } = ctx;
  if (decoder?.session === session && decoder.step === session.step) return decoder.opened;
  decoder?.opened.model.delete();
  decoder = null;
  const name = `induction-step${session.step}.safetensors`;
  const bytes = stateDictBytes(session.stateDict(), weightsMetadata(session.config, session.step));
  const source = { name, size: bytes.length, read: async (offset, length) => bytes.slice(offset, offset + length) };
  const { opened } = await openCheckpoint(ctx.module, [source], { lab: 'writing' });
  decoder = { session, step: session.step, opened };
  return opened;
}

export const inductionCircuits = {
  id: 'circuits',
  title: 'Which head carries the answer?',
  text: 'Two runs of the trained model. The clean prompt repeats a segment, so the model can predict the repeat\'s '
    + 'next token by looking back at its earlier copy; the corrupted one has another token in that earlier place, so it '
    + 'predicts that one instead. Copy one activation from the clean run into the corrupted one and see how much of the '
    + 'clean answer comes back (1: all of it, 0: none): only the heads that read the earlier copy can bring it back. '
    + 'Above the patching, direct logit attribution: how much each head itself wrote towards the answer.',
  properties: ['clean', 'corrupt', 'answer', 'wrong', 'what'],
  needsModel: true,
  dependsOn: ['clean', 'corrupt', 'answer', 'wrong', 'what'],
  actions: [
    { id: 'circuits-repeat-pair', label: 'Use the repeated pair',
      title: 'Clear the four fields: the pair is cut from the probe sequence again',
      change: (v) => ({ ...v, clean: '', corrupt: '', answer: '', wrong: '' }) },
  ],
  async compute(ctx, v) {
    const { session } = ctx;
    const { model, tokenizer } = await decoderOf(ctx);
    const template = repeatPair(session.fixedSample(), tokenizer);
    // An empty field is the repeated pair's (a student may change only the corrupted prompt).
    const pair = Object.fromEntries(['clean', 'corrupt', 'answer', 'wrong']
      .map((name) => [name, v[name] !== '' ? v[name] : template?.[name] ?? '']));
    if (!pair.clean) throw new Error('the probe sequence has no repeated segment of two tokens to cut a pair from: '
      + 'type a clean and a corrupted prompt');
    const run = await pageCircuits(model, tokenizer, pair, { sites: v.what, backend: session.cpuBackend() });
    const evaluation = session.lastEvaluation;
    const strongest = evaluation ? topHeads(evaluation.scores.induction, evaluation.heads, 1)[0] : null;
    // The model by its file while it is the file's weights, else by its step (and so the cache's file name).
    const file = session.weightsFile && session.step === 0 ? session.weightsFile : null;
    const stem = file ? downloadStem(file) : `induction-step${session.step}`;
    return { ...run, step: session.step, file, pair, strongest, stem,
      template: !!template && pair.clean === template.clean };
  },
  figures(r) {
    const model = r.file ? `The model from ${r.file}` : r.step > 0 ? `The model after ${r.step} steps`
      : 'The untrained model (press Play first)';
    const figures = [{ kind: 'text', id: 'circuits-pair', text: `${model}. Clean: ${r.pair.clean}; corrupted: `
      + `${r.pair.corrupt}; answer ${r.pair.answer}, wrong ${r.pair.wrong}`
      + (r.template ? ' (the repeated pair cut from the probe sequence; type your own in the fields).' : '.') }];
    const z = r.patching.grids.z;
    if (z) {
      let best = { layer: 0, head: 0, value: -Infinity };
      z.values.forEach((row, layer) => row.forEach((value, head) => {
        if (value > best.value) best = { layer, head, value };
      }));
      const named = r.strongest ? ` The strongest induction head by its attention score is ${r.strongest.layer}.`
        + `${r.strongest.head} (${r.strongest.score.toFixed(2)}).` : '';
      figures.push({ kind: 'text', id: 'circuits-carrier', text: `Patching head ${best.layer}.${best.head}'s output `
        + `(blocks.${best.layer}.attn.hook_z) alone brings back ${Math.round(100 * best.value)}% of the clean answer.`
        + named });
    }
    figures.push(...circuitsFigures(r));
    figures.push(...cacheFigures(r));
    return figures;
  },
};
