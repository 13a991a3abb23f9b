// The attention area of a lab: one large heatmap (the head mean, or a head the user picks), a small
// heatmap per head, the exports (PNG or SVG of the large one, WebM of the timeline) and a table view
// of the large one's values.
import { drawHeatmap, HeatmapView, measureHeatmap } from './heatmap.js';
import { download, recordWebm, webmSupport } from './export.js';
import { addFigureButtons } from './figure_buttons.js';
import { renderHeatmapTable } from './heatmap_table.js';
import { setMessage } from './notice.js';

/** Cell size (CSS px) so that the larger side of a rows x cols matrix spans about `span` px. */
const cellFor = (rows, cols, span, lo, hi) => Math.max(lo, Math.min(hi, Math.floor(span / Math.max(rows, cols))));

// What the large heatmap needs beside its cells (CSS px): the y title and ticks ("15: 12") on the
// left, the colour bar and its labels on the right. Its cells take the rest of the panel's width, up
// to LARGE_SPAN, so that on a phone the map and its colour bar fit the screen.
const LARGE_MARGINS = 125;
const LARGE_SPAN = 360;

/**
 * The largest cell up to `cell` at which the whole figure (labels, colour bar) fits `room` CSS px. The
 * title wraps within the room instead (heatmap.js): a step count growing in it while training must not
 * shrink the cells (issue 38: 17 -> 4 px on a phone).
 */
function fitCell(model, cell, room) {
  let c = cell;
  while (c > 4 && measureHeatmap(model, { cell: c, maxWidth: room }).width > room) c--;
  return c;
}

export class HeatmapPanel {
  /**
   * modelsAt(index) -> {mean, heads} for a timeline snapshot; nameOf() -> a file name stem.
   * notices: for export problems that need more room than the inline message.
   */
  constructor(container, { modelsAt, snapshotCount, nameOf, notices }) {
    this.modelsAt = modelsAt;
    this.snapshotCount = snapshotCount;
    this.nameOf = nameOf;
    this.notices = notices;
    this.selected = 'mean';
    this.palette = 'viridis';
    this.models = null;

    const bar = document.createElement('div');
    bar.className = 'toolbar full-only';
    const label = Object.assign(document.createElement('label'), { htmlFor: 'heatmap-select', textContent: 'Show' });
    this.select = Object.assign(document.createElement('select'),
      { id: 'heatmap-select', title: 'Which attention map the large heatmap shows' });
    this.select.addEventListener('change', () => this.choose(this.select.value));
    this.webmButton = Object.assign(document.createElement('button'),
      { type: 'button', id: 'export-webm', textContent: 'Export timeline (WebM)' });
    this.webmButton.title = 'Record the timeline of the large heatmap as a WebM video';
    this.message = Object.assign(document.createElement('p'), { className: 'inline-message', id: 'export-message' });
    this.message.setAttribute('role', 'status');
    // The choice of map, hidden where there is one head (a One query model: its mean is itself).
    this.choice = Object.assign(document.createElement('span'), { className: 'heatmap-choice' });
    this.choice.append(label, this.select);
    bar.append(this.choice);
    addFigureButtons(bar, { what: 'the large heatmap', idPrefix: 'export', message: this.message,
      figure: () => this.figure() });
    bar.append(this.webmButton);
    const tableLabel = Object.assign(document.createElement('label'),
      { className: 'inline-check', title: 'Show the large heatmap as a table of numbers' });
    this.tableBox = Object.assign(document.createElement('input'), { type: 'checkbox', id: 'heatmap-table-toggle' });
    tableLabel.append(this.tableBox, document.createTextNode(' values as a table'));
    bar.append(tableLabel);
    this.tableArea = Object.assign(document.createElement('div'),
      { id: 'heatmap-table', className: 'table-scroll', hidden: true });
    this.tableArea.tabIndex = 0; // a wide table scrolls: the keyboard must reach it
    this.tableArea.setAttribute('aria-label', 'Attention values as a table');
    this.tableBox.addEventListener('change', () => this.renderTable());
    this.large = new HeatmapView(container, { cell: 22, label: 'Attention heatmap' });
    this.large.figure.classList.add('heatmap-large');
    this.large.canvas.id = 'heatmap-main';
    // Other maps of the same snapshot that a lab shows beside the attention (models.extra: the One
    // query lab's values), following the timeline with it.
    this.extraBox = Object.assign(document.createElement('div'), { className: 'heatmap-extra' });
    this.extra = [];
    this.container = container;
    // The figure first, its tools under it.
    container.append(this.extraBox, bar, this.message, this.tableArea);
    const gridTitle = Object.assign(document.createElement('h3'),
      { className: 'full-only', textContent: 'Each head (click or press Enter on one to enlarge it)' });
    this.grid = document.createElement('div');
    this.grid.className = 'head-grid full-only';
    this.grid.id = 'head-grid';
    container.append(gridTitle, this.grid);
    this.gridTitle = gridTitle;
    this.small = [];
    this.webmButton.addEventListener('click', () => this.exportWebm());
    const support = webmSupport();
    if (!support.ok) {
      this.webmButton.disabled = true;
      setMessage(this.message, `Animation export is unavailable: ${support.reason}.`, 'warning');
    }
  }

