// Visible notices (errors from the worker, problems in the link, unsupported features), each with a
// key so the same problem replaces its old notice instead of piling up.

export class Notices {
  constructor(container) {
    this.container = container;
    this.byKey = new Map();
  }

  /** kind: 'error' | 'warning' | 'info'. Returns the notice element. */
  show(text, { kind = 'info', key = text } = {}) {
    this.dismiss(key);
    const box = document.createElement('div');
    box.className = `notice notice-${kind}`;
    box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    box.dataset.key = key;
    const message = Object.assign(document.createElement('p'), { textContent: text });
    const close = Object.assign(document.createElement('button'),
      { type: 'button', className: 'notice-close', textContent: '×', title: 'Dismiss' });
    close.setAttribute('aria-label', 'Dismiss this notice');
    close.addEventListener('click', () => this.dismiss(key));
    box.append(message, close);
    this.container.append(box);
    this.byKey.set(key, box);
    return box;
  }

  dismiss(key) {
    this.byKey.get(key)?.remove();
    this.byKey.delete(key);
  }
}

/** A message slot beside a control: textContent only, so user text is never parsed as HTML. */
export function setMessage(element, text, kind = 'error') {
  element.textContent = text ?? '';
  element.className = `inline-message ${text ? kind : ''}`;
}
