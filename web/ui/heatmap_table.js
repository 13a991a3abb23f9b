// A heatmap's matrix as an HTML table: the values in numbers, for screen readers and for anyone who
// cannot tell the colours apart. Row and column headers are the heatmap's own tick labels and names.

/** model: a heatmap model (heatmap.js); fills `container` with a captioned table, or empties it. */
export function renderHeatmapTable(container, model) {
  container.replaceChildren();
  if (!model) return;
  const table = document.createElement('table');
  table.className = 'heatmap-table';
  table.append(Object.assign(document.createElement('caption'), {
    textContent: `${model.title}: rows are ${model.yTitle}, columns ${model.xTitle}; each cell is the `
      + 'attention weight.',
  }));
  const head = document.createElement('tr');
  head.append(Object.assign(document.createElement('td'), { className: 'corner' }));
  for (let c = 0; c < model.cols; c++) {
    const th = Object.assign(document.createElement('th'),
      { scope: 'col', textContent: model.xTicks?.[c] ?? String(c) });
    if (model.xNames?.[c]) th.title = model.xNames[c];
    head.append(th);
  }
  const thead = document.createElement('thead');
  thead.append(head);
  const tbody = document.createElement('tbody');
  for (let r = 0; r < model.rows; r++) {
    const tr = document.createElement('tr');
    const th = Object.assign(document.createElement('th'),
      { scope: 'row', textContent: model.yTicks?.[r] ?? String(r) });
    if (model.yNames?.[r]) th.title = model.yNames[r];
    tr.append(th);
    for (let c = 0; c < model.cols; c++) {
      tr.append(Object.assign(document.createElement('td'),
        { textContent: model.values[r * model.cols + c].toFixed(2) }));
    }
    tbody.append(tr);
  }
  table.append(thead, tbody);
  container.append(table);
}
