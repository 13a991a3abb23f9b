// The Writing lab's sections: the opened decoder (GPT-2, Llama, Qwen 2) writes after a prompt, one token
// at a time (Play, Next token), with the next-token distribution as bars; the attention of every layer
// and head over the text so far (model view, head view, heatmap: each written token adds its row); the head roles
// (previous-token, first-token sink, induction) as a layers x heads grid, a click opening that head on
// the repeated random sequence; and the logit lens as a table. No DOM here. ctx.opened: {model,
// tokenizer, name, writing, roles, lens}.
//
// Shapes (docs/writing.md): T prompt tokens, n <= maxNewTokens written tokens shown, N = T + n, V the
// vocabulary, L layers x H heads. The prompt's pass gives attention [H, T, T] per layer; each written
// token's pass (one token through the key/value cache) gives its row [H, 1, S] with S = its position + 1.
//
// How a token is chosen. The page writes through the core's one writer (core/models/writer.h), the
// same that `attnlab generate` runs: the model gives the logits of the next token; temperature, top-k
// and top-p turn them into the distribution (the bars); one uniform number draws from it (token k's is
// the k-th of the core's Rng on the seed), and the stop rules are the writer's. Next token and Play
// only ask the writer for more tokens (model.writeTo); it keeps the logits each token was drawn from, so
// a moved slider redraws the bars at once, without running the model again. Changing a setting keeps
// the tokens already shown and forgets those written past them (the writer's resume).
import { logitChange, offText, switchGrid, topHeads } from './ablation_figures.js';
import { headListText, passHeads } from './head_list.js';
import { tokenLabels } from './token_labels.js';
import { BACKEND_LABELS, cpuKernel } from '../backends.js';
import { idsAsText, tokenAsText, visibleToken } from './visible_text.js';
import { chatPrompt } from '../tokenizers/chat_template.js';
import { kvGroups } from '../shared/kv_groups.js';
import { rotary } from './07_writing_rotary.js';
import { writingEnds } from '../tokenizers/tokenizer.js';
import { circuits } from './07_writing_circuits.js';
import { heatmapRange } from './common.js';

// The CPU kernel the model writes on (the backend setting; scalar where the module has no SIMD128).
const cpuOf = (ctx) => cpuKernel(ctx.backend, ctx.module?.cpuBackends);

// ---- Writing ----

export { visibleToken };

const settingsOf = (v) => ({ temperature: v.temperature, topK: v.topK, topP: v.topP, seed: v.seed });
const tooLong = (T, max) => `The prompt is ${T} tokens: this model reads at most ${max} (n_positions). Shorten it.`;

/**
 * The writing of v.text by the opened model's writer: begun once per prompt and backend (its prompt's
 * pass kept: tokens and attention), then asked for the first `shown` tokens with v's settings. The
 * steps' records are copied once each (the writer says from which step its steps changed). -> the
 * writing {ids, texts, attention, steps: [{id, text, probability, settings, attention}], stop}.
 */
