// The One query lab's "Check your build" section (issue 28, item 2): notebook 05 is build-it-yourself
// (make_batch, the embedding, keys and values, attention, the attention-weighted values, forward). For a
// fixed input the section shows each step's tensor with its shape, as the lab's model computes it, and a
// student compares what their notebook printed (pasted) or saved (torch.save(t, 'step.pt')) with it: the
// shape first, then the numbers, and where they first differ.
//
// The steps, as the notebook's AttentionModel computes them (B sequences of S = 10 digits, embed_dim =
// att_dim = 5):
//   batch      X (B, 10) digits 0..9, y (B, 1): 1 when X has more 2s than 4s
//   embedding  e = embed(X)                      (B, 10, 5)
//   keys       WK(e)                             (B, 10, 5)
//   values     WV(e)                             (B, 10, 1)
//   attention  softmax(query · keysᵀ / √5)       (B, 1, 10)
//   weighted   attention @ values, [:, 0, :]     (B, 1)
//   forward    nn(weighted): the probability     (B, 1)
import { parsePrintedTensors, PrintedTensorError } from '../io/printed_tensor.js';

// Four sequences of ten digits: two with more 2s than 4s, two without (one a tie-free "no", one with
// neither digit), so every step has something to show. tests/fixtures/make_build_steps_fixtures.py uses
// the same rows.
export const FIXED_INPUT = [[2, 4, 2, 1, 9, 6, 3, 0, 5, 2], [4, 4, 1, 2, 0, 7, 8, 3, 9, 4], [2, 2, 2, 4, 5, 5, 1, 1, 0, 6], [7, 3, 9, 0, 1, 8, 6, 5, 3, 7]];
const B = FIXED_INPUT.length, S = 10, E = 5;

export const STEPS = [
  { id: 'batch', label: '1. make_batch', code: 'X, y = make_batch(N)', shape: [B, S], note: 'X (N, 10) and y (N, 1): paste both, print(X, y)' },
  { id: 'embedding', label: '2. Embedding', code: 'model.embed(x)', shape: [B, S, E] },
  { id: 'keys', label: '3. Keys', code: 'model.WK(model.embed(x))', shape: [B, S, E] },
  { id: 'values', label: '4. Values', code: 'model.values(model.embed(x))', shape: [B, S, 1] },
  { id: 'attention', label: '5. Attention', code: 'model.attention(model.embed(x))', shape: [B, 1, S] },
  { id: 'weighted', label: '6. Attention-weighted values', code: "torch.einsum('bij,bjk->bik', att, vals)[:, 0, :]", shape: [B, 1] },
  { id: 'forward', label: '7. forward', code: 'model(x)', shape: [B, 1] },
];

export const PYTHON_INPUT = `x = torch.tensor(${JSON.stringify(FIXED_INPUT).replace(/,/g, ', ')})`;

