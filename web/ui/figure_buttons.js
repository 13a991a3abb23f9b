// "PNG (2x)" and "SVG" buttons for one figure, labelled with what they export. The drawing and the
// file making belong to the figure and to export.js; this only wires the buttons.
import { exportFigure, FIGURE_FORMATS } from './export.js';
import { setMessage } from './notice.js';

/**
 * container: where the buttons go; what: the figure's name for labels ("the loss chart");
 * figure() -> {draw(canvas, scale), stem, title} or null when there is nothing to export yet;
 * message: a status element for "Saved …"; idPrefix: button ids are `${idPrefix}-png` / `-svg`.
 */
export function addFigureButtons(container, { what, figure, message, idPrefix }) {
  const box = document.createElement('span');
  box.className = 'figure-buttons';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `Export ${what}`);
  for (const [format, { label, help }] of Object.entries(FIGURE_FORMATS)) {
    const button = Object.assign(document.createElement('button'),
      { type: 'button', id: `${idPrefix}-${format}`, textContent: `⤓ ${label}` });
    button.title = `Download ${what} as ${help}`;
    button.setAttribute('aria-label', `Export ${what} as ${label}`);
    button.addEventListener('click', async () => {
      const f = figure();
      if (!f) {
        setMessage(message, 'Nothing to export yet: wait for the model to be built.', 'error');
        return;
      }
      try {
        const name = await exportFigure(f.draw, format, f.stem, { title: f.title });
        setMessage(message, `Saved ${name}.`, 'info');
      } catch (error) {
        setMessage(message, `Export failed: ${error.message}`, 'error');
      }
    });
    box.append(button);
  }
  container.append(box);
  return box;
}
