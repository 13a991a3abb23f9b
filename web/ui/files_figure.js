// {kind: 'files', id, title, text?, files: [{id, label, name, type, make}]}: buttons that download what a
// section computed, as a file (the Circuits sections' activation cache, as safetensors and as JSON). `make`
// builds the file's bytes or text only when its button is pressed (a JSON of a cache is several times
// its safetensors), so a result that is never downloaded costs nothing more than its numbers.
import { el } from './el.js';
import { download } from './export.js';
import { setMessage } from './notice.js';

export const filesKind = {
  create(view) {
    view.node = el('figure', { className: 'files-figure' });
  },
  show(view, f) {
    view.node.dataset.figure = f.id;
    const message = el('p', { className: 'files-message' });
    message.setAttribute('role', 'status');
    const buttons = f.files.map((file) => {
      const button = el('button', { type: 'button', id: file.id, textContent: `⤓ ${file.label}` });
      button.title = `Download ${file.name}`;
      button.addEventListener('click', () => {
        try {
          download(new Blob([file.make()], { type: file.type }), file.name);
          setMessage(message, `Saved ${file.name}.`, 'info');
        } catch (error) {
          setMessage(message, `${file.name} could not be made: ${error.message}`, 'error');
        }
      });
      return button;
    });
    const group = el('div', { className: 'files-buttons' }, ...buttons);
    group.setAttribute('role', 'group');
    group.setAttribute('aria-label', f.title);
    view.node.replaceChildren(el('figcaption', { className: 'files-title', textContent: f.title }),
      ...(f.text ? [el('p', { className: 'files-text', textContent: f.text })] : []), group, message);
  },
};