export function writing(ctx, v) {
  const opened = ctx.opened;
  if (!opened) throw new Error('Open a checkpoint first (above).');
  const text = String(v.text);
  const chat = String(v.chat ?? '').trim(); // a question for the chat template, in place of the prompt
  if (!chat && !text.trim()) throw new Error('Type a prompt.');
  const backend = cpuOf(ctx);
  const { model, tokenizer } = opened;
  const c = model.config;
  // The text ends at any of the tokenizer's end ids (Llama 3's three, a chat turn's end).
  // Heads switched off change every pass, the prompt's first: the writing begins again with them.
  const ablate = v.ablate ?? '';
  const settings = { ...settingsOf(v), maxNewTokens: v.maxNewTokens, ...writingEnds(tokenizer),
    headsOff: passHeads(model, ablate) };
  const key = JSON.stringify([chat ? { chat } : text, backend, ablate]);
  if (opened.writing?.key !== key) {
    const prompt = chat ? chatPrompt(tokenizer, chat) : tokenizer.encode(text);
    if (!prompt.ids.length) throw new Error('Type a prompt: it has no tokens.');
    if (prompt.ids.length > c.maxPositions) throw new Error(tooLong(prompt.ids.length, c.maxPositions));
    model.beginWriting(prompt.ids, { ...settings, keepLogits: true }, { backend });
    opened.writing = {
      key, ids: prompt.ids.slice(), texts: prompt.texts.slice(),
      attention: Array.from({ length: c.layers }, (_, l) => model.attention(l)), // [H, T, T] each
      steps: [], stop: null,
    };
  }
  const w = opened.writing;
  const { written, firstChanged, stopReason } = model.writeTo(v.shown, settings);
  w.steps.length = Math.min(w.steps.length, firstChanged);
  for (let k = w.steps.length; k < written; k++) {
    const { id, probability, attention } = model.writtenStep(k);
    w.steps.push({ id, text: tokenizer.tokenText(id), probability,
      settings: settingsOf(v), attention }); // [L, H, S] its row
  }
  w.stop = stopReason || null;
  return w;
}

const STOPS = { eos: 'it wrote an end-of-text token (the last shown)', max_new_tokens: 'the maximum of new tokens',
  n_positions: 'the model\'s last position (n_positions)' };

/** How many written tokens are shown, and whether another can come. */
function shownOf(w, v) {
  const n = Math.min(v.shown, w.steps.length);
  return { n, more: n < w.steps.length || !w.stop };
}

/** The write section's result: the text, the written tokens, the bars. */
function writeResult(ctx, v) {
  const w = writing(ctx, v);
  const { n, more } = shownOf(w, v);
  const { tokenizer, model } = ctx.opened;
  // The bars: the distribution token n-1 was drawn from (marked), or, before any, the first token's.
  const k = Math.max(0, n - 1);
  const now = settingsOf(v);
  // Every text with each byte accounted for (visible_text.js): a piece of a character is <0xE2>, not "�".
  const text = (id) => tokenAsText(tokenizer, id);
  const top = model.distribution({ ...now, k: 10, step: k }).map((t) => ({ ...t, text: text(t.id) }));
  // The drawn token's chance under these settings when it is not among the ten (a moved slider).
  const chanceOf = (id) => model.chance(id, { ...now, step: k });
  const drawn = n > 0 ? w.steps[n - 1] : null;
  const drawnAt = drawn ? top.findIndex((t) => t.id === drawn.id) : -1;
  const written = w.steps.slice(0, n);
  const backend = cpuOf(ctx);
  return {
    name: ctx.opened.name, promptText: idsAsText(tokenizer, w.ids),
    writtenText: idsAsText(tokenizer, written.map((s) => s.id)), promptTexts: w.ids.map(text), promptIds: w.ids,
    eosId: model.config.eosId,
    written: written.map((s) => ({ id: s.id, text: text(s.id), probability: s.probability })), total: w.steps.length,
    stop: n === w.steps.length ? w.stop : null, more,
    // The bars are the distribution token n was drawn from, at the settings now (now); the drawn token
    // keeps the settings it was drawn with and its probability then (drawn.settings, drawn.probability),
    // and says its probability now (drawn.now) where a setting has moved since.
    bars: { step: n > 0 ? n - 1 : 0, top, settings: now,
      drawn: drawn ? { id: drawn.id, text: text(drawn.id), probability: drawn.probability, settings: drawn.settings,
        now: drawnAt >= 0 ? top[drawnAt].probability : chanceOf(drawn.id), at: drawnAt } : null },
    choice: { backend, reason: `${BACKEND_LABELS[backend]} ran the model (a decoder writes on a CPU kernel: one token `
      + 'at a time through its key/value cache)' },
  };
}

const percent = (p) => `${(100 * p).toFixed(p >= 0.1 ? 1 : 2)}%`;

