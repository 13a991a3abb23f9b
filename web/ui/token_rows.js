// Token rows as the notebook prints them (input / target / pred), in a table. A wrong token is marked
// by a symbol and an underline as well as colour, so it reads in print and without colour vision.

/** model: {rows: [{label, tokens: [{text, wrong?, title?}]}], summary} */
export function renderTokenRows(container, model) {
  container.replaceChildren();
  if (!model) return;
  const table = document.createElement('table');
  table.className = 'token-rows';
  for (const row of model.rows) {
    const tr = document.createElement('tr');
    tr.dataset.row = row.label;
    tr.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: row.label }));
    for (const token of row.tokens) {
      const td = document.createElement('td');
      if (token.title) td.title = token.title;
      if (token.wrong) {
        td.className = 'wrong';
        const mark = Object.assign(document.createElement('span'), { className: 'wrong-mark', textContent: '✗' });
        mark.setAttribute('aria-hidden', 'true');
        const text = Object.assign(document.createElement('span'), { textContent: token.text });
        td.append(mark, text, Object.assign(document.createElement('span'),
          { className: 'visually-hidden', textContent: ' (wrong)' }));
      } else {
        td.textContent = token.text;
      }
      tr.append(td);
    }
    table.append(tr);
  }
  const summary = Object.assign(document.createElement('p'),
    { className: 'token-summary', textContent: model.summary });
  container.append(table, summary);
}
