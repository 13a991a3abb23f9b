// A list of heads to switch off (issue 39, item 4: head ablation), as the page's field, the link and
// `attnlab ... --ablate` write it: "L.H[,L.H...]", layer and head numbered from 0, e.g. "0.1,3.5". The
// property's value is that text in its canonical form (no spaces, in the order given; '' for none), so
// the link and the CLI carry it as typed; heads() reads it into [{layer, head}] for a model's pass (each
// pass takes its own: wasm_bindings/js/checkpoint_model.js). Which heads a model has is known only once it
// is open: passHeads() says whether a list fits it. Pure functions, no DOM.

const PAIR = /^(\d{1,4})\.(\d{1,4})$/;
// The most heads a list may name: more than any model here has (Qwen2.5-72B: 80 layers x 64 heads = 5,120).
const MAX_LISTED_HEADS = 8192;

/** text -> {value: canonical text, heads: [{layer, head}]} or {error}: the first malformed or repeated item named. */
export function parseHeadList(text) {
  const raw = String(text ?? '').trim();
  if (raw === '') return { value: '', heads: [] };
  const items = raw.split(',');
  if (items.length > MAX_LISTED_HEADS) {
    return { error: `the list names ${items.length.toLocaleString('en')} heads: at most `
      + `${MAX_LISTED_HEADS.toLocaleString('en')}` };
  }
  const heads = [], seen = new Set(); // a Set: a list's some() made 200,000 heads take 15 s
  for (const item of items.map((s) => s.trim())) {
    const m = PAIR.exec(item);
    if (!m) return { error: `'${item.length > 20 ? `${item.slice(0, 19)}…` : item}' is not a head: write layer.head, `
      + 'numbered from 0 (e.g. 0.1)' };
    const head = { layer: Number(m[1]), head: Number(m[2]) };
    const name = `${head.layer}.${head.head}`;
    if (seen.has(name)) return { error: `head ${name} is given twice` };
    seen.add(name);
    heads.push(head);
  }
  return { value: heads.map((h) => `${h.layer}.${h.head}`).join(','), heads };
}

/** The property's value (canonical text) -> [{layer, head}] ([] for ''). */
export const heads = (text) => parseHeadList(text).heads ?? [];

/** [{layer, head}] -> the canonical text. */
export const headListText = (list) => list.map((h) => `${h.layer}.${h.head}`).join(',');

/**
 * Whether each head fits a model of `layers` x `heads`: null, or the first that does not, named (as the
 * core says it).
 */
function checkRange(list, { layers, heads: perLayer }) {
  for (const h of list) {
    if (h.layer >= layers) return `head ${h.layer}.${h.head}: this model's layers are 0 to ${layers - 1}`;
    if (h.head >= perLayer) return `head ${h.layer}.${h.head}: this model's heads are 0 to `
      + `${perLayer - 1} in each layer`;
  }
  return null;
}

/** Adds or removes one head (a click on the model view): the new canonical text. */
export function toggleHead(text, layer, head) {
  const list = heads(text);
  const at = list.findIndex((h) => h.layer === layer && h.head === head);
  if (at >= 0) list.splice(at, 1);
  else list.push({ layer, head });
  return headListText(list);
}

/**
 * The lab property every lab with heads declares (05, 06, 07): `attnlab pretrained|translate|generate
 * --ablate L.H,...`, the link's ablate=, the page's field beside the model view. `which` says whose heads.
 */
export const ablateProperty = (which, extra = {}) => ({
  name: 'ablate', type: 'heads', default: '', label: 'Heads switched off', effect: 'view', page: true,
  meta: 'L.H[,L.H...]', help: `Heads to switch off, as layer.head numbered from 0 (e.g. 0.1,2.3): ${which} Their output is zeroed before the `
    + 'output projection (as TransformerLens zeroes hook_z), so every other head and the bias still count.',
  pageHelp: 'Or click a head of the Switch heads off grid.',
  ...extra,
});

/**
 * The heads `text` names for the passes of an open model (a decoder's forward, writer and headRoles, a
 * BERT's forward, a Marian's decode and generate: each pass takes its heads, core/models/checkpoint_model.h),
 * checked against the heads it can switch (its headGrid: a Marian's are its decoder's cross-attention); a
 * list that does not fit throws the core's words, named as the field is ('Heads switched off: head 2.0:
 * this model's layers are 0 to 1').
 */
export function passHeads(model, text) {
  const list = heads(text);
  const problem = checkRange(list, model.headGrid);
  if (problem) throw new Error(`Heads switched off: ${problem}`);
  return list;
}