/** The settings that shape a distribution, in words: "temperature 0.8, top-k 50". */
const settingsText = (s) => (s.temperature === 0 ? 'temperature 0: greedy, all on the likeliest'
  : `temperature ${s.temperature}${s.topK ? `, top-k ${s.topK}` : ''}${s.topP < 1 ? `, top-p ${s.topP}` : ''}`);
/** Whether two settings give the same distribution (the seed only picks the draw). */
const sameDistribution = (a, b) => a.temperature === b.temperature && a.topK === b.topK && a.topP === b.topP;

const write = {
  id: 'write',
  title: 'Write, token by token',
  text: 'The model reads the prompt, then writes one token at a time: each step gives every token of its vocabulary a '
    + 'probability (the bars: the ten likeliest), one is drawn, and it is added to the text before the next step. '
    + 'Temperature reshapes the probabilities (low: the likeliest wins almost always; 0 always picks it; high: '
    + 'flatter, more surprising); top-k and top-p cut the unlikely tail before the draw; the seed fixes the draws, so '
    + 'the same settings write the same text.',
  properties: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown'],
  actions: [
    { id: 'play', label: '▶ Play', pauseLabel: '❚❚ Pause', title: 'Write the next tokens one at a time '
      + '(Pause stops it)',
      play: {
        everyMs: 600, // a readable pace: a token, then a look at its bars and rows
        start: (v, r) => (r && !r.more ? { ...v, shown: 1 } : v),
        next: (v, r) => (!r || !r.more || v.shown >= v.maxNewTokens ? null : { ...v,
          shown: Math.min(v.shown, r.total) + 1 }),
      } },
    // Nothing to go on from (no result yet, or the section in error) or nothing more to write: the count stays.
    { id: 'step', label: 'Next token', title: 'Write one more token',
      change: (v, r) => (!r || !r.more ? v : { ...v, shown: Math.min(v.shown, r.total) + 1 }) },
    { id: 'restart', label: 'From the start', title: 'Back to the prompt alone (the tokens written stay until a '
      + 'setting changes)',
      change: (v) => ({ ...v, shown: 0 }) },
  ],
  dependsOn: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'backend', 'ablate'],
  needsOpen: true,
  compute: (ctx, v) => writeResult(ctx, v),
  figures(r, v) {
    const stopped = r.stop ? ` (stopped: ${STOPS[r.stop]})` : '';
    const { top, drawn, step, settings } = r.bars;
    const labels = top.map((t) => visibleToken(t.text));
    const where = (d) => (d.at < 0 ? ' (not in the ten)' : ' (marked)');
    // A token keeps the settings it was drawn with; where a setting has moved since, the bars are the same
    // step's distribution at the new setting, and say so (the next token is drawn at it).
    const moved = drawn && !sameDistribution(drawn.settings, settings);
    let said;
    if (!drawn) said = `The first token will be drawn from these (${settingsText(settings)}). `;
    else if (!moved) said = `Token ${step + 1} was drawn from these (${settingsText(drawn.settings)}): `
      + `“${visibleToken(drawn.text)}” ${percent(drawn.probability)}${where(drawn)}. `;
    else {
      said = `Token ${step + 1}, “${visibleToken(drawn.text)}”, was drawn at ${settingsText(drawn.settings)}, with `
        + `${percent(drawn.probability)}. These bars are its step at the new setting (${settingsText(settings)}), `
        + `where it has ${percent(drawn.now)}${where(drawn)}; the next token is drawn at the new setting. `;
    }
    const title = `Token ${step + 1}${moved ? ' at the new setting' : ''}: the ten likeliest`;
    return [
      { kind: 'text', id: 'written',
        text: `${r.promptText}${r.writtenText ? `⟨${r.writtenText}⟩` : ''}${stopped}` },
      { kind: 'bars', id: 'next-bars', title, values: top.map((t) => t.probability), labels, xTitle: 'next token',
        yTitle: 'probability', highlight: drawn && drawn.at >= 0 ? drawn.at : undefined },
      { kind: 'text', id: 'next-top',
        text: `${said}${top.map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(' · ')}` },
      { kind: 'text', id: 'written-tokens',
        text: `Prompt (${r.promptIds.length} tokens): ${r.promptTexts.map(visibleToken).join(' | ')} · written `
          + `(${r.written.length}): `
          + `${r.written.map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(' | ') || 'none yet: press Play or Next token'}` },
      { kind: 'text', id: 'written-ids', text: `ids: ${r.promptIds.join(' ')} · written: `
        + `${r.written.map((t) => t.id).join(' ')}` },
    ];
  },
};

