// The head-mean heatmap as a PNG, headless: the same raster as the page's canvas (web/shared/heatmap_raster.js)
// with its colour bar, on a white margin.
import { writeFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { rasterizeHeatmap, rasterizeColorbar } from '../shared/heatmap_raster.js';

function blit(target, targetWidth, image, x0, y0) {
  for (let y = 0; y < image.height; y++) {
    target.set(image.data.subarray(y * image.width * 4, (y + 1) * image.width * 4), ((y0 + y) * targetWidth + x0) * 4);
  }
}

export function writeHeatmapPng(file, values, rows, cols, { cell = 24, palette = 'viridis' } = {}) {
  const margin = 16, gap = 12, barWidth = 14;
  const map = rasterizeHeatmap(values, rows, cols, { cell, palette });
  const bar = rasterizeColorbar(map.height, barWidth, { palette });
  const png = new PNG({ width: margin * 2 + map.width + gap + barWidth, height: margin * 2 + map.height });
  png.data.fill(255);
  blit(png.data, png.width, map, margin, margin);
  blit(png.data, png.width, bar, margin + map.width + gap, margin);
  writeFileSync(file, PNG.sync.write(png));
  return { width: png.width, height: png.height };
}
