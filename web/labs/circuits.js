// Circuits on an open decoder (issue 44): direct logit attribution and activation patching
// (core/models/circuits.h does the maths), as records the CLI prints (`attnlab attribute`, `attnlab
// patch`) and the Writing lab's Circuits section draws, every number under TransformerLens's hook name
// so a student finds it again in a notebook. The activation cache exports as safetensors or JSON under
// the same names. Pure functions over the model and its tokenizer, no DOM.
import { tokenAsText } from './visible_text.js';

/** The five patching sites (core/models/intervention.h), each with its hook and what its grid's columns are. */
export const PATCH_SITES = Object.freeze([
  { name: 'resid_pre', hook: 'blocks.{L}.hook_resid_pre', by: 'position',
    about: 'the residual stream entering each layer, at one position' },
  { name: 'z', hook: 'blocks.{L}.attn.hook_z', by: 'head', about: 'one head\'s output (before W_O), at every position' },
  { name: 'pattern', hook: 'blocks.{L}.attn.hook_pattern', by: 'head',
    about: 'one head\'s attention pattern, every query row (its output recomputed from it)' },
  { name: 'attn_out', hook: 'blocks.{L}.hook_attn_out', by: 'position',
    about: 'what each layer\'s attention adds to the residual, at one position' },
  { name: 'mlp_out', hook: 'blocks.{L}.hook_mlp_out', by: 'position',
    about: 'what each layer\'s MLP adds to the residual, at one position' },
]);
export const PATCH_SITE_NAMES = PATCH_SITES.map((s) => s.name);

/**
 * The Circuits section's settings, declared once for every lab that has one (the Writing lab's, the
 * Induction lab's): the prompt pair and the two answers (each lab's default and help: {clean, corrupt,
 * answer, wrong: {default, help}}), and the sites to patch (whatHelp: a lab's sentence after the sites').
 * One name, range and label each, for the page, the link and the CLI.
 */
export function circuitsProperties({ clean, corrupt, answer, wrong, whatHelp = '' }) {
  const field = (name, label, maxLength, { default: value, help }) => ({ name, type: 'text', default: value,
    maxLength, label, help, effect: 'view', page: true, section: 'circuits' });
  return [
    field('clean', 'Clean prompt', 2000, clean),
    field('corrupt', 'Corrupted prompt', 2000, corrupt),
    field('answer', 'Answer', 100, answer),
    field('wrong', 'Wrong answer', 100, wrong),
    { name: 'what', type: 'names', names: PATCH_SITE_NAMES, default: ['resid_pre', 'z'], label: 'Patch',
      item: 'patching site', effect: 'view', page: true, section: 'circuits',
      help: 'Which activations to patch, one grid each (TransformerLens\'s hook names): resid_pre (the residual entering a '
        + 'layer, by position), z (a head\'s output, every position), pattern (a head\'s attention), attn_out and '
        + `mlp_out (what a layer's attention and MLP add, by position).${whatHelp ? ` ${whatHelp}` : ''}` },
  ];
}
const siteOf = (name) => PATCH_SITES.find((s) => s.name === name);

/** A prompt pair or answers the model cannot be asked about: one sentence, the user's to fix. */
export class CircuitsInputError extends Error {}

const shown = (text) => JSON.stringify(text);
// Each token's own text (" toy", not the vocabulary's "Ġtoy"), as the figures and `attnlab generate` show it.
const textsOf = (tokenizer, encoded) => encoded.ids.map((id) => tokenAsText(tokenizer, id));

/**
 * The token `word` is when it continues `prompt` after a space (as " Mary" follows "gave a drink to"):
 * the one token encode(prompt + ' ' + word) adds to encode(prompt), so every tokenizer kind (GPT-2's
 * byte-level BPE, SentencePiece's ▁) is asked the same way. -> {id, text}, or a CircuitsInputError
 * naming the word and its tokens.
 */
export function answerToken(tokenizer, prompt, word, which = 'the answer') {
  // A word after a space (GPT-2's " Mary"); a tokenizer may say otherwise (the Induction lab's text task:
  // the next character, nothing between).
  const separator = tokenizer.answerSeparator ?? ' ';
  const text = separator === '' ? String(word ?? '') : String(word ?? '').trim();
  if (!text) {
    throw new CircuitsInputError(`${which} is empty: give the word the model should (or should not) write next`);
  }
  const before = tokenizer.encode(prompt).ids;
  const after = tokenizer.encode(`${prompt}${separator}${text}`);
  const prefix = before.length <= after.ids.length && before.every((id, i) => after.ids[i] === id);
  const added = after.ids.slice(before.length);
  if (!prefix || added.length !== 1) {
    const pieces = prefix ? added.map((id) => tokenAsText(tokenizer, id)) : [];
    throw new CircuitsInputError(`${which} ${shown(text)} after the prompt is ${prefix ? `${added.length} tokens `
      + `(${pieces.map(shown).join(', ')})` : 'not a token of its own (it joins the prompt\'s last token)'}: the `
      + 'logit difference compares two single tokens; choose a word the tokenizer keeps whole');
  }
  return { id: added[0], text: tokenAsText(tokenizer, added[0]) };
}

