// The Induction lab's timeline (a figure kind of figure_kinds.js): panes stacked on one step axis, the
// losses on top and one pane per head score below it, with the phase change marked across all of them by
// a vertical line and its words. A head keeps its colour in every pane and its layer its line style
// (solid layer 0, dashed layer 1, dotted layer 2, dash-dot layer 3) and its place in the layer a marker
// shape along its line (circle, square, triangle, ...), and the legend names all three, so colour is never
// the only cue (two heads of one layer share a line style); the tooltip (hover, or the keyboard's arrows)
// reads every value at a step.
//
// figure: {kind: 'phasetimeline', id, title, xTitle, steps: [step] (the points' x), layers, heads,
//          panes: [{title, yMin, yMax, heads? (true: one series a head), series: [{label, ys ([value] a point;
//                   NaN: none), xs? (its own steps), color? (an index), dash? ([on, off]), head? (l H + h)}]}],
//          marker: {step, label} | null, width?}
import { wordLines } from './figure_canvas.js';
import { themeColors } from './theme.js';

// Okabe and Ito's colour-blind-safe set, without its yellow and black (unreadable on the light and the
// dark panel): the heads' colours, in order.
const HEAD_COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#56B4E9', '#E69F00'];
const LAYER_DASH = [[], [6, 3], [2, 3], [8, 3, 2, 3]];
const MARKS_PER_LINE = 5; // a head's marker, drawn a few times along each of its lines

/** The path of a polygon through `points` ([x, y] each), closed. */
function polygon(ctx, points) {
  points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
  ctx.closePath();
}

// Each marker's path centred at (x, y), r its radius: filled, except the two made of lines, stroked.
const MARK_PATHS = {
  circle: (ctx, x, y, r) => ctx.arc(x, y, r, 0, 2 * Math.PI),
  square: (ctx, x, y, r) => ctx.rect(x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7),
  triangle: (ctx, x, y, r) => polygon(ctx, [[x, y - r], [x + r, y + r * 0.8], [x - r, y + r * 0.8]]),
  diamond: (ctx, x, y, r) => polygon(ctx, [[x, y - r], [x + r, y], [x, y + r], [x - r, y]]),
  cross: (ctx, x, y, r) => {
    const d = r * 0.8;
    ctx.moveTo(x - d, y - d); ctx.lineTo(x + d, y + d); ctx.moveTo(x + d, y - d); ctx.lineTo(x - d, y + d);
  },
  plus: (ctx, x, y, r) => {
    ctx.moveTo(x - r, y); ctx.lineTo(x + r, y); ctx.moveTo(x, y - r); ctx.lineTo(x, y + r);
  },
};
const STROKED_MARKS = new Set(['cross', 'plus']);
// A head's marker by its place in its layer (as its colour): circle, square, triangle, ...
const HEAD_MARKS = Object.keys(MARK_PATHS);

/** A marker of `shape` centred at (x, y), in the current fill (or, for lines, stroke) colour. */
function drawMark(ctx, shape, x, y, r = 3.2) {
  ctx.beginPath();
  MARK_PATHS[shape](ctx, x, y, r);
  if (!STROKED_MARKS.has(shape)) {
    ctx.fill();
    return;
  }
  ctx.lineWidth = 1.6;
  ctx.stroke();
}
const headMark = (f, i) => HEAD_MARKS[(i % f.heads) % HEAD_MARKS.length];

const MARGIN = { left: 46, right: 12, bottom: 36 };
const LOSS_PANE = 150, SCORE_PANE = 78, PANE_GAP = 26, LEGEND_ROW = 16;

