// The byte reads of a checkpoint load (checkpoint_loader.js): whatever `read(offset, length)` the caller
// gave (a File's slice, a file handle's read, a Hub download's range), checked for short reads.
import { AttnLabError } from './checks.js';

// Index reads run this many at once (a .bin's local headers come ~1,000 ranges to a request).
const INDEX_READS_AT_ONCE = 32;

/** read(offset, length), or an AttnLabError naming the file when fewer bytes come back. */
export async function readExactly(read, offset, length, file, what) {
  const bytes = await read(offset, length);
  if (!(bytes instanceof Uint8Array) || bytes.length !== length) {
    throw new AttnLabError(`${file}: could read only ${bytes?.length ?? 0} of ${length} bytes of ${what} (was the file changed while it was read?)`);
  }
  return bytes;
}

/** ranges [b0, e0, b1, e1, ...] -> their bytes, concatenated in order. */
export async function readRanges(read, ranges, file) {
  const parts = [];
  for (let k = 0; k < ranges.length; k += 2 * INDEX_READS_AT_ONCE) {
    const group = [];
    for (let j = k; j < Math.min(ranges.length, k + 2 * INDEX_READS_AT_ONCE); j += 2) {
      const [begin, end] = [ranges[j], ranges[j + 1]];
      group.push(readExactly(read, begin, end - begin, file, `its index (at offset ${begin})`));
    }
    parts.push(...await Promise.all(group));
  }
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => { bytes.set(p, at); return at + p.length; }, 0);
  return bytes;
}
