// A bar chart on a canvas (a figure kind of figure_kinds.js): one bar per value, from 0, up or down.
//   {kind: 'bars', id, title, values, xTitle, yTitle, labels?, highlight?, room? (the board's width: the figure fits it)}
// With labels (the neuron view's key tokens) and few enough bars, each bar is named by its label under
// the axis, slanted; otherwise every few bars by index. Negative values hang below the zero line, which
// stays inside the plot, so no bar reaches the labels. Hovering a bar names it and its value.
import { FONT_PX, TITLE_H, prepareCanvas, wordLines } from './figure_canvas.js';
import { themeColors } from './theme.js';

const MAX_LABELLED = 40;   // more bars than this: index ticks (labels would be a few px apart)
const LABEL_CHARS = 12;    // longer labels are cut, with an ellipsis
const SLANT = Math.PI / 4; // labels at 45°
const MARK_HALF = 4;       // the highlighted bar's triangle, half its width (CSS px)
const TITLE_LINE = FONT_PX + 5; // a wrapped title's line height (CSS px)

const cut = (text) => (text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text);

/**
 * Where everything goes, from the figure alone (no canvas: tests check it in Node): the layout, the
 * value range [lo, hi] (0 always inside), the y of the zero line and of a value, and the labels drawn.
 */
/** As wide as the board allows (f.room, CSS px: a phone), up to 520: its text stays at full size. */
const barsWidth = (f) => Math.max(240, Math.min(520, f.room ?? 520));

/** The highlighted bar's index (the largest weight, the chosen image), or -1 where there is none. */
export function markedBar(f) {
  return Number.isInteger(f.highlight) && f.highlight >= 0 && f.highlight < f.values.length ? f.highlight : -1;
}

