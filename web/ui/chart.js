// A line chart on a canvas: axes with ticks and titles, a legend, lines (per-step training metrics),
// points (evaluations) and dashed reference lines (a ceiling). It draws what it is given.
//
// spec: {title, xTitle, yTitle, xMin? (0), xMax, yMin, yMax, xTicks? ([{x, label}] instead of round
//        numbers, e.g. for a log axis), series: [{label, kind: 'line' | 'points' | 'curve' | 'dashed',
//        ys (one value per step 1..n, or per `every` steps: ys[k] ends at step (k+1)*every) |
//        points: [{x, y}] (curve: joined by a line, dashed? for a second curve) | y (dashed: a constant)}]}
import { themeColors } from './theme.js';

const MARGIN = { left: 52, right: 12, top: 42, bottom: 40 };
const LEGEND_TOP = 31; // the first legend row's centre, under the title (baseline 16)
const LEGEND_ROW = 13;

// The legend's entries (sample mark + label), right-aligned in rows no wider than `room`; -> rows
// of series indices, the last series first.
function legendRows(ctx, series, room) {
  const entryWidth = (s) => 22 + ctx.measureText(s.label).width + 12;
  const rows = [[]];
  let used = 0;
  for (let i = series.length - 1; i >= 0; i--) {
    const w = entryWidth(series[i]);
    if (used + w > room && rows.at(-1).length) {
      rows.push([]);
      used = 0;
    }
    rows.at(-1).push(i);
    used += w;
  }
  return rows;
}