  /** models: {mean, heads, extra?}; rebuilds the head grid when the number of heads or the size changes. */
  show(models, { palette = this.palette } = {}) {
    this.models = models;
    this.palette = palette;
    const { rows, cols } = models.mean;
    const shape = `${models.heads.length}:${rows}x${cols}`;
    const room = this.container.clientWidth || LARGE_SPAN + LARGE_MARGINS;
    // Up to 36 px: a value written in a cell ("−0.2") stays 11 px or more.
    this.large.cell = cellFor(rows, cols, Math.min(LARGE_SPAN, room - LARGE_MARGINS), 4, 36);
    if (shape !== this.shape) {
      this.shape = shape;
      this.grid.replaceChildren();
      // Thumbnails without ticks (they would be too small to read): click one to see it large.
      // A lab of several layers names its heads (models.heads[i].label: "layer 1 head 0") and its large
      // map (meanLabel).
      this.small = models.heads.map((m, h) => new HeatmapView(this.grid, {
        cell: cellFor(rows, cols, 130, 3, 12), minPlotHeight: 60, bare: true,
        label: `Attention of ${m.label ?? `head ${h}`}`, onSelect: () => this.choose(`head-${h}`),
      }));
      this.select.replaceChildren(new Option(models.meanLabel ?? 'head mean', 'mean'),
        ...models.heads.map((m, h) => new Option(m.label ?? `head ${h}`, `head-${h}`)));
      // One head is its own mean: no grid of heads to choose from.
      this.grid.hidden = this.gridTitle.hidden = this.choice.hidden = models.heads.length < 2;
      if (!this.select.querySelector(`option[value="${this.selected}"]`)) this.selected = 'mean';
      this.select.value = this.selected;
    }
    this.large.cell = fitCell(this.pick(models), this.large.cell, room);
    this.large.maxWidth = room;
    this.large.show(this.pick(models), { palette });
    const extra = models.extra ?? [];
    if (extra.length !== this.extra.length) {
      this.extraBox.replaceChildren();
      this.extra = extra.map((m, i) => {
        const view = new HeatmapView(this.extraBox, { cell: this.large.cell, label: m.title });
        view.canvas.id = `heatmap-extra-${i}`;
        return view;
      });
    }
    // The same cells as the large map where they fit the panel, smaller where this map's labels are wider.
    extra.forEach((m, i) => {
      Object.assign(this.extra[i], { cell: fitCell(m, this.large.cell, room), maxWidth: room });
      this.extra[i].show(m, { palette });
    });
    if (this.tableBox.checked) this.renderTable();
  }

  /** The small per-head maps of the models last shown (a separate step, so a frame can stop between). */
  showHeads() {
    if (this.models) this.small.forEach((view, h) => view.show(this.models.heads[h], { palette: this.palette }));
  }

  pick(models) {
    return this.selected === 'mean' ? models.mean : models.heads.find((m) => m.id === this.selected) ?? models.mean;
  }

  choose(id) {
    this.selected = id;
    this.select.value = id;
    if (this.models) this.large.show(this.pick(this.models), { palette: this.palette });
    this.renderTable();
  }

  renderTable() {
    this.tableArea.hidden = !this.tableBox.checked;
    renderHeatmapTable(this.tableArea, this.tableBox.checked && this.models ? this.pick(this.models) : null);
  }

  redraw() {
    this.large.redraw();
    this.small.forEach((v) => v.redraw());
  }

  /** The large heatmap as an exportable figure, at its natural size (not the embed fit). */
  figure() {
    if (!this.models) return null;
    const model = this.pick(this.models);
    const cell = this.large.cell, palette = this.palette;
    return { draw: (canvas, scale) => drawHeatmap(canvas, model, { cell, scale, palette }),
      stem: `${this.nameOf()}-${this.selected}`, title: model.title };
  }

  async exportWebm() {
    const support = webmSupport();
    if (!support.ok) {
      setMessage(this.message, `Cannot export the animation: ${support.reason}.`, 'error');
      return;
    }
    const count = this.snapshotCount();
    if (count < 2) {
      setMessage(this.message, 'Train a few steps first: the timeline has only one snapshot.', 'error');
      return;
    }
    this.webmButton.disabled = true;
    setMessage(this.message, `Recording ${count} snapshots…`, 'info');
    try {
      const cell = this.large.cell, palette = this.palette;
      const blob = await recordWebm(count,
        (canvas, i) => drawHeatmap(canvas, this.pick(this.modelsAt(i)), { cell, scale: 2, palette }));
      download(blob, `${this.nameOf()}-${this.selected}-timeline.webm`);
      setMessage(this.message, `Saved ${this.nameOf()}-${this.selected}-timeline.webm (${count} frames).`, 'info');
    } catch (error) {
      setMessage(this.message, error.message, 'error');
    } finally {
      this.webmButton.disabled = false;
    }
  }
}
