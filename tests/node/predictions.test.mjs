// The "predict, then run" questions of the labs without training (issue 39, item 3) say what the lab
// then shows: each right answer checked on the lab's own section, computed as the worker computes it
// (web/worker.js's section ctx), on the lab's defaults and the tiny checkpoints the browser tests open.
//   Scaled: without the scale, a larger d_k makes every softmax row sharper (with it, the curve stays).
//   Pretrained: BERT's queries put weight on every token, the later ones too (no causal mask).
//   Translation: every generated token's cross-attention has weight on every source token, </s> included.
//   Writing: the induction score the grid shows is the opened head's weight from p to p - n + 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { lab, FIXTURES } from './support.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { defaultValues } from '../../web/shared/properties.js';
import { scaledLab } from '../../web/labs/04_scaled.js';
import { pretrainedLab } from '../../web/labs/05_pretrained.js';
import { translationLab } from '../../web/labs/06_translation.js';
import { writingLab } from '../../web/labs/07_writing.js';

const rightChoice = (someLab) => {
  const q = someLab.predict(defaultValues(someLab.properties));
  return q.ask.choices.find((c) => c.right).label;
};

/** A section's ctx as the worker makes it, with the lab's checkpoint folder opened by its own open.load. */
async function contextOf(someLab, folder) {
  const module = await lab('simd');
  const runner = new KernelRunner({ module, request: { requested: 'simd' } });
  const opened = folder ? (await someLab.open.load(module, await folderSources(path.join(FIXTURES, folder)))).state : null;
  return { module, backend: 'simd', attention: (args) => runner.forward(args), rng: (seed) => new module.Rng(seed), opened };
}
const sectionOf = (someLab, id) => someLab.sections.find((s) => s.id === id);

test('Scaled: unticked, d_k 4 -> 256 makes every softmax row sharper (its largest weight grows, entropy falls); with the scale it does not', async () => {
  assert.match(rightChoice(scaledLab), /^sharper/);
  const ctx = await contextOf(scaledLab);
  const steps = sectionOf(scaledLab, 'steps');
  const v = defaultValues(scaledLab.properties);
  const rows = async (dk, scaled) => {
    const r = await steps.compute(ctx, { ...v, dk, scaled }, null);
    return { max: Array.from({ length: r.T }, (_, t) => Math.max(...r.weights.slice(t * r.T, (t + 1) * r.T))), entropy: r.entropy, curve: r.curve };
  };
  const small = await rows(4, false), large = await rows(256, false);
  small.max.forEach((m, t) => assert.ok(large.max[t] > m && large.entropy[t] < small.entropy[t], `row ${t}: ${m} -> ${large.max[t]}`));
  assert.ok(Math.min(...large.max) > 0.85, `d_k 256 unscaled: rows' largest weights ${large.max}`);
  // The curve under it says the same over 32 draws: unscaled falls to a tenth of log 5, scaled stays.
  const at = (dk) => large.curve.find((p) => p.dk === dk);
  assert.ok(at(256).unscaled < 0.1 * Math.log(5) && at(256).scaled > 0.7 * Math.log(5), JSON.stringify(at(256)));
});

test('Pretrained: on the tiny BERT, every query of the default sentence has weight above 0 on every key, the later ones included', async () => {
  assert.match(rightChoice(pretrainedLab), /every token, before and after/);
  // Its words hold after a model is open too (issue 45, item 4: "Before you open it" stayed after opening).
  assert.doesNotMatch(pretrainedLab.predict(defaultValues(pretrainedLab.properties)).text, /open it/);
  const ctx = await contextOf(pretrainedLab, 'bert_tiny/modern');
  const r = await sectionOf(pretrainedLab, 'model').compute(ctx, defaultValues(pretrainedLab.properties));
  let later = 0;
  r.attentions.forEach((w, l) => {
    for (let h = 0; h < r.H; h++) for (let t = 0; t < r.T; t++) for (let s = 0; s < r.T; s++) {
      const x = w[(h * r.T + t) * r.T + s];
      assert.ok(x > 0, `layer ${l} head ${h}: query ${t} key ${s} has weight ${x}`);
      if (s > t) later += x;
    }
  });
  assert.ok(later / (r.attentions.length * r.H * r.T) > 0.1, `the weight on later keys, per row: ${later / (r.attentions.length * r.H * r.T)}`);
  ctx.opened.model.delete();
});

test('Translation: on the tiny Marian, every generated token\'s cross-attention has weight on every source token, </s> included', async () => {
  assert.match(rightChoice(translationLab), /every source token/);
  const ctx = await contextOf(translationLab, 'marian_tiny');
  const r = await sectionOf(translationLab, 'translate').compute(ctx, { ...defaultValues(translationLab.properties), maxLength: 32 });
  const S = r.sourcePieces.length;
  assert.equal(r.sourcePieces.at(-1), '</s>');
  r.cross.forEach((row, t) => {
    for (let lh = 0; lh < r.L * r.H; lh++) {
      const w = row.subarray(lh * S, (lh + 1) * S);
      assert.ok(w.every((x) => x > 0), `generated token ${t}, layer.head ${Math.floor(lh / r.H)}.${lh % r.H}: ${Array.from(w)}`);
      assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    }
  });
  ctx.opened.model.delete();
});

test('Writing: the induction score of every head is its weight from each token p of the second copy to p - n + 1', async () => {
  assert.match(rightChoice(writingLab), /^p − n \+ 1/);
  const ctx = await contextOf(writingLab, 'gpt2_tiny/hub');
  const roles = sectionOf(writingLab, 'roles');
  const v = defaultValues(writingLab.properties);
  let checked = 0;
  for (let l = 0; ; l++) {
    const first = await roles.compute(ctx, { ...v, roleLayer: l, roleHead: 0 });
    if (first.layer !== l) break; // past the last layer
    for (let h = 0; h < first.H; h++) {
      const r = await roles.compute(ctx, { ...v, roleLayer: l, roleHead: h });
      const { n, S } = r;
      let sum = 0;
      for (let p = n + 1; p <= 2 * n; p++) sum += r.headAttention[p * S + p - n + 1];
      assert.ok(Math.abs(sum / n - r.induction[l * r.H + h]) < 1e-5, `head ${l}.${h}: ${sum / n} vs ${r.induction[l * r.H + h]}`);
      checked++;
    }
  }
  assert.ok(checked >= 4, `${checked} heads`);
  ctx.opened.model.delete();
});