/** About `count` round tick values covering [lo, hi]. */
function ticks(lo, hi, count = 5) {
  const span = hi - lo || 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-6; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const label = (v) => (Math.abs(v) >= 1000 ? `${v / 1000}k` : String(v));

/**
 * Draws the chart onto `canvas` (a page canvas, an export canvas, or an SvgCanvas), sizing it: CSS
 * size width x height, backing store x `scale`.
 */
export function drawChart(c, spec, { width, height, scale = 1 }) {
  if (c.width !== Math.round(width * scale) || c.height !== Math.round(height * scale)) {
    c.width = Math.round(width * scale);
    c.height = Math.round(height * scale);
    c.style.width = `${width}px`;
    c.style.height = `${height}px`;
  }
  const ctx = c.getContext('2d');
  const colors = themeColors();
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, width, height);
  ctx.font = `11px ${colors.font}`;
  const rows = legendRows(ctx, spec.series, width - MARGIN.left - MARGIN.right + 12);
  // Legend rows go under the title; a narrow chart (e.g. embedded) gets more rows and a lower plot.
  const top = MARGIN.top + (rows.length - 1) * LEGEND_ROW;
  const plot = { x: MARGIN.left, y: top, w: width - MARGIN.left - MARGIN.right, h: height - top - MARGIN.bottom };
  const xMin = spec.xMin ?? 0;
  const xMax = Math.max(xMin + 1, spec.xMax);
  const { yMin, yMax } = spec;
  const px = (x) => plot.x + ((x - xMin) / (xMax - xMin)) * plot.w;
  const py = (y) => plot.y + plot.h - ((Math.min(yMax, Math.max(yMin, y)) - yMin) / (yMax - yMin || 1)) * plot.h;

  ctx.font = `11px ${colors.font}`;
  ctx.lineWidth = 1;
  // Grid and ticks.
  ctx.strokeStyle = colors.grid;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of ticks(yMin, yMax, 4)) {
    ctx.beginPath();
    ctx.moveTo(plot.x, Math.round(py(v)) + 0.5);
    ctx.lineTo(plot.x + plot.w, Math.round(py(v)) + 0.5);
    ctx.stroke();
    ctx.fillText(label(v), plot.x - 5, py(v));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const { x: v, label: text } of spec.xTicks ?? ticks(xMin, xMax, 5).map((x) => ({ x, label: label(x) }))) {
    ctx.beginPath();
    ctx.moveTo(Math.round(px(v)) + 0.5, plot.y + plot.h);
    ctx.lineTo(Math.round(px(v)) + 0.5, plot.y + plot.h + 4);
    ctx.stroke();
    ctx.fillText(text, px(v), plot.y + plot.h + 6);
  }
  ctx.strokeStyle = colors.muted;
  ctx.strokeRect(plot.x + 0.5, plot.y + 0.5, plot.w, plot.h);
  // Titles.
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
  ctx.font = `600 12px ${colors.font}`;
  ctx.fillText(spec.title ?? '', plot.x, 16);
  ctx.font = `11px ${colors.font}`;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  ctx.fillText(spec.xTitle ?? '', plot.x + plot.w / 2, height - 6);
  ctx.save();
  ctx.translate(12, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(spec.yTitle ?? '', 0, 0);
  ctx.restore();

  // Data, clipped to the plot.
  ctx.save();
  ctx.beginPath();
  ctx.rect(plot.x, plot.y - 4, plot.w + 4, plot.h + 8);
  ctx.clip();
  spec.series.forEach((s, i) => {
    const color = colors.series[i % colors.series.length];
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    if (s.kind === 'line' && s.ys?.length) {
      // At most about one vertex per pixel: long runs are drawn with a stride.
      const stride = Math.max(1, Math.floor(s.ys.length / plot.w));
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      const every = s.every ?? 1; // steps per value (a long run's series keeps means of `every` steps)
      for (let k = 0; k < s.ys.length; k += stride) {
        const x = px((k + 1) * every), y = py(s.ys[k]);
        if (k === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.stroke();
    } else if (s.kind === 'curve') {
      ctx.lineWidth = 1.5;
      ctx.setLineDash(s.dashed ? [5, 4] : []);
      ctx.beginPath();
      (s.points ?? []).forEach((p, k) => (k === 0 ? ctx.moveTo(px(p.x), py(p.y)) : ctx.lineTo(px(p.x), py(p.y))));
      ctx.stroke();
      ctx.setLineDash([]);
      for (const p of s.points ?? []) {
        ctx.beginPath();
        ctx.arc(px(p.x), py(p.y), 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
    } else if (s.kind === 'points') {
      for (const p of s.points ?? []) {
        ctx.beginPath();
        ctx.arc(px(p.x), py(p.y), 3.5, 0, 2 * Math.PI);
        ctx.fill();
      }
    } else if (s.kind === 'dashed' && Number.isFinite(s.y)) {
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(plot.x, py(s.y));
      ctx.lineTo(plot.x + plot.w, py(s.y));
      ctx.stroke();
      ctx.setLineDash([]);
    }
  });
  ctx.restore();

  // Legend: top right, a sample of each mark (line, dot, dashes), so colour is not the only cue. Rows
  // of entries that fit the plot's width (a narrow chart, e.g. embedded, gets two rows).
  ctx.font = `11px ${colors.font}`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  rows.forEach((row, r) => {
    let x = plot.x + plot.w;
    const y = LEGEND_TOP + r * LEGEND_ROW;
    for (const i of row) {
      const s = spec.series[i];
      x -= ctx.measureText(s.label).width;
      ctx.fillStyle = colors.text;
      ctx.fillText(s.label, x, y);
      x -= 22;
      const color = colors.series[i % colors.series.length];
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 1.5;
      if (s.kind === 'points') {
        ctx.beginPath();
        ctx.arc(x + 9, y, 3.5, 0, 2 * Math.PI);
        ctx.fill();
      } else {
        ctx.setLineDash(s.kind === 'dashed' || s.dashed ? [4, 3] : []);
        ctx.beginPath();
        ctx.moveTo(x + 1, y);
        ctx.lineTo(x + 18, y);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      x -= 12;
    }
  });
}

/** A chart on the page: as wide as its container, redrawn with the same spec on resize. */
export class LineChart {
  constructor(container, { height = 220, minWidth = 240, label: aria = 'chart' } = {}) {
    this.canvas = document.createElement('canvas');
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', aria);
    this.canvas.className = 'chart';
    this.height = height;
    this.minWidth = minWidth;
    container.append(this.canvas);
    this.spec = null;
    // The container's width, kept by a ResizeObserver: reading clientWidth at every draw would force
    // a synchronous layout in the middle of each animation frame while a lab trains.
    this.containerWidth = 0;
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(([entry]) => { this.containerWidth = entry.contentRect.width; }).observe(container);
    }
  }

  /** The CSS size the chart is drawn at. */
  size() {
    const width = this.containerWidth || this.canvas.parentElement?.clientWidth || 360;
    return { width: Math.max(this.minWidth, Math.floor(width)), height: this.height };
  }

  draw(spec = this.spec) {
    this.spec = spec;
    if (!spec) return;
    drawChart(this.canvas, spec, { ...this.size(), scale: window.devicePixelRatio || 1 });
  }
}
