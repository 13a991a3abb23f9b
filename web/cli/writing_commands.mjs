// `attnlab generate` and `attnlab heads`: the Writing lab headless (issue 26). Open a decoder (GPT-2, Llama, Qwen 2)
// folder (or a Hub id through the Hugging Face cache: hub.mjs) with the lab's own opener, then:
//   generate   tokenize --text (web/tokenizers/hf_tokenizer.js), or --chat's question in the model's chat
//              template (web/tokenizers/chat_template.js), write with the key/value cache
//              (core/models/writer.h: greedy at --temperature 0, else temperature, top-k, top-p, a
//              --seed that reproduces the run), print the prompt's tokens and ids, the written ids and
//              text with each token's probability and the likeliest alternatives; --json adds every
//              layer's and head's attention over the prompt and each written token's attention row.
//   heads      the head-role scores (core/models/decoder_probes.h): previous-token, first-token,
//              induction and duplicate-token per layer and head on [eos] + r + r, and the loss on each copy.
// Their flags are the Writing lab's settings, declared once in web/labs/07_writing.js (its `commands`),
// with the page's names, ranges and defaults. Exit codes as every command's: 2 for a bad flag or input,
// one line.
//
// generate --json writes its record in pieces as the writer goes (one attention row at a time), so that
// a 1,024-token run on gpt2 never holds its record (about 2 GB of JSON) in memory: the fields come in
// the order they are known, the prompt's attention before the steps and `generated` last.
import { passHeads } from '../labs/head_list.js';
import { cpuKernel } from '../backends.js';
import { tokenLabels } from '../labs/token_labels.js';
import { tokenAsText } from '../labs/visible_text.js';
import { writingLab } from '../labs/07_writing.js';
import { openCommandCheckpoint } from './checkpoint_command.mjs';
import { ChatError, chatPrompt } from '../tokenizers/chat_template.js';
import { writingEnds } from '../tokenizers/tokenizer.js';
import { writeModelFigure } from './figure.mjs';

export class WritingInputError extends Error {}


async function openDecoder(values, module) {
  const { state } = await openCommandCheckpoint(writingLab, values, module, WritingInputError);
  return state;
}

const visible = (text) => JSON.stringify(text);  // a token's text with its spaces and newlines shown
// A token as the page shows it: a part of a UTF-8 character as its bytes (<0xE2>), never a bare U+FFFD.
const shownToken = (tokenizer, id) => visible(tokenAsText(tokenizer, id));

/**
 * Writes `flat` (float32, dims outermost first) as nested JSON arrays, one innermost row a piece: the
 * same text as JSON.stringify of the nested arrays, without ever holding more than one row's.
 */
async function writeNested(write, flat, dims) {
  if (dims.length === 1) return write(JSON.stringify(Array.from(flat.subarray(0, dims[0]))));
  const inner = dims.slice(1).reduce((a, b) => a * b, 1);
  await write('[');
  for (let i = 0; i < dims[0]; i++) {
    if (i > 0) await write(',');
    await writeNested(write, flat.subarray(i * inner, (i + 1) * inner), dims.slice(1));
  }
  return write(']');
}

/** The mean over heads of one layer's attention [H, rows, S] -> rows x S. */
function headMean(flat, H, rows, S) {
  const mean = new Float32Array(rows * S);
  for (let h = 0; h < H; h++) for (let k = 0; k < rows * S; k++) mean[k] += flat[h * rows * S + k];
  for (let k = 0; k < mean.length; k++) mean[k] /= H;
  return mean;
}

/**
 * `attnlab generate`. values: the lab's settings and the command's options; write(text): awaits the
 * reader. --json: {"prompt", "settings", "promptAttention", "steps", "generated"} on one line, written as
 * it is computed; else the text lines. --png: the whole text's attention heatmap after them.
 */
