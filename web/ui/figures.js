// Figures a lab's sections describe as data (view models) and this file draws on canvases:
//   {kind: 'images',  id, title, images: [pixels], size (side in px), range? ([0, 255] default),
//                      columns?, scale?, labels?, captions?, names?, tint? (0..1 per image), highlight?, pairs?}
//   {kind: 'bars',    id, title, values, xTitle, yTitle, labels?, highlight?}
//   {kind: 'heatmap', id, ...the heatmap model of heatmap.js}
//   {kind: 'text',    id, text, status? ('ok' | 'bad')}
//   {kind: 'matrices', ...} labelled, editable matrices (matrix_figure.js)
//   {kind: 'graph',   ...} an attention-flow graph (graph_figure.js)
//   {kind: 'chart',   id, ...the spec of chart.js, width?, height?}
//   {kind: 'headview', ...} BertViz's head view: queries to keys, line opacity = weight (head_view_figure.js)
//   {kind: 'modelgrid', ...} BertViz's model view: a heatmap per layer and head (model_grid_figure.js)
// Each canvas carries data-figure=<id>; hovering an image or a bar names it in the tooltip. The draw
// functions take (canvas, figure, scale) so figure export (PNG 2x, SVG) draws the same thing.
// The head view and the model grid answer clicks and keys (arrows move, Enter picks, Escape clears):
// the board calls onPick(figureId, detail) with {token, side} ({token: null} when the token clicked
// again is released) or {layer, head}. A pick shows at once; a figure shown later with another
// `selected` (the lab's answer) takes over from it.
import { themeColors } from './theme.js';
import { HeatmapView, drawHeatmap } from './heatmap.js';
import { addFigureButtons } from './figure_buttons.js';
import { MatrixFigure } from './matrix_figure.js';
import { describeNode, drawGraph, graphLayout, hitNode } from './graph_figure.js';
import { drawChart } from './chart.js';
import { describeHeadView, describeHeadViewToken, drawHeadView, headViewTokens, hitHeadView } from './head_view_figure.js';
import { describeModelGrid, drawModelGrid, hitModelGrid, modelGridCell, modelGridTokens } from './model_grid_figure.js';

const FONT_PX = 12;
const TITLE_H = 20;

/** Canvas size in CSS px for a figure. */
function imagesLayout(f) {
  const n = f.images.length;
  const columns = Math.max(1, Math.min(f.columns ?? n, n));
  const rows = Math.ceil(n / columns);
  const side = Math.round(f.size * (f.scale ?? 1));
  const captionH = f.captions || f.labels ? FONT_PX + 4 : 0;
  const gap = f.tint ? 3 : 2;
  const pairGap = f.pairs ? 6 : 0; // a wider gap between pairs (query | retrieval)
  const cellW = side + gap, cellH = side + gap + captionH;
  // Wide enough for the title and the captions (about 7 px a character at the fonts used here).
  const captionW = Math.max(0, ...(f.captions ?? []).map((c) => String(c).length * 6.5 + 4));
  const cellWide = Math.max(cellW, columns === 1 ? captionW : 0);
  const width = Math.ceil(Math.max(columns * cellWide + Math.floor(columns / 2) * pairGap, (f.title ?? '').length * 7.2 + 4, 120));
  return { columns, rows, side, captionH, gap, pairGap, cellW: cellWide, cellH, width, height: TITLE_H + rows * cellH };
}

