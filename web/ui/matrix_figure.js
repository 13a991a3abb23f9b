// Labelled matrices as HTML tables (a figure kind of figure_kinds.js), for a lab that shows attention one
// stage at a time: numbers a student can read, cells coloured by value, editable cells, and on hover
// the arithmetic that produced a cell with its sources highlighted (in this figure or another one of
// the same section: sources are found by matrix id inside the board).
//
// figure: {kind: 'matrices', id, title, items: [{id, label, rows, cols, values, rowNames, colNames,
//          editable?, editKey?, edited? (['q:r:c']), palette? ('weights': 0..1 on the page's scale;
//          default: diverging, centred at 0), sums? (a column of row sums), explain?(r, c) ->
//          {text, from: [[matrixId, 'row' | 'col', i] | [matrixId, 'cell', r, c]]}}]}
import { colorAt, cssColor } from '../shared/palette.js';
import { NUMBER } from '../shared/properties.js';
import { el } from './el.js';

const fmt = (x) => (x === -Infinity ? '−∞' : Number.isFinite(x) ? x.toFixed(2).replace('-', '−') : String(x));

/**
 * Black or white, whichever contrasts more with the cell (WCAG relative luminance): at least 4.58:1
 * on any background, so every number stays readable.
 */
function textOn(rgb) {
  const linear = (c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  const L = 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2]);
  return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000' : '#fff';
}

/** A number typed into a cell -> {value} or {error}. */
function parseCell(text) {
  const raw = String(text).trim().replace('−', '-');
  if (!NUMBER.test(raw)) return { error: `'${text}' is not a number` };
  const value = Number(raw);
  if (Math.abs(value) > 1e4) return { error: `${value} is too large: cells take numbers in [−10000, 10000]` };
  return { value };
}

class MatrixFigure {
  /** board: the element that holds every figure of the section; onEdit({key, cell, value}). */
  constructor(board, { onEdit = () => {} } = {}) {
    this.board = board;
    this.onEdit = onEdit;
    this.node = el('div', { className: 'matrix-figure' });
    this.title = el('h3', { className: 'matrix-title' });
    this.row = el('div', { className: 'matrix-row' });
    this.note = el('p', { className: 'matrix-note muted' });
    this.explain = el('p', { className: 'matrix-explain muted',
      textContent: 'Hover or focus a cell to see how it is computed.' });
    this.explain.setAttribute('role', 'status');
    this.node.append(this.title, this.row, this.note, this.explain);
    this.tables = new Map(); // item id -> {table, cells[r][c], sums[r], shape}
  }

  show(figure, palette) {
    this.figure = figure;
    this.node.dataset.figure = figure.id;
    this.title.textContent = figure.title;
    this.note.textContent = figure.note ?? '';
    const seen = new Set();
    for (const item of figure.items) {
      seen.add(item.id);
      let t = this.tables.get(item.id);
      const shape = `${item.rows}x${item.cols}:${!!item.editable}:${!!item.sums}`;
      if (!t || t.shape !== shape) {
        t?.node.remove();
        t = this.build(item, shape);
        this.tables.set(item.id, t);
      }
      this.row.append(t.node);
      this.fill(t, item, palette);
    }
    for (const [id, t] of this.tables) if (!seen.has(id)) { t.node.remove(); this.tables.delete(id); }
  }

  build(item, shape) {
    const table = el('table', { className: 'matrix' });
    const caption = el('caption', { textContent: item.label });
    const head = el('tr', {}, el('th', { scope: 'col' }, ''));
    for (const name of item.colNames) head.append(el('th', { scope: 'col', textContent: name }));
    if (item.sums) head.append(el('th', { scope: 'col', className: 'sum', textContent: 'Σ row' }));
    table.append(caption, el('thead', {}, head));
    const body = el('tbody');
    const cells = [], sums = [];
    for (let r = 0; r < item.rows; r++) {
      const tr = el('tr', {}, el('th', { scope: 'row', textContent: item.rowNames[r] }));
      tr.dataset.row = r;
      cells.push([]);
      for (let c = 0; c < item.cols; c++) {
        const td = el('td');
        td.dataset.row = r;
        td.dataset.col = c;
        let input = null;
        if (item.editable) {
          input = el('input', { type: 'text', inputMode: 'decimal', className: 'matrix-input', autocomplete: 'off',
            spellcheck: false });
          input.setAttribute('aria-label', `${item.label}, row ${item.rowNames[r]}, column ${item.colNames[c]}`);
          input.addEventListener('change', () => this.edited(item.id, r, c, input));
          input.addEventListener('focus', () => this.hover(item.id, r, c));
          td.append(input);
        } else {
          td.tabIndex = 0;
          td.addEventListener('focus', () => this.hover(item.id, r, c));
        }
        td.addEventListener('pointerenter', () => this.hover(item.id, r, c));
        tr.append(td);
        cells[r].push({ td, input });
      }
      if (item.sums) {
        const td = el('td', { className: 'sum' });
        tr.append(td);
        sums.push(td);
      }
      body.append(tr);
    }
    table.append(body);
    table.addEventListener('pointerleave', () => this.clearHighlight());
    const node = el('figure', { className: 'matrix-box' }, table);
    node.dataset.matrix = item.id;
    return { node, table, cells, sums, shape };
  }

