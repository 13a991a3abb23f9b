#!/usr/bin/env node
// A benchmark folder rebuilt where the file itself cannot be carried (a quiet machine with no PyTorch):
// FROM holds a model.safetensors' header (header.json: the JSON between its 8-byte length and its data),
// config.json and ids.json; TO gets the same files and a model.safetensors with the same tensors, filled
// with seeded uniform values in [-0.05, 0.05). Speed does not depend on the values, and both builds of an
// A/B run read the same file. Made for benchmarks/ab_decode.mjs (docs/benchmarks.md, issue 36).
//   python3 -c "..." writes header.json from benchmarks/gpt2_torch.py's or marian_torch.py's folder:
//   the bytes [8, 8 + n) of model.safetensors, n its first 8 bytes read as a little-endian u64.
// Usage: node benchmarks/refill_weights.mjs FROM TO
import { readFileSync, mkdirSync, copyFileSync, openSync, writeSync, closeSync } from 'node:fs';

const [,, from, to] = process.argv;
if (!from || !to) throw new Error('usage: node benchmarks/refill_weights.mjs FROM TO');
mkdirSync(to, { recursive: true });
for (const f of ['config.json', 'ids.json']) copyFileSync(`${from}/${f}`, `${to}/${f}`);
const header = readFileSync(`${from}/header.json`);
const fd = openSync(`${to}/model.safetensors`, 'w');
const length = Buffer.alloc(8);
length.writeBigUInt64LE(BigInt(header.length));
writeSync(fd, length);
writeSync(fd, header);
const tensors = Object.entries(JSON.parse(header.toString())).filter(([name]) => name !== '__metadata__');
const end = Math.max(...tensors.map(([, t]) => t.data_offsets[1]));
let state = 12345;  // a linear congruential sequence: the same file every time
const chunk = new Float32Array(1 << 20);
for (let at = 0; at < end; at += chunk.byteLength) {
  for (let i = 0; i < chunk.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    chunk[i] = ((state >>> 8) / 16777216 - 0.5) * 0.1;
  }
  writeSync(fd, new Uint8Array(chunk.buffer, 0, Math.min(chunk.byteLength, end - at)));
}
closeSync(fd);
console.log(`${to}: ${end} bytes of weights`);
