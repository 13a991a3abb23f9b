// The one checker of every build (web/labs/builds/registry.js): a student's tensor for one step against
// the lab's, the same on the page (build_section.js) and headless (`attnlab check`, web/cli/check_command.mjs).
// The shape first (with a hint when only the order of the dimensions differs), then the numbers, and
// the first index where they differ. -inf equals -inf (a masked score in both), NaN equals NaN.
import { parsePrintedTensors, PrintedTensorError } from '../../io/printed_tensor.js';

export const shapeText = (shape) => `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;

/** A number as a message shows it: integers plain, others to 4 decimals as PyTorch prints, inf/nan by name. */
export const formatNumber = (x) => (Number.isNaN(x) ? 'nan' : !Number.isFinite(x) ? (x > 0 ? 'inf' : '-inf') : Number.isInteger(x) ? String(x) : x.toFixed(4));

/** A number for a JSON record: JSON has no inf or nan, so those are the strings PyTorch prints. */
export const jsonNumber = (x) => (Number.isFinite(x) ? x : formatNumber(x));

/** flat index -> its index along each dimension of `shape`. */
export function indexOf(flat, shape) {
  const index = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    index.unshift(flat % shape[d]);
    flat = Math.floor(flat / shape[d]);
  }
  return index;
}

// A print shows 4 decimals: a difference up to 1e-4 plus 1e-4 of the value is its rounding. A
// torch.save file holds float32: 1e-5 covers float32's rounding of these small modules.
const TOLERANCE = { printed: { abs: 1e-4, rel: 1e-4 }, saved: { abs: 1e-5, rel: 1e-5 } };

// Infinities only equal themselves (|x - inf| <= rel * inf would let any number pass for -inf).
const same = (a, b, tol) => a === b || (Number.isNaN(a) && Number.isNaN(b))
  || (Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= tol.abs + tol.rel * Math.abs(b));

/**
 * theirs: [{shape, data}] (what one print or one file held) against expected (flat, of step.shape) ->
 * {ok, shape, expected_shape, first_difference: {index, yours, expected} | null, message, withheld?: the
 * message without the lab's number, for a page that keeps its answers to itself (answers=0)}.
 * printed: the numbers came from a print (4 decimals). hint: the build's sentence for a wrong number.
 */
export function judgeStep(step, theirs, expected, { printed, hint = '' }) {
  if (step.rule) return { shape: theirs[0]?.shape ?? null, expected_shape: step.shape, first_difference: null,
    ...step.rule(theirs) };
  const verdict = (fields) => ({ shape: theirs.length === 1 ? theirs[0].shape : null, expected_shape: step.shape,
    first_difference: null, ...fields });
  if (theirs.length !== 1) {
    return verdict({ ok: false, message: `${theirs.length} tensors were given; this step is one tensor of shape `
      + `${shapeText(step.shape)}.` });
  }
  const [tensor] = theirs;
  if (tensor.shape.join() !== step.shape.join()) {
    const rearranged = tensor.data.length === expected.length;
    return verdict({ ok: false, message: `Shape ${shapeText(tensor.shape)}; the lab's ${step.code} is `
      + `${shapeText(step.shape)}.`
      + (rearranged ? ' The same number of values in another arrangement: check the order of the dimensions (a '
        + 'transpose, or a reshape without one).' : '') });
  }
  const tol = printed ? TOLERANCE.printed : TOLERANCE.saved;
  for (let i = 0; i < expected.length; i++) {
    const yours = tensor.data[i], want = expected[i];
    if (same(yours, want, tol)) continue;
    const index = indexOf(i, step.shape);
    const at = `The shape ${shapeText(step.shape)} is right; the numbers first differ at [${index.join(', ')}]: `
      + `yours ${formatNumber(yours)}`;
    const after = `${maskHint(yours, want)}${hint ? ` ${hint}` : ''}`;
    return verdict({ ok: false, first_difference: { index, yours, expected: want },
      message: `${at}, the lab's ${formatNumber(want)}.${after}`, withheld: `${at}.${after}` });
  }
  return verdict({ ok: true, message: `Matches: shape ${shapeText(step.shape)}, all ${expected.length} numbers within `
    + `${printed ? '1e-4 (a print\'s 4 decimals)' : '1e-5'} of the lab's.` });
}

/** What a difference at a masked position says: the mask was not applied, or applied the wrong way round. */
function maskHint(yours, want) {
  if (want === -Infinity && yours !== -Infinity) return ' The lab\'s is -inf there, a masked position: was '
    + 'masked_fill(mask == 0, float(\'-inf\')) applied (and printed after it)?';
  if (yours === -Infinity && want !== -Infinity) return ' Yours is -inf where the lab\'s position is not masked: is '
    + 'the mask inverted (mask == 0 keeps the zeros of torch.tril out)?';
  return '';
}

/**
 * The student's input -> {tensors: [{shape, data}], printed}: pasted text (what print() showed) or the
 * bytes of a torch.save file of one tensor. readTorchTensor: the WASM module's reader (module.readTorchTensor).
 */
export function readTheirs(readTorchTensor, input) {
  if (input.bytes) return { tensors: [readTorchTensor(input.bytes, input.name ?? 'the .pt file')], printed: false };
  try {
    return { tensors: parsePrintedTensors(input.text), printed: true };
  } catch (error) {
    // One full stop at the end, whether the reader's message has its own or not (the abbreviated print's
    // ended "open that file..").
    if (error instanceof PrintedTensorError) throw new Error(`The pasted text was not read: ${error.message.replace(/\.$/, '')}.`);
    throw error;
  }
}
