// The Writing lab's sections: the opened GPT-2 writes after a prompt, one token at a time (Play, Next
// token), with the next-token distribution as bars; the attention of every layer and head over the
// text so far (model view, head view, heatmap: each written token adds its row); the head roles
// (previous-token, first-token sink, induction) as a layers x heads grid, a click opening that head on
// the repeated random sequence; and the logit lens as a table. No DOM here. ctx.opened: {gpt2,
// tokenizer, name, writing, cacheIds, roles, lens}.
//
// Shapes (docs/writing.md): T prompt tokens, n <= maxNewTokens written tokens shown, N = T + n, V the
// vocabulary, L layers x H heads. The prompt's pass gives attention [H, T, T] per layer; each written
// token's pass (one token through the key/value cache) gives its row [H, 1, S] with S = its position + 1.
//
// How a token is chosen. The model gives the logits of the next token; temperature, top-k and top-p
// turn them into the distribution (the bars); one uniform number draws from it: the core's rule
// (core/models/gpt2_sampling.h, through module.sampling), on logits the page keeps for every step, so a
// moved slider redraws the bars from the kept logits at once, without running the model again. Token
// k's uniform is the k-th of the core's Rng on the seed (sampling.draw's index), so a run whose
// settings do not change is `attnlab generate`'s run, token for token.
// Changing a setting keeps the tokens already shown and forgets those written past them.
import { tokenLabels } from './token_labels.js';

const cpuKernel = (backend) => (backend === 'scalar' ? 'scalar' : 'simd128');
const CPU_LABELS = { scalar: 'scalar', simd128: 'SIMD128' };

// ---- Writing ----

