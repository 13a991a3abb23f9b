// Images on a canvas (a figure kind of figure_kinds.js): MNIST-like digits, grey on the panel's colour.
//   {kind: 'images', id, title, images: [pixels], size (side in px), range? ([0, 255] default),
//    columns?, scale?, minScale? (where the columns do not fit at scale, smaller images down to this
//    scale before fewer columns), labels?, captions?, names?, tint? (0..1 per image), highlight?, pairs?}
// Hovering an image names it in the tooltip (names, else its label).
import { FONT_PX, TITLE_H, prepareCanvas, wordLines } from './figure_canvas.js';
import { themeColors } from './theme.js';

/**
 * Canvas size in CSS px for a figure. f.room (the board's width, set by figures.js): fewer columns
 * where the given ones would not fit (pairs stay together), and a title wrapped to the figure's width.
 */
function imagesLayout(ctx, f) {
  const n = f.images.length;
  const captionH = f.captions || f.labels ? FONT_PX + 4 : 0;
  const gap = f.tint ? 3 : 2;
  const pairGap = f.pairs ? 6 : 0; // a wider gap between pairs (query | retrieval)
  let side = Math.round(f.size * (f.scale ?? 1));
  if (f.room && f.minScale) {
    // Smaller images rather than fewer columns, down to minScale: on a phone the Lookup lab's pairs keep
    // four a row, so that the grid and the question under it share the first screen.
    const wanted = Math.max(1, Math.min(f.columns ?? n, n));
    const fits = Math.floor((f.room - Math.floor(wanted / 2) * pairGap) / wanted) - gap;
    side = Math.max(Math.round(f.size * f.minScale), Math.min(side, fits));
  }
  const cellW = side + gap, cellH = side + gap + captionH;
  let columns = Math.max(1, Math.min(f.columns ?? n, n));
  if (f.room) {
    const fit = Math.max(1, Math.floor((f.room + pairGap) / (cellW + pairGap / 2)));
    columns = Math.max(f.pairs ? 2 : 1, Math.min(columns, f.pairs ? fit - (fit % 2) : fit));
  }
  const rows = Math.ceil(n / columns);
  // Wide enough for the captions (about 6.5 px a character at the fonts used here).
  const captionW = Math.max(0, ...(f.captions ?? []).map((c) => String(c).length * 6.5 + 4));
  const cellWide = Math.max(cellW, columns === 1 ? captionW : 0);
  const imagesW = columns * cellWide + Math.floor(columns / 2) * pairGap;
  ctx.font = `600 ${FONT_PX + 1}px ${themeColors().font}`;
  const titleW = ctx.measureText(f.title ?? '').width + 4;
  const width = Math.ceil(Math.max(imagesW, Math.min(titleW, Math.max(f.room ?? titleW, imagesW, 120)), 120));
  const lines = wordLines(ctx, f.title ?? '', width - 4); // a single image's title wraps instead of being cut
  const titleH = TITLE_H + (lines.length - 1) * (FONT_PX + 4);
  return { columns, rows, side, captionH, gap, pairGap, cellW: cellWide, cellH, width, titleH, lines,
    height: titleH + rows * cellH };
}

function cellOrigin(layout, i) {
  const col = i % layout.columns, row = Math.floor(i / layout.columns);
  return { x: col * layout.cellW + Math.floor(col / 2) * layout.pairGap, y: layout.titleH + row * layout.cellH };
}

/** The top-left corner of image i (CSS px of layout L): centred in its cell, its gap on the right. */
function imageAt(L, i) {
  const o = cellOrigin(L, i);
  return { x: o.x + Math.floor((L.cellW - L.gap - L.side) / 2), y: o.y };
}

