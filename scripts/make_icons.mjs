#!/usr/bin/env node
// Writes the app icons of public/manifest.webmanifest (public/icons/icon-{192,512}.png): an 8x8
// attention map whose diagonal is bright, as the copy task learns it, in the page's viridis colours.
// The PNGs are committed; run this again only to change them:  node scripts/make_icons.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'public', 'icons');
const CELLS = 8;
// viridis at 0, 0.25, 0.5, 0.75, 1 (matplotlib's table); cells interpolate between them.
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
const BACKGROUND = [24, 24, 32];

function viridis(t) {
  const x = Math.min(0.9999, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.floor(x), f = x - i;
  return VIRIDIS[i].map((c, k) => Math.round(c + f * (VIRIDIS[i + 1][k] - c)));
}

/** The value of cell (r, c): a softmax-like row, peaked on the diagonal. */
const cellValue = (r, c) => (r === c ? 1 : Math.abs(r - c) === 1 ? 0.3 : 0.05);

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xEDB88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function icon(size) {
  // A margin of 10% keeps the grid inside the safe zone of a "maskable" icon's circle crop.
  const margin = Math.round(size * 0.1), cell = (size - 2 * margin) / CELLS, gap = Math.max(1, Math.round(cell * 0.08));
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + 3 * size); // filter byte 0: none
    for (let x = 0; x < size; x++) {
      let rgb = BACKGROUND;
      const gx = (x - margin) / cell, gy = (y - margin) / cell;
      const inCell = (v) => v >= 0 && v < CELLS && (v % 1) * cell >= gap / 2 && (v % 1) * cell < cell - gap / 2;
      if (inCell(gx) && inCell(gy)) rgb = viridis(cellValue(Math.floor(gy), Math.floor(gx)));
      row.set(rgb, 1 + 3 * x);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

mkdirSync(OUT, { recursive: true });
for (const size of [192, 512]) {
  const png = icon(size);
  writeFileSync(path.join(OUT, `icon-${size}.png`), png);
  console.log(`[icons] public/icons/icon-${size}.png: ${png.length} bytes`);
}
