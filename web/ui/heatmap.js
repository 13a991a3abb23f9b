// An attention heatmap on a canvas: cells through the shared raster (heatmap_raster.js, the same
// pixels as the CLI's PNG), axis titles, tick labels, a colour legend, and a tooltip that finds the
// cell under the pointer even when CSS scales the canvas.
//
// model: {rows, cols, values (rows x cols, row-major), title, xTitle, yTitle, xTicks, yTicks,
//         xNames?, yNames?, tokens?, range? ([min, max], default [0, 1]), palette? (the model's own
//         scale, e.g. 'diverging' for signed values), cellText? (a string per cell, written in it),
//         valueName? (what the tooltip calls a cell's value: 'weight' unless given),
//         marks? (true per cell: outlined, so a marked cell shows without relying on colour),
//         blank? (true per cell: drawn grey, no value), selected? ({row, col}: the cell the figure
//         stands for, outlined thick in the focus colour as the model view outlines its selected head;
//         the keyboard's place is then dashed, as there), guides? ([{from, to, offset, label}]: a dashed
//         line through the cells (t, t - offset) for rows t = from .. to, the diagonal a kind of head
//         lights: the Induction lab's previous-token and induction stripes)} — labels are prepared by
//         the lab; this file only draws them.
import { rasterizeColorbar, rasterizeHeatmap } from '../shared/heatmap_raster.js';

// The colour bar depends only on its size and palette: raster it once, not on every redraw.
const colorbars = new Map();
function colorbar(height, width, palette) {
  const key = `${height}x${width}:${palette}`;
  if (!colorbars.has(key)) colorbars.set(key,
    new ImageData(rasterizeColorbar(height, width, { palette }).data, width, height));
  return colorbars.get(key);
}
import { themeColors } from './theme.js';

const LEGEND_BAR = 12; // CSS px
// The colour legend's three labels: the model's range (0..1, the range of attention weights, unless it
// says otherwise) and its middle.
const legendTick = (v) => (Number.isInteger(v) ? v.toFixed(1) : v.toPrecision(2));
const legendLabels = (model) => {
  const [min, max] = model.range ?? [0, 1];
  return [legendTick(max), legendTick((min + max) / 2), legendTick(min)];
};
const GAP = 6;
/**
 * The size of every label of a heatmap (title one px more), whatever its cells' size: small cells thin
 * the ticks out instead (issue 29: 11 px at least).
 */
const HEATMAP_FONT_PX = 12;
// A figure fitted to an embed's box keeps its text at least this size on screen (HeatmapView.fitted).
const FIT_TEXT_PX = 10;

/**
 * The title's lines within `room` CSS px (Infinity: one line): at its " — " first (a caption such as
 * " — step 200" goes to a line of its own), then between words. Numbers are measured as six digits
 * wide, so a title whose step count grows while training keeps the lines it started with, and the
 * figure its height (issue 38: a step count that outgrew a phone's panel shrank the cells to 4 px).
 */
function titleLines(ctx, title, room) {
  if (!title) return [];
  // A whole number (a step count), not a decimal's digits ("weight > 0.1").
  const width = (t) => ctx.measureText(t.replace(/(?<![\d.])\d+(?![\d.])/g,
    (d) => '0'.repeat(Math.max(6, d.length)))).width;
  if (!(room < Infinity) || width(title) <= room) return [title];
  const dash = title.lastIndexOf(' — ');
  if (dash > 0 && width(title.slice(0, dash + 2)) <= room && width(title.slice(dash + 3)) <= room) return [title.slice(0, dash + 2), title.slice(dash + 3)];
  const lines = [];
  for (const word of title.split(' ')) {
    const last = lines.length ? `${lines[lines.length - 1]} ${word}` : null;
    if (last !== null && width(last) <= room) lines[lines.length - 1] = last;
    else lines.push(word);
  }
  return lines;
}

/**
 * An axis title within `room` CSS px: whole where it fits, else its first part ("query" of "query =
 * output position", "key" of "key (attended to)") where that fits, else nothing (the tooltip, the text
 * alternative and the table still name the axes). A fitted embed's plot can be shorter than its y title.
 */
