// An attention-flow graph on a canvas (a figure kind of figure_kinds.js): tokens as nodes in reading order,
// an arrow from each query to every key it gives more weight than a threshold, the arrow's width and
// opacity by the weight; a token's weight on itself is a loop above it.
//
// figure: {kind: 'graph', id, title, nodes: [label], edges: [{from, to, weight}], maxWeight,
//          layout?: 'circle' (default) | 'line', arrowsOnly? (a diagram: every edge the same)}
//
// Layout: nodes on a circle in reading order (clockwise from the left), or on one line. A force
// layout (the notebook's spring_layout) puts the words somewhere new on every run; a fixed order
// keeps "the sentence" readable and the same figure for the same weights.
import { themeColors } from './theme.js';
import { arrowHead, titledCanvas } from './figure_canvas.js';

const TITLE_H = 22;
const FONT_PX = 12;

function measureLabels(ctx, nodes) {
  ctx.font = `${FONT_PX}px ${themeColors().font}`;
  return nodes.map((n) => ctx.measureText(n).width);
}

function titleWidth(ctx, title) {
  ctx.font = `600 ${FONT_PX + 1}px ${themeColors().font}`;
  return ctx.measureText(title ?? '').width + 10;
}

/** Where each node goes, the canvas size (CSS px), and each label's box. */
function graphLayout(ctx, f) {
  const n = f.nodes.length;
  const widths = measureLabels(ctx, f.nodes);
  const widest = Math.max(20, ...widths);
  if (f.layout === 'line') {
    const gap = widest + 24;
    const width = Math.ceil(Math.max(n * gap + 20, titleWidth(ctx, f.title)));
    const height = TITLE_H + 110;
    const y = TITLE_H + 80;
    const points = f.nodes.map((_, i) => ({ x: 10 + gap * (i + 0.5), y }));
    return { width, height, points, widths, radius: 0, center: null };
  }
  // A circle whose circumference leaves each label its width plus a gap.
  const radius = Math.max(70, (n * (Math.min(widest, 90) + 14)) / (2 * Math.PI));
  const margin = widest + 36;
  const size = Math.ceil(2 * (radius + margin));
  const center = { x: size / 2, y: TITLE_H + size / 2 };
  const points = f.nodes.map((_, i) => {
    const a = Math.PI + (2 * Math.PI * i) / n; // the first token on the left, then clockwise
    return { x: center.x + radius * Math.cos(a), y: center.y + radius * Math.sin(a), angle: a };
  });
  const width = Math.ceil(Math.max(size, titleWidth(ctx, f.title)));
  // A title wider than the circle: the circle moves to the middle.
  for (const p of points) p.x += (width - size) / 2;
  center.x += (width - size) / 2;
  return { width, height: size + TITLE_H, points, widths, radius, center };
}

/** The label's box (CSS px) for node i: outside the circle, or under the line. */
function labelBox(L, i) {
  const p = L.points[i], w = L.widths[i], h = FONT_PX + 4;
  if (!L.center) return { x: p.x - w / 2, y: p.y + 10, w, h };
  const dx = Math.cos(p.angle), dy = Math.sin(p.angle);
  // Beyond the self-loop (which reaches 22 px out), so a loop never covers its label.
  const cx = p.x + dx * (26 + w / 2), cy = p.y + dy * (24 + h / 2);
  return { x: cx - w / 2, y: cy - h / 2, w, h };
}