/** A token's text as the figures show it: spaces as ␣, newlines as ↵ (a token's own space is part of it). */
export const visibleToken = (text) => (text === '' ? '∅' : text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥'));

const settingsOf = (v) => ({ temperature: v.temperature, topK: v.topK, topP: v.topP, seed: v.seed });
const tooLong = (T, max) => `The prompt is ${T} tokens: this model reads at most ${max} (n_positions). Shorten it.`;

/** Makes the model's key/value cache hold `ids` (one pass), unless it already does. */
function cacheHolds(opened, ids, backend) {
  const held = opened.cacheIds;
  if (held && held.length === ids.length && held.every((id, i) => id === ids[i])) return;
  opened.gpt2.forward(ids, { backend });
  opened.cacheIds = ids.slice();
}

/** The prompt's pass (cached on the opened model by text and backend): its tokens, attention and last logits. */
function beginPrompt(opened, text, backend) {
  const key = JSON.stringify([text, backend]);
  if (opened.writing?.key === key) return opened.writing;
  const { gpt2, tokenizer } = opened;
  const c = gpt2.config;
  const prompt = tokenizer.encode(text);
  if (!prompt.ids.length) throw new Error('Type a prompt: it has no tokens.');
  if (prompt.ids.length > c.maxPositions) throw new Error(tooLong(prompt.ids.length, c.maxPositions));
  opened.cacheIds = null;
  cacheHolds(opened, prompt.ids, backend);
  opened.writing = {
    key, ids: prompt.ids.slice(), texts: prompt.texts.slice(),
    attention: Array.from({ length: c.layers }, (_, l) => gpt2.attention(l)), // [H, T, T] each
    logits: gpt2.logits(), // the first written token's
    steps: [], settings: null, stop: null,
  };
  return opened.writing;
}

/**
 * Writes until `shown` tokens are written (or writing stops: <|endoftext|>, n_positions), each drawn
 * from the kept logits with the settings of v, then fed through the key/value cache. -> the writing.
 */
export function runWriting(ctx, v) {
  const opened = ctx.opened;
  if (!opened) throw new Error('Open a checkpoint first (above).');
  const text = String(v.text);
  if (!text.trim()) throw new Error('Type a prompt.');
  const backend = cpuKernel(ctx.backend);
  const w = beginPrompt(opened, text, backend);
  const { gpt2, tokenizer } = opened;
  const c = gpt2.config;
  // Tokens written with other settings than these, and not yet shown, are forgotten: the shown ones stay.
  const settings = JSON.stringify(settingsOf(v));
  if (w.settings !== settings) {
    if (w.steps.length > v.shown) { w.steps.length = v.shown; w.stop = null; }
    w.settings = settings;
  }
  if (w.steps.length > v.maxNewTokens) { w.steps.length = v.maxNewTokens; w.stop = null; }
  if (w.stop === 'max_new_tokens' && w.steps.length < v.maxNewTokens) w.stop = null;
  const T = w.ids.length;
  const want = Math.min(v.shown, v.maxNewTokens);
  while (w.steps.length < want && !w.stop) {
    const k = w.steps.length;
    if (T + k >= c.maxPositions) { w.stop = 'n_positions'; break; }
    const z = k === 0 ? w.logits : w.steps[k - 1].logits;
    const s = settingsOf(v);
    const { id, probability } = ctx.module.sampling.draw(z, s, s.seed, k);
    cacheHolds(opened, [...w.ids, ...w.steps.map((st) => st.id)], backend);
    gpt2.step(id, { backend });
    opened.cacheIds.push(id);
    const attention = new Float32Array(c.layers * c.heads * (T + k + 1)); // [L, H, S] the row of its position
    for (let l = 0; l < c.layers; l++) attention.set(gpt2.attention(l), l * c.heads * (T + k + 1));
    w.steps.push({ id, text: tokenizer.tokenText(id), probability, attention, logits: gpt2.logits() });
    if (id === c.eosId) w.stop = 'eos';
  }
  if (!w.stop && w.steps.length >= v.maxNewTokens) w.stop = 'max_new_tokens';
  if (!w.stop && T + w.steps.length >= c.maxPositions) w.stop = 'n_positions';
  return w;
}

const STOPS = { eos: 'it wrote <|endoftext|>', max_new_tokens: 'the maximum of new tokens', n_positions: 'the model\'s last position (n_positions)' };

/** How many written tokens are shown, and whether another can come. */
function shownOf(w, v) {
  const n = Math.min(v.shown, w.steps.length);
  return { n, more: n < w.steps.length || !w.stop };
}

/** The write section's result: the text, the written tokens, the bars. */
function writeResult(ctx, v) {
  const w = runWriting(ctx, v);
  const { n, more } = shownOf(w, v);
  const { tokenizer, gpt2 } = ctx.opened;
  // The bars: the distribution token n-1 was drawn from (marked), or, before any, the first token's.
  const k = Math.max(0, n - 1);
  const z = k === 0 ? w.logits : w.steps[k - 1].logits;
  const top = ctx.module.sampling.top(z, settingsOf(v), 10).map((t) => ({ ...t, text: tokenizer.tokenText(t.id) }));
  // The drawn token's chance under these settings when it is not among the ten (a moved slider).
  const chanceOf = (id) => ctx.module.sampling.top(z, settingsOf(v), z.length).find((t) => t.id === id)?.probability ?? 0;
  const drawn = n > 0 ? w.steps[n - 1] : null;
  const drawnAt = drawn ? top.findIndex((t) => t.id === drawn.id) : -1;
  const backend = cpuKernel(ctx.backend);
  return {
    name: ctx.opened.name, promptTexts: w.texts, promptIds: w.ids, eosId: gpt2.config.eosId,
    written: w.steps.slice(0, n).map((s) => ({ id: s.id, text: s.text, probability: s.probability })),
    total: w.steps.length, stop: n === w.steps.length ? w.stop : null, more,
    bars: { step: n > 0 ? n - 1 : 0, top, drawn: drawn ? { id: drawn.id, text: drawn.text, probability: drawnAt >= 0 ? top[drawnAt].probability : chanceOf(drawn.id), at: drawnAt } : null },
    choice: { backend, reason: `${CPU_LABELS[backend]} ran the model (GPT-2 writes on a CPU kernel: one token at a time through its key/value cache)` },
  };
}

const percent = (p) => `${(100 * p).toFixed(p >= 0.1 ? 1 : 2)}%`;

const write = {
  id: 'write',
  title: 'Write, token by token',
  text: 'GPT-2 reads the prompt, then writes one token at a time: each step gives every token of its vocabulary a probability '
    + '(the bars: the ten likeliest), one is drawn, and it is added to the text before the next step. Temperature reshapes the '
    + 'probabilities (low: the likeliest wins almost always; 0 always picks it; high: flatter, more surprising); top-k and top-p '
    + 'cut the unlikely tail before the draw; the seed fixes the draws, so the same settings write the same text.',
  properties: ['text', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown'],
  actions: [
    { id: 'play', label: '▶ Play', pauseLabel: '❚❚ Pause', title: 'Write the next tokens one at a time (Pause stops it)',
      play: {
        everyMs: 600, // a readable pace: a token, then a look at its bars and rows
        start: (v, r) => (r && !r.more ? { ...v, shown: 1 } : v),
        next: (v, r) => (!r || !r.more || v.shown >= v.maxNewTokens ? null : { ...v, shown: Math.min(v.shown, r.total) + 1 }),
      } },
    { id: 'step', label: 'Next token', title: 'Write one more token',
      change: (v, r) => (r && !r.more ? v : { ...v, shown: Math.min(v.shown, r ? r.total : v.shown) + 1 }) },
    { id: 'restart', label: 'From the start', title: 'Back to the prompt alone (the tokens written stay until a setting changes)',
      change: (v) => ({ ...v, shown: 0 }) },
  ],
  dependsOn: ['text', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'backend'],
  needsOpen: true,
  compute: (ctx, v) => writeResult(ctx, v),
  figures(r, v) {
    const written = r.written.map((t) => t.text).join('');
    const stopped = r.stop ? ` (stopped: ${STOPS[r.stop]})` : '';
    const { top, drawn, step } = r.bars;
    const labels = top.map((t) => visibleToken(t.text));
    const how = v.temperature === 0 ? 'temperature 0: greedy, all on the likeliest'
      : `temperature ${v.temperature}${v.topK ? `, top-k ${v.topK}` : ''}${v.topP < 1 ? `, top-p ${v.topP}` : ''}`;
    const said = drawn
      ? `Token ${step + 1} was drawn from these (${how}): “${visibleToken(drawn.text)}” ${percent(drawn.probability)}${drawn.at < 0 ? ' (not in the ten)' : ' (marked)'}. `
      : `The first token will be drawn from these (${how}). `;
    const title = drawn ? `Token ${step + 1}: the ten likeliest` : 'Token 1: the ten likeliest';
    return [
      { kind: 'text', id: 'written', text: `${r.promptTexts.join('')}${written ? `⟨${written}⟩` : ''}${stopped}` },
      { kind: 'bars', id: 'next-bars', title, values: top.map((t) => t.probability), labels, xTitle: 'next token',
        yTitle: 'probability', highlight: drawn && drawn.at >= 0 ? drawn.at : undefined },
      { kind: 'text', id: 'next-top', text: `${said}${top.map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(' · ')}` },
      { kind: 'text', id: 'written-tokens',
        text: `Prompt (${r.promptIds.length} tokens): ${r.promptTexts.map(visibleToken).join(' | ')} · written (${r.written.length}): `
          + `${r.written.map((t) => `${visibleToken(t.text)} ${percent(t.probability)}`).join(' | ') || 'none yet: press Play or Next token'}` },
      { kind: 'text', id: 'written-ids', text: `ids: ${r.promptIds.join(' ')} · written: ${r.written.map((t) => t.id).join(' ')}` },
    ];
  },
};

// ---- Attention over the text so far ----

/** The attention of layer l, head h over the N = T + n tokens shown: [N, N], causal. */
function attentionMatrix(w, n, L, H, l, h) {
  const T = w.ids.length, N = T + n, m = new Float32Array(N * N);
  const prompt = w.attention[l];
  for (let i = 0; i < T; i++) m.set(prompt.subarray((h * T + i) * T, (h * T + i + 1) * T), i * N);
  for (let k = 0; k < n; k++) {
    const S = T + k + 1, row = w.steps[k].attention;
    m.set(row.subarray((l * H + h) * S, (l * H + h + 1) * S), (T + k) * N);
  }
  return m;
}

const maxOf = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);

const views = {
  id: 'attention',
  title: 'Attention: every layer and head over the text so far',
  text: 'Each token attends only to itself and the tokens before it (the upper triangle is empty). Every written token adds a row: '
    + 'where it looked while the model chose what comes after it. The model view has a thumbnail per head, a row per layer; click '
    + 'one to open it in the head view and the heatmap.',
  properties: ['layer', 'head'],
  dependsOn: ['text', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'layer', 'head', 'backend'],
  needsOpen: true,
  compute(ctx, v) {
    const w = runWriting(ctx, v);
    const { n } = shownOf(w, v);
    const { layers: L, heads: H } = ctx.opened.gpt2.config;
    const N = w.ids.length + n;
    const attentions = new Float32Array(L * H * N * N);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) attentions.set(attentionMatrix(w, n, L, H, l, h), (l * H + h) * N * N);
    return { L, H, N, T: w.ids.length, tokens: [...w.texts, ...w.steps.slice(0, n).map((s) => s.text)], attentions };
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
      { kind: 'modelgrid', id: 'attention-grid', title: `${r.L} layers × ${r.H} heads (0 to 1 per cell)`, layers: r.L, heads: r.H, tokens,
        attentions: r.attentions, selected: { layer, head }, picks: { layer: 'layer', head: 'head' } },
      { kind: 'headview', id: 'attention-lines', title: `Head view, ${which}`, tokens, weights: m,
        caption: `Line opacity = weight (1 = solid). ${r.T} prompt tokens, ${N - r.T} written. Hover or click a token to keep only its lines.` },
      { kind: 'heatmap', id: 'attention-heatmap', cell: N > 40 ? 10 : 20, recordLabels: true, title: `Attention weights, ${which}`,
        rows: N, cols: N, values: m, range: [0, Math.max(1e-6, maxOf(m))], xTitle: 'key (attended to)', yTitle: 'query (attending)',
        xTicks: tokens, yTicks: tokens, xNames: tokens.map((t) => `key ${t}`), yNames: tokens.map((t) => `query ${t}`) },
    ];
  },
};

