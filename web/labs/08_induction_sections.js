// The Induction lab's sections: the timeline (the losses and every head's scores as it trains, the phase
// change named), switching heads off, which head carries the answer (08_induction_circuits.js), a
// one-layer model trained beside it, and the model continued in TransformerLens. compute runs in the
// worker beside the session's trainer; figures are pure. No DOM here.
import { offText, switchGrid, topHeads } from './ablation_figures.js';
import { heads as headsOf } from './head_list.js';
import { inductionCircuits } from './08_induction_circuits.js';

/** 'L.H' as the page and the CLI name a head (layer and head from 0). */
export const headName = (h) => (h ? `${h.layer}.${h.head}` : '—');

/** An evaluation's scores -> {induction, previous, duplicate}: every head, strongest first ([{layer, head, score}]). */
export function headScoresOf(e) {
  const all = e.layers * e.heads;
  return {
    induction: topHeads(e.scores.induction, e.heads, all),
    previous: topHeads(e.scores.previous, e.heads, all),
    duplicate: topHeads(e.scores.duplicate, e.heads, all),
  };
}

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '—');

/**
 * The trainer's timeline ({every, layers, heads, steps, loss, repeatLoss, restLoss, previous, duplicate,
 * induction [points x L*H], phaseStep, formedStep}) -> the timeline figure's panes: the losses, then one
 * pane per score with a line per head; `beside`: another run's timeline drawn dashed in the loss pane
 * (the one-layer model).
 */
function timelineFigure(t, { id = 'timeline', title, beside = null, besideLabel = '' } = {}) {
  const steps = Array.from(t.steps);
  const n = steps.length, LH = t.layers * t.heads;
  const perHead = (flat) => Array.from({ length: LH }, (_, i) => Array.from({ length: n }, (_, k) => flat[k * LH + i]));
  const headLabels = Array.from({ length: LH }, (_, i) => `${Math.floor(i / t.heads)}.${i % t.heads}`);
  const lossSeries = [
    { label: 'loss on the repeat', ys: Array.from(t.repeatLoss), color: 0 },
    { label: 'loss on the rest', ys: Array.from(t.restLoss), color: 1, dash: [6, 4] },
  ];
  if (!lossSeries[0].ys.some(Number.isFinite)) lossSeries.splice(0, 2,
    { label: 'loss', ys: Array.from(t.loss), color: 0 });
  if (beside) {
    lossSeries.push({ label: `${besideLabel}: repeat`, ys: Array.from(beside.repeatLoss), xs: Array.from(beside.steps),
      color: 2, dash: [2, 3] });
  }
  const scorePane = (name, flat, what) => ({ title: name, what, yMin: 0, yMax: 1, heads: true,
    series: perHead(flat).map((ys, i) => ({ label: headLabels[i], ys, head: i })) });
  const maxLoss = Math.max(1, ...lossSeries.flatMap((s) => s.ys.filter(Number.isFinite)));
  return {
    kind: 'phasetimeline', id, title: title ?? 'The losses and every head\'s scores, step by step',
    steps, layers: t.layers, heads: t.heads, xTitle: 'step',
    panes: [
      { title: 'loss (nats)', what: 'loss', yMin: 0, yMax: Math.ceil(maxLoss), series: lossSeries },
      scorePane('induction: weight on the token after the earlier copy', t.induction, 'induction'),
      scorePane('previous token: weight on the token before', t.previous, 'previous'),
      scorePane('duplicate token: weight on the earlier copy itself', t.duplicate, 'duplicate'),
    ],
    marker: t.phaseStep >= 0 ? { step: t.phaseStep, label: `phase change, step ${t.phaseStep}` } : null,
  };
}

/** The phase change in words, from the timeline and the latest evaluation. */
function phaseText(t, e) {
  const n = t.steps.length;
  if (!n || t.steps[n - 1] === 0) return 'Press Play: the timeline fills as the model trains (a point '
    + 'every few steps).';
  const repeat = t.repeatLoss[n - 1], rest = t.restLoss[n - 1];
  if (!Number.isFinite(repeat)) return `Step ${t.steps[n - 1]}: loss ${f3(t.loss[n - 1])}. (Scores are measured on `
    + `repeated random sequences of the text's characters.)`;
  if (t.phaseStep < 0) {
    return `Step ${t.steps[n - 1]}: the loss on the repeat (${f3(repeat)}) is still close to the rest's (${f3(rest)}). `
      + 'No head yet looks for the earlier copy: the model predicts both the same way, from how often '
      + 'each token comes.';
  }
  const at = t.steps.findIndex((s) => s >= t.phaseStep);
  const LH = t.layers * t.heads;
  const induction = Array.from({ length: LH }, (_, i) => t.induction[(n - 1) * LH + i]);
  const best = topHeads(induction, t.heads, 1)[0];
  return `Phase change at step ${t.phaseStep}: the loss on the repeat fell fastest there and is now ${f3(repeat)}, `
    + `below half the rest's (${f3(rest)}), while the rest's barely moved. At the same time head ${headName(best)} `
    + 'began to look from each token of the copy to the token after its earlier copy (its induction score, '
    + `${f2(best.score)} now, was `
    + `${f2(t.induction[Math.max(0, at - 1) * LH + best.layer * t.heads + best.head])} before)`
    + (e && Number.isFinite(e.iclScore) ? `; in-context learning score ${f3(e.iclScore)}.` : '.');
}