/** Both answers, refused together when they are the same token. */
export function answerPair(tokenizer, prompt, answer, wrong) {
  const a = answerToken(tokenizer, prompt, answer, 'the answer');
  const b = answerToken(tokenizer, prompt, wrong, 'the wrong answer');
  if (a.id === b.id) throw new CircuitsInputError(`the answer and the wrong answer are the same token (${shown(a.text)}): `
    + 'their difference is always 0');
  return { answer: a, wrong: b };
}

/** The clean and corrupted prompts' tokens, refused in one sentence when their lengths differ. */
export function promptPair(tokenizer, clean, corrupt) {
  const c = tokenizer.encode(String(clean)), k = tokenizer.encode(String(corrupt));
  if (!c.ids.length || !k.ids.length) throw new CircuitsInputError('both prompts need some text');
  if (c.ids.length !== k.ids.length) {
    throw new CircuitsInputError(`the clean prompt is ${c.ids.length} tokens and the corrupted one ${k.ids.length}: `
      + 'patching copies an activation from one run into the same place of the other, so both must split into the '
      + 'same number of tokens (change a word for one the tokenizer splits the same way)');
  }
  return { clean: c, corrupt: k };
}

const rows = (flat, L, width) => Array.from({ length: L }, (_, l) => Array.from(flat.subarray(l * width, (l + 1) * width)));

/**
 * Direct logit attribution of logit(answer) - logit(wrong) after `text` -> the record `attnlab
 * attribute --json` prints: the prompt, the two tokens, each part (heads [layer][head], attnBias [layer],
 * mlp [layer], embed, posEmbed, constant), their total beside the model's own difference, and each
 * part's hook.
 */
export function attributionRecord(model, tokenizer, text, answerWord, wrongWord, { backend } = {}) {
  const prompt = tokenizer.encode(String(text));
  if (!prompt.ids.length) throw new CircuitsInputError('the prompt has no tokens: give it some text');
  const { answer, wrong } = answerPair(tokenizer, String(text), answerWord, wrongWord);
  const a = model.attribute(prompt.ids, answer.id, wrong.id, { backend });
  const { layers: L, heads: H } = a;
  return {
    prompt: { text: String(text), tokens: textsOf(tokenizer, prompt), ids: prompt.ids }, answer, wrong,
    metric: 'logit(answer) - logit(wrong) at the last position',
    logitDiff: a.logitDiff, total: a.total,
    embed: a.embed, posEmbed: a.posEmbed, heads: rows(a.head, L, H), attnBias: Array.from(a.attnBias),
    mlp: Array.from(a.mlp), constant: a.constant, finalNorm: a.finalNorm, outputBias: a.outputBias,
    hooks: { embed: 'hook_embed', posEmbed: 'hook_pos_embed', heads: 'blocks.{L}.attn.hook_z (times W_O[head])',
      attnBias: 'blocks.{L}.attn.b_O', mlp: 'blocks.{L}.hook_mlp_out',
      ...(a.finalNorm ? { scale: 'ln_final.hook_scale (of the whole residual, as apply_ln_to_stack)' } : {}) },
  };
}

/** What an attribution's constant is, in words: the final norm's bias, the unembedding's own (b_U), or both. */
export function constantWords(r) {
  if (r.finalNorm && r.outputBias) return 'the final norm\'s bias and b_U';
  return r.outputBias ? 'b_U' : 'the final norm\'s bias';
}

/**
 * Activation patching of the corrupted prompt with the clean run's activations, site by site and layer
 * by layer -> the record `attnlab patch --json` prints: the prompts, the answers, the clean and corrupted
 * differences and, per site, its grid [layer][position or head] normalised (patched - corrupted) /
 * (clean - corrupted). onRow(done, total), awaited after each layer's row (the page's worker reads its
 * messages there and may throw to stop), and the clean run's cache when `keepCache`.
 */