function titleWithin(ctx, title, room) {
  if (ctx.measureText(title).width <= room) return title;
  const first = title.split(/ = | \(/)[0];
  return first !== title && ctx.measureText(first).width <= room ? first : '';
}

/**
 * Where things go, in CSS pixels (multiply by `scale` for canvas pixels). Cells are `cell` wide and
 * at least `cell` tall; a matrix with few rows (pointer: one query) gets taller cells, so that the
 * colour legend and the y title have room. maxWidth (CSS px, optional): the room the figure has on the
 * page; a title wider than that wraps instead of widening the figure.
 */
function layoutFor(ctx, model, cell, fontPx, minPlotHeight, bare = false, maxWidth = Infinity) {
  ctx.font = `${fontPx}px ${themeColors().font}`;
  const widest = (labels) => Math.max(0, ...labels.map((t) => ctx.measureText(t).width));
  const yTickWidth = bare ? 0 : widest(model.yTicks ?? []);
  const xTickWidth = bare ? 0 : widest(model.xTicks ?? []);
  const rotateX = xTickWidth > cell - 2; // labels wider than a cell stand vertically
  const cellH = Math.max(cell, Math.ceil(minPlotHeight / model.rows));
  const left = bare ? 2 : fontPx + 4 + GAP + yTickWidth + GAP;
  ctx.font = `600 ${fontPx + 1}px ${themeColors().font}`;
  const title = titleLines(ctx, model.title, maxWidth - left - 4);
  const titleW = Math.max(0, ...title.map((t) => ctx.measureText(t).width));
  ctx.font = `${fontPx}px ${themeColors().font}`;
  const titleH = title.length ? title.length * (fontPx + 4) + 6 : 4;
  const top = titleH;
  const plotW = model.cols * cell, plotH = model.rows * cellH;
  const xTickH = bare ? 0 : rotateX ? xTickWidth + GAP : fontPx + GAP;
  // As wide as its widest label ("-0.56" is wider than "1.0"): a label cut at the canvas edge reads wrong.
  const legendW = GAP * 2 + LEGEND_BAR + 3 + widest(legendLabels(model)) + GAP;
  const xTitleW = bare ? 0 : ctx.measureText(model.xTitle ?? '').width;
  return {
    left, top, cell, cellW: cell, cellH, fontPx, rotateX, plotW, plotH, bare, title,
    width: Math.ceil(Math.max(left + plotW + legendW, left + titleW, left + plotW / 2 + xTitleW / 2) + 4),
    height: Math.ceil(top + plotH + (bare ? 4 : GAP + xTickH + fontPx + 10)),
  };
}

// One cell per pixel, then scaled up without smoothing: every cell keeps the raster's exact colour.
let scratch = null;
function drawCells(ctx, image, x, y, width, height) {
  scratch ??= document.createElement('canvas');
  scratch.width = image.width;
  scratch.height = image.height;
  scratch.getContext('2d').putImageData(new ImageData(image.data, image.width, image.height), 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, x, y, width, height);
}

/**
 * Draws the heatmap onto `canvas`, sizing it: CSS size from the layout, backing store x `scale`
 * (devicePixelRatio on the page, 2 for the exported PNG). Returns the layout (CSS px).
 */
export function drawHeatmap(canvas, model,
  { cell = 20, scale = 1, palette = 'viridis', fontPx = HEATMAP_FONT_PX, focus = null, minPlotHeight = 130,
    bare = false, maxWidth } = {}) {
  const ctx = canvas.getContext('2d');
  const font = fontPx;
  const layout = layoutFor(ctx, model, cell, font, minPlotHeight, bare, maxWidth);
  // Resize only when the size changes: a new backing store per frame costs more than the drawing.
  const width = Math.round(layout.width * scale), height = Math.round(layout.height * scale);
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
    canvas.style.width = `${layout.width}px`;
    canvas.style.height = `${layout.height}px`;
  }
  const colors = themeColors();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);

  // Cells: whole canvas pixels per cell, so every cell has the same size and a clean colour.
  const cellW = Math.max(1, Math.round(layout.cellW * scale)), cellH = Math.max(1, Math.round(layout.cellH * scale));
  const x0 = Math.round(layout.left * scale), y0 = Math.round(layout.top * scale);
  const [min, max] = model.range ?? [0, 1];
  const scalePalette = model.palette ?? palette;
  const image = rasterizeHeatmap(model.values, model.rows, model.cols, { cell: 1, palette: scalePalette, min, max });
  if (model.blank) {
    const grey = parseInt(colors.grid.slice(1, 3), 16) || 216;
    model.blank.forEach((b, i) => { if (b) image.data.set([grey, grey, grey, 255], 4 * i); });
  }
  drawCells(ctx, image, x0, y0, cellW * model.cols, cellH * model.rows);
  const bar = colorbar(cellH * model.rows, Math.round(LEGEND_BAR * scale), scalePalette);
  const barX = Math.round((layout.left + layout.plotW + GAP * 2) * scale);
  ctx.putImageData(bar, barX, y0);
  canvas.dataset.layout = JSON.stringify({ x: x0, y: y0, cellW, cellH, rows: model.rows, cols: model.cols,
    ...(model.marks ? { marks: model.marks.flatMap((m, i) => (m ? [i] : [])) } : {}),
    ...(selectedCell(model) ? { selected: selectedCell(model) } : {}) });

  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  const { left, top, plotW, plotH } = layout;
  ctx.font = `${font}px ${colors.font}`;
  ctx.fillStyle = colors.text;
  ctx.textBaseline = 'middle';
  if (layout.title.length) {
    ctx.font = `600 ${font + 1}px ${colors.font}`;
    ctx.textAlign = 'left';
    layout.title.forEach((line, i) => ctx.fillText(line, left, (font + 4) * i + (font + 8) / 2));
    ctx.font = `${font}px ${colors.font}`;
  }
  // Tick labels: every cell's when they fit, else every stride-th (small cells, long sequences).
  const stride = Math.max(1, Math.ceil((font + 1) / cell));
  // Each drawn label's box in CSS px, kept on the canvas when the model asks (recordLabels), so a test
  // can check that no two overlap and none leaves the canvas.
  const boxes = model.recordLabels ? [] : null;
  // y ticks: right-aligned beside the plot (a bare thumbnail has none, nor axis titles: click it to enlarge it).
  ctx.textAlign = 'right';
  (bare ? [] : model.yTicks ?? []).forEach((label, r) => {
    if (r % Math.max(1, Math.ceil((font + 1) / layout.cellH)) !== 0) return;
    const y = top + (r + 0.5) * layout.cellH;
    ctx.fillText(label, left - GAP, y);
    if (boxes) {
      const w = ctx.measureText(label).width;
      boxes.push({ axis: 'y', text: label, x: left - GAP - w, y: y - font / 2, w, h: font });
    }
  });
  // x ticks: under the plot, vertical when they would overlap.
  (bare ? [] : model.xTicks ?? []).forEach((label, c) => {
    if (c % stride !== 0) return;
    const x = left + (c + 0.5) * cell;
    const w = boxes ? ctx.measureText(label).width : 0;
    if (layout.rotateX) {
      ctx.save();
      ctx.translate(x, top + plotH + GAP);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'right';
      ctx.fillText(label, 0, 0);
      ctx.restore();
      boxes?.push({ axis: 'x', text: label, x: x - font / 2, y: top + plotH + GAP, w: font, h: w });
    } else {
      ctx.textAlign = 'center';
      ctx.fillText(label, x, top + plotH + GAP + font / 2);
      boxes?.push({ axis: 'x', text: label, x: x - w / 2, y: top + plotH + GAP, w, h: font });
    }
  });
  if (boxes) canvas.dataset.labelBoxes = JSON.stringify(boxes);
  // Axis titles.
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  if (!bare) {
    ctx.fillText(model.xTitle ?? '', left + plotW / 2, layout.height - font / 2 - 3);
    ctx.save();
    ctx.translate(font / 2 + 2, top + plotH / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(titleWithin(ctx, model.yTitle ?? '', plotH + 2 * GAP), 0, 0);
    ctx.restore();
  }
  // Legend labels.
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'left';
  const legendX = left + plotW + GAP * 2 + LEGEND_BAR + 3;
  const [high, middle, low] = legendLabels(model);
  ctx.fillText(high, legendX, top + font / 2);
  ctx.fillText(middle, legendX, top + plotH / 2);
  ctx.fillText(low, legendX, top + plotH - font / 2);
  // Text in the cells, dark on bright cells and light on dark ones; marked cells outlined.
  if (model.cellText || model.marks) {
    ctx.textAlign = 'center';
    // As large as the cells allow: the longest text fits the cell's width (about 0.68 em a character).
    // Text that would be under HEATMAP_FONT_PX - 1 is left out (the tooltip and the table give the values).
    const longest = Math.max(1, ...(model.cellText ?? []).map((t) => String(t).length));
    const textPx = Math.min(font + 1, layout.cellH - 2, (cell - 4) / (0.68 * longest));
    const readable = textPx >= HEATMAP_FONT_PX - 1;
    ctx.font = `600 ${textPx.toFixed(1)}px ${colors.font}`;
    for (let r = 0; r < model.rows; r++) {
      for (let c = 0; c < model.cols; c++) {
        const i = r * model.cols + c;
        // On the cells' own pixel grid (x0, y0, cellW, cellH are whole canvas pixels), so a mark's
        // outline covers whole pixels and reads back as its exact colour.
        const x = (x0 + c * cellW) / scale, y = (y0 + r * cellH) / scale, w = cellW / scale, h = cellH / scale;
        const o = 4 * i;
        const light = 0.299 * image.data[o] + 0.587 * image.data[o + 1] + 0.114 * image.data[o + 2] > 140;
        if (model.marks?.[i]) {
          ctx.strokeStyle = light ? '#000000' : '#ffffff';
          ctx.lineWidth = 2;
          ctx.strokeRect(x + 2, y + 2, w - 4, h - 4);
        }
        if (readable && model.cellText?.[i]) {
          ctx.fillStyle = light ? '#000000' : '#ffffff';
          ctx.fillText(model.cellText[i], x + w / 2, y + h / 2 + 1);
        }
      }
    }
  }
  // Guides: a dashed line along each diagonal, through the cells' centres, light over dark cells.
  for (const [g, guide] of (model.guides ?? []).entries()) {
    const from = Math.max(guide.from, guide.offset), to = Math.min(guide.to, model.rows - 1);
    if (to < from) continue;
    const cx = (col) => (x0 + (col + 0.5) * cellW) / scale, cy = (row) => (y0 + (row + 0.5) * cellH) / scale;
    ctx.setLineDash(g === 0 ? [2, 3] : [6, 3]);
    ctx.lineWidth = 1.5;
    ctx.strokeStyle = colors.focus;
    ctx.beginPath();
    ctx.moveTo(cx(from - guide.offset) - (cellW / scale) * 0.4, cy(from) - (cellH / scale) * 0.4);
    ctx.lineTo(cx(to - guide.offset) + (cellW / scale) * 0.4, cy(to) + (cellH / scale) * 0.4);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  // The frame on the cells' own pixel grid, just outside them (issue 45: at DPR 1 a frame at the layout's
  // fractional left, where the label widths put it, was drawn across the last column and row).
  ctx.strokeStyle = colors.grid;
  ctx.lineWidth = 1;
  ctx.strokeRect(x0 / scale - 0.5, y0 / scale - 0.5, (cellW * model.cols) / scale + 1, (cellH * model.rows) / scale + 1);
  // The selected cell: 3 CSS px of the focus colour inside its edge (model_grid_figure.js's selected head),
  // on the cells' pixel grid as the marks are.
  const selected = selectedCell(model);
  if (selected) {
    const x = (x0 + selected.col * cellW) / scale, y = (y0 + selected.row * cellH) / scale;
    ctx.strokeStyle = colors.focus;
    ctx.lineWidth = 3;
    ctx.strokeRect(x + 1.5, y + 1.5, cellW / scale - 3, cellH / scale - 3);
  }
  if (focus) {
    ctx.strokeStyle = selected ? colors.text : colors.focus;
    ctx.lineWidth = selected ? 1.5 : 2;
    if (selected) ctx.setLineDash([3, 2]);
    // Inside the selected cell's outline when the keyboard is on it.
    const inset = selected && selected.row === focus.row && selected.col === focus.col ? 5 : 1;
    ctx.strokeRect((x0 + focus.col * cellW) / scale + inset, (y0 + focus.row * cellH) / scale + inset,
      cellW / scale - 2 * inset, cellH / scale - 2 * inset);
    ctx.setLineDash([]);
  }
  return layout;
}

/** model.selected where it names a cell of the model, else null. */
function selectedCell(model) {
  const s = model.selected;
  return s && Number.isInteger(s.row) && Number.isInteger(s.col) && s.row >= 0 && s.row < model.rows && s.col >= 0 && s.col < model.cols
    ? { row: s.row, col: s.col } : null;
}

/** The figure's size in CSS px for this model, without drawing it. */
let measuring = null;
export function measureHeatmap(model,
  { cell = 20, fontPx = HEATMAP_FONT_PX, minPlotHeight = 130, bare = false, maxWidth } = {}) {
  measuring ??= document.createElement('canvas').getContext('2d');
  const layout = layoutFor(measuring, model, cell, fontPx, minPlotHeight, bare, maxWidth);
  return { width: layout.width, height: layout.height };
}

/** The cell under a pointer event, or null. Correct under CSS transforms: it measures the box. */
export function cellAt(canvas, layout, clientX, clientY) {
  if (!layout) return null;
  const box = canvas.getBoundingClientRect();
  if (!box.width || !box.height) return null;
  // Box px -> the layout's CSS px (the canvas's own size, before any transform).
  const x = ((clientX - box.left) * layout.width) / box.width;
  const y = ((clientY - box.top) * layout.height) / box.height;
  const col = Math.floor((x - layout.left) / layout.cellW);
  const row = Math.floor((y - layout.top) / layout.cellH);
  if (x < layout.left || y < layout.top || col < 0 || row < 0) return null;
  if (col >= layout.plotW / layout.cellW || row >= layout.plotH / layout.cellH) return null;
  return { row, col };
}

/** A heatmap on the page: canvas + tooltip, hover and arrow-key navigation. */
export class HeatmapView {
  constructor(container, { cell = 20, minPlotHeight = 130, label = 'attention heatmap', onSelect, bare = false } = {}) {
    this.cell = cell;
    // The room the figure has on the page (CSS px; undefined: none given): a longer title wraps.
    this.maxWidth = undefined;
    this.bare = bare;
    this.minPlotHeight = minPlotHeight;
    this.figure = document.createElement('figure');
    this.figure.className = 'heatmap';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', label);
    this.tooltip = document.createElement('div');
    this.tooltip.className = 'tooltip';
    this.tooltip.setAttribute('role', 'status');
    this.tooltip.hidden = true;
    this.figure.append(this.canvas, this.tooltip);
    container.append(this.figure);
    this.model = null;
    this.layout = null;
    this.focus = null;
    this.fit = null;
    this.palette = 'viridis';
    this.onSelect = onSelect;
    this.canvas.addEventListener('pointermove', (e) => { if (e.pointerType === 'mouse') this.hover(e); });
    // A finger or a pen has no hover: a tap picks the cell, outlined, its value kept in the readout until
    // another tap (a touch pointer "leaves" as it lifts, which must not hide it).
    this.canvas.addEventListener('pointerup', (e) => { if (e.pointerType !== 'mouse') this.tap(e); });
    this.canvas.addEventListener('pointerleave', (e) => { if (e.pointerType === 'mouse') this.hideTooltip(); });
    this.canvas.addEventListener('blur', () => { this.focus = null; this.hideTooltip(); this.redraw(); });
    this.canvas.addEventListener('keydown', (e) => this.key(e));
    if (onSelect) this.canvas.addEventListener('click', () => onSelect());
  }

  show(model, { palette = this.palette } = {}) {
    this.model = model;
    this.palette = palette;
    this.redraw();
  }

  /**
   * box: {width, height} in CSS px to fit the figure into (embed mode: the figure grows or shrinks with
   * its iframe, text included), or null for its natural size.
   */
  setFit(box) {
    this.fit = box;
    this.redraw();
  }

  /**
   * How the figure fits its box: {cell, minPlotHeight, scale} (its own cells and a scale of 1 without a
   * box). Scaled as a whole while its text stays at least FIT_TEXT_PX on screen; in a smaller box (a
   * 480x270 embed) the cells shrink instead and the text keeps that size (the ticks thin out), where
   * scaling it all would have left 5 px labels.
   */
  fitted() {
    const own = { cell: this.cell, minPlotHeight: this.minPlotHeight, scale: 1 };
    if (!this.fit || !this.model) return own;
    const scaleFor = (cell, minPlotHeight) => {
      const size = measureHeatmap(this.model, { cell, minPlotHeight, bare: this.bare, maxWidth: this.maxWidth });
      // 0.25..3: below a quarter nothing is legible; above 3x the pixels only get bigger.
      return Math.max(0.25, Math.min(3, this.fit.width / size.width, this.fit.height / size.height));
    };
    const legible = FIT_TEXT_PX / HEATMAP_FONT_PX;
    const scale = scaleFor(this.cell, this.minPlotHeight);
    if (scale >= legible) return { ...own, scale };
    for (let cell = this.cell - 1; cell >= 2; cell--) {
      const smaller = scaleFor(cell, 0);
      if (smaller >= legible) return { cell, minPlotHeight: 0, scale: smaller };
    }
    return { cell: 2, minPlotHeight: 0, scale: scaleFor(2, 0) };
  }

  redraw() {
    if (!this.model) return;
    const { cell, minPlotHeight, scale: fit } = this.fitted();
    this.layout = drawHeatmap(this.canvas, this.model, {
      cell, scale: (window.devicePixelRatio || 1) * fit, palette: this.palette, focus: this.focus,
      minPlotHeight, bare: this.bare, maxWidth: this.maxWidth,
    });
    // The backing store is at devicePixelRatio x fit; the CSS box is the layout x fit.
    this.canvas.style.width = `${this.layout.width * fit}px`;
    this.canvas.style.height = `${this.layout.height * fit}px`;
    this.canvas.dataset.title = this.model.title;
    if (this.focus) this.describe(this.focus);
  }

  hover(event) {
    const cell = cellAt(this.canvas, this.layout, event.clientX, event.clientY);
    if (!cell) return this.hideTooltip();
    this.describe(cell, event);
  }

  tap(event) {
    const cell = cellAt(this.canvas, this.layout, event.clientX, event.clientY);
    this.focus = cell;
    if (!cell) this.hideTooltip();
    this.redraw();
  }

  key(event) {
    if (!this.model) return;
    if (this.onSelect && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      this.onSelect();
      return;
    }
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const f = this.focus ?? { row: 0, col: 0 };
    this.focus = this.focus ? {
      row: Math.max(0, Math.min(this.model.rows - 1, f.row + move[0])),
      col: Math.max(0, Math.min(this.model.cols - 1, f.col + move[1])),
    } : f;
    this.redraw();
  }

  /** Tooltip text for one cell: (query, key, token, weight), the value named by the model's valueName. */
  describe({ row, col }, event) {
    const m = this.model;
    const weight = m.values[row * m.cols + col];
    const query = m.yNames?.[row] ?? `query ${row}`;
    const key = m.xNames?.[col] ?? `key ${col}`;
    const token = m.tokens ? `, token ${m.tokens[col]}` : '';
    this.tooltip.textContent = `${query} · ${key}${token} · ${m.valueName ?? 'weight'} ${weight.toFixed(3)}`;
    this.tooltip.hidden = false;
    const box = this.figure.getBoundingClientRect();
    const canvasBox = this.canvas.getBoundingClientRect();
    // Near the pointer, or near the focused cell when using the keyboard.
    const x = event ? event.clientX - box.left
      : canvasBox.left - box.left + ((this.layout.left + (col + 1) * this.layout.cellW) * canvasBox.width) / this.layout.width;
    const y = event ? event.clientY - box.top
      : canvasBox.top - box.top + ((this.layout.top + (row + 1) * this.layout.cellH) * canvasBox.height) / this.layout.height;
    // Flip to the left of the pointer where the tooltip would leave the page (embedded labs are narrow).
    const room = document.documentElement.clientWidth - (box.left + x + 12);
    const left = this.tooltip.offsetWidth > room ? Math.max(-box.left, x - 12 - this.tooltip.offsetWidth) : x + 12;
    this.tooltip.style.left = `${Math.round(left)}px`;
    this.tooltip.style.top = `${Math.round(y + 12)}px`;
    this.tooltip.dataset.row = row;
    this.tooltip.dataset.col = col;
  }

  hideTooltip() {
    this.tooltip.hidden = true;
  }
}
