// The Induction lab's export (one .safetensors file: TransformerLens's state_dict names and shapes, its
// HookedTransformerConfig in the metadata; web/labs/08_induction.js) as the checkpoint folder the decoder
// reads (core/models/hooked_transformer.h): config.json with model_type "hooked_transformer", and
// model.safetensors with each weight laid out as the decoder's projection under
// core/models/decoder_names.cpp's "hooked_transformer" row:
//
//   blocks.l.attn.W_Q [H, E, D] -> blocks.l.attn.Q.weight [E, H D]   (W_K, W_V the same; b_Q [H, D] -> [H D])
//   blocks.l.attn.W_O [H, D, E] -> blocks.l.attn.O.weight [H D, E]   (b_O -> blocks.l.attn.O.bias)
//   blocks.l.mlp.W_in, W_out    -> blocks.l.mlp.in.weight, out.weight (already [in, out])
//   blocks.l.ln1.w, b           -> blocks.l.ln1.weight, bias          (ln2, ln_final the same)
//   embed.W_E, pos_embed.W_pos  -> embed.W_E.weight, pos_embed.W_pos.weight
//   unembed.W_U [E, V]          -> unembed.weight [V, E]               (b_U -> unembed.bias)
//
// Any other tensor is passed on as it is, for the decoder's plan to refuse by name. No DOM and no Node API.
import { CheckpointError, baseName } from './checkpoint_files.js';
import { parseSafetensors, writeSafetensors } from '../io/safetensors.js';
import { SHIPPED_TEXT } from '../labs/08_induction_text.js';

// An export of the Induction lab's largest settings is a few megabytes; past this it is not one.
const MAX_EXPORT_BYTES = 256 * 1024 * 1024;

/** An in-memory file as a source (web/io/file_source.js's shape). */
function bytesSource(name, bytes) {
  return { name, size: bytes.length, read: async (offset, length) => bytes.slice(offset, offset + length),
    text: async () => new TextDecoder().decode(bytes) };
}

/** The text task's characters in id order (core/trainers/induction_task.h: code points ascending). */
export const textAlphabet = (text) => [...new Set(text)].sort((a, b) => a.codePointAt(0) - b.codePointAt(0)).join('');

// Whether `sources` are one .safetensors file and no folder (an export, or a file given by mistake).
const isSingleSafetensors = (sources) => sources.length === 1 && /\.safetensors$/i.test(sources[0].name)
  && baseName(sources[0].name) !== 'model.safetensors';

function converted(name, tensors) {
  const out = {};
  const take = (from, to, data = tensors[from].data, shape = tensors[from].shape) => {
    out[to] = { shape, data };
    delete tensors[from];
  };
  const rank = (key, n) => {
    const t = tensors[key];
    if (t && t.shape.length !== n) throw new CheckpointError(`${name}: tensor "${key}" has shape [${t.shape}], not `
      + `${n} dimensions as TransformerLens's`);
    return t;
  };
  for (let l = 0; rank(`blocks.${l}.attn.W_Q`, 3); l++) {
    const p = `blocks.${l}`;
    for (const m of ['Q', 'K', 'V']) {
      const W = rank(`${p}.attn.W_${m}`, 3);
      if (!W) throw new CheckpointError(`${name} has no tensor "${p}.attn.W_${m}" beside ${p}.attn.W_Q`);
      const [H, E, D] = W.shape, w = new Float32Array(E * H * D);
      for (let h = 0; h < H; h++) for (let e = 0; e < E; e++) for (let d = 0; d < D; d++) {
        w[e * H * D + h * D + d] = W.data[(h * E + e) * D + d];
      }
      take(`${p}.attn.W_${m}`, `${p}.attn.${m}.weight`, w, [E, H * D]);
      const b = rank(`${p}.attn.b_${m}`, 2);
      if (b) take(`${p}.attn.b_${m}`, `${p}.attn.${m}.bias`, b.data, [b.shape[0] * b.shape[1]]);
    }
    const O = rank(`${p}.attn.W_O`, 3);
    if (O) take(`${p}.attn.W_O`, `${p}.attn.O.weight`, O.data, [O.shape[0] * O.shape[1], O.shape[2]]);
    const pairs = [['attn.b_O', 'attn.O.bias'], ['ln1.w', 'ln1.weight'], ['ln1.b', 'ln1.bias'], ['ln2.w', 'ln2.weight'],
      ['ln2.b', 'ln2.bias'], ['mlp.W_in', 'mlp.in.weight'], ['mlp.b_in', 'mlp.in.bias'],
      ['mlp.W_out', 'mlp.out.weight'], ['mlp.b_out', 'mlp.out.bias']];
    for (const [from, to] of pairs) if (tensors[`${p}.${from}`]) take(`${p}.${from}`, `${p}.${to}`);
  }
  for (const [from, to] of [['embed.W_E', 'embed.W_E.weight'], ['pos_embed.W_pos', 'pos_embed.W_pos.weight'],
    ['ln_final.w', 'ln_final.weight'], ['ln_final.b', 'ln_final.bias'], ['unembed.b_U', 'unembed.bias']]) {
    if (tensors[from]) take(from, to);
  }
  const U = rank('unembed.W_U', 2);
  if (U) {
    const [E, V] = U.shape, u = new Float32Array(V * E);
    for (let e = 0; e < E; e++) for (let v = 0; v < V; v++) u[v * E + e] = U.data[e * V + v];
    take('unembed.W_U', 'unembed.weight', u, [V, E]);
  }
  for (const key of Object.keys(tensors)) take(key, key);  // for the plan to name
  return out;
}

/**
 * sources -> {sources: the same, exportName: null}, or for one Induction export {sources: the folder the
 * decoder reads ([config.json, model.safetensors]), exportName: the file's own name}; a single .safetensors
 * file that is not an export is a CheckpointError saying what the Writing lab opens.
 */
export async function asDecoderFolder(given) {
  const list = [...given];
  if (!isSingleSafetensors(list)) return { sources: list, exportName: null };
  const [source] = list;
  const name = baseName(source.name);
  const notExport = `${name} is one .safetensors file without an Induction lab export's HookedTransformerConfig in its `
    + 'metadata: give a checkpoint folder (config.json, the tokenizer\'s files and model.safetensors), or a file the '
    + 'Induction lab exported';
  if (source.size > MAX_EXPORT_BYTES) throw new CheckpointError(notExport);
  let file;
  try {
    file = parseSafetensors(await source.read(0, source.size));
  } catch (error) {
    throw new CheckpointError(`${name}: ${error.message}`);
  }
  const m = file.metadata;
  if (typeof m.hooked_transformer_config !== 'string') throw new CheckpointError(notExport);
  let cfg;
  try {
    cfg = JSON.parse(m.hooked_transformer_config);
  } catch (error) {
    throw new CheckpointError(`${name}: its hooked_transformer_config metadata is not JSON (${error.message})`);
  }
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) {
    throw new CheckpointError(`${name}: its hooked_transformer_config metadata must be a JSON object`);
  }
  const config = { ...cfg, model_type: 'hooked_transformer' };
  if (m.task === 'text') config.attnlab_alphabet = textAlphabet(m.text || SHIPPED_TEXT.text);
  for (const [key, t] of Object.entries(file.tensors)) {
    if (t.dtype !== 'F32') throw new CheckpointError(`${name}: tensor "${key}" is ${t.dtype}; an export is F32`);
  }
  const weights = writeSafetensors(converted(name, file.tensors));
  return { sources: [bytesSource('config.json', new TextEncoder().encode(JSON.stringify(config))),
    bytesSource('model.safetensors', weights)], exportName: name };
}