// ---- Attention over the text so far ----

/**
 * The attention of layer l, head h over the N = T + n tokens shown: [N, N], causal. A token drawn when
 * the text filled n_positions went through no pass: its row stays empty.
 */
function attentionMatrix(w, n, L, H, l, h) {
  const T = w.ids.length, N = T + n, m = new Float32Array(N * N);
  const prompt = w.attention[l];
  for (let i = 0; i < T; i++) m.set(prompt.subarray((h * T + i) * T, (h * T + i + 1) * T), i * N);
  for (let k = 0; k < n; k++) {
    const S = T + k + 1, row = w.steps[k].attention;
    if (!row.length) continue;
    m.set(row.subarray((l * H + h) * S, (l * H + h + 1) * S), (T + k) * N);
  }
  return m;
}

const maxOf = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);

/** Grouped-query attention in words, for H query heads over Hkv key/value heads (Hkv < H). */
function sharingText(H, Hkv) {
  const g = H / Hkv;
  const groups = kvGroups(H, Hkv).map((k) => `heads ${k.heads[0]}–${k.heads.at(-1)} share K/V ${k.kv}`).join(', ');
  return `Grouped-query attention: this model has ${H} query heads but only ${Hkv} key/value head${Hkv > 1 ? 's' : ''} `
    + `per layer, so every ${g} query heads share one set of keys and values (${groups}: the brackets above). Each `
    + 'head still asks its own question (its own query), so heads of a group can look at different tokens, but they '
    + `compare it with the same keys and mix the same values. Writing keeps every token's keys and values in a cache; `
    + `with ${Hkv} instead of ${H} heads that cache is ${g} times smaller.`;
}

