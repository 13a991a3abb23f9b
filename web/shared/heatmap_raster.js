// Matrix -> pixels through a colour scale, and nothing else: no DOM, no maths beyond the mapping.
// The page's canvas (putImageData) and the CLI's PNG use this one function, so they show the same.
// In web/shared/: pure (no DOM), and used by both the page (web/ui) and the CLI (web/cli), which import
// downward only: neither reaches into the other's folder for it.
import { colorAt } from './palette.js';

export class HeatmapShapeError extends Error {}

/** Checks that `values` is a rows x cols matrix of finite numbers; throws a clear error if not. */
export function checkMatrix(values, rows, cols) {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new HeatmapShapeError(`heatmap size must be positive integers, got ${rows} x ${cols}`);
  }
  if (!values || values.length !== rows * cols) {
    throw new HeatmapShapeError(`heatmap needs ${rows} x ${cols} = ${rows * cols} values, got ${values?.length}`);
  }
}

/**
 * values: rows x cols (row-major); cell: pixels per cell. Returns {width, height, data} (RGBA).
 * The scale runs from min to max (default 0..1, the range of attention weights).
 */
export function rasterizeHeatmap(values, rows, cols, { cell = 16, palette = 'viridis', min = 0, max = 1 } = {}) {
  checkMatrix(values, rows, cols);
  const width = cols * cell, height = rows * cell;
  const data = new Uint8ClampedArray(width * height * 4);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const [red, green, blue] = colorAt(palette, values[r * cols + c], min, max);
      for (let y = r * cell; y < (r + 1) * cell; y++) {
        let o = (y * width + c * cell) * 4;
        for (let x = 0; x < cell; x++, o += 4) {
          data[o] = red;
          data[o + 1] = green;
          data[o + 2] = blue;
          data[o + 3] = 255;
        }
      }
    }
  }
  return { width, height, data };
}

/** A vertical colour bar, top = max. */
export function rasterizeColorbar(height, width = 12, { palette = 'viridis' } = {}) {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const [r, g, b] = colorAt(palette, 1 - y / Math.max(1, height - 1));
    for (let x = 0; x < width; x++) data.set([r, g, b, 255], (y * width + x) * 4);
  }
  return { width, height, data };
}