/** Draws the graph, sizing the canvas (CSS px x scale). */
function drawGraph(canvas, f, scale = globalThis.devicePixelRatio || 1) {
  const ctx = canvas.getContext('2d');
  const L = graphLayout(ctx, f);
  const { colors } = titledCanvas(canvas, L, scale,
    { title: f.title ?? '', titleH: TITLE_H, titleX: 4, fontPx: FONT_PX, cssHeight: true });

  const edgeColor = colors.series[0];
  const max = Math.max(1e-6, f.maxWeight ?? 1);
  ctx.strokeStyle = edgeColor;
  ctx.fillStyle = edgeColor;
  for (const e of f.edges) {
    const strength = f.arrowsOnly ? 0.8 : Math.min(1, e.weight / max);
    ctx.globalAlpha = 0.25 + 0.75 * strength;
    ctx.lineWidth = 0.75 + 4.25 * strength;
    const a = L.points[e.from], b = L.points[e.to];
    if (e.from === e.to) {
      // A loop outside the node: the query attends to itself.
      const out = L.center ? { x: Math.cos(a.angle), y: Math.sin(a.angle) } : { x: 0, y: -1 };
      const cx = a.x + out.x * 14, cy = a.y + out.y * 14;
      ctx.beginPath();
      ctx.arc(cx, cy, 8, 0, 2 * Math.PI);
      ctx.stroke();
      continue;
    }
    // Curved towards the centre (circle) or above the line, so that t -> s and s -> t do not overlap.
    const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
    const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
    // On a line every arc bows upwards (a diagram: the words stay readable below).
    const bend = L.center ? 0.18 * len : Math.min(70, 0.35 * len);
    const cx = L.center ? mx + (-dy / len) * bend : mx;
    const cy = L.center ? my + (dx / len) * bend : my - bend;
    // Stop short of the node's dot.
    const end = 7, ex = b.x - ((b.x - cx) / Math.hypot(b.x - cx, b.y - cy)) * end, ey = b.y - ((b.y - cy) / Math.hypot(b.x - cx, b.y - cy)) * end;
    ctx.beginPath();
    ctx.moveTo(a.x, a.y);
    ctx.quadraticCurveTo(cx, cy, ex, ey);
    ctx.stroke();
    arrowHead(ctx, ex, ey, Math.atan2(ey - cy, ex - cx), 5 + 2 * ctx.lineWidth);
  }
  ctx.globalAlpha = 1;
  if (!f.edges.length && f.empty) {
    // Nothing above the threshold: say so, and what would show something.
    ctx.font = `${FONT_PX}px ${colors.font}`;
    ctx.fillStyle = colors.muted;
    ctx.textAlign = 'center';
    ctx.fillText(f.empty, L.center ? L.center.x : L.width / 2, L.center ? L.center.y : TITLE_H + 30);
  }
  // Nodes and labels over the edges.
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  const boxes = [];
  f.nodes.forEach((label, i) => {
    const p = L.points[i];
    ctx.fillStyle = colors.background;
    ctx.strokeStyle = colors.text;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(p.x, p.y, 5, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
    const box = labelBox(L, i);
    ctx.fillStyle = colors.text;
    ctx.fillText(label, box.x + box.w / 2, box.y + box.h / 2);
    boxes.push(box);
  });
  if (canvas.dataset) canvas.dataset.labelBoxes = JSON.stringify(boxes.map((b) => [b.x, b.y, b.w, b.h].map((v) => Math.round(v * 10) / 10)));
  return L;
}

/** The node nearest to (x, y) CSS px within 16 px, or -1. */
function hitNode(L, x, y) {
  let best = -1, bestD = 16;
  L.points.forEach((p, i) => {
    const d = Math.hypot(p.x - x, p.y - y);
    if (d < bestD) { best = i; bestD = d; }
  });
  return best;
}

/** What a node attends to, for the tooltip. */
function describeNode(f, i) {
  const out = f.edges.filter((e) => e.from === i).sort((a, b) => b.weight - a.weight);
  if (!out.length) return `${f.nodes[i]}: no weight above the threshold`;
  return `${f.nodes[i]} attends to ${out.map((e) => `${f.nodes[e.to]} ${e.weight.toFixed(2)}`).join(', ')}`;
}

/** The kind as figure_kinds.js lists it: the label names what each node attends to, as the tooltip does. */
export const graphKind = {
  draw: drawGraph,
  label: (f) => `${f.title}: ${f.nodes.map((_, i) => describeNode(f, i)).join('; ')}`,
  textAt(f, L, x, y) {
    const i = hitNode(L, x, y);
    return i < 0 ? '' : describeNode(f, i);
  },
  spots: (f, L) => L.points.map((p) => ({ x: p.x, y: p.y })), // the tokens, in reading order
};