// ---- 1. The timeline ----

const timeline = {
  id: 'timeline',
  title: 'The phase change',
  text: 'Top: the loss on the repeated tokens and on the rest (random: no model can predict them). Below: each head\'s '
    + 'scores on 16 probe sequences, one line a head (colour: the head; solid: layer 0, dashed: layer 1). Watch for '
    + 'the sudden drop.',
  properties: [],
  needsModel: true,
  refreshWhileTraining: true,
  dependsOn: [],
  compute(ctx) {
    const t = ctx.session.trainer.timeline();
    return { timeline: t, evaluation: ctx.session.lastEvaluation, step: ctx.session.step };
  },
  figures(r) {
    return [
      timelineFigure(r.timeline),
      { kind: 'text', id: 'phase-text', text: phaseText(r.timeline, r.evaluation) },
    ];
  },
};

// ---- 2. Switch heads off ----

const ablate = {
  id: 'ablate',
  title: 'Switch heads off',
  text: 'Click a head to switch it off (its output zeroed before W_O, as TransformerLens zeroes hook_z) and see the '
    + 'loss on the repeat come back. Switching off the induction head, or the previous-token head it reads, '
    + 'breaks the circuit.',
  properties: ['ablate'],
  needsModel: true,
  refreshWhileTraining: true,
  dependsOn: ['ablate'],
  actions: [
    { id: 'ablate-induction', label: 'Switch off the strongest induction head',
      title: 'The head whose weight on the token after the earlier copy is largest',
      change: (v, r) => (r?.strongest ? { ...v, ablate: r.strongest } : v) },
    { id: 'ablate-none', label: 'All heads on', title: 'Switch every head back on',
      change: (v) => ({ ...v, ablate: '' }) },
  ],
  compute(ctx, values) {
    const { trainer } = ctx.session;
    const off = headsOf(values.ablate).map((h) => `${h.layer}.${h.head}`);
    const config = trainer.config;
    const bad = headsOf(values.ablate).find((h) => h.layer >= config.layers || h.head >= config.heads);
    if (bad) throw new Error(`head ${headName(bad)}: this model has layers 0 to ${config.layers - 1} and heads 0 to `
      + `${config.heads - 1}`);
    const backend = ctx.session.cpuBackend();
    const on = trainer.evaluate({ samples: 256 }, { backend });
    const without = off.length ? trainer.evaluate({ samples: 256, ablate: off }, { backend }) : on;
    const sample = ctx.session.fixedSample();
    const inspection = trainer.inspect({ tokens: sample.tokens }, { backend });
    const strongest = headScoresOf(on).induction[0];
    return { on, without, inspection, ablate: values.ablate, strongest: headName(strongest), step: ctx.session.step };
  },
  figures(r) {
    const { layers: L, heads: H, T } = r.inspection;
    const tokens = Array.from(r.inspection.tokens, String);
    const figures = [
      switchGrid({ layers: L, heads: H, attentions: r.inspection.weights, ablate: r.ablate, tokens,
        title: `Step ${r.step}: click a head to switch it off or on` }),
      { kind: 'text', id: 'ablate-off', text: offText(r.ablate) },
    ];
    if (Number.isFinite(r.on.repeatLoss)) {
      figures.push({ kind: 'bars', id: 'ablate-losses',
        title: r.ablate ? `Loss with ${r.ablate} off, and with every head on` : 'Loss, every head on',
        values: [r.on.repeatLoss, r.without.repeatLoss, r.on.restLoss, r.without.restLoss],
        labels: ['repeat: on', 'repeat: off', 'rest: on', 'rest: off'], xTitle: '',
        yTitle: 'loss (nats)', highlight: 1 });
      const times = r.without.repeatLoss / r.on.repeatLoss;
      figures.push({ kind: 'text', id: 'ablate-text',
        text: r.ablate ? `With ${r.ablate} off the loss on the repeat is ${f3(r.without.repeatLoss)} against `
          + `${f3(r.on.repeatLoss)} with every head on (${times.toFixed(1)} times); on the rest `
          + `${f3(r.without.restLoss)} against ${f3(r.on.restLoss)}.`
          : `Every head on: the loss on the repeat is ${f3(r.on.repeatLoss)}, on the rest ${f3(r.on.restLoss)}. The `
            + `strongest induction head is ${r.strongest}.` });
    }
    return figures;
  },
};

