// A model's pipeline on a canvas (a figure kind of figure_kinds.js): its steps as boxes, top to bottom in
// the order they run, each with its name and its tensor's shape, and an arrow from each step to the steps
// that read it. The One query lab draws notebook 05's AttentionModel with it under "Check your build"'s steps:
// the step being checked is outlined, and a checked step says ✓ or ✗ in its box (not by colour alone).
// Top to bottom, so that it fits a phone's width as well as a laptop's.
//
// figure: {kind: 'pipeline', id, title,
//          nodes: [{id, label, shape?: [n], code?, col (0..columns-1, may be a half), row}],
//          edges: [{from, to}] (node ids), current? (a node id), status?: {[node id]: 'ok' | 'bad'}}
import { arrowLine, titledCanvas } from './figure_canvas.js';
import { shapeText } from './answer_check.js';

const TITLE_H = 22;
const FONT_PX = 12;
const BOX_W = 112, BOX_H = 40, GAP_X = 12, GAP_Y = 22, PAD = 8;
const MARK = { ok: '✓ ', bad: '✗ ' };

function check(f) {
  if (!Array.isArray(f.nodes) || !f.nodes.length) throw new Error(`pipeline figure: at least one node, got ${f.nodes?.length}`);
  const ids = new Set(f.nodes.map((n) => n.id));
  for (const e of f.edges ?? []) {
    if (!ids.has(e.from) || !ids.has(e.to)) throw new Error(`pipeline figure: an edge from '${e.from}' to '${e.to}' `
      + 'names a node it does not have');
  }
}

/** Where each box goes (CSS px): {width, height, boxes: {id: {x, y, w, h}}}. */
function pipelineLayout(f) {
  check(f);
  const columns = Math.max(...f.nodes.map((n) => Math.ceil(n.col + 1)));
  const rows = Math.max(...f.nodes.map((n) => n.row)) + 1;
  const width = Math.max(2 * PAD + columns * BOX_W + (columns - 1) * GAP_X, Math.ceil((f.title ?? '').length * 7.2) + 8);
  const left = (width - (columns * BOX_W + (columns - 1) * GAP_X)) / 2;
  const height = TITLE_H + PAD + rows * BOX_H + (rows - 1) * GAP_Y + PAD;
  const boxes = {};
  for (const n of f.nodes) {
    boxes[n.id] = { x: left + n.col * (BOX_W + GAP_X), y: TITLE_H + PAD + n.row * (BOX_H + GAP_Y), w: BOX_W, h: BOX_H };
  }
  return { width, height, boxes };
}

/** An arrow from the bottom of box a to the top of box b (or side to side, on one row). */
function edge(ctx, a, b) {
  const sameRow = Math.abs(a.y - b.y) < 1;
  const x0 = sameRow ? (a.x < b.x ? a.x + a.w : a.x) : a.x + a.w / 2, y0 = sameRow ? a.y + a.h / 2 : a.y + a.h;
  const x1 = sameRow ? (a.x < b.x ? b.x : b.x + b.w) : b.x + b.w / 2, y1 = sameRow ? b.y + b.h / 2 : b.y;
  arrowLine(ctx, x0, y0, x1, y1, 7, 0.45);
}

/** Draws the pipeline, sizing the canvas (CSS px x scale). Returns the layout. */
function drawPipeline(canvas, f, scale = globalThis.devicePixelRatio || 1) {
  const L = pipelineLayout(f);
  const { ctx, colors } = titledCanvas(canvas, L, scale, { title: f.title ?? '', titleH: TITLE_H, titleX: 4, fontPx: FONT_PX });
  ctx.strokeStyle = colors.muted;
  ctx.fillStyle = colors.muted;
  ctx.lineWidth = 1.2;
  for (const e of f.edges ?? []) edge(ctx, L.boxes[e.from], L.boxes[e.to]);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (const n of f.nodes) {
    const b = L.boxes[n.id], current = n.id === f.current, status = f.status?.[n.id];
    ctx.fillStyle = colors.background;
    ctx.fillRect(b.x, b.y, b.w, b.h);
    // The step being checked: a thick outline in the focus colour (and its name in bold); the rest thin.
    ctx.strokeStyle = current ? colors.focus : colors.text;
    ctx.lineWidth = current ? 2.5 : 1;
    ctx.strokeRect(b.x, b.y, b.w, b.h);
    ctx.fillStyle = colors.text;
    ctx.font = `${current ? 700 : 600} ${FONT_PX}px ${colors.font}`;
    ctx.fillText(`${MARK[status] ?? ''}${n.label}`, b.x + b.w / 2, b.y + 13, b.w - 6);
    ctx.font = `${FONT_PX - 1}px ${colors.font}`;
    ctx.fillStyle = colors.muted;
    if (n.shape) ctx.fillText(shapeText(n.shape), b.x + b.w / 2, b.y + 29, b.w - 6);
  }
  if (canvas.dataset) {
    // Where each box is drawn (CSS px): what a test reads the picture by.
    canvas.dataset.boxes = JSON.stringify(Object.fromEntries(Object.entries(L.boxes).map(([id, b]) => [id,
      [b.x, b.y, b.w, b.h].map((v) => Math.round(v))])));
  }
  return L;
}

const nodeText = (n, f) => `${MARK[f.status?.[n.id]] ?? ''}${n.label}${n.shape ? `, shape ${shapeText(n.shape)}` : ''}`
  + `${n.code ? `: ${n.code}` : ''}`;
const inputsOf = (n, f) => (f.edges ?? []).filter((e) => e.to === n.id)
  .map((e) => f.nodes.find((m) => m.id === e.from).label);

/** The kind as figure_kinds.js lists it: the label says the steps in order, the tooltip a box's code. */
export const pipelineKind = {
  draw: drawPipeline,
  label: (f) => `${f.title}: ${f.nodes.map((n) => {
    const from = inputsOf(n, f);
    return `${nodeText(n, f)}${from.length ? ` (from ${from.join(' and ')})` : ''}`;
  }).join('; ')}${f.current ? `. Being checked: ${f.nodes.find((n) => n.id === f.current)?.label}` : ''}.`,
  textAt(f, L, x, y) {
    const n = f.nodes.find((m) => {
      const b = L.boxes[m.id];
      return x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h;
    });
    return n ? nodeText(n, f) : '';
  },
  // Each box's middle, in the order the steps run (where the keyboard steps, figures.js).
  spots: (f, L) => f.nodes.map((n) => ({ x: L.boxes[n.id].x + L.boxes[n.id].w / 2, y: L.boxes[n.id].y + L.boxes[n.id].h / 2 })),
};