const shapeText = (shape) => `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;

/** The lab model's parameters ({name: Float32Array}, the notebook's names) -> every step's tensor. */
export function stepTensors(p, inspection) {
  const x = FIXED_INPUT.flat();
  const y = FIXED_INPUT.map((row) => (row.filter((d) => d === 2).length > row.filter((d) => d === 4).length ? 1 : 0));
  const embedding = new Float32Array(B * S * E);
  x.forEach((digit, i) => embedding.set(p['embed.weight'].subarray(digit * E, (digit + 1) * E), i * E));
  const keys = new Float32Array(B * S * E);
  for (let i = 0; i < B * S; i++) {
    for (let o = 0; o < E; o++) {
      let sum = p['WK.bias'][o];
      for (let k = 0; k < E; k++) sum += embedding[i * E + k] * p['WK.weight'][o * E + k];
      keys[i * E + o] = sum;
    }
  }
  return {
    batch: { x: Float32Array.from(x), y: Float32Array.from(y) },
    embedding, keys,
    // The core's own numbers for the rest: the lab's model as it trains (its C++ forward pass).
    values: Float32Array.from(inspection.values),
    attention: Float32Array.from(inspection.weights),
    weighted: Float32Array.from(inspection.weighted),
    forward: Float32Array.from(inspection.probability),
  };
}

/**
 * A student's tensor against the lab's: {ok, text}. printed: the numbers were pasted from a print (4
 * decimals: a difference up to 1e-4 plus 1e-4 of the value is rounding); otherwise from a .pt (1e-5).
 */
export function compareStep(step, theirs, lab, { printed }) {
  if (step.id === 'batch') return compareBatch(theirs);
  const mine = { shape: step.shape, data: lab[step.id] };
  const tensor = theirs[0];
  if (theirs.length > 1) return { ok: false, text: `${theirs.length} tensors were given; this step is one tensor of shape ${shapeText(step.shape)}.` };
  if (tensor.shape.join() !== mine.shape.join()) {
    const same = tensor.data.length === mine.data.length;
    return { ok: false, text: `Shape ${shapeText(tensor.shape)}; the lab's ${step.code} is ${shapeText(mine.shape)}.`
      + (same ? ' The same number of values in another arrangement: check the order of the dimensions (a transpose, or [:, 0, :]).' : '') };
  }
  const tolerance = printed ? { abs: 1e-4, rel: 1e-4 } : { abs: 1e-5, rel: 1e-5 };
  for (let i = 0; i < mine.data.length; i++) {
    const a = tensor.data[i], b = mine.data[i];
    if (!(Math.abs(a - b) <= tolerance.abs + tolerance.rel * Math.abs(b))) {
      return { ok: false, text: `The shape ${shapeText(mine.shape)} is right; the numbers first differ at [${indexOf(i, mine.shape).join(', ')}]: `
        + `yours ${format(a)}, the lab's ${format(b)}. Did your notebook load the same weights (your model.pt in this lab's Weights panel) and use this x?` };
    }
  }
  return { ok: true, text: `Matches: shape ${shapeText(mine.shape)}, all ${mine.data.length} numbers within ${printed ? '1e-4 (a print\'s 4 decimals)' : '1e-5'} of the lab's.` };
}

/** make_batch is random: its output is checked against its rule, not against numbers. */
function compareBatch(theirs) {
  if (theirs.length !== 2) return { ok: false, text: `make_batch returns two tensors, X and y; ${theirs.length} ${theirs.length === 1 ? 'was' : 'were'} given. Paste what print(X, y) shows.` };
  const [X, y] = theirs;
  if (X.shape.length !== 2 || X.shape[1] !== S) return { ok: false, text: `X has shape ${shapeText(X.shape)}; it should be (N, 10): N sequences of 10 digits.` };
  const N = X.shape[0];
  if (y.shape.join() !== `${N},1`) return { ok: false, text: `y has shape ${shapeText(y.shape)}; for ${N} sequences it should be (${N}, 1).` };
  for (let i = 0; i < X.data.length; i++) {
    const d = X.data[i];
    if (!Number.isInteger(d) || d < 0 || d > 9) return { ok: false, text: `X[${Math.floor(i / S)}, ${i % S}] is ${format(d)}: the digits are integers 0 to 9 (torch.randint(0, 10, ...)).` };
  }
  for (let n = 0; n < N; n++) {
    const row = Array.from(X.data.subarray(n * S, (n + 1) * S));
    const twos = row.filter((d) => d === 2).length, fours = row.filter((d) => d === 4).length;
    const want = twos > fours ? 1 : 0;
    if (y.data[n] !== want) return { ok: false, text: `Row ${n} has ${twos} two${twos === 1 ? '' : 's'} and ${fours} four${fours === 1 ? '' : 's'}: y[${n}] should be ${want}, yours is ${format(y.data[n])}.` };
  }
  return { ok: true, text: `Matches the rule: X ${shapeText(X.shape)} of digits 0 to 9, y ${shapeText(y.shape)} is 1 exactly where a row has more 2s than 4s (${N} rows checked).` };
}

function indexOf(flat, shape) {
  const index = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    index.unshift(flat % shape[d]);
    flat = Math.floor(flat / shape[d]);
  }
  return index;
}

const format = (x) => (Number.isInteger(x) ? String(x) : Number.isFinite(x) ? x.toFixed(4) : String(x));

/** The student's input -> [{shape, data}], from pasted text or a torch.save file of one tensor. */
export function readTheirs(module, input) {
  if (input.bytes) {
    const t = module.readTorchTensor(input.bytes, input.name ?? 'the .pt file');
    return { tensors: [t], printed: false };
  }
  try {
    return { tensors: parsePrintedTensors(input.text), printed: true };
  } catch (error) {
    if (error instanceof PrintedTensorError) throw new Error(`The pasted text was not read: ${error.message}.`);
    throw error;
  }
}