/** pixels (uint8 0..255, or floats in `range`) -> grey RGBA, dimmed towards the background by `alpha`. */
function greyImage(ctx, pixels, size, range, alpha, background) {
  const image = ctx.createImageData(size, size);
  const [lo, hi] = range ?? [0, 255];
  const bg = background;
  for (let i = 0; i < size * size; i++) {
    const g = Math.max(0, Math.min(255, Math.round(((pixels[i] - lo) / (hi - lo)) * 255)));
    // White digit on black, as MNIST is drawn; a tint < 1 fades the image into the panel's colour.
    for (let c = 0; c < 3; c++) image.data[4 * i + c] = Math.round(alpha * g + (1 - alpha) * bg[c]);
    image.data[4 * i + 3] = 255;
  }
  return image;
}

function parseColor(css) {
  const m = /^#([0-9a-f]{6})$/i.exec(css.trim());
  if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16));
  const rgb = /rgba?\(([^)]+)\)/.exec(css);
  return rgb ? rgb[1].split(',').slice(0, 3).map((x) => Number(x.trim())) : [255, 255, 255];
}

function drawImages(canvas, f, scale = devicePixelRatio || 1) {
  const L = imagesLayout(canvas.getContext('2d'), f);
  const { ctx, colors } = prepareCanvas(canvas, L, scale);
  ctx.fillStyle = colors.text;
  ctx.font = `600 ${FONT_PX + 1}px ${colors.font}`;
  ctx.textBaseline = 'top';
  L.lines.forEach((line, i) => ctx.fillText(line, 0, 2 + i * (FONT_PX + 4)));
  const bg = parseColor(colors.background);
  // Each image at 1:1 on a scratch canvas, then scaled up without smoothing (crisp pixels).
  const scratch = new OffscreenCanvas(f.size, f.size);
  const sctx = scratch.getContext('2d');
  ctx.imageSmoothingEnabled = false;
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.textAlign = 'center';
  f.images.forEach((pixels, i) => {
    const { x, y } = imageAt(L, i);
    const alpha = f.tint ? 0.12 + 0.88 * f.tint[i] : 1;
    sctx.putImageData(greyImage(sctx, pixels, f.size, f.range, alpha, bg), 0, 0);
    ctx.drawImage(scratch, x, y, L.side, L.side);
    if (f.tint && f.tint[i] > 0.5 && f.tint.filter((t) => t > 0.5).length <= 20) {
      // Not by brightness alone: the images with at least half the largest weight get a border too
      // (unless the weights are so flat that most would: then the border would say nothing).
      ctx.strokeStyle = colors.series[1];
      ctx.lineWidth = 2;
      ctx.strokeRect(x - 1, y - 1, L.side + 2, L.side + 2);
    }
    if (f.highlight === i) {
      ctx.strokeStyle = colors.focus;
      ctx.lineWidth = 2;
      ctx.strokeRect(x - 1.5, y - 1.5, L.side + 3, L.side + 3);
    }
    const caption = f.captions?.[i] ?? (f.labels ? String(f.labels[i]) : null);
    if (caption !== null && caption !== undefined) {
      ctx.fillStyle = colors.muted;
      ctx.fillText(caption, x + L.side / 2, y + L.side + 2);
    }
  });
  return L;
}

/** The image under a pointer at (x, y) CSS px of layout L, or -1. */
function hitImage(f, L, x, y) {
  for (let i = 0; i < f.images.length; i++) {
    const { x: left, y: top } = imageAt(L, i);
    if (x >= left && x < left + L.side && y >= top && y < top + L.side) return i;
  }
  return -1;
}

/** The kind as figure_kinds.js lists it: how it draws, its label, what the tooltip says. */
export const imagesKind = {
  draw: drawImages,
  label: (f) => `${f.title} (${f.images.length} image${f.images.length > 1 ? 's' : ''})`,
  textAt(f, L, x, y) {
    const i = hitImage(f, L, x, y);
    return i < 0 ? '' : f.names?.[i] ?? (f.labels ? `image ${i}, label ${f.labels[i]}` : `image ${i}`);
  },
  // Each image's middle, in reading order (where the keyboard steps, figures.js).
  spots: (f, L) => Array.from(f.images, (_, i) => {
    const { x, y } = imageAt(L, i);
    return { x: x + L.side / 2, y: y + L.side / 2 };
  }),
};
