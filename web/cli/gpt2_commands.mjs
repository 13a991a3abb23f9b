// `attnlab generate` and `attnlab heads`: GPT-2 headless (issue 26). Open a GPT-2 checkpoint folder (or
// a Hub id through the Hugging Face cache: hub.mjs) with the registry's opener (web/models/
// gpt2_checkpoint.js), then:
//   generate   tokenize --text (web/tokenizers/gpt2_bpe.js), write with the key/value cache
//              (core/models/gpt2_writer.h: greedy at --temperature 0, else temperature, top-k, top-p, a
//              --seed that reproduces the run), print the prompt's tokens and ids, the written ids and
//              text with each token's probability and the likeliest alternatives; --json adds every
//              layer's and head's attention over the prompt and each written token's attention row.
//   heads      the head-role scores (core/models/gpt2_probes.h): previous-token, first-token and
//              induction per layer and head on [eos] + r + r, and the loss on each copy.
// The flags are declared here until the Writing lab's declaration carries them (as 06_translation.js
// does for `attnlab translate`). Exit codes as every command's: 2 for a bad flag or input, one line.
import path from 'node:path';
import { tokenLabels } from '../labs/token_labels.js';
import { folderSources } from './file_source.mjs';
import { HubError, resolveModelFolder } from './hub.mjs';
import { openCheckpoint } from '../models/registry.js';
import { existsSync, statSync } from 'node:fs';
import { writeModelFigure } from './figure.mjs';

export class Gpt2InputError extends Error {}

const MODEL = { name: 'model', type: 'string', required: true, help: 'DIR|ID: a GPT-2 folder (config.json, vocab.json, merges.txt, model.safetensors or pytorch_model.bin) or a Hub id' };
const JSON_FLAG = { name: 'json', type: 'flag', help: 'one JSON record instead of text' };
const BACKEND = { name: 'backend', type: 'choice', choices: ['scalar', 'simd'], default: 'simd', help: 'the CPU kernel' };

export const GPT2_COMMANDS = {
  generate: {
    about: 'write after a prompt with a GPT-2 checkpoint, token by token, and show its attention',
    flags: [MODEL,
      { name: 'text', type: 'string', required: true, help: 'the prompt' },
      { name: 'max-new-tokens', type: 'int', default: 20, min: 0, max: 4096, help: 'tokens to write at most (it stops earlier at <|endoftext|>)' },
      { name: 'temperature', type: 'number', default: 0, min: 0, max: 100, help: '0: greedy (generate()\'s default); else the logits are divided by it' },
      { name: 'top-k', type: 'int', default: 0, min: 0, max: 1000000, help: 'draw among the k likeliest tokens only (0: all)' },
      { name: 'top-p', type: 'number', default: 1, min: 1e-9, max: 1, help: 'draw within the smallest set of likeliest tokens whose mass reaches p (1: all)' },
      { name: 'seed', type: 'int', default: 0, min: 0, max: Number.MAX_SAFE_INTEGER, help: 'the draws\' seed: the same seed writes the same text' },
      BACKEND, JSON_FLAG,
      { name: 'png', type: 'string', help: 'write the attention heatmap of the whole text (prompt and written tokens; the last layer, its heads averaged) as the page draws it, at 2x' }],
  },
  heads: {
    about: 'score every head of a GPT-2 checkpoint: previous-token, first-token (sink) and induction',
    flags: [MODEL,
      { name: 'n', type: 'int', default: 0, min: 0, max: 100000, help: 'random tokens in each copy (0: min(50, (n_positions - 1) / 2))' },
      { name: 'seed', type: 'int', default: 0, min: 0, max: Number.MAX_SAFE_INTEGER, help: 'the random tokens\' seed' },
      BACKEND, JSON_FLAG],
  },
};

export function gpt2Usage(name) {
  const c = GPT2_COMMANDS[name];
  const lines = c.flags.map((f) => `  --${f.name}${f.type === 'flag' ? '' : ` ${f.type === 'choice' ? f.choices.join('|') : f.type === 'string' ? 'TEXT' : 'N'}`}`.padEnd(30)
    + `${f.help}${f.default !== undefined && f.type !== 'flag' ? ` (default ${f.default})` : ''}${f.required ? ' (required)' : ''}`);
  return [`attnlab ${name}: ${c.about}`, '', `usage: attnlab ${name} [flags]`, ...lines].join('\n');
}