// ---- Head roles ----

/** The random tokens in each copy: the setting, or (0) min(50, (n_positions - 1) / 2) as `attnlab heads`. */
export const roleLength = (v, maxPositions) => (v.roleTokens > 0 ? v.roleTokens : Math.min(50, Math.floor((maxPositions - 1) / 2)));

const ROLES = {
  previous: { label: 'previous-token', what: 'mean attention from each token to the one just before it' },
  first: { label: 'first-token (sink)', what: 'mean attention to the first token, <|endoftext|>: a head with nothing to do often rests there' },
  induction: { label: 'induction', what: 'mean attention from each token of the second copy to the token after its first occurrence: the head that lets the model repeat' },
};

const roles = {
  id: 'roles',
  title: 'Head roles: what each head does',
  text: 'Every head measured on a sequence of random tokens written twice, after <|endoftext|>. Three scores per head: attention to '
    + 'the previous token, to the first token (a "sink"), and induction: in the second copy, attention to the token that came '
    + 'after the same token in the first copy, which is how a model continues a pattern it has seen. Click a cell to open that head.',
  properties: ['role', 'roleTokens', 'roleSeed', 'roleLayer', 'roleHead'],
  dependsOn: ['role', 'roleTokens', 'roleSeed', 'roleLayer', 'roleHead', 'backend'],
  needsOpen: true,
  compute(ctx, v) {
    const opened = ctx.opened;
    if (!opened) throw new Error('Open a checkpoint first (above).');
    const { gpt2 } = opened;
    const c = gpt2.config;
    const n = roleLength(v, c.maxPositions);
    if (1 + 2 * n > c.maxPositions) throw new Error(`1 + 2 × ${n} tokens: this model has position embeddings for ${c.maxPositions}; choose at most ${Math.floor((c.maxPositions - 1) / 2)} random tokens.`);
    const backend = cpuKernel(ctx.backend);
    const key = JSON.stringify([n, v.roleSeed, backend]);
    if (opened.roles?.key !== key) {
      const r = gpt2.headRoles({ n, seed: v.roleSeed, backend });
      opened.cacheIds = null; // the probe's pass replaced the writing's key/value cache
      opened.roles = { key, n, r, attention: Array.from({ length: c.layers }, (_, l) => gpt2.attention(l)) };
    }
    const { r, attention } = opened.roles;
    const layer = Math.min(v.roleLayer, c.layers - 1), head = Math.min(v.roleHead, c.heads - 1);
    const S = r.tokens.length;
    return {
      L: c.layers, H: c.heads, n, layer, head, S, tokens: Array.from(r.tokens).map((id) => opened.tokenizer.tokenText(id)),
      previous: Float32Array.from(r.previous), first: Float32Array.from(r.first), induction: Float32Array.from(r.induction),
      firstCopyLoss: r.firstCopyLoss, secondCopyLoss: r.secondCopyLoss,
      headAttention: attention[layer].slice(head * S * S, (head + 1) * S * S),
    };
  },
  figures(r, v) {
    const role = ROLES[v.role];
    const scores = r[v.role];
    const heads = Array.from({ length: r.H }, (_, h) => `head ${h}`), layers = Array.from({ length: r.L }, (_, l) => `layer ${l}`);
    const best = scores.indexOf(maxOf(scores));
    const tokens = tokenLabels(r.tokens.map(visibleToken));
    const pos = tokens.map((t, i) => (i % 5 === 0 ? String(i) : ''));
    return [
      { kind: 'text', id: 'roles-what', text: `${role.label}: ${role.what}. On <|endoftext|> + ${r.n} random tokens + the same ${r.n} again (seed ${v.roleSeed}). `
        + `Loss predicting the first copy ${r.firstCopyLoss.toFixed(3)}, the second ${r.secondCopyLoss.toFixed(3)}${r.secondCopyLoss < r.firstCopyLoss ? ' (lower: the model uses the first copy)' : ''}. `
        + `Highest: layer ${Math.floor(best / r.H)}, head ${best % r.H} (${scores[best].toFixed(3)}).` },
      { kind: 'heatmap', id: 'roles-grid', cell: 28, recordLabels: true, title: `${role.label} score per head (0 to 1)`, rows: r.L, cols: r.H,
        values: scores, range: [0, 1], xTitle: 'head', yTitle: 'layer', xTicks: heads.map((_, h) => String(h)), yTicks: layers.map((_, l) => String(l)),
        xNames: heads, yNames: layers, picks: { row: 'roleLayer', col: 'roleHead' } },
      { kind: 'heatmap', id: 'roles-head', cell: r.S > 60 ? 5 : 8, title: `Layer ${r.layer}, head ${r.head} on the repeated sequence (${r.S} tokens)`,
        rows: r.S, cols: r.S, values: r.headAttention, range: [0, Math.max(1e-6, maxOf(r.headAttention))], xTitle: 'key position', yTitle: 'query position',
        xTicks: pos, yTicks: pos, xNames: tokens.map((t, i) => `key ${i} ${t}`), yNames: tokens.map((t, i) => `query ${i} ${t}`) },
    ];
  },
};

