// What the canvas figure kinds of a section share (images_figure.js, bars_figure.js): the title band,
// the font size, and a canvas sized and cleared for a layout.
import { themeColors } from './theme.js';

export const FONT_PX = 12;
export const TITLE_H = 20;

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