export async function runGenerate(values, module, write) {
  const { model, tokenizer } = await openDecoder(values, module);
  try {
    // --chat: the question in the model's chat template (web/tokenizers/chat_template.js), in place of --text.
    let prompt;
    try {
      prompt = values.chat ? chatPrompt(tokenizer, values.chat) : { text: values.text,
        ...tokenizer.encode(values.text) };
    } catch (error) {
      throw error instanceof ChatError ? new WritingInputError(`--chat: ${error.message}`) : error;
    }
    const flag = values.chat ? '--chat (in its template)' : '--text';
    if (prompt.ids.length === 0) throw new WritingInputError(`${flag} has no tokens: give the prompt some text`);
    const { layers: L, heads: H, maxPositions } = model.config;
    if (prompt.ids.length > maxPositions) throw new WritingInputError(`${flag} is ${prompt.ids.length} tokens: this `
      + `model reads at most ${maxPositions} (n_positions)`);
    const T = prompt.ids.length;
    const settings = { temperature: values.temperature, topK: values.topK, topP: values.topP,
      maxNewTokens: values.maxNewTokens, seed: values.seed };
    const json = values.json;
    // For --png: the last layer's head mean, the prompt's rows and each written token's row.
    const lastRows = [];
    const steps = [];
    const attnLabError = (error) => (error.name === 'AttnLabError' ? new WritingInputError(error.message) : error);
    let headsOff;
    try {
      headsOff = passHeads(model, values.ablate ?? '');
    } catch (error) {
      throw new WritingInputError(error.message);
    }
    try {
      // The text ends at any of the tokenizer's end ids (generation_config.json's list, the chat turn's end).
      model.beginWriting(prompt.ids, { ...settings, ...writingEnds(tokenizer), headsOff },
        { backend: cpuKernel(values.backend, module.cpuBackends) });
    } catch (error) {
      throw attnLabError(error);
    }
    // --ablate: the heads switched off, after the settings (a run without it keeps its record as it was).
    const ablated = values.ablate ? `"ablate":${JSON.stringify(values.ablate)},` : '';
    if (json) await write(`{"prompt":${JSON.stringify({ text: prompt.text, ...(values.chat ? { chat: values.chat } : {}), tokens: prompt.texts, ids: prompt.ids })},"settings":${JSON.stringify(settings)},${ablated}"promptAttention":[`);
    // The prompt's attention is the first pass's: read before the first step moves the cache on.
    for (let l = 0; l < L; l++) {
      const attention = model.attention(l);
      if (json) {
        if (l > 0) await write(',');
        await writeNested(write, attention, [H, T, T]);
      }
      if (values.png && l === L - 1) lastRows.push(headMean(attention, H, T, T));
    }
    if (json) await write('],"steps":[');
    for (let s = nextToken(model, attnLabError); s; s = nextToken(model, attnLabError)) {
      const token = tokenizer.tokenText(s.id);
      if (json) {
        const top = s.top.map((t) => ({ ...t, token: tokenizer.tokenText(t.id) }));
        // The step's fields, then its attention [L][H][position + 1] (null where it has none) row by row.
        const fields = JSON.stringify({ id: s.id, token, probability: s.probability, position: s.position, top });
        await write(`${steps.length > 0 ? ',' : ''}${fields.slice(0, -1)},"attention":`);
        if (s.attention.length) await writeNested(write, s.attention, [L, H, s.position + 1]);
        else await write('null');
        await write('}');
      }
      if (values.png) lastRows.push(s.attention.length ? headMean(s.attention.subarray((L - 1) * H * (s.position + 1)),
        H, 1, s.position + 1) : null);
      steps.push({ id: s.id, probability: s.probability, position: s.position, top: s.top });  // not its attention
    }
    const ids = steps.map((s) => s.id);
    const texts = ids.map((id) => tokenizer.tokenText(id));
    const text = tokenizer.decode(ids, { skipSpecialTokens: false });
    const stopReason = model.stopReason;
    const lines = [];
    if (json) await write(`],"generated":${JSON.stringify({ ids, tokens: texts, text, stopReason })}}\n`);
    else {
      lines.push(
        `prompt (${T} tokens): ${prompt.ids.map((id) => shownToken(tokenizer, id)).join(' ')}`,
        `ids: ${prompt.ids.join(' ')}`,
        `written (${ids.length}, stopped at ${stopReason}): ${ids.map((id) => shownToken(tokenizer, id)).join(' ')}`,
        `ids: ${ids.join(' ')}`,
        `text: ${prompt.text}${text}`,
        `${values.temperature === 0 ? 'greedy' : `temperature ${values.temperature}, top-k ${values.topK || 'all'}, top-p ${values.topP}, seed ${values.seed}`}`,
        ...(values.ablate ? [`heads switched off: ${values.ablate}`] : []),
        ...steps.map((s, i) => `  ${String(s.position).padStart(4)} ${shownToken(tokenizer, ids[i]).padEnd(16)} p=${s.probability.toFixed(4)}  top: ${s.top.slice(0, 5).map((t) => `${shownToken(tokenizer, t.id)} ${t.probability.toFixed(3)}`).join(', ')}`));
    }
    if (values.png) {
      const figures = await writeModelFigure({ model: textHeatmap([...prompt.texts, ...texts], T, lastRows, L, H),
        png: values.png });
      // As the other commands report a figure: a {"figure"} line after the record with --json.
      lines.push(...(json ? figures.map((f) => JSON.stringify({ figure: f })) : figures));
    }
    for (const line of lines) await write(`${line}\n`);
  } finally {
    model.delete();
  }
}