const views = {
  id: 'attention',
  title: 'Attention: every layer and head over the text so far',
  text: 'Each token attends only to itself and the tokens before it (the upper triangle is empty). Every written token '
    + 'adds a row: where it looked while the model chose what comes after it. The model view has a thumbnail per head, '
    + 'a row per layer; click one to open it in the head view and the heatmap.',
  properties: ['layer', 'head'],
  dependsOn: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'layer', 'head',
    'backend', 'ablate'],
  needsOpen: true,
  compute(ctx, v) {
    const w = writing(ctx, v);
    const { n } = shownOf(w, v);
    const { layers: L, heads: H, kvHeads } = ctx.opened.model.config;
    const N = w.ids.length + n;
    const attentions = new Float32Array(L * H * N * N);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) attentions.set(attentionMatrix(w, n, L, H, l, h),
      (l * H + h) * N * N);
    const ids = [...w.ids, ...w.steps.slice(0, n).map((s) => s.id)];
    // Hkv: the key/value heads (grouped-query attention: fewer than H); GPT-2's config has none, each head its own.
    return { L, H, Hkv: kvHeads ?? H, N, T: w.ids.length,
      tokens: ids.map((id) => tokenAsText(ctx.opened.tokenizer, id)), attentions };
  },
  figures(r, v) {
    const layer = Math.min(v.layer, r.L - 1), head = Math.min(v.head, r.H - 1);
    const notes = [];
    if (layer !== v.layer) notes.push(`layer ${v.layer} does not exist (${r.L} layers): showing ${layer}`);
    if (head !== v.head) notes.push(`head ${v.head} does not exist (${r.H} heads): showing ${head}`);
    const tokens = tokenLabels(r.tokens.map(visibleToken));
    const N = r.N;
    const m = r.attentions.slice((layer * r.H + head) * N * N, (layer * r.H + head + 1) * N * N);
    const which = `layer ${layer}, head ${head}`;
    return [
      ...(notes.length ? [{ kind: 'text', id: 'attention-note', status: 'bad', text: `${notes.join('; ')}.` }] : []),
      { kind: 'modelgrid', id: 'attention-grid', title: `${r.L} layers × ${r.H} heads (0 to 1 per cell)`, layers: r.L,
        heads: r.H, tokens, attentions: r.attentions, selected: { layer, head },
        picks: { layer: 'layer', head: 'head' }, kvHeads: r.Hkv },
      ...(r.Hkv < r.H ? [{ kind: 'text', id: 'attention-kv', text: sharingText(r.H, r.Hkv) }] : []),
      { kind: 'headview', id: 'attention-lines', title: `Head view, ${which}`, tokens, weights: m,
        caption: `Line opacity = weight (1 = solid). ${r.T} prompt tokens, ${N - r.T} written. Hover or click a token `
          + 'to keep only its lines.' },
      { kind: 'heatmap', id: 'attention-heatmap', cell: N > 40 ? 10 : 20, recordLabels: true,
        title: `Attention weights, ${which}`, rows: N, cols: N, values: m, range: heatmapRange(m, v.colourRange),
        xTitle: 'key (attended to)', yTitle: 'query (attending)', xTicks: tokens, yTicks: tokens,
        xNames: tokens.map((t) => `key ${t}`), yNames: tokens.map((t) => `query ${t}`) },
    ];
  },
};

// ---- Head roles ----

/** The random tokens in each copy: the setting, or (0) min(50, (n_positions - 1) / 2) as `attnlab heads`. */
export const roleLength = (v, maxPositions) => (v.roleTokens > 0 ? v.roleTokens : Math.min(50,
  Math.floor((maxPositions - 1) / 2)));

const ROLES = {
  previous: { label: 'previous-token', what: 'mean attention from each token to the one just before it' },
  first: { label: 'first-token (sink)', what: 'mean attention to the first token: a head with nothing to do '
    + 'often rests there' },
  induction: { label: 'induction', what: 'mean attention from each token of the second copy to the token after its '
    + 'first occurrence: the head that lets the model repeat' },
  duplicate: { label: 'duplicate-token', what: 'mean attention from each token of the second copy to its own first '
    + 'occurrence (TransformerLens\'s duplicate-token head): it notices a token has come before' },
};

