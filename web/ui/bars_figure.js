// A bar chart on a canvas (a figure kind of figure_kinds.js): one bar per value, from 0.
//   {kind: 'bars', id, title, values, xTitle, yTitle, labels?, highlight?}
// Hovering a bar names it and its value in the tooltip.
import { FONT_PX, TITLE_H, prepareCanvas } from './figure_canvas.js';

function barsLayout() {
  return { width: 520, height: 190, left: 58, right: 10, top: TITLE_H + 6, bottom: 38 };
}

export function drawBars(canvas, f, scale = devicePixelRatio || 1) {
  const L = barsLayout();
  const { ctx, colors } = prepareCanvas(canvas, L, scale);
  const n = f.values.length;
  let max = 0;
  for (const v of f.values) max = Math.max(max, v);
  const yMax = max > 0 ? max : 1;
  const plotW = L.width - L.left - L.right, plotH = L.height - L.top - L.bottom;
  const barW = plotW / n;
  // axes and ticks
  ctx.strokeStyle = colors.grid;
  ctx.fillStyle = colors.muted;
  ctx.font = `${FONT_PX - 1}px ${colors.font}`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of [0, 0.5, 1]) {
    const y = L.top + plotH * (1 - t);
    ctx.beginPath();
    ctx.moveTo(L.left, y);
    ctx.lineTo(L.left + plotW, y);
    ctx.stroke();
    ctx.fillText((t * yMax).toPrecision(2), L.left - 4, y);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let i = 0; i < n; i += Math.max(1, Math.ceil(n / 10))) ctx.fillText(String(i), L.left + (i + 0.5) * barW, L.top + plotH + 3);
  for (let i = 0; i < n; i++) {
    const h = (f.values[i] / yMax) * plotH;
    ctx.fillStyle = i === f.highlight ? colors.focus : colors.series[0];
    ctx.fillRect(L.left + i * barW + (barW > 3 ? 0.5 : 0), L.top + plotH - h, Math.max(1, barW - (barW > 3 ? 1 : 0)), h);
  }
  ctx.fillStyle = colors.text;
  ctx.font = `600 ${FONT_PX + 1}px ${colors.font}`;
  ctx.textAlign = 'left';
  ctx.fillText(f.title ?? '', 0, 2);
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  ctx.fillText(f.xTitle ?? '', L.left + plotW / 2, L.height - FONT_PX - 4);
  ctx.save();
  ctx.translate(10, L.top + plotH / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(f.yTitle ?? '', 0, 0);
  ctx.restore();
  return L;
}

/** The bar under a pointer at x CSS px of layout L, or -1. */
function hitBar(f, L, x) {
  const i = Math.floor((x - L.left) / ((L.width - L.left - L.right) / f.values.length));
  return i >= 0 && i < f.values.length ? i : -1;
}

function describeBar(f, i) {
  const label = f.labels ? `, label ${f.labels[i]}` : '';
  return `${f.xTitle ?? 'item'} ${i}${label}: ${f.yTitle ?? 'value'} ${Number(f.values[i]).toFixed(4)}`;
}

/** The kind as figure_kinds.js lists it: how it draws and what the tooltip says. */
export const barsKind = {
  draw: drawBars,
  textAt(f, L, x) {
    const i = hitBar(f, L, x);
    return i < 0 ? '' : describeBar(f, i);
  },
};