// ---- Logit lens ----

const lens = {
  id: 'lens',
  title: 'Logit lens: what each layer would say',
  text: 'The residual stream after each layer, passed through the final LayerNorm and the unembedding as if the model stopped there: '
    + 'the likeliest next token at every layer (rows) for every position (columns). The last row is the model\'s own prediction; '
    + 'the rows above show how it forms, layer by layer.',
  properties: [],
  dependsOn: ['text', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'shown', 'backend'],
  needsOpen: true,
  compute(ctx, v) {
    const w = runWriting(ctx, v);
    const { n } = shownOf(w, v);
    const opened = ctx.opened;
    const ids = [...w.ids, ...w.steps.slice(0, n).map((s) => s.id)];
    const key = JSON.stringify([w.key, ids]);
    if (opened.lens?.key !== key) {
      // One pass over the text shown (the cache then holds it: the writing goes on from there).
      opened.gpt2.forward(ids, { backend: cpuKernel(ctx.backend) });
      opened.cacheIds = ids.slice();
      opened.lens = { key, cells: opened.gpt2.logitLens() };
    }
    const t = (id) => opened.tokenizer.tokenText(id);
    return {
      positions: ids.map(t), T: w.ids.length,
      rows: opened.lens.cells.map((row) => row.map((c) => ({ id: c.id, text: t(c.id), probability: c.probability }))),
    };
  },
  figures(r) {
    const L = r.rows.length - 1;
    return [
      { kind: 'table', id: 'lens-table', title: `Logit lens: the top token after each layer (${L} layers), at each of ${r.positions.length} positions`,
        corner: 'layer',
        columns: r.positions.map((p, i) => ({ text: visibleToken(p), title: `position ${i}${i < r.T ? ' (prompt)' : ' (written)'}` })),
        rows: r.rows.map((row, l) => ({
          header: l === 0 ? 'embeddings' : l === L ? `${l} (output)` : String(l),
          cells: row.map((c) => ({ text: visibleToken(c.text), value: c.probability, id: c.id,
            title: `after ${l === 0 ? 'the embeddings' : `layer ${l}`}: “${visibleToken(c.text)}” ${percent(c.probability)}` })),
        })),
        caption: 'Shade = the top token\'s probability. Each column predicts the token after the one heading it.' },
    ];
  },
};

export const SECTIONS = [write, views, roles, lens];