export async function patchingRecord(model, tokenizer, cleanText, corruptText, answerWord, wrongWord,
  { sites = PATCH_SITE_NAMES, backend, onRow, keepCache = false } = {}) {
  for (const s of sites) {
    if (!siteOf(s)) throw new CircuitsInputError(`no patching site '${s}': choose from ${PATCH_SITE_NAMES.join(', ')}`);
  }
  const { clean, corrupt } = promptPair(tokenizer, cleanText, corruptText);
  const { answer, wrong } = answerPair(tokenizer, String(cleanText), answerWord, wrongWord);
  const begun = model.beginPatching(clean.ids, corrupt.ids, answer.id, wrong.id, { backend });
  const { layers: L } = model.config;
  const total = sites.length * L;
  const grids = {};
  let done = 0;
  for (const name of sites) {
    const site = siteOf(name);
    const values = [];
    for (let l = 0; l < L; l++) {
      values.push(Array.from(model.patchRow(name, l)));
      done += 1;
      if (onRow) await onRow(done, total);
    }
    grids[name] = { hook: site.hook, rows: 'layer', cols: site.by, values };
  }
  return {
    clean: { text: String(cleanText), tokens: textsOf(tokenizer, clean), ids: clean.ids },
    corrupt: { text: String(corruptText), tokens: textsOf(tokenizer, corrupt), ids: corrupt.ids }, answer, wrong,
    metric: '(patched - corrupted) / (clean - corrupted), the logit difference logit(answer) - logit(wrong) at the '
      + 'last position',
    cleanDiff: begun.cleanDiff, corruptDiff: begun.corruptDiff, grids,
    ...(keepCache ? { cache: model.patchedCleanCache() } : {}),
  };
}

// A page keeps a run's cache for its download only up to this many floats (64 MB): gpt2's over 16 tokens is
// about 3 million; a long prompt's attention patterns grow as its square.
export const MAX_PAGE_CACHE_FLOATS = 16 * 1024 * 1024;

/**
 * An upper bound of a cache's floats (core/models/activation_cache.h's list) for a decoder's config
 * (its summary's fields: hiddenSize, heads, headDim, innerSize, layers) over T tokens: per layer the
 * residuals, norms and outputs [T, E], q, k, v, their rotations and z [T, H, D], the scores and
 * the pattern [H, T, T] and the MLP's [T, F].
 */
export function cacheFloatBound(c, T) {
  const E = c.hiddenSize, H = c.heads, D = c.headDim ?? Math.ceil(E / H), F = c.innerSize ?? 4 * E;
  return T * (3 * E + 2) + c.layers * (T * (8 * E + 3 + 6 * H * D + 3 * F) + 2 * H * T * T);
}

// A macrotask between patching rows: the page's worker reads its messages there (a newer request, Pause).
const breathe = () => new Promise((resolve) => { setTimeout(resolve, 0); });

/**
 * A page's Circuits section run (the Writing lab's and the Induction lab's): the clean prompt's attribution
 * and the corrupted run's patching grids of `sites`, the worker breathing between rows; the clean run's
 * cache kept for its download while it is within MAX_PAGE_CACHE_FLOATS. -> {L, H, attribution, patching,
 * cacheBound (the cache's floats at most)}
 */
export async function pageCircuits(model, tokenizer, { clean, corrupt, answer, wrong }, { sites, backend }) {
  const attribution = attributionRecord(model, tokenizer, clean, answer, wrong, { backend });
  const cacheBound = cacheFloatBound(model.config, attribution.prompt.ids.length);
  const patching = await patchingRecord(model, tokenizer, clean, corrupt, answer, wrong,
    { sites, backend, onRow: breathe, keepCache: cacheBound <= MAX_PAGE_CACHE_FLOATS });
  const { layers: L, heads: H } = model.config;
  return { L, H, attribution, patching, cacheBound };
}

/** A model's file name as the stem of a section's downloads (the cache's): no .safetensors, no odd characters. */
export const downloadStem = (name) => String(name).replace(/\.safetensors$/i, '').replace(/[^\w.-]+/g, '-');

/** A captured cache [{name, shape, values}] -> safetensors' tensors {name: {shape, data}} (F32, -inf kept). */
export const cacheTensors = (cache) => Object.fromEntries(cache.map((a) => [a.name, { shape: a.shape, data: a.values }]));

/**
 * A captured cache as JSON: {name: {shape, values (nested arrays)}}; the masked attention scores' -inf,
 * which JSON cannot write, as null (safetensors keeps them).
 */
export function cacheJson(cache) {
  const nest = (flat, shape) => {
    if (shape.length <= 1) return Array.from(flat, (x) => (Number.isFinite(x) ? x : null));
    const inner = shape.slice(1).reduce((a, b) => a * b, 1);
    return Array.from({ length: shape[0] }, (_, i) => nest(flat.subarray(i * inner, (i + 1) * inner), shape.slice(1)));
  };
  return Object.fromEntries(cache.map((a) => [a.name, { shape: a.shape, values: nest(a.values, a.shape) }]));
}
