// A section's tensor input (section.input === 'tensor'): a box to paste what a notebook printed and a
// file picker for torch.save(t, 'step.pt'), with a Check button. Its value is {text} or {bytes, name}
// (the last one given), or {} before anything is given (the section still shows its own tensors).
import { el } from './el.js';

const MAX_FILE_BYTES = 16 * 1024 * 1024; // one intermediate of a small model: a few KB

export class TensorInput {
  constructor(parent, { label, onDone, id }) {
    this.value = {};
    this.text = el('textarea', { id: `${id}-text`, rows: 4, spellcheck: false, className: 'tensor-paste',
      placeholder: 'tensor([[0.3314, 0.3274, ...]])' });
    this.file = el('input', { type: 'file', id: `${id}-file`, accept: '.pt,.pth,application/octet-stream', className: 'visually-hidden' });
    const fileLabel = el('label', { htmlFor: `${id}-file`, className: 'button-like', textContent: 'Open a .pt…' });
    this.check = el('button', { type: 'button', id: `${id}-check`, textContent: 'Check' });
    this.message = el('p', { className: 'inline-message' });
    this.message.setAttribute('role', 'status');
    const caption = el('label', { htmlFor: `${id}-text`, textContent: label });
    parent.append(el('div', { className: 'tensor-input' }, caption, this.text, el('div', { className: 'tensor-input-buttons' }, this.check, fileLabel, this.file), this.message));
    this.check.addEventListener('click', () => {
      this.value = { text: this.text.value };
      this.message.textContent = '';
      onDone();
    });
    this.file.addEventListener('change', async () => {
      const file = this.file.files?.[0];
      this.file.value = '';
      if (!file) return;
      if (file.size > MAX_FILE_BYTES) {
        this.message.textContent = `${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MB: one step's tensor is a few KB. Nothing was read.`;
        return;
      }
      try {
        this.value = { bytes: new Uint8Array(await file.arrayBuffer()), name: file.name };
        this.message.textContent = `Checking ${file.name}…`;
      } catch (error) {
        this.message.textContent = `${file.name} could not be read (${error?.message ?? error}).`;
        return;
      }
      onDone();
    });
  }
}