function cellOrigin(layout, i) {
  const col = i % layout.columns, row = Math.floor(i / layout.columns);
  return { x: col * layout.cellW + Math.floor(col / 2) * layout.pairGap, y: TITLE_H + row * layout.cellH };
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

/** Sizes the canvas for a layout of {width, height} CSS px at `scale`, clears it -> {ctx, colors}. */
function prepare(canvas, L, scale) {
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

export function drawImages(canvas, f, scale = devicePixelRatio || 1) {
  const L = imagesLayout(f);
  const { ctx, colors } = prepare(canvas, L, scale);
  ctx.fillStyle = colors.text;
  ctx.font = `600 ${FONT_PX + 1}px ${colors.font}`;
  ctx.textBaseline = 'top';
  ctx.fillText(f.title ?? '', 0, 2);
  const bg = parseColor(colors.background);
  // Each image at 1:1 on a scratch canvas, then scaled up without smoothing (crisp pixels).
  const scratch = new OffscreenCanvas(f.size, f.size);
  const sctx = scratch.getContext('2d');
  ctx.imageSmoothingEnabled = false;
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.textAlign = 'center';
  f.images.forEach((pixels, i) => {
    const o = cellOrigin(L, i);
    const x = o.x + Math.floor((L.cellW - L.gap - L.side) / 2), y = o.y;
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

function barsLayout() {
  return { width: 520, height: 190, left: 58, right: 10, top: TITLE_H + 6, bottom: 38 };
}

export function drawBars(canvas, f, scale = devicePixelRatio || 1) {
  const L = barsLayout();
  const { ctx, colors } = prepare(canvas, L, scale);
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

/** The image or bar under a pointer at (x, y) CSS px, or -1. */
function hitImage(f, x, y) {
  const L = imagesLayout(f);
  for (let i = 0; i < f.images.length; i++) {
    const o = cellOrigin(L, i);
    const left = o.x + Math.floor((L.cellW - L.gap - L.side) / 2);
    if (x >= left && x < left + L.side && y >= o.y && y < o.y + L.side) return i;
  }
  return -1;
}

function hitBar(f, x) {
  const L = barsLayout();
  const i = Math.floor((x - L.left) / ((L.width - L.left - L.right) / f.values.length));
  return i >= 0 && i < f.values.length ? i : -1;
}

function describeBar(f, i) {
  const label = f.labels ? `, label ${f.labels[i]}` : '';
  return `${f.xTitle ?? 'item'} ${i}${label}: ${f.yTitle ?? 'value'} ${Number(f.values[i]).toFixed(4)}`;
}

const chartSize = (f) => ({ width: f.width ?? 460, height: f.height ?? 250 });
const drawChartFigure = (canvas, f, scale = devicePixelRatio || 1) => drawChart(canvas, f, { ...chartSize(f), scale });
const DRAW = { images: drawImages, bars: drawBars, graph: drawGraph, chart: drawChartFigure, headview: drawHeadView, modelgrid: drawModelGrid };
// Figure kinds that answer clicks and keys (a token or a head is picked), and what describes them.
const PICKABLE = { headview: describeHeadView, modelgrid: describeModelGrid };
const samePick = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The figures of one section, kept in `container`: canvases are reused by figure id, so a redraw
 * (a slider moved, a new training step) does not rebuild the DOM or lose a hover.
 */
export class FigureBoard {
  /**
   * onEdit({key, cell, value}): a cell of an editable matrix was changed. onPick(figureId, detail): a
   * head view's token was clicked ({token, side}; {token: null} when released) or a model grid's head
   * ({layer, head}).
   */
  constructor(container, { stem = 'figure', message, onEdit = () => {}, onPick = () => {} } = {}) {
    this.onEdit = onEdit;
    this.onPick = onPick;
    this.box = document.createElement('div');
    this.box.className = 'figure-board';
    container.append(this.box);
    this.views = new Map();
    this.stem = stem;
    this.message = message;
  }

  show(figures, { palette = 'viridis' } = {}) {
    const seen = new Set();
    for (const f of figures) {
      seen.add(f.id);
      let view = this.views.get(f.id);
      if (!view || view.kind !== f.kind) {
        view?.node.remove();
        view = this.create(f);
        this.views.set(f.id, view);
      }
      this.box.append(view.node); // keeps the figures in the order given
      view.figure = f;
      this.draw(view, palette);
    }
    for (const [id, view] of this.views) {
      if (!seen.has(id)) {
        view.node.remove();
        this.views.delete(id);
      }
    }
  }

  create(f) {
    if (f.kind === 'text') {
      const node = Object.assign(document.createElement('p'), { className: 'figure-text' });
      node.dataset.figure = f.id;
      return { kind: 'text', node };
    }
    if (f.kind === 'matrices') {
      const matrix = new MatrixFigure(this.box, { onEdit: this.onEdit });
      return { kind: 'matrices', node: matrix.node, matrix };
    }
    const node = document.createElement('figure');
    node.className = `figure figure-${f.kind}`;
    if (f.kind === 'heatmap') {
      const heatmap = new HeatmapView(node, { cell: f.cell ?? 5, label: f.title });
      heatmap.canvas.dataset.figure = f.id;
      const view = { kind: 'heatmap', node, heatmap, canvas: heatmap.canvas };
      // A section's heatmap exports like every figure: the page's drawing at 2x, or as SVG.
      const bar = Object.assign(document.createElement('div'), { className: 'figure-toolbar' });
      node.append(bar);
      addFigureButtons(bar, {
        what: `the figure "${f.title}"`, idPrefix: `export-${f.id}`, message: this.message,
        figure: () => ({
          draw: (c, scale) => drawHeatmap(c, { xTicks: [], yTicks: [], ...view.figure }, { cell: view.figure.cell ?? 5, scale, palette: heatmap.palette }),
          stem: `${this.stem}-${view.figure.id}`, title: view.figure.title,
        }),
      });
      return view;
    }
    const canvas = document.createElement('canvas');
    canvas.dataset.figure = f.id;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    const tooltip = Object.assign(document.createElement('div'), { className: 'tooltip', hidden: true });
    tooltip.setAttribute('role', 'status');
    node.append(canvas, tooltip);
    const view = { kind: f.kind, node, canvas, tooltip };
    canvas.addEventListener('pointermove', (e) => this.hover(view, e));
    canvas.addEventListener('pointerleave', () => { tooltip.hidden = true; });
    const bar = Object.assign(document.createElement('div'), { className: 'figure-toolbar' });
    node.append(bar);
    if (PICKABLE[f.kind]) {
      // pick: undefined (follow the figure's `selected`), null (released) or the user's pick;
      // pointer / cursor: the hovered token and the keyboard's place (drawn, never exported).
      Object.assign(view, { pick: undefined, pointer: null, cursor: null, selectedKey: null, layout: null });
      canvas.addEventListener('pointerleave', () => {
        if (view.pointer) { view.pointer = null; this.paint(view); }
      });
      canvas.addEventListener('click', (e) => this.click(view, e));
      canvas.addEventListener('keydown', (e) => this.key(view, e));
      canvas.addEventListener('blur', () => {
        tooltip.hidden = true;
        if (view.cursor) { view.cursor = null; this.paint(view); }
      });
    }
    addFigureButtons(bar, {
      what: `the figure "${f.title}"`, idPrefix: `export-${f.id}`, message: this.message,
      figure: () => ({ draw: (c, scale) => DRAW[view.figure.kind](c, this.asDrawn(view, true), scale), stem: `${this.stem}-${view.figure.id}`, title: view.figure.title }),
    });
    return view;
  }

  /** The figure as drawn: the user's pick (and, on the page only, hover and keyboard place) applied. */
  asDrawn(view, forExport = false) {
    const f = view.figure;
    if (f.kind === 'headview') {
      const pinned = this.pinned(view);
      const shown = forExport ? pinned : view.pointer ?? view.cursor ?? pinned;
      return { ...f, selected: shown?.index ?? null, side: shown?.side ?? 'query' };
    }
    if (f.kind === 'modelgrid') {
      return { ...f, palette: f.palette ?? view.palette, selected: this.pinned(view), focus: forExport ? null : view.cursor };
    }
    return f;
  }

  /** The picked token ({index, side}) or head ({layer, head}), or null. */
  pinned(view) {
    const f = view.figure;
    if (view.pick !== undefined) return view.pick;
    if (f.kind === 'headview') return Number.isInteger(f.selected) ? { index: f.selected, side: f.side === 'key' ? 'key' : 'query' } : null;
    return f.selected ?? null;
  }

  /** Draws a pickable figure with its pick, hover and keyboard place; keeps its layout for hit tests. */
  paint(view) {
    view.layout = DRAW[view.kind](view.canvas, this.asDrawn(view));
    view.canvas.dataset.drawn = String(Date.now());
  }

  /** Pointer position (CSS px of the layout) of a pointer event; the canvas may be scaled by CSS. */
  pointAt(view, e) {
    const rect = view.canvas.getBoundingClientRect();
    const k = view.layout.width / rect.width;
    return { x: (e.clientX - rect.left) * k, y: (e.clientY - rect.top) * k };
  }

  /** Shows `text` in the tooltip near (x, y) in the layout's CSS px; flipped left near the page's edge. */
  tip(view, text, x, y) {
    const { canvas, tooltip } = view;
    tooltip.hidden = !text;
    tooltip.textContent = text;
    if (!text) return;
    const k = canvas.getBoundingClientRect().width / view.layout.width;
    const left = canvas.offsetLeft + x * k + 12, top = canvas.offsetTop + y * k + 12;
    const room = document.documentElement.clientWidth - (view.node.getBoundingClientRect().left + left);
    tooltip.style.left = `${Math.round(tooltip.offsetWidth > room ? Math.max(0, left - 24 - tooltip.offsetWidth) : left)}px`;
    tooltip.style.top = `${Math.round(top)}px`;
  }

  /** Picks a token (a second click on it releases it) or a head, and tells the lab. */
  pick(view, hit) {
    const f = view.figure;
    if (f.kind === 'headview') {
      const current = this.pinned(view);
      const same = current && current.index === hit.index && current.side === hit.side;
      view.pick = same ? null : { index: hit.index, side: hit.side };
      this.paint(view);
      this.describe(view);
      this.onPick(f.id, same ? { token: null } : { token: hit.index, side: hit.side });
    } else {
      view.pick = { layer: hit.layer, head: hit.head };
      this.paint(view);
      this.describe(view);
      this.onPick(f.id, { layer: hit.layer, head: hit.head });
    }
  }

  /** The pickable figure's aria-label: its title and what it shows with the pick applied. */
  describe(view) {
    view.canvas.setAttribute('aria-label', `${view.figure.title}: ${PICKABLE[view.kind](this.asDrawn(view, true))}`);
  }

  click(view, e) {
    if (!view.layout) return;
    const { x, y } = this.pointAt(view, e);
    const hit = view.kind === 'headview' ? hitHeadView(view.layout, x, y) : hitModelGrid(view.layout, x, y);
    if (!hit) return;
    view.cursor = null;
    this.pick(view, hit);
  }

  /** Arrows move the keyboard's place, Enter or Space picks it, Escape clears. */
  key(view, e) {
    if (!view.layout) return;
    const f = view.figure;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key === 'Enter' || e.key === ' ') {
      if (!view.cursor) return;
      e.preventDefault();
      this.pick(view, view.cursor);
    } else if (e.key === 'Escape') {
      if (!view.cursor && !this.pinned(view)) return;
      e.preventDefault();
      view.cursor = null;
      view.tooltip.hidden = true;
      if (f.kind === 'headview' && this.pinned(view)) {
        view.pick = null;
        this.onPick(f.id, { token: null });
      }
      this.paint(view);
      this.describe(view);
      return;
    } else if (moves[e.key]) {
      e.preventDefault();
      const [down, right] = moves[e.key];
      if (f.kind === 'headview') {
        // Up and down move along a column; left and right change column (queries | keys), where the
        // place is kept within the other column's length (a cross-attention's columns differ).
        const start = view.cursor ?? this.pinned(view);
        const { queries, keys } = headViewTokens(f);
        const side = !start ? 'query' : right < 0 ? 'query' : right > 0 ? 'key' : start.side;
        const n = (side === 'key' ? keys : queries).length;
        view.cursor = { index: !start ? 0 : Math.max(0, Math.min(n - 1, start.index + (view.cursor ? down : 0))), side };
      } else {
        const start = view.cursor ?? this.pinned(view);
        view.cursor = !start ? { layer: 0, head: 0 } : {
          layer: Math.max(0, Math.min(f.layers - 1, start.layer + (view.cursor ? down : 0))),
          head: Math.max(0, Math.min(f.heads - 1, start.head + (view.cursor ? right : 0))),
        };
      }
      this.paint(view);
    } else {
      return;
    }
    // Say where the keyboard is, beside it.
    const c = view.cursor;
    if (f.kind === 'headview') {
      const p = (c.side === 'key' ? view.layout.key : view.layout.query)[c.index];
      this.tip(view, describeHeadViewToken(f, c.side, c.index), p.x, p.y);
    } else {
      const cell = view.layout.cells[c.layer * f.heads + c.head];
      this.tip(view, `Layer ${c.layer}, head ${c.head}${samePick(this.pinned(view), c) ? ' (selected)' : ' · Enter picks it'}`, cell.x + cell.w, cell.y + cell.h);
    }
  }

  /** Hover on a head view (its token's lines only, and their weights) or a model grid (the cell). */
  hoverPick(view, e) {
    if (!view.layout) return;
    const f = view.figure;
    const { x, y } = this.pointAt(view, e);
    let text = '';
    if (f.kind === 'headview') {
      const hit = hitHeadView(view.layout, x, y);
      if (!samePick(hit, view.pointer)) {
        view.pointer = hit;
        this.paint(view);
      }
      if (hit) text = describeHeadViewToken(f, hit.side, hit.index);
    } else {
      const cell = modelGridCell(view.layout, x, y);
      if (cell) {
        const { queries, keys } = modelGridTokens(f);
        const T = queries.length, S = keys.length;
        const w = f.attentions[((cell.layer * f.heads + cell.head) * T + cell.query) * S + cell.key];
        text = `Layer ${cell.layer}, head ${cell.head} · ${f.queryTitle ?? 'query'} '${queries[cell.query]}' → ${f.keyTitle ?? 'key'} '${keys[cell.key]}': ${Number(w).toFixed(2)}`;
      }
    }
    this.tip(view, text, x, y);
  }

  draw(view, palette) {
    const f = view.figure;
    if (view.kind === 'text') {
      view.node.textContent = f.text;
      view.node.dataset.status = f.status ?? '';
      return;
    }
    if (view.kind === 'heatmap') {
      view.heatmap.show({ xTicks: [], yTicks: [], ...f }, { palette });
      return;
    }
    if (view.kind === 'matrices') {
      view.matrix.show(f, palette);
      return;
    }
    if (PICKABLE[view.kind]) {
      view.palette = palette;
      // The lab's selection changed (its answer to a pick, or a new one): it replaces the user's pick.
      const selectedKey = JSON.stringify([f.selected ?? null, f.side ?? null]);
      if (selectedKey !== view.selectedKey) {
        view.selectedKey = selectedKey;
        view.pick = undefined;
      }
      this.paint(view);
      this.describe(view);
      return;
    }
    DRAW[view.kind](view.canvas, f);
    const detail = f.kind === 'images' ? ` (${f.images.length} image${f.images.length > 1 ? 's' : ''})`
      : f.kind === 'graph' ? `: ${f.nodes.map((_, i) => describeNode(f, i)).join('; ')}` : '';
    view.canvas.setAttribute('aria-label', `${f.title}${detail}`);
    view.canvas.dataset.drawn = String(Date.now());
  }

  hover(view, e) {
    const f = view.figure;
    if (PICKABLE[f.kind]) return this.hoverPick(view, e);
    const rect = view.canvas.getBoundingClientRect();
    const graph = f.kind === 'graph' ? graphLayout(view.canvas.getContext('2d'), f) : null;
    const width = f.kind === 'images' ? imagesLayout(f).width : graph ? graph.width : f.kind === 'chart' ? chartSize(f).width : barsLayout().width;
    const k = width / rect.width;
    const x = (e.clientX - rect.left) * k, y = (e.clientY - rect.top) * k;
    let text = '';
    if (f.kind === 'images') {
      const i = hitImage(f, x, y);
      if (i >= 0) text = f.names?.[i] ?? (f.labels ? `image ${i}, label ${f.labels[i]}` : `image ${i}`);
    } else if (graph) {
      const i = hitNode(graph, x, y);
      if (i >= 0) text = describeNode(f, i);
    } else if (f.kind === 'chart') {
      text = '';
    } else {
      const i = hitBar(f, x);
      if (i >= 0) text = describeBar(f, i);
    }
    view.tooltip.hidden = !text;
    view.tooltip.textContent = text;
    view.tooltip.style.left = `${e.clientX - rect.left + 12}px`;
    view.tooltip.style.top = `${e.clientY - rect.top + 12}px`;
  }
}

export { drawHeatmap };