/** argv (after the command) -> {values} or a Gpt2InputError naming the flag. */
export function parseGpt2Args(name, argv) {
  const flags = GPT2_COMMANDS[name].flags;
  const values = Object.fromEntries(flags.filter((f) => f.default !== undefined).map((f) => [f.name, f.default]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [key, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(2, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg.slice(2), undefined];
    const flag = arg.startsWith('--') ? flags.find((f) => f.name === key) : null;
    if (!flag) throw new Gpt2InputError(`unknown argument ${JSON.stringify(arg)} (attnlab ${name} --help lists the flags)`);
    if (flag.type === 'flag') { values[flag.name] = true; continue; }
    const text = inline ?? argv[++i];
    if (text === undefined) throw new Gpt2InputError(`--${flag.name} needs a value`);
    if (flag.type === 'string') { values[flag.name] = text; continue; }
    if (flag.type === 'choice') {
      if (!flag.choices.includes(text)) throw new Gpt2InputError(`--${flag.name} must be ${flag.choices.join(' or ')}, got ${JSON.stringify(text)}`);
      values[flag.name] = text;
      continue;
    }
    const x = Number(text);
    const whole = flag.type === 'int';
    if (text.trim() === '' || !Number.isFinite(x) || (whole && !Number.isInteger(x)) || x < flag.min || x > flag.max) {
      throw new Gpt2InputError(`--${flag.name} must be ${whole ? 'a whole number' : 'a number'} in [${flag.min}, ${flag.max}], got ${JSON.stringify(text)}`);
    }
    values[flag.name] = x;
  }
  for (const f of flags) if (f.required && values[f.name] === undefined) throw new Gpt2InputError(`--${f.name} is required (${f.help})`);
  // Checked before the model runs: a figure whose folder does not exist would be lost after the work.
  if (values.png !== undefined) {
    const folder = path.dirname(path.resolve(values.png));
    if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new Gpt2InputError(`--png ${values.png}: the folder ${folder} does not exist`);
  }
  return values;
}

async function openGpt2(values, module) {
  let folder;
  try {
    folder = await resolveModelFolder(values.model, { expect: 'gpt2' });
  } catch (error) {
    if (error instanceof HubError) throw new Gpt2InputError(error.message);
    throw error;
  }
  try {
    const { opened } = await openCheckpoint(module, await folderSources(folder), { expect: 'gpt2', name: path.basename(path.resolve(folder)) });
    return opened;
  } catch (error) {
    if (error.name === 'CheckpointError' || error.name === 'AttnLabError') throw new Gpt2InputError(error.message);
    throw error;
  }
}

const visible = (text) => JSON.stringify(text);  // a token's text with its spaces and newlines shown
const nested = (flat, dims) => dims.length === 1 ? Array.from(flat.subarray(0, dims[0]))
  : Array.from({ length: dims[0] }, (_, i) => nested(flat.subarray(i * dims.slice(1).reduce((a, b) => a * b, 1)), dims.slice(1)));

/** `attnlab generate`: {record, lines}. */
export async function runGenerate(values, module) {
  const { gpt2, tokenizer } = await openGpt2(values, module);
  try {
    const prompt = tokenizer.encode(values.text);
    if (prompt.ids.length === 0) throw new Gpt2InputError('--text has no tokens: give the prompt some text');
    const { layers: L, heads: H, maxPositions } = gpt2.config;
    if (prompt.ids.length > maxPositions) throw new Gpt2InputError(`--text is ${prompt.ids.length} tokens: this model reads at most ${maxPositions} (n_positions)`);
    const backend = values.backend === 'scalar' ? 'scalar' : 'simd128';
    const settings = { temperature: values.temperature, topK: values['top-k'], topP: values['top-p'], maxNewTokens: values['max-new-tokens'], seed: values.seed };
    let writing, promptAttention;
    try {
      gpt2.beginWriting(prompt.ids, settings, { backend });
      // The prompt's attention is the first pass's: read before the first step moves the cache on.
      const T = prompt.ids.length;
      promptAttention = Array.from({ length: L }, (_, l) => nested(gpt2.attention(l), [H, T, T]));
      const steps = [];
      for (let s = gpt2.nextToken(); s; s = gpt2.nextToken()) steps.push(s);
      writing = { ids: steps.map((s) => s.id), steps, stopReason: gpt2.stopReason };
    } catch (error) {
      if (error.name === 'AttnLabError') throw new Gpt2InputError(error.message);
      throw error;
    }
    const texts = writing.ids.map((id) => tokenizer.tokenText(id));
    const text = tokenizer.decode(writing.ids, { skipSpecialTokens: false });
    const record = {
      prompt: { text: values.text, tokens: prompt.texts, ids: prompt.ids },
      generated: { ids: writing.ids, tokens: texts, text, stopReason: writing.stopReason },
      settings: { temperature: values.temperature, topK: values['top-k'], topP: values['top-p'], maxNewTokens: values['max-new-tokens'], seed: values.seed },
      steps: writing.steps.map((s, i) => ({ id: s.id, token: texts[i], probability: s.probability, position: s.position,
        top: s.top.map((t) => ({ ...t, token: tokenizer.tokenText(t.id) })),
        attention: s.attention.length ? nested(s.attention, [L, H, s.position + 1]) : null })),
      promptAttention,
    };
    const lines = [
      `prompt (${prompt.ids.length} tokens): ${prompt.texts.map(visible).join(' ')}`,
      `ids: ${prompt.ids.join(' ')}`,
      `written (${writing.ids.length}, stopped at ${writing.stopReason}): ${texts.map(visible).join(' ')}`,
      `ids: ${writing.ids.join(' ')}`,
      `text: ${values.text}${text}`,
      `${values.temperature === 0 ? 'greedy' : `temperature ${values.temperature}, top-k ${values['top-k'] || 'all'}, top-p ${values['top-p']}, seed ${values.seed}`}`,
      ...writing.steps.map((s, i) => `  ${String(s.position).padStart(4)} ${visible(texts[i]).padEnd(16)} p=${s.probability.toFixed(4)}  top: ${s.top.slice(0, 5).map((t) => `${visible(tokenizer.tokenText(t.id))} ${t.probability.toFixed(3)}`).join(', ')}`),
    ];
    if (values.png) lines.push(...await writeModelFigure({ model: textHeatmap(record, L, H), png: values.png }));
    return { record, lines };
  } finally {
    gpt2.delete();
  }
}

/**
 * The whole text's attention (the prompt's rows, then each written token's row), the last layer's heads
 * averaged, as a heatmap model: [N, N], causal (a row sees its own position and those before it).
 */
function textHeatmap(record, L, H) {
  const tokens = [...record.prompt.tokens, ...record.generated.tokens];
  const N = tokens.length, T = record.prompt.ids.length;
  const values = new Float32Array(N * N);
  const last = L - 1;
  for (let t = 0; t < T; t++) {
    for (let s = 0; s <= t; s++) {
      let sum = 0;
      for (let h = 0; h < H; h++) sum += record.promptAttention[last][h][t][s];
      values[t * N + s] = sum / H;
    }
  }
  record.steps.forEach((step, i) => {
    if (!step.attention || T + i >= N) return; // the last token drawn is fed through no pass
    const row = T + i;
    for (let s = 0; s <= row && s < step.attention[last][0].length; s++) {
      let sum = 0;
      for (let h = 0; h < H; h++) sum += step.attention[last][h][s];
      values[row * N + s] = sum / H;
    }
  });
  const labels = tokenLabels(tokens.map((t) => (t === '' ? '∅' : t.replace(/ /g, '␣').replace(/\n/g, '↵'))));
  let max = 1e-6;
  for (const x of values) max = Math.max(max, x);
  return { kind: 'heatmap', id: 'writing-attention', cell: N > 40 ? 12 : 22, title: `Attention, last layer (${last}), mean of its ${H} heads`,
    rows: N, cols: N, values, range: [0, max], xTitle: 'key (token read)', yTitle: 'query (token writing the next)',
    xTicks: labels, yTicks: labels };
}

/** `attnlab heads`: {record, lines}. */
export async function runHeads(values, module) {
  const { gpt2 } = await openGpt2(values, module);
  try {
    const { layers: L, heads: H, maxPositions } = gpt2.config;
    const n = values.n || Math.min(50, Math.floor((maxPositions - 1) / 2));
    let r;
    try {
      r = gpt2.headRoles({ n, seed: values.seed, backend: values.backend === 'scalar' ? 'scalar' : 'simd128' });
    } catch (error) {
      if (error.name === 'AttnLabError') throw new Gpt2InputError(error.message);
      throw error;
    }
    const grid = (flat) => Array.from({ length: L }, (_, l) => Array.from(flat.subarray(l * H, (l + 1) * H)));
    const record = { n, seed: values.seed, layers: L, heads: H, tokens: r.tokens,
      previous: grid(r.previous), first: grid(r.first), induction: grid(r.induction),
      loss: { firstCopy: r.firstCopyLoss, secondCopy: r.secondCopyLoss } };
    const lines = [`head roles on [eos] + ${n} random tokens (seed ${values.seed}) repeated: ${L} layers x ${H} heads`,
      `loss on the first copy ${r.firstCopyLoss.toFixed(4)}, on the second ${r.secondCopyLoss.toFixed(4)}`,
      'layer head  previous  first  induction'];
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        lines.push(`${String(l).padStart(5)} ${String(h).padStart(4)}  ${record.previous[l][h].toFixed(4).padStart(8)}  ${record.first[l][h].toFixed(4)}  ${record.induction[l][h].toFixed(4).padStart(9)}`);
      }
    }
    return { record, lines };
  } finally {
    gpt2.delete();
  }
}

/** The command `name` ('generate' | 'heads') on argv -> lines to print; Gpt2InputError for the user's mistakes. */
export async function runGpt2Command(name, argv, loadModule) {
  if (argv.includes('-h') || argv.includes('--help')) return { help: gpt2Usage(name) };
  const values = parseGpt2Args(name, argv);
  const module = await loadModule();
  const { record, lines } = await (name === 'generate' ? runGenerate : runHeads)(values, module);
  return { lines: values.json ? [JSON.stringify(record)] : lines };
}