/** About `count` round values covering [lo, hi]. */
function ticks(lo, hi, count) {
  const span = hi - lo || 1, raw = span / count, magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-6; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const stepLabel = (v) => (Math.abs(v) >= 1000 ? `${v / 1000}k` : String(v));

const TITLE_FONT = (colors) => `600 13px ${colors.font}`;
const PANE_TITLE_FONT = (colors) => `600 11px ${colors.font}`;
const LEGEND_FONT = (colors) => `11px ${colors.font}`;
const TITLE_LINE = 16, PANE_TITLE_LINE = 13, LEGEND_SWATCH = 22;

/** `text`'s lines no wider than maxWidth in `font` (none for no text). */
function wrapLines(ctx, text, font, maxWidth) {
  ctx.font = font;
  return text ? wordLines(ctx, text, maxWidth) : [];
}

/**
 * The legend's entries where they go: the loss lines on the first row(s), then each head (its colour and
 * its layer's line style), wrapped at the figure's width as measured in its font.
 */
function legendEntries(ctx, f, width, top, colors) {
  ctx.font = LEGEND_FONT(colors);
  const out = [];
  let x = MARGIN.left, y = top;
  const add = (label, color, dash, mark = null) => {
    const w = LEGEND_SWATCH + 4 + ctx.measureText(label).width + 12;
    if (x > MARGIN.left && x + w > width - MARGIN.right) {
      x = MARGIN.left;
      y += LEGEND_ROW;
    }
    out.push({ label, color, dash, mark, x, y });
    x += w;
  };
  for (const s of f.panes[0].series) add(s.label, seriesColor(s, colors, f), s.dash ?? []);
  x = MARGIN.left;
  y += LEGEND_ROW;
  for (let i = 0; i < f.layers * f.heads; i++) {
    add(`head ${Math.floor(i / f.heads)}.${i % f.heads}`, headColor(f, i),
      LAYER_DASH[Math.floor(i / f.heads) % LAYER_DASH.length], headMark(f, i));
  }
  return { entries: out, bottom: y + LEGEND_ROW };
}

/**
 * Where everything goes (CSS px), measured in the figure's fonts so that nothing overlaps at any width:
 * the title's lines, the legend's entries, each pane's title lines and rectangle, the x scale.
 */
function layoutOf(ctx, f, width, colors) {
  const plotW = width - MARGIN.left - MARGIN.right;
  const title = wrapLines(ctx, f.title ?? '', TITLE_FONT(colors), width - 16);
  const legend = legendEntries(ctx, f, width, 16 + title.length * TITLE_LINE, colors);
  let y = legend.bottom;
  const paneTitles = f.panes.map((p) => wrapLines(ctx, p.title, PANE_TITLE_FONT(colors), plotW));
  const panes = f.panes.map((p, i) => {
    const h = i === 0 ? LOSS_PANE : SCORE_PANE;
    const rect = { x: MARGIN.left, y: y + 4 + paneTitles[i].length * PANE_TITLE_LINE, w: plotW, h };
    y = rect.y + h + PANE_GAP;
    return rect;
  });
  const xMax = Math.max(1, f.steps.at(-1) ?? 1);
  return { width, height: y - PANE_GAP + MARGIN.bottom, title, legend: legend.entries, paneTitles, panes, xMax,
    px: (x) => MARGIN.left + (x / xMax) * plotW };
}

// As wide as the figure's board allows, up to f.width (640): on a phone the panes narrow and the legend
// wraps, rather than the whole canvas shrinking under CSS until its words are unreadable.
const MIN_WIDTH = 300;
function widthFor(canvas, f) {
  const board = canvas.closest?.('.figure-board');
  const room = board?.clientWidth ?? 0;
  return Math.max(MIN_WIDTH, Math.min(f.width ?? 640, room > 0 ? room : Infinity));
}

function draw(canvas, f, scale = devicePixelRatio || 1) {
  const width = widthFor(canvas, f);
  const ctx = canvas.getContext('2d');
  const colors = themeColors();
  const L = layoutOf(ctx, f, width, colors);
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(L.height * scale);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${L.height}px`;
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, width, L.height);
  ctx.font = TITLE_FONT(colors);
  ctx.fillStyle = colors.text;
  ctx.textBaseline = 'alphabetic';
  L.title.forEach((line, i) => ctx.fillText(line, 8, 16 + i * TITLE_LINE));
  drawLegend(ctx, L, colors);
  const marks = [];
  f.panes.forEach((pane, i) => drawPane(ctx, f, pane, L.panes[i], L.paneTitles[i], L, colors,
    i === f.panes.length - 1, marks));
  if (f.marker) {
    const x = Math.round(L.px(f.marker.step)) + 0.5;
    const top = L.panes[0].y, bottom = L.panes.at(-1).y + L.panes.at(-1).h;
    ctx.strokeStyle = colors.focus;
    ctx.lineWidth = 1.5;
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, bottom);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = `600 11px ${colors.font}`;
    const w = ctx.measureText(f.marker.label).width;
    const left = x + 4 + w > width - MARGIN.right ? x - 4 - w : x + 4;
    // On the panel's colour: the rest's loss runs along the top of the pane and struck the words through.
    ctx.fillStyle = colors.background;
    ctx.fillRect(left - 2, top + 2, w + 4, 13);
    ctx.fillStyle = colors.focus;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    ctx.fillText(f.marker.label, left, top + 12);
  }
  // Where the panes are (CSS px; the canvas holds `scale` pixels a CSS px), for a test reading the pixels back.
  canvas.dataset.layout = JSON.stringify({ scale,
    panes: L.panes.map((p, i) => ({ ...p, yMin: f.panes[i].yMin, yMax: f.panes[i].yMax })), xMax: L.xMax,
    markerX: f.marker ? L.px(f.marker.step) : null, lineColor: seriesColor(f.panes[0].series[0], colors, f),
    headMarks: Array.from({ length: f.layers * f.heads }, (_, i) => ({ head: i, shape: headMark(f, i), count: marks[i] ?? 0 })) });
  return L;
}

/** The legend under the title, as layoutOf placed it: each entry's line (colour, dash) and label. */
function drawLegend(ctx, L, colors) {
  ctx.font = LEGEND_FONT(colors);
  ctx.textBaseline = 'middle';
  for (const { label, color, dash, mark, x, y } of L.legend) {
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + LEGEND_SWATCH, y);
    ctx.stroke();
    ctx.setLineDash([]);
    if (mark) {
      ctx.fillStyle = color;
      drawMark(ctx, mark, x + LEGEND_SWATCH / 2, y);
    }
    ctx.fillStyle = colors.text;
    ctx.fillText(label, x + LEGEND_SWATCH + 4, y);
  }
}

/**
 * A head's colour: its place in its layer (head h of every layer shares one; the layer's line style tells
 * them apart).
 */
const headColor = (f, i) => HEAD_COLORS[(i % f.heads) % HEAD_COLORS.length];

function seriesColor(s, colors, f) {
  if (s.head !== undefined) return headColor(f, s.head);
  return [colors.series[0], colors.series[1], colors.muted][s.color ?? 0] ?? colors.text;
}

/** One pane; counts the heads' markers it draws into marks[head]. */
function drawPane(ctx, f, pane, rect, titleLines, L, colors, last, marks) {
  const py = (y) => rect.y + rect.h - ((Math.min(pane.yMax,
    Math.max(pane.yMin, y)) - pane.yMin) / (pane.yMax - pane.yMin || 1)) * rect.h;
  ctx.font = PANE_TITLE_FONT(colors);
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
  titleLines.forEach((line, i) => ctx.fillText(line, rect.x,
    rect.y - 4 - (titleLines.length - 1 - i) * PANE_TITLE_LINE));
  ctx.font = `11px ${colors.font}`;
  ctx.lineWidth = 1;
  ctx.strokeStyle = colors.grid;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of ticks(pane.yMin, pane.yMax, rect.h > 100 ? 4 : 2)) {
    ctx.beginPath();
    ctx.moveTo(rect.x, Math.round(py(v)) + 0.5);
    ctx.lineTo(rect.x + rect.w, Math.round(py(v)) + 0.5);
    ctx.stroke();
    ctx.fillText(String(v), rect.x - 5, py(v));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const v of ticks(0, L.xMax, 5)) {
    ctx.beginPath();
    ctx.moveTo(Math.round(L.px(v)) + 0.5, rect.y + rect.h);
    ctx.lineTo(Math.round(L.px(v)) + 0.5, rect.y + rect.h + 4);
    ctx.stroke();
    if (last) ctx.fillText(stepLabel(v), L.px(v), rect.y + rect.h + 6);
  }
  if (last) ctx.fillText(f.xTitle ?? 'step', rect.x + rect.w / 2, rect.y + rect.h + 20);
  ctx.strokeStyle = colors.muted;
  ctx.strokeRect(rect.x + 0.5, rect.y + 0.5, rect.w, rect.h);
  ctx.save();
  ctx.beginPath();
  ctx.rect(rect.x, rect.y - 2, rect.w + 2, rect.h + 4);
  ctx.clip();
  // Last to first, so that the first series (the loss on the repeat) is drawn on top where lines meet.
  for (const s of [...pane.series].reverse()) {
    const xs = s.xs ?? f.steps;
    ctx.strokeStyle = seriesColor(s, colors, f);
    ctx.lineWidth = 1.75;
    ctx.setLineDash(s.head !== undefined ? LAYER_DASH[Math.floor(s.head / f.heads) % LAYER_DASH.length] : s.dash ?? []);
    ctx.beginPath();
    let drawing = false;
    s.ys.forEach((y, k) => {
      if (!Number.isFinite(y)) {
        drawing = false;
        return;
      }
      if (drawing) ctx.lineTo(L.px(xs[k]), py(y));
      else ctx.moveTo(L.px(xs[k]), py(y));
      drawing = true;
    });
    ctx.stroke();
    ctx.setLineDash([]);
    if (s.head !== undefined) {
      // Its marker at a few points along it, each head at its own offset so that two close lines' marks
      // do not sit on one another.
      ctx.fillStyle = ctx.strokeStyle;
      const points = s.ys.flatMap((y, k) => (Number.isFinite(y) ? [[L.px(xs[k]), py(y)]] : []));
      const stride = Math.max(1, Math.floor(points.length / MARKS_PER_LINE));
      const offset = Math.floor((stride * ((s.head % f.heads) + 0.5)) / f.heads);
      for (let k = offset; k < points.length; k += stride) {
        drawMark(ctx, headMark(f, s.head), points[k][0], points[k][1]);
        marks[s.head] = (marks[s.head] ?? 0) + 1;
      }
    }
  }
  ctx.restore();
}

/** The point nearest a step: its index in f.steps. */
function nearest(f, step) {
  let best = 0;
  f.steps.forEach((s, k) => {
    if (Math.abs(s - step) < Math.abs(f.steps[best] - step)) best = k;
  });
  return best;
}

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');

/** Every value at point k, in words (the tooltip, and a focused point read aloud). */
function valuesAt(f, k) {
  const parts = [`step ${f.steps[k]}`];
  for (const [i, pane] of f.panes.entries()) {
    const values = pane.series.map((s) => {
      const at = s.xs ? nearestIn(s.xs, f.steps[k]) : k;
      return `${s.label} ${f2(s.ys[at])}`;
    });
    parts.push(i === 0 ? values.join(', ') : `${pane.what ?? pane.title}: ${values.join(', ')}`);
  }
  return parts.join('; ');
}

function nearestIn(xs, step) {
  let best = 0;
  xs.forEach((s, k) => { if (Math.abs(s - step) < Math.abs(xs[best] - step)) best = k; });
  return best;
}

export const phaseTimelineKind = {
  draw,
  /** What the figure shows, for a screen reader: the last point's values and the phase change. */
  label(f) {
    if (!f.steps.length) return `${f.title}: no steps yet`;
    return `${f.title}. ${f.marker ? `Marked: ${f.marker.label}. ` : 'No phase change yet. '}Last point: `
      + `${valuesAt(f, f.steps.length - 1)}.`;
  },
  textAt(f, layout, x, y) {
    if (!f.steps.length || x < MARGIN.left || x > layout.width - MARGIN.right) return '';
    const top = layout.panes[0].y, bottom = layout.panes.at(-1).y + layout.panes.at(-1).h;
    if (y < top || y > bottom) return '';
    return valuesAt(f, nearest(f, ((x - MARGIN.left) / (layout.width - MARGIN.left - MARGIN.right)) * layout.xMax));
  },
  // Each reported step, left to right, in the first pane (where the keyboard steps, figures.js).
  spots: (f, layout) => Array.from(f.steps, (step) => ({
    x: MARGIN.left + (step / layout.xMax) * (layout.width - MARGIN.left - MARGIN.right),
    y: layout.panes[0].y + layout.panes[0].h / 2 })),
};