export function barsGeometry(f, titleLines = 1) {
  const n = f.values.length;
  const extra = (Math.max(1, titleLines) - 1) * TITLE_LINE; // a title wrapped to more lines pushes the plot down
  const labels = f.labels && n <= MAX_LABELLED ? f.labels.map((l) => cut(String(l))) : null;
  // Slanted labels take their width times sin 45° below the axis (an estimate: 0.6 em per character).
  const labelDrop = labels ? Math.ceil(Math.max(...labels.map((l) => l.length), 1) * (FONT_PX - 1) * 0.6 * Math.sin(SLANT)) + 6 : 0;
  const L = { width: barsWidth(f), height: 190 + labelDrop + extra, left: 58, right: 10,
    top: TITLE_H + 6 + extra, bottom: 38 + labelDrop };
  let lo = 0, hi = 0;
  for (const v of f.values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (hi === lo) hi = lo + 1;
  const plotH = L.height - L.top - L.bottom;
  const y = (v) => L.top + plotH * ((hi - v) / (hi - lo));
  return { L, lo, hi, y, zeroY: y(0), plotBottom: L.top + plotH, labels, barW: (L.width - L.left - L.right) / n };
}

/** The title's lines at the figure's width (a long one, the Pretrained lab's five likeliest tokens, wraps). */
function titleLinesOf(canvas, f) {
  const ctx = canvas.getContext('2d');
  ctx.font = `600 ${FONT_PX + 1}px ${themeColors().font}`;
  return wordLines(ctx, f.title ?? '', barsWidth(f) - 4);
}

function drawBars(canvas, f, scale = devicePixelRatio || 1) {
  const lines = titleLinesOf(canvas, f);
  const g = barsGeometry(f, lines.length);
  const { L, lo, hi, y, barW } = g;
  const { ctx, colors } = prepareCanvas(canvas, L, scale);
  const n = f.values.length;
  const plotW = L.width - L.left - L.right;
  // grid lines at the ends of the range and at zero, each with its value
  ctx.strokeStyle = colors.grid;
  ctx.fillStyle = colors.muted;
  ctx.font = `${FONT_PX - 1}px ${colors.font}`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const written = [];
  for (const v of [...new Set([hi, lo, lo < 0 ? 0 : hi / 2])]) {
    ctx.beginPath();
    ctx.moveTo(L.left, y(v));
    ctx.lineTo(L.left + plotW, y(v));
    ctx.stroke();
    // A value too close to one already written (zero just above a small negative end) keeps its line only.
    if (written.some((w) => Math.abs(w - y(v)) < FONT_PX)) continue;
    written.push(y(v));
    ctx.fillText(v === 0 ? '0' : v.toPrecision(2), L.left - 4, y(v));
  }
  for (let i = 0; i < n; i++) {
    const top = Math.min(y(f.values[i]), g.zeroY), h = Math.abs(y(f.values[i]) - g.zeroY);
    ctx.fillStyle = i === f.highlight ? colors.focus : colors.series[0];
    ctx.fillRect(L.left + i * barW + (barW > 3 ? 0.5 : 0), top, Math.max(1, barW - (barW > 3 ? 1 : 0)),
      Math.max(h, 0.5));
  }
  // The highlighted bar (the largest weight, the chosen image) is marked by a triangle over it too, not by
  // its colour alone (WCAG 1.4.1).
  const marked = markedBar(f);
  if (marked >= 0) {
    const cx = L.left + (marked + 0.5) * barW, tip = Math.min(y(f.values[marked]), g.zeroY) - 1;
    ctx.fillStyle = colors.text;
    ctx.beginPath();
    ctx.moveTo(cx, tip);
    ctx.lineTo(cx - MARK_HALF, tip - MARK_HALF - 1);
    ctx.lineTo(cx + MARK_HALF, tip - MARK_HALF - 1);
    ctx.closePath();
    ctx.fill();
  }
  // the x labels, under the plot's bottom (below the lowest bar)
  ctx.fillStyle = colors.muted;
  if (g.labels) {
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    g.labels.forEach((label, i) => {
      ctx.save();
      ctx.translate(L.left + (i + 0.5) * barW, g.plotBottom + 6);
      ctx.rotate(-SLANT);
      ctx.fillText(label, 0, 0);
      ctx.restore();
    });
  } else {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (let i = 0; i < n; i += Math.max(1, Math.ceil(n / 10))) ctx.fillText(String(i), L.left + (i + 0.5) * barW,
      g.plotBottom + 3);
  }
  canvas.dataset.xLabels = JSON.stringify(g.labels ?? []);
  canvas.dataset.titleLines = JSON.stringify(lines);
  // Where the bars are (CSS px), so a test can read each bar's height back from the pixels.
  canvas.dataset.bars = JSON.stringify({ n, left: L.left, barW, zeroY: g.zeroY, lo, hi, top: y(hi),
    highlight: f.highlight ?? null });
  ctx.fillStyle = colors.text;
  ctx.font = `600 ${FONT_PX + 1}px ${colors.font}`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  lines.forEach((line, i) => ctx.fillText(line, 0, 2 + i * TITLE_LINE));
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  ctx.fillText(f.xTitle ?? '', L.left + plotW / 2, L.height - FONT_PX - 4);
  ctx.save();
  ctx.translate(10, L.top + (g.plotBottom - L.top) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(f.yTitle ?? '', 0, 0);
  ctx.restore();
  return L;
}

/** A bar's width in layout L (CSS px). */
const barWidth = (f, L) => (L.width - L.left - L.right) / f.values.length;

/** The bar under a pointer at x CSS px of layout L, or -1. */
function hitBar(f, L, x) {
  const i = Math.floor((x - L.left) / barWidth(f, L));
  return i >= 0 && i < f.values.length ? i : -1;
}

function describeBar(f, i) {
  const label = f.labels ? `, label ${f.labels[i]}` : '';
  return `${f.xTitle ?? 'item'} ${i}${label}: ${f.yTitle ?? 'value'} ${Number(f.values[i]).toFixed(4)}`;
}

/** The kind as figure_kinds.js lists it: how it draws and what the tooltip says. */
export const barsKind = {
  draw: drawBars,
  label: (f) => `${f.title}${markedBar(f) >= 0 ? `. Marked ▼: ${describeBar(f, markedBar(f))}` : ''}`,
  textAt(f, L, x) {
    const i = hitBar(f, L, x);
    return i < 0 ? '' : `${describeBar(f, i)}${i === markedBar(f) ? ' (marked ▼)' : ''}`;
  },
  // Where the keyboard steps (figures.js): each bar's middle, left to right.
  // (Array.from: the values may be a Float32Array, whose map would make numbers of these points.)
  spots: (f, L) => Array.from(f.values, (_, i) => ({ x: L.left + (i + 0.5) * barWidth(f, L),
    y: L.top + (L.height - L.top - L.bottom) / 2 })),
};
