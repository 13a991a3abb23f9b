// The rows panel ('rows'): the model's prediction on the fixed sample as the notebook prints it, for
// the snapshot the timeline shows.
import { renderTokenRows } from '../token_rows.js';
import { el } from '../el.js';

export function rowsPanel(page) {
  const { lab } = page;
  const rowsBox = el('div', { id: 'results' });
  const node = el('section', { className: 'panel results-panel full-only' },
    el('h2', { textContent: 'Prediction on the fixed sample' }), el('p', { className: 'muted',
      textContent: 'As the notebook prints it. Wrong tokens are marked ✗ and underlined.' }), rowsBox);
  return {
    node,
    parts: { rows: ['snapshot', 'palette'] },
    handles: () => false,
    render() {
      const run = page.run, snapshot = page.shownSnapshot();
      renderTokenRows(rowsBox, snapshot ? lab.views.tokenRows(run.config, run.sample, snapshot) : null);
    },
  };
}
