// A table of labelled cells (a figure kind of figure_kinds.js): the Writing lab's logit lens, a token
// per layer and position. An HTML table, so a phone reads its words at full size: it scrolls sideways
// inside its own box, never the page.
//   {kind: 'table', id, title, corner?, columns: [{text, title?}], rows: [{header, cells: [{text, value?
//    (0..1: the cell's shade), id?, title?}]}], caption?}
const shade = (value) => `rgba(70, 130, 200, ${(0.08 + 0.6 * Math.max(0, Math.min(1, value))).toFixed(3)})`;

export const tableKind = {
  create(view, f) {
    view.node = Object.assign(document.createElement('figure'), { className: 'figure figure-table' });
    view.node.dataset.figure = f.id;
    view.title = Object.assign(document.createElement('figcaption'), { className: 'figure-table-title' });
    // The box scrolls, not the page: as wide as the board at most.
    view.scroll = Object.assign(document.createElement('div'), { className: 'figure-table-scroll', tabIndex: 0 });
    Object.assign(view.scroll.style, { overflowX: 'auto', maxWidth: '100%' });
    view.table = document.createElement('table');
    view.scroll.append(view.table);
    view.caption = Object.assign(document.createElement('p'), { className: 'figure-table-caption' });
    view.node.append(view.title, view.scroll, view.caption);
    Object.assign(view.node.style, { maxWidth: '100%', minWidth: '0' });
  },
  show(view, f) {
    view.title.textContent = f.title ?? '';
    view.scroll.setAttribute('aria-label', f.title ?? 'table');
    view.caption.textContent = f.caption ?? '';
    view.caption.hidden = !f.caption;
    const head = document.createElement('thead');
    const top = document.createElement('tr');
    const corner = Object.assign(document.createElement('th'), { textContent: f.corner ?? '', scope: 'col' });
    top.append(corner, ...f.columns.map((c) => Object.assign(document.createElement('th'),
      { textContent: c.text, title: c.title ?? '', scope: 'col' })));
    head.append(top);
    const body = document.createElement('tbody');
    for (const row of f.rows) {
      const tr = document.createElement('tr');
      tr.append(Object.assign(document.createElement('th'), { textContent: row.header, scope: 'row' }));
      for (const cell of row.cells) {
        const td = Object.assign(document.createElement('td'), { textContent: cell.text, title: cell.title ?? '' });
        if (cell.id !== undefined) td.dataset.id = String(cell.id);
        if (cell.value !== undefined) {
          td.dataset.value = String(cell.value);
          td.style.background = shade(cell.value);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    view.table.replaceChildren(head, body);
  },
};
