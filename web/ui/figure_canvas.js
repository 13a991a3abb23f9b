// What the canvas figure kinds of a section share (images_figure.js, bars_figure.js): the title band,
// the font size, words wrapped to a width (images_figure.js, phase_timeline_figure.js), a canvas sized
// and cleared for a layout, and an arrow's head (graph_figure.js, arrows_figure.js).
import { themeColors } from './theme.js';

export const FONT_PX = 12;
export const TITLE_H = 20;

/**
 * `text`'s words in lines no wider than `width` CSS px in the context's font (a word wider than that
 * keeps a line of its own).
 */
export function wordLines(ctx, text, width) {
  const lines = [];
  for (const word of text.split(' ')) {
    const line = lines.length ? `${lines.at(-1)} ${word}` : word;
    if (lines.length && ctx.measureText(line).width <= width) lines[lines.length - 1] = line;
    else lines.push(word);
  }
  return lines;
}

/** Sizes the canvas for a layout of {width, height} CSS px at `scale`, clears it -> {ctx, colors}. */
export function prepareCanvas(canvas, L, scale) {
  const colors = themeColors();
  canvas.width = Math.round(L.width * scale);
  canvas.height = Math.round(L.height * scale);
  canvas.style.width = `${L.width}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, L.width, L.height);
  return { ctx, colors };
}

/** A filled arrow head with its tip at (x, y), pointing along `angle`; `spread` is each side's angle. */
export function arrowHead(ctx, x, y, angle, size, spread = 0.45) {
  ctx.beginPath();
  ctx.moveTo(x, y);
  ctx.lineTo(x - size * Math.cos(angle - spread), y - size * Math.sin(angle - spread));
  ctx.lineTo(x - size * Math.cos(angle + spread), y - size * Math.sin(angle + spread));
  ctx.closePath();
  ctx.fill();
}

/**
 * A line from (x0, y0) to (x1, y1) ending in an arrow head of `size` at (x1, y1): the line stops short of
 * the tip, so the head's point stays sharp (arrows_figure.js, pipeline_figure.js).
 */
export function arrowLine(ctx, x0, y0, x1, y1, size, spread) {
  const angle = Math.atan2(y1 - y0, x1 - x0);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1 - 0.8 * size * Math.cos(angle), y1 - 0.8 * size * Math.sin(angle));
  ctx.stroke();
  arrowHead(ctx, x1, y1, angle, size, spread);
}

/**
 * Sizes the canvas for a layout of {width, height} CSS px at `scale` (only when the size changed, so a
 * redraw at the same size keeps the bitmap), fills the background and writes the bold title in its band
 * -> {ctx, colors}. cssHeight: the canvas's CSS height is set too (the graph figure, whose height must
 * not follow its width); otherwise it scales with its width. (head_view_figure.js, arrows_figure.js,
 * model_grid_figure.js, graph_figure.js.)
 */
export function titledCanvas(canvas, L, scale, { title = '', titleH, titleX, fontPx, cssHeight = false }) {
  const ctx = canvas.getContext('2d');
  const width = Math.round(L.width * scale), height = Math.round(L.height * scale);
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  if (canvas.style) canvas.style.width = `${L.width}px`;
  if (canvas.style && cssHeight) canvas.style.height = `${L.height}px`;
  const colors = themeColors();
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, L.width, L.height);
  ctx.font = `600 ${fontPx + 1}px ${colors.font}`;
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillText(title, titleX, titleH / 2);
  return { ctx, colors };
}