  fill(t, item, palette) {
    const finite = item.values.filter(Number.isFinite);
    const extent = Math.max(1e-6, ...finite.map(Math.abs));
    t.item = item;
    for (let r = 0; r < item.rows; r++) {
      for (let c = 0; c < item.cols; c++) {
        const x = item.values[r * item.cols + c];
        const { td, input } = t.cells[r][c];
        const rgb = item.palette === 'weights' ? colorAt(palette, x, 0, 1)
          : Number.isFinite(x) ? colorAt('diverging', x, -extent, extent) : null;
        td.style.background = rgb ? cssColor(rgb) : '';
        td.classList.toggle('blocked', x === -Infinity);
        td.style.color = rgb ? textOn(rgb) : '';
        td.dataset.value = String(x);
        if (input) {
          // The cell being typed in keeps what the user typed.
          if (document.activeElement !== input) {
            input.value = fmt(x);
            input.removeAttribute('aria-invalid');
            td.classList.remove('invalid');
          }
          input.style.color = td.style.color;
          const edited = item.edited?.includes(`${item.id}:${r}:${c}`);
          td.classList.toggle('edited', !!edited);
          input.title = edited ? 'You edited this cell' : '';
        } else {
          td.textContent = fmt(x);
        }
      }
      if (item.sums) t.sums[r].textContent = item.sums[r].toFixed(3);
    }
  }

  edited(id, r, c, input) {
    const parsed = parseCell(input.value);
    input.title = parsed.error ?? '';
    if (parsed.error) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    input.closest('td').classList.toggle('invalid', !!parsed.error);
    if (parsed.error) {
      this.explain.textContent = `Not changed: ${parsed.error}.`;
      return;
    }
    const item = this.tables.get(id).item;
    this.onEdit({ key: item.editKey, cell: `${id}:${r}:${c}`, value: parsed.value });
  }

  /** The arithmetic of one cell, its sources highlighted (in any matrix figure of the same board). */
  hover(id, r, c) {
    this.clearHighlight();
    const item = this.tables.get(id)?.item;
    if (!item) return;
    const at = (mid) => this.board.querySelector(`[data-matrix="${mid}"] table`);
    at(id)?.querySelector(`td[data-row="${r}"][data-col="${c}"]`)?.classList.add('target');
    const invalid = this.tables.get(id).cells[r][c].input?.getAttribute('aria-invalid') === 'true';
    const explained = invalid ? { text: `Not changed: ${this.tables.get(id).cells[r][c].input.title}. Type a number.` } : item.explain?.(r, c);
    const value = item.values[r * item.cols + c];
    this.explain.textContent = explained?.text
      ?? `${item.label}, row ${item.rowNames[r]}, column ${item.colNames[c]}: `
        + `${fmt(value)}${item.editable ? ' (type a number to change it)' : ''}`;
    for (const [mid, what, i, j] of explained?.from ?? []) {
      const table = at(mid);
      if (!table) continue;
      const selector = what === 'row' ? `td[data-row="${i}"]` : what === 'col' ? `td[data-col="${i}"]` : `td[data-row="${i}"][data-col="${j}"]`;
      for (const td of table.querySelectorAll(selector)) td.classList.add('source');
    }
  }

  clearHighlight() {
    for (const td of this.board.querySelectorAll('.matrix td.source, .matrix td.target')) td.classList.remove('source', 'target');
  }
}

/** The kind as figure_kinds.js lists it: an element of its own, not a canvas; the board's onEdit hears the cells. */
export const matricesKind = {
  create(view, f, board) {
    view.matrix = new MatrixFigure(board.box, { onEdit: board.onEdit });
    view.node = view.matrix.node;
  },
  show: (view, f, palette) => view.matrix.show(f, palette),
};
