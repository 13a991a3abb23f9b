// The figures of a lab's section: view models (figure_kinds.js lists the kinds and where each is
// described) drawn into one board. Each canvas carries data-figure=<id>; hovering names what is under
// the pointer in the tooltip. A kind's draw function takes (canvas, figure, scale) so figure export
// (PNG 2x, SVG) draws the same thing.
// A kind with picks (the head view, the model grid) answers clicks and keys (arrows move, Enter picks,
// Escape clears): the board calls onPick(figureId, detail) with what the kind says ({token, side},
// {token: null} when the token clicked again is released, or {layer, head}). A pick shows at once; a
// figure shown later with another `selected` (the lab's answer) takes over from it.
import { addFigureButtons } from './figure_buttons.js';
import { figureKind } from './figure_kinds.js';
import { dataFold, hasTable } from './figure_data.js';

const samePick = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The figures of one section, kept in `container`: canvases are reused by figure id, so a redraw
 * (a slider moved, a new training step) does not rebuild the DOM or lose a hover.
 */
export class FigureBoard {
  /**
   * onEdit({key, cell, value}): a cell of an editable matrix was changed. onPick(figureId, detail): a
   * figure's pick changed (see above).
   */
  constructor(container, { stem = 'figure', message, onEdit = () => {}, onPick = () => {} } = {}) {
    this.onEdit = onEdit;
    this.onPick = onPick;
    this.box = document.createElement('div');
    this.box.className = 'figure-board';
    // No scroll anchor inside: a figure that changes width rewraps the board, and the browser kept an
    // anchored figure in place by scrolling the page as far as it moved (issue 38: "Mask a word" in the
    // Pretrained lab moved the page 572 px up to the neuron view). The anchor is then the section's
    // content around the board, which only moves when the board's height changes.
    this.box.style.overflowAnchor = 'none';
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
      // The width the board has (CSS px): a kind that can (images) lays itself out to fit it, so its
      // text is not shrunk with the canvas on a phone.
      view.figure = this.box.clientWidth ? { ...f, room: this.box.clientWidth } : f;
      this.draw(view, palette);
      view.data?.update(view.figure);
    }
    for (const [id, view] of this.views) {
      if (!seen.has(id)) {
        view.node.remove();
        this.views.delete(id);
      }
    }
  }

  /** A view of figure f: {kind, type (its entry in figure_kinds.js), figure, node, and what the kind keeps}. */
  create(f) {
    const type = figureKind(f.kind);
    const view = { kind: f.kind, type, figure: f, node: null };
    if (type.create) {
      type.create(view, f, this);
      this.addData(view);
      return view;
    }
    view.node = document.createElement('figure');
    view.node.className = `figure figure-${f.kind}`;
    const canvas = view.canvas = document.createElement('canvas');
    canvas.dataset.figure = f.id;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    const tooltip = view.tooltip = Object.assign(document.createElement('div'), { className: 'tooltip', hidden: true });
    tooltip.setAttribute('role', 'status');
    view.node.append(canvas, tooltip);
    view.layout = null;
    canvas.addEventListener('pointermove', (e) => (type.pick ? this.hoverPick(view, e) : this.hover(view, e)));
    // A finger has no hover, and its pointer "leaves" as it lifts: a tap shows what is under it, kept
    // until the next tap (as the heatmaps do); a mouse's tooltip goes when it leaves.
    canvas.addEventListener('pointerleave', (e) => { if (e.pointerType === 'mouse' || type.pick) tooltip.hidden = true; });
    if (!type.pick && type.textAt) {
      canvas.addEventListener('pointerup', (e) => { if (e.pointerType !== 'mouse') this.hover(view, e); });
      // The keyboard steps through what the tooltip names (the kind's spots: each bar, image, token or
      // step), saying it beside it; Escape or leaving the figure hides it.
      if (type.spots) {
        view.spot = -1;
        canvas.addEventListener('keydown', (e) => this.stepSpot(view, e));
        canvas.addEventListener('blur', () => { tooltip.hidden = true; view.spot = -1; });
      }
    }
    if (type.pick) {
      // pick: undefined (follow the figure's `selected`), null (released) or the user's pick;
      // pointer / cursor: the hovered token and the keyboard's place (drawn, never exported).
      Object.assign(view, { pick: undefined, pointer: null, cursor: null, selectedKey: null });
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
    this.addExport(view, (c, scale) => type.draw(c, this.asDrawn(view, true), scale));
    this.addData(view);
    return view;
  }

  /** A canvas figure's values as a table, in a fold under it (figure_data.js), where its kind has one. */
  addData(view) {
    if (!hasTable(view.kind)) return;
    view.data = dataFold(view.figure.id);
    view.node.append(view.data.node);
  }

  /** The export buttons under a figure: draw(canvas, scale) draws it as shown now. */
  addExport(view, draw) {
    const f = view.figure;
    // Export is for the full page: controls=min (a slide) shows the figure alone.
    const bar = Object.assign(document.createElement('div'), { className: 'figure-toolbar full-only' });
    view.node.append(bar);
    addFigureButtons(bar, {
      what: `the figure "${f.title}"`, idPrefix: `export-${f.id}`, message: this.message,
      figure: () => ({ draw, stem: `${this.stem}-${view.figure.id}`, title: view.figure.title }),
    });
  }

  /** The figure as drawn: the user's pick (and, on the page only, hover and keyboard place) applied. */
  asDrawn(view, forExport = false) {
    const pick = view.type.pick;
    if (!pick) return view.figure;
    return pick.asDrawn(view.figure,
      { pinned: this.pinned(view), pointer: view.pointer, cursor: view.cursor, palette: view.palette, forExport });
  }

  /** The pick the figure shows: the user's, else the figure's own `selected`; null for none. */
  pinned(view) {
    return view.pick !== undefined ? view.pick : view.type.pick.selectedOf(view.figure);
  }

  /** Draws a canvas figure as drawn now; keeps its layout for hit tests. */
  paint(view) {
    view.layout = view.type.draw(view.canvas, this.asDrawn(view));
    view.canvas.dataset.drawn = String(Date.now());
  }

  /** The canvas's aria-label: what the figure shows, its pick applied. */
  describe(view) {
    const drawn = this.asDrawn(view, true);
    view.canvas.setAttribute('aria-label', view.type.label ? view.type.label(drawn) : `${drawn.title}`);
  }

  draw(view, palette) {
    const type = view.type;
    if (type.show) {
      type.show(view, view.figure, palette);
      return;
    }
    if (type.pick) {
      view.palette = palette;
      // The lab's selection changed (its answer to a pick, or a new one): it replaces the user's pick.
      const f = view.figure;
      const selectedKey = JSON.stringify([f.selected ?? null, f.side ?? null]);
      if (selectedKey !== view.selectedKey) {
        view.selectedKey = selectedKey;
        view.pick = undefined;
      }
    }
    this.paint(view);
    this.describe(view);
  }

  /** Pointer position (CSS px of the layout) of a pointer event; the canvas may be scaled by CSS. */
  pointAt(view, e) {
    const rect = view.canvas.getBoundingClientRect();
    const k = view.layout.width / rect.width;
    return { x: (e.clientX - rect.left) * k, y: (e.clientY - rect.top) * k };
  }

  /** A figure without picks: the tooltip names what is under the pointer, beside it. */
  hover(view, e) {
    const { x, y } = this.pointAt(view, e);
    const text = view.type.textAt?.(view.figure, view.layout, x, y) ?? '';
    const rect = view.canvas.getBoundingClientRect();
    view.tooltip.hidden = !text;
    view.tooltip.textContent = text;
    view.tooltip.style.left = `${e.clientX - rect.left + 12}px`;
    view.tooltip.style.top = `${e.clientY - rect.top + 12}px`;
  }

  /** Arrows (and Home, End) move through a figure's spots, the tooltip saying each; Escape hides it. */
  stepSpot(view, e) {
    if (!view.layout) return;
    const spots = view.type.spots(view.figure, view.layout);
    if (!spots.length) return;
    const last = spots.length - 1;
    const to = { ArrowRight: view.spot + 1, ArrowDown: view.spot + 1, ArrowLeft: view.spot - 1, ArrowUp: view.spot - 1,
      Home: 0, End: last }[e.key];
    if (e.key === 'Escape') {
      if (view.spot < 0) return;
      e.preventDefault();
      view.spot = -1;
      view.tooltip.hidden = true;
      return;
    }
    if (to === undefined) return;
    e.preventDefault();
    view.spot = Math.max(0, Math.min(last, to)); // from none (-1), either arrow starts at the first
    const { x, y } = spots[view.spot];
    this.tip(view, view.type.textAt(view.figure, view.layout, x, y), x, y);
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

  /** Picks what was hit (the kind decides: a second click on a token releases it), and tells the lab. */
  pick(view, hit) {
    const { pick, detail } = view.type.pick.choose(this.pinned(view), hit);
    view.pick = pick;
    this.paint(view);
    this.describe(view);
    this.onPick(view.figure.id, detail);
  }

  click(view, e) {
    if (!view.layout) return;
    const { x, y } = this.pointAt(view, e);
    const hit = view.type.pick.hit(view.layout, x, y);
    if (!hit) return;
    view.cursor = null;
    this.pick(view, hit);
  }

  /** Arrows move the keyboard's place, Enter or Space picks it, Escape clears. */
  key(view, e) {
    if (!view.layout) return;
    const f = view.figure, kind = view.type.pick;
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
      if (kind.release && this.pinned(view)) {
        view.pick = null;
        this.onPick(f.id, kind.release);
      }
      this.paint(view);
      this.describe(view);
      return;
    } else if (moves[e.key]) {
      e.preventDefault();
      const [down, right] = moves[e.key];
      view.cursor = kind.move(f, view.cursor ?? this.pinned(view), !!view.cursor, down, right);
      this.paint(view);
    } else {
      return;
    }
    // Say where the keyboard is, beside it.
    const tip = kind.cursorTip(f, view.layout, view.cursor, samePick(this.pinned(view), view.cursor));
    this.tip(view, tip.text, tip.x, tip.y);
  }

  /** Hover on a figure with picks: the kind says what to show, and what the drawing follows (pointer). */
  hoverPick(view, e) {
    if (!view.layout) return;
    const { x, y } = this.pointAt(view, e);
    const answer = view.type.pick.hover(view.figure, view.layout, x, y);
    if ('pointer' in answer && !samePick(answer.pointer, view.pointer)) {
      view.pointer = answer.pointer;
      this.paint(view);
    }
    this.tip(view, answer.text, x, y);
  }
}
