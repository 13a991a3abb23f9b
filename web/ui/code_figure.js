// {kind: 'code', id, title, lines}: lines of Python for a student to copy into their notebook (a build's
// fixed input, its state_dict and the calls), kept as written: one line each, monospace, scrolling
// sideways inside its box rather than wrapping a line of code in two.
import { el } from './el.js';

export const codeKind = {
  create(view) {
    view.node = el('figure', { className: 'code-figure' });
  },
  show(view, f) {
    view.node.dataset.figure = f.id;
    view.node.replaceChildren(el('figcaption', { className: 'code-title', textContent: f.title }),
      el('pre', { className: 'code-lines', textContent: f.lines.join('\n'), tabIndex: 0 }));
  },
};