// ---- 3. One layer beside it ----

// The one-layer model trained beside the run: kept between requests (one at a time), so that it trains
// in short chunks while the page keeps answering; a change of settings starts it again.
let besideModel = null; // {key, trainer}

function oneLayerTrainer(ctx) {
  const config = { ...ctx.session.trainer.config, layers: 1 };
  const key = JSON.stringify(config);
  if (besideModel?.key !== key) {
    besideModel?.trainer.delete();
    besideModel = { key, trainer: ctx.module.createTrainer('induction', config) };
  }
  return besideModel.trainer;
}

const ONE_LAYER_CHUNK = 250; // steps of the one-layer model per request: well under a second

const oneLayer = {
  id: 'one-layer',
  title: 'Why two layers? One layer beside it',
  text: 'A one-layer model with the same settings, trained on the same kind of data: its heads see only each token and '
    + 'its position, never what another head found. Press Train one layer and compare its loss on the repeat (dotted) '
    + 'with the two-layer run\'s.',
  properties: ['oneLayerSteps'],
  needsModel: true,
  dependsOn: ['oneLayerSteps'],
  actions: [
    { id: 'train-one-layer', label: 'Train one layer beside it', pauseLabel: 'Pause',
      title: 'Train a one-layer model with the same settings', play: {
        everyMs: 300,
        start: (v) => ({ ...v, oneLayerSteps: Math.max(ONE_LAYER_CHUNK, v.oneLayerSteps) }),
        next: (v) => (v.oneLayerSteps >= v.steps ? null : { ...v,
          oneLayerSteps: Math.min(v.steps, v.oneLayerSteps + ONE_LAYER_CHUNK) }),
      } },
  ],
  compute(ctx, values) {
    const run = ctx.session.trainer.timeline();
    if (!values.oneLayerSteps) return { run, one: null };
    const t = oneLayerTrainer(ctx);
    const target = Math.min(values.oneLayerSteps, t.stepsDone + ONE_LAYER_CHUNK);
    if (t.stepsDone < target) t.train(target - t.stepsDone, { backend: ctx.session.cpuBackend() });
    return { run, one: t.timeline(), oneSteps: t.stepsDone };
  },
  figures(r) {
    if (!r.one) return [timelineFigure(r.run, { id: 'one-layer-timeline', title: 'The two-layer run (press Train one '
      + 'layer beside it)' })];
    const n = r.one.steps.length;
    const repeat = r.one.repeatLoss[n - 1], rest = r.one.restLoss[n - 1];
    return [
      timelineFigure(r.run, { id: 'one-layer-timeline', title: 'Two layers (solid) and one layer (dotted)',
        beside: r.one, besideLabel: 'one layer' }),
      { kind: 'text', id: 'one-layer-text',
        text: `One layer after ${r.oneSteps} steps: loss on the repeat ${f3(repeat)}, on the rest ${f3(rest)}`
          + (Number.isFinite(repeat) && repeat >= 0.5 * rest ? `, against ${f3(r.run.repeatLoss.at(-1))} for two `
            + 'layers. One layer learns that a repeated token is one seen before, never which one comes next: no head '
            + 'of one layer can find the token after the earlier copy.'
            : '.') },
    ];
  },
};

// ---- 4. Continue in Python ----

const python = {
  id: 'python',
  title: 'Continue in TransformerLens',
  text: 'Export the weights (Weights, in the settings): a .safetensors file with TransformerLens\'s names and shapes '
    + 'and its HookedTransformerConfig in the metadata. These lines load it into a HookedTransformer in your notebook.',
  properties: [],
  dependsOn: [],
  figures() {
    return [{ kind: 'code', id: 'python-lines', title: 'Python (TransformerLens and safetensors installed)', lines: [
      'import json',
      'from safetensors import safe_open',
      'from safetensors.torch import load_file',
      'from transformer_lens import HookedTransformer, HookedTransformerConfig',
      '',
      'path = "induction-step1500.safetensors"  # the file you exported',
      'with safe_open(path, "pt") as f:',
      '    cfg = HookedTransformerConfig(**json.loads(f.metadata()["hooked_transformer_config"]))',
      'model = HookedTransformer(cfg)',
      'model.load_state_dict(load_file(path), strict=False)  # strict=False: the file has no buffers (mask, IGNORE)',
      'logits, cache = model.run_with_cache(tokens)  # tokens: [batch, n_ctx] ids, 0 first',
      'cache["pattern", 1]  # layer 1\'s attention patterns: the induction head\'s stripe',
    ] }];
  },
};

export const SECTIONS = [timeline, ablate, inductionCircuits, oneLayer, python];