const roles = {
  id: 'roles',
  title: 'Head roles: what each head does',
  text: 'Every head measured on a sequence of random tokens written twice, after the model\'s end-of-text token. Three '
    + 'scores per head: attention to the previous token, to the first token (a "sink"), and induction: in the second '
    + 'copy, attention to the token that came after the same token in the first copy, which is how a model continues a '
    + 'pattern it has seen. Click a cell to open that head.',
  properties: ['role', 'roleTokens', 'roleSeed', 'roleLayer', 'roleHead'],
  dependsOn: ['role', 'roleTokens', 'roleSeed', 'roleLayer', 'roleHead', 'backend'],
  needsOpen: true,
  compute(ctx, v) {
    const opened = ctx.opened;
    if (!opened) throw new Error('Open a checkpoint first (above).');
    const { model } = opened;
    const c = model.config;
    const n = roleLength(v, c.maxPositions);
    if (1 + 2 * n > c.maxPositions) throw new Error(`1 + 2 × ${n} tokens: this model has position embeddings for `
      + `${c.maxPositions}; choose at most ${Math.floor((c.maxPositions - 1) / 2)} random tokens.`);
    const backend = cpuOf(ctx);
    const key = JSON.stringify([n, v.roleSeed, backend]);
    if (opened.roles?.key !== key) {
      // The whole model's roles; then the loss on the repeated half again with its top induction heads
      // switched off (what an induction head is for); then the heads the page has off, as they were.
      const r = model.headRoles({ n, seed: v.roleSeed, backend });
      const attention = Array.from({ length: c.layers }, (_, l) => model.attention(l));
      const inductionHeads = topHeads(r.induction, c.heads, INDUCTION_K);
      const without = model.headRoles({ n, seed: v.roleSeed, backend, heads: inductionHeads });
      opened.roles = { key, n, r, attention, inductionHeads,
        withoutInduction: { firstCopyLoss: without.firstCopyLoss, secondCopyLoss: without.secondCopyLoss } };
    }
    const { r, attention, inductionHeads, withoutInduction } = opened.roles;
    const layer = Math.min(v.roleLayer, c.layers - 1), head = Math.min(v.roleHead, c.heads - 1);
    const S = r.tokens.length;
    return {
      L: c.layers, H: c.heads, n, layer, head, S,
      tokens: Array.from(r.tokens).map((id) => tokenAsText(opened.tokenizer, id)),
      previous: Float32Array.from(r.previous), first: Float32Array.from(r.first),
      induction: Float32Array.from(r.induction), duplicate: Float32Array.from(r.duplicate),
      firstCopyLoss: r.firstCopyLoss, secondCopyLoss: r.secondCopyLoss,
      inductionHeads, withoutInduction, headAttention: attention[layer].slice(head * S * S, (head + 1) * S * S),
    };
  },
  figures(r, v) {
    const role = ROLES[v.role];
    const scores = r[v.role];
    const heads = Array.from({ length: r.H }, (_, h) => `head ${h}`), layers = Array.from({ length: r.L },
      (_, l) => `layer ${l}`);
    const best = scores.indexOf(maxOf(scores));
    const tokens = tokenLabels(r.tokens.map(visibleToken));
    const pos = tokens.map((t, i) => (i % 5 === 0 ? String(i) : ''));
    return [
      { kind: 'text', id: 'roles-what', text: `${role.label}: ${role.what}. On ${visibleToken(r.tokens[0])} + ${r.n} `
        + `random tokens + the same ${r.n} again (seed ${v.roleSeed}). Loss predicting the first copy `
        + `${r.firstCopyLoss.toFixed(3)}, the second `
        + `${r.secondCopyLoss.toFixed(3)}${r.secondCopyLoss < r.firstCopyLoss ? ' (lower: the model uses the first copy)' : ''}. `
        + `Highest: layer ${Math.floor(best / r.H)}, head ${best % r.H} (${scores[best].toFixed(3)}).` },
      { kind: 'text', id: 'roles-induction-off', text: 'The induction experiment: loss on the repeated half '
        + `${r.secondCopyLoss.toFixed(3)} with every head; ${r.withoutInduction.secondCopyLoss.toFixed(3)} with the `
        + `${r.inductionHeads.length} highest induction heads switched off `
        + `(${r.inductionHeads.map((h) => `${h.layer}.${h.head}`).join(', ')}; the first half: `
        + `${r.firstCopyLoss.toFixed(3)} → ${r.withoutInduction.firstCopyLoss.toFixed(3)}).` },
      { kind: 'heatmap', id: 'roles-grid', cell: 28, recordLabels: true, title: `${role.label} score per head (0 to 1)`,
        rows: r.L, cols: r.H, values: scores, range: [0, 1], xTitle: 'head', yTitle: 'layer',
        xTicks: heads.map((_, h) => String(h)), yTicks: layers.map((_, l) => String(l)), xNames: heads, yNames: layers,
        picks: { row: 'roleLayer', col: 'roleHead' },
        // The head opened below, outlined as the model view outlines its selected head.
        selected: { row: r.layer, col: r.head } },
      { kind: 'heatmap', id: 'roles-head', cell: r.S > 60 ? 5 : 8, title: `Layer ${r.layer}, head ${r.head} on the `
        + `repeated sequence (${r.S} tokens)`,
        rows: r.S, cols: r.S, values: r.headAttention, range: heatmapRange(r.headAttention, v.colourRange),
        xTitle: 'key position', yTitle: 'query position', xTicks: pos, yTicks: pos,
        xNames: tokens.map((t, i) => `key ${i} ${t}`), yNames: tokens.map((t, i) => `query ${i} ${t}`) },
    ];
  },
};