export const buildSection = {
  id: 'build',
  title: 'Check your build, step by step (notebook 05)',
  text: 'Notebook 05 has you write the model yourself. Give your notebook this x, then compare each step with the lab\'s: '
    + 'paste what print() showed, or save the tensor with torch.save(t, "step.pt") and open the file. To compare numbers, '
    + 'load your notebook\'s model first (Weights, Import weights…: your model.pt), so that both use the same weights; '
    + 'make_batch is random, so it is checked against its rule instead.',
  properties: ['checkStep'],
  // Notebook 05's one question, in its "Embedding the Integers" step (it has no numbers: the step's name).
  questions: [{ number: 'Embedding', text: 'Take a random vector of integers of shape (N,M) and evaluate them through an embedding module. Does the output dimension make sense?',
    ask: { kind: 'shape', prompt: 'First, the shape of torch.nn.Embedding(10, 5)(x) for this x of shape (4, 10)', expected: [4, 10, 5],
      right: 'Each of the 4 × 10 integers becomes its row of the table, a vector of 5: one axis more.',
      wrong: 'The embedding replaces each integer of x by a vector of embed_dim = 5 numbers, and keeps x\'s own axes.',
      near: [{ shape: [10, 5], why: 'That is the table itself (embed.weight): one row per digit. The output has a vector for every integer of x.' },
        { shape: [4, 10], why: 'That is x: the embedding adds an axis, a vector of 5 in place of each integer.' },
        { shape: [4, 50], why: 'The vectors are not concatenated: each integer keeps its place and gets its own axis of 5.' }] },
    answer: 'Yes: torch.nn.Embedding(10, embed_dim) is a table of 10 rows, one vector of embed_dim numbers per digit, and it replaces '
      + 'each integer by its row. Every one of the N × M integers becomes a vector, so (N, M) becomes (N, M, embed_dim): here x (4, 10) '
      + 'gives (4, 10, 5), as step 2 above shows. The same digit always gets the same vector (look at the rows of the 2s).' }],
  needsModel: true,
  refreshWhileTraining: true,
  input: 'tensor',
  inputLabel: 'Your tensor for the step chosen above',
  dependsOn: ['checkStep'],
  compute(ctx, values, input) {
    const trainer = ctx.session.trainer;
    const cpu = ctx.backend === 'scalar' || ctx.module.build === 'scalar' ? 'scalar' : 'simd128'; // a CPU kernel, as inspections run
    const inspection = trainer.inspect({ batch: FIXED_INPUT.flat() }, { backend: cpu });
    const tensors = stepTensors(trainer.parameters(), inspection);
    const step = STEPS.find((s) => s.id === values.checkStep);
    let check = null;
    if (input && (input.text?.trim() || input.bytes)) {
      const { tensors: theirs, printed } = readTheirs(ctx.module, input);
      check = compareStep(step, theirs, tensors, { printed });
    }
    return { tensors, step: ctx.session.step, check, checkStep: step.id };
  },
  figures(r) {
    const figures = [{ kind: 'text', id: 'build-input', text: `The fixed input, to paste in your notebook: ${PYTHON_INPUT}` }];
    for (const step of STEPS) {
      const checked = step.id === r.checkStep && r.check;
      const data = step.id === 'batch' ? r.tensors.batch.x : r.tensors[step.id];
      figures.push({ kind: 'tensor', id: `build-${step.id}`, title: `${step.label}: ${step.code}`, shape: step.shape, values: data, integer: step.id === 'batch',
        extra: step.id === 'batch' ? { label: 'y', shape: [B, 1], values: r.tensors.batch.y } : null,
        status: checked ? (r.check.ok ? 'ok' : 'bad') : '', note: checked ? r.check.text : (step.id === r.checkStep ? 'Paste or open yours below to compare.' : '') });
    }
    figures.push({ kind: 'text', id: 'build-model', text: `The lab's numbers come from its model at step ${r.step}.` });
    if (r.check) figures.push({ kind: 'text', id: 'build-check', status: r.check.ok ? 'ok' : 'bad', text: r.check.text });
    return figures;
  },
};