/** The writer's next token, or null once it stopped; its refusals are the user's (exit 2). */
function nextToken(model, attnLabError) {
  try {
    return model.nextToken();
  } catch (error) {
    throw attnLabError(error);
  }
}

/**
 * The whole text's attention (the prompt's rows, then each written token's row), the last layer's heads
 * averaged, as a heatmap model: [N, N], causal (a row sees its own position and those before it).
 * rows: the prompt's T x T head mean, then one row per written token (null where it has none).
 */
function textHeatmap(tokens, T, rows, L, H) {
  const N = tokens.length;
  const values = new Float32Array(N * N);
  const [prompt, ...written] = rows;
  for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) values[t * N + s] = prompt[t * T + s];
  written.forEach((row, i) => {
    if (!row || T + i >= N) return; // the last token drawn is fed through no pass
    for (let s = 0; s <= T + i && s < row.length; s++) values[(T + i) * N + s] = row[s];
  });
  const labels = tokenLabels(tokens.map((t) => (t === '' ? '∅' : t.replace(/ /g, '␣').replace(/\n/g, '↵'))));
  let max = 1e-6;
  for (const x of values) max = Math.max(max, x);
  const last = L - 1;
  return { kind: 'heatmap', id: 'writing-attention', cell: N > 40 ? 12 : 22, title: `Attention, last layer (${last}), `
    + `mean of its ${H} heads`,
    rows: N, cols: N, values, range: [0, max], xTitle: 'key (token read)', yTitle: 'query (token writing the next)',
    xTicks: labels, yTicks: labels };
}

/** `attnlab heads`: its lines (--json: the record on one line). */
export async function runHeads(values, module) {
  const { model } = await openDecoder(values, module);
  try {
    const { layers: L, heads: H, maxPositions } = model.config;
    const n = values.roleTokens || Math.min(50, Math.floor((maxPositions - 1) / 2));
    const seed = values.roleSeed;
    let r;
    try {
      r = model.headRoles({ n, seed, backend: cpuKernel(values.backend, module.cpuBackends) });
    } catch (error) {
      if (error.name === 'AttnLabError') throw new WritingInputError(error.message);
      throw error;
    }
    const grid = (flat) => Array.from({ length: L }, (_, l) => Array.from(flat.subarray(l * H, (l + 1) * H)));
    const record = { n, seed, layers: L, heads: H, tokens: r.tokens,
      previous: grid(r.previous), first: grid(r.first), induction: grid(r.induction), duplicate: grid(r.duplicate),
      loss: { firstCopy: r.firstCopyLoss, secondCopy: r.secondCopyLoss } };
    if (values.json) return [JSON.stringify(record)];
    const lines = [`head roles on [eos] + ${n} random tokens (seed ${seed}) repeated: ${L} layers x ${H} heads `
      + '(numbered from 0)',
      `loss on the first copy ${r.firstCopyLoss.toFixed(4)}, on the second ${r.secondCopyLoss.toFixed(4)}`,
      'layer head  previous  first  induction  duplicate'];
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        lines.push(`${String(l).padStart(5)} ${String(h).padStart(4)}  ${record.previous[l][h].toFixed(4).padStart(8)} `
          + ` ${record.first[l][h].toFixed(4)}  ${record.induction[l][h].toFixed(4).padStart(9)}  `
          + `${record.duplicate[l][h].toFixed(4).padStart(9)}`);
      }
    }
    return lines;
  } finally {
    model.delete();
  }
}

/** The lab's commands (web/labs/07_writing.js: `commands`), as web/cli/attnlab.mjs runs them. */
export const commands = {
  generate: { write: runGenerate, InputError: WritingInputError },
  heads: { output: runHeads, InputError: WritingInputError },
};