// ---- Logit lens ----

const lens = {
  id: 'lens',
  title: 'Logit lens: what each layer would say',
  text: 'The residual stream after each layer, passed through the final norm (LayerNorm in GPT-2, RMSNorm in Llama and '
    + 'Qwen 2) and the unembedding as if the model stopped there: the likeliest next token at every layer (rows) for '
    + 'every position (columns). The last row is the model\'s own prediction; the rows above show how it '
    + 'forms, layer by layer.',
  properties: [],
  dependsOn: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'backend', 'ablate'],
  needsOpen: true,
  compute(ctx, v) {
    const w = writing(ctx, v);
    const { n } = shownOf(w, v);
    const opened = ctx.opened;
    // The text shown, to the model's last position (a token drawn past it has no pass).
    const ids = [...w.ids, ...w.steps.slice(0, n).map((s) => s.id)].slice(0, opened.model.config.maxPositions);
    const key = JSON.stringify([w.key, ids]);
    if (opened.lens?.key !== key) {
      // One pass over the text shown (the writer puts its own text back in the cache when it writes on).
      opened.model.forward(ids, { backend: cpuOf(ctx), heads: passHeads(opened.model, v.ablate ?? '') });
      opened.lens = { key, cells: opened.model.logitLens() };
    }
    const t = (id) => tokenAsText(opened.tokenizer, id);
    return {
      positions: ids.map(t), T: w.ids.length,
      rows: opened.lens.cells.map((row) => row.map((c) => ({ id: c.id, text: t(c.id), probability: c.probability }))),
    };
  },
  figures(r) {
    const L = r.rows.length - 1;
    return [
      { kind: 'table', id: 'lens-table', title: `Logit lens: the top token after each layer (${L} layers), at each of `
        + `${r.positions.length} positions`,
        corner: 'layer',
        columns: r.positions.map((p, i) => ({ text: visibleToken(p),
          title: `position ${i}${i < r.T ? ' (prompt)' : ' (written)'}` })),
        rows: r.rows.map((row, l) => ({
          header: l === 0 ? 'embeddings' : l === L ? `${l} (output)` : String(l),
          cells: row.map((c) => ({ text: visibleToken(c.text), value: c.probability, id: c.id,
            title: `after ${l === 0 ? 'the embeddings' : `layer ${l}`}: “${visibleToken(c.text)}” `
              + `${percent(c.probability)}` })),
        })),
        caption: 'Shade = the top token\'s probability. Each column predicts the token after the one heading it.' },
    ];
  },
};

// ---- Switch heads off (issue 39, item 4) ----

const INDUCTION_K = 3; // the heads the induction experiment and the button switch off
const ROLE_K = 3;

/**
 * The next token after the text shown, by the whole model and with the heads off: its bars and the
 * likeliest's logit change.
 */
