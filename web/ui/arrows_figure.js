// Arrows in a plane on a canvas (a figure kind of figure_kinds.js): 2-D vectors drawn from the origin
// inside a circle of radius `radius`, each with its label at its tip; an arc marks the angle between
// two of them. The Writing lab's rotary positions draw one query/key pair of a head with it, before and
// after each is turned by its position. It draws what it is given: no math on the vectors.
//
// figure: {kind: 'arrows', id, title, radius (the plane's half-width in the vectors' units),
//          arrows: [{label, x, y, series? (a theme colour index), dashed? (a faint "before" arrow)}],
//          angle?: {from, to, label} (indices into arrows: an arc from one to the other, labelled)}
import { arrowLine, titledCanvas } from './figure_canvas.js';

const TITLE_H = 22;
const FONT_PX = 12;
const SIDE = 260; // the plane, CSS px
const PAD = 34; // room for the tips' labels

function check(f) {
  if (!(f.radius > 0) || !Array.isArray(f.arrows) || !f.arrows.length) throw new Error('arrows figure: a positive '
    + `radius and at least one arrow, got radius ${f.radius}, ${f.arrows?.length} arrows`);
  for (const a of f.arrows) if (!Number.isFinite(a.x) || !Number.isFinite(a.y)) throw new Error('arrows figure: arrow '
    + `'${a.label}' is not finite (${a.x}, ${a.y})`);
}

/** Where things go (CSS px): {width, height, cx, cy, scale (px per unit), tips: [{label, x, y}]}. */
function arrowsLayout(f) {
  check(f);
  const width = Math.max(SIDE + 2 * PAD + 40,
    Math.ceil((f.title ?? '').length * 7.2) + 8); // + 40: a label left or right of a tip
  const height = TITLE_H + SIDE + 2 * PAD;
  const cx = width / 2, cy = TITLE_H + PAD + SIDE / 2, scale = SIDE / 2 / f.radius;
  const tips = f.arrows.map((a) => ({ label: a.label, x: cx + a.x * scale, y: cy - a.y * scale }));
  return { width, height, cx, cy, scale, tips };
}

const arrow = (ctx, x0, y0, x1, y1) => arrowLine(ctx, x0, y0, x1, y1, 9, 0.4);

/** Draws the plane, sizing the canvas (CSS px x scale). Returns the layout. */
function drawArrows(canvas, f, scale = globalThis.devicePixelRatio || 1) {
  const L = arrowsLayout(f);
  const { ctx, colors } = titledCanvas(canvas, L, scale,
    { title: f.title ?? '', titleH: TITLE_H, titleX: 4, fontPx: FONT_PX });
  // The axes and the circle of radius 1 (a unit-length pair ends on it).
  ctx.strokeStyle = colors.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(L.cx - SIDE / 2, L.cy);
  ctx.lineTo(L.cx + SIDE / 2, L.cy);
  ctx.moveTo(L.cx, L.cy - SIDE / 2);
  ctx.lineTo(L.cx, L.cy + SIDE / 2);
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(L.cx, L.cy, L.scale, 0, 2 * Math.PI);
  ctx.stroke();
  if (f.angle) {
    const a = f.arrows[f.angle.from], b = f.arrows[f.angle.to];
    const start = -Math.atan2(a.y, a.x), end = -Math.atan2(b.y, b.x);
    const r = 0.3 * L.scale;
    ctx.strokeStyle = colors.text;
    ctx.beginPath();
    // Canvas angles run clockwise (y down): the shorter way from a to b.
    let sweep = end - start;
    while (sweep > Math.PI) sweep -= 2 * Math.PI;
    while (sweep < -Math.PI) sweep += 2 * Math.PI;
    // Always clockwise from the smaller angle (the SVG export's arc draws clockwise only).
    ctx.arc(L.cx, L.cy, r, Math.min(start, start + sweep), Math.max(start, start + sweep));
    ctx.stroke();
    const mid = start + sweep / 2;
    ctx.font = `${FONT_PX}px ${colors.font}`;
    ctx.fillStyle = colors.text;
    ctx.textAlign = 'center';
    ctx.fillText(f.angle.label, L.cx + (r + 22) * Math.cos(mid), L.cy + (r + 14) * Math.sin(mid));
  }
  ctx.font = `${FONT_PX}px ${colors.font}`;
  f.arrows.forEach((a, i) => {
    const tip = L.tips[i];
    const colour = colors.series[(a.series ?? i) % colors.series.length];
    ctx.globalAlpha = a.dashed ? 0.45 : 1;
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.lineWidth = a.dashed ? 1.5 : 2.5;
    ctx.setLineDash(a.dashed ? [4, 3] : []);
    arrow(ctx, L.cx, L.cy, tip.x, tip.y);
    ctx.setLineDash([]);
    // The label beyond the tip, along the arrow.
    const len = Math.hypot(tip.x - L.cx, tip.y - L.cy) || 1;
    const ux = (tip.x - L.cx) / len, uy = (tip.y - L.cy) / len;
    ctx.fillStyle = a.dashed ? colors.muted : colors.text;
    const lx = tip.x + ux * 10, ly = tip.y + uy * 12;
    ctx.textAlign = ux >= 0 ? 'left' : 'right';
    ctx.fillText(a.label, lx, ly);
  });
  ctx.globalAlpha = 1;
  if (canvas.dataset) {
    // Where each tip and the origin are drawn (CSS px): what a test measures the angles on.
    canvas.dataset.tips = JSON.stringify(L.tips.map((t) => ({ label: t.label, x: Math.round(t.x * 10) / 10,
      y: Math.round(t.y * 10) / 10 })));
    canvas.dataset.origin = JSON.stringify({ x: L.cx, y: L.cy });
  }
  return L;
}

/** The kind as figure_kinds.js lists it: the label says each arrow's coordinates. */
export const arrowsKind = {
  draw: drawArrows,
  label: (f) => `${f.title}: ${f.arrows.map((a) => `${a.label} (${a.x.toFixed(2)}, ${a.y.toFixed(2)})`).join('; ')}${f.angle ? `; ${f.angle.label}` : ''}`,
};
