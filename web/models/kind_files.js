// A checkpoint kind's files, as its registry row declares them (core/models/model_kinds.cpp): which files a
// folder must bring, which it may, and the weights; the one reading of a row's file list, for the opener
// (which files to read), the two Hub clients (which to fetch, in what order), the labs ("Read: ...") and the
// messages ("A Llama checkpoint needs ..."). No DOM and no Node API.
//
// A row's required entry names one file ("config.json") or alternatives, the preferred first, each one file
// or several joined by "+" ("tokenizer.json | vocab.json + merges.txt").
import { WEIGHT_FILES } from './checkpoint_files.js';

/** The weights' names, in the order from_pretrained prefers them (the shard index among them). */
export const WEIGHT_NAMES = WEIGHT_FILES.map(([name]) => name);

/** "tokenizer.json | vocab.json + merges.txt" -> [['tokenizer.json'], ['vocab.json', 'merges.txt']]. */
export const parseNeed = (entry) => entry.split('|').map((alternative) => alternative.split('+').map((name) => name.trim()));

/** A need as words: "tokenizer.json or vocab.json + merges.txt". */
export const needWords = (need) => need.map((files) => files.join(' + ')).join(' or ');

/** The weights as words, as every kind reads them. */
export const WEIGHTS_WORDS = 'model.safetensors or pytorch_model.bin';

/** A row's files -> {needs: [[alternative files]], optional, weights}. */
export const kindFiles = (row) => ({ needs: row.files.required.map(parseNeed), optional: row.files.optional,
  weights: WEIGHT_NAMES });

/** The first alternative of a need whose every file `has` (a name -> boolean), or null. */
export const chosenAlternative = (need, has) => need.find((files) => files.every(has)) ?? null;

/** "a, b, and c" ("a and b" for two). */
const listWords = (items) => (items.length < 3 ? items.join(' and ') : `${items.slice(0, -1).join(', ')}, `
  + `and ${items.at(-1)}`);

/**
 * What a kind's folder needs, in words: "config.json, tokenizer.json or vocab.json + merges.txt, and
 * model.safetensors or pytorch_model.bin".
 */
export const needsWords = (kind) => listWords([...kind.files.needs.map(needWords), WEIGHTS_WORDS]);

/**
 * The files a lab's kinds read, each once, in the rows' order (what its file picker accepts and its text
 * lists): [...the needs' files, ...the optional ones, ...the weights].
 */
export function labFileNames(kinds) {
  const names = new Set();
  for (const kind of kinds) for (const need of kind.files.needs) for (const files of need) for (const f of files) names.add(f);
  for (const kind of kinds) for (const f of kind.files.optional) names.add(f);
  for (const f of WEIGHT_NAMES) names.add(f);
  return [...names];
}

/**
 * What a lab's kinds read, as a sentence's words: the needs (each once), the weights, and the optional
 * files "where there": "config.json, vocab.txt, model.safetensors or pytorch_model.bin, and
 * tokenizer_config.json where there".
 */
export function readWords(kinds) {
  const needs = [...new Set(kinds.flatMap((k) => k.files.needs.map(needWords)))];
  const optional = [...new Set(kinds.flatMap((k) => k.files.optional))];
  return listWords([...needs, WEIGHTS_WORDS, ...(optional.length ? [`${listWords(optional)} where there`] : [])]);
}