function switchResult(ctx, v) {
  const w = writing(ctx, v);
  const { n } = shownOf(w, v);
  const { model, tokenizer } = ctx.opened;
  const c = model.config;
  const ids = [...w.ids, ...w.steps.slice(0, n).map((s) => s.id)].slice(0, c.maxPositions);
  const ablate = v.ablate ?? '';
  const backend = cpuOf(ctx);
  const softmaxTop = (z, k) => {
    let max = -Infinity;
    for (const x of z) max = Math.max(max, x);
    let sum = 0;
    for (const x of z) sum += Math.exp(x - max);
    return Array.from(z, (x, id) => ({ id, logit: x,
      probability: Math.exp(x - max) / sum })).sort((a, b) => b.logit - a.logit || a.id - b.id).slice(0, k);
  };
  const heads = passHeads(model, ablate);
  model.forward(ids, { backend });
  const whole = model.logits();
  model.forward(ids, { backend, heads }); // the writer puts its own text back in the cache when it writes on
  const off = model.logits();
  const attention = new Float32Array(c.layers * c.heads * ids.length * ids.length);
  for (let l = 0; l < c.layers; l++) attention.set(model.attention(l), l * c.heads * ids.length * ids.length);
  const text = (id) => tokenAsText(tokenizer, id);
  const chosen = softmaxTop(whole, 1)[0];
  // The roles' scores rank the heads for the button (the roles section's, when it has run).
  const roles = ctx.opened.roles?.r ?? null;
  return { L: c.layers, H: c.heads, Hkv: c.kvHeads ?? c.heads, T: ids.length, tokens: ids.map(text), attention, ablate,
    top: softmaxTop(off, 10).map((t) => ({ ...t, text: text(t.id) })),
    wholeTop: softmaxTop(whole, 10).map((t) => ({ ...t, text: text(t.id) })),
    chosen: { id: chosen.id, text: text(chosen.id), logitBefore: chosen.logit, logitAfter: off[chosen.id] },
    roles: roles ? { previous: Float32Array.from(roles.previous), first: Float32Array.from(roles.first),
      induction: Float32Array.from(roles.induction), duplicate: Float32Array.from(roles.duplicate) } : null };
}

const switchOff = {
  id: 'ablate',
  title: 'Switch heads off',
  text: 'Attention weights show where a head looks, not what it does. Click a head to switch it off (its output is '
    + 'zeroed before the output projection, as TransformerLens zeroes hook_z): the text is written again without it, '
    + 'and the bars show the next token with the heads off. Click it again to switch it back on. The button switches '
    + 'off the heads the head-role score chosen above ranks highest.',
  properties: ['ablate'],
  actions: [
    { id: 'ablate-role', label: `Switch off the ${ROLE_K} top heads of the role`, title: 'The heads the head-role '
      + 'score (Head roles, above) ranks highest',
      change: (v, r) => (r?.roles ? { ...v, ablate: headListText(topHeads(r.roles[v.role], r.H, ROLE_K)) } : v) },
    { id: 'ablate-none', label: 'Every head on', change: (v) => ({ ...v, ablate: '' }) },
  ],
  dependsOn: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'backend', 'ablate',
    'role', 'roleTokens', 'roleSeed'],
  needsOpen: true,
  compute: (ctx, v) => switchResult(ctx, v),
  figures(r) {
    const labels = r.top.map((t) => visibleToken(t.text));
    return [
      switchGrid({ layers: r.L, heads: r.H, attentions: r.attention, tokens: tokenLabels(r.tokens.map(visibleToken)),
        ablate: r.ablate, kvHeads: r.Hkv }),
      { kind: 'text', id: 'ablate-off', text: offText(r.ablate) },
      { kind: 'bars', id: 'ablate-bars',
        title: `The next token${r.ablate ? ' with the heads off' : ''} (temperature 1)`,
        values: r.top.map((t) => t.probability), labels, xTitle: 'next token', yTitle: 'probability',
        highlight: r.top.findIndex((t) => t.id === r.chosen.id) },
      { kind: 'text', id: 'ablate-change',
        text: `${r.ablate ? 'With the heads off: ' : ''}${r.top.slice(0, 3).map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(', ')}. `
        + `The whole model's likeliest next token “${visibleToken(r.chosen.text)}”: logit `
        + `${logitChange(r.chosen.logitBefore, r.chosen.logitAfter)}${r.ablate ? ' with the heads off' : ''}. With `
        + 'every head: '
        + `${r.wholeTop.slice(0, 3).map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(', ')}.` },
    ];
  },
};

export const SECTIONS = [write, views, rotary, roles, lens, switchOff, circuits];
