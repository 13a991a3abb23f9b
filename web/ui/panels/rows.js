// The rows panel ('rows'): the model's prediction on the fixed sample as the notebook prints it, for
// the snapshot the timeline shows.
import { renderTokenRows } from '../token_rows.js';
import { el } from '../el.js';

export function rowsPanel(page) {
  const { lab } = page;
  const rowsBox = el('div', { id: 'results' });
  const node = el('section', { className: 'panel results-panel full-only' },
    el('h2', { textContent: 'Prediction on the fixed sample', id: 'results-heading' }), el('p', { className: 'muted',
      textContent: 'As the notebook prints it. Wrong tokens are marked ✗ and underlined.' }), rowsBox);
  // On a phone the rows are wider than the panel, which scrolls sideways: a keyboard must reach it too
  // (axe's scrollable-region-focusable), so it takes focus and is named by its heading.
  node.tabIndex = 0;
  node.setAttribute('role', 'region');
  node.setAttribute('aria-labelledby', 'results-heading');
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
