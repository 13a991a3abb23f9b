// "Import weights" (a file picker, or a file dropped on the panel: a .safetensors, or a .pt that
// torch.save wrote in the course notebook) and "Export weights".
// It reads the file's bytes and reports them; parsing, checking and loading belong to panels/weights.js
// and the worker.
import { setMessage } from './notice.js';
import { megabytes } from '../shared/megabytes.js';

// A lab's weights are a few MB (the Alignment lab's largest settings: under 2 MB); a file far larger is
// not one of them, and reading a multi-GB file would stall the tab first.
const MAX_WEIGHTS_BYTES = 64 * 1024 * 1024;

export class WeightsPanel {
  /**
   * onFile(bytes, fileName) when a file is chosen or dropped; onExport() for the export button;
   * maxBytes: files larger than this are refused before they are read. The panel is `node`.
   */
  // help: what the panel reads and writes, in the lab's words (lab.weights.help), else a notebook's state_dict.
  constructor({ onFile, onCompare, onExport, maxBytes = MAX_WEIGHTS_BYTES, help = null }) {
    this.onFile = onFile;
    this.onCompare = onCompare;
    this.maxBytes = maxBytes;
    const panel = document.createElement('section');
    panel.className = 'panel weights full-only';
    panel.setAttribute('aria-labelledby', 'weights-title');
    panel.append(Object.assign(document.createElement('h2'), { id: 'weights-title', textContent: 'Weights' }));
    const text = Object.assign(document.createElement('p'), {
      className: 'muted', id: 'weights-help',
      textContent: help ?? 'Load the model you trained in the course notebook (torch.save(model.state_dict(), '
        + '"model.pt"), or a .safetensors), or one saved from this lab; or save this model\'s weights. You can also '
        + 'drop a file here.',
    });
    this.input = Object.assign(document.createElement('input'),
      { type: 'file', id: 'weights-file', accept: '.safetensors,.pt,.pth,.bin,application/octet-stream',
        className: 'visually-hidden' });
    this.input.setAttribute('aria-describedby', 'weights-help');
    // The label is the visible button: it opens the picker by click, Enter or Space (see styles.css).
    const importLabel = Object.assign(document.createElement('label'),
      { htmlFor: 'weights-file', className: 'button-like', id: 'weights-import', textContent: 'Import weights…' });
    this.exportButton = Object.assign(document.createElement('button'),
      { type: 'button', id: 'weights-export', textContent: 'Export weights' });
    this.exportButton.title = 'Download this model\'s weights as a .safetensors file with PyTorch\'s names';
    this.message = Object.assign(document.createElement('p'), { className: 'inline-message', id: 'weights-message' });
    this.message.setAttribute('role', 'status');
    // A notebook's model beside the lab's run, which it leaves as it is (panels/compare.js).
    this.compareInput = Object.assign(document.createElement('input'),
      { type: 'file', id: 'compare-file', accept: this.input.accept, className: 'visually-hidden' });
    const compareLabel = Object.assign(document.createElement('label'),
      { htmlFor: 'compare-file', className: 'button-like', id: 'weights-compare',
        textContent: 'Compare beside this run…' });
    compareLabel.title = 'Show a model you trained in the notebook beside this lab\'s run: its attention and its '
      + 'accuracy; this run is not changed';
    const buttons = Object.assign(document.createElement('div'), { className: 'weights-buttons' });
    buttons.append(this.input, importLabel, this.exportButton);
    if (onCompare) buttons.append(this.compareInput, compareLabel);
    panel.append(text, buttons, this.message);
    this.node = panel;

    this.input.addEventListener('change', () => {
      const file = this.input.files?.[0];
      if (file) this.read(file);
      this.input.value = ''; // choosing the same file again still reports it
    });
    this.compareInput.addEventListener('change', () => {
      const file = this.compareInput.files?.[0];
      if (file) this.read(file, { compare: true });
      this.compareInput.value = '';
    });
    this.exportButton.addEventListener('click', () => onExport());
    panel.addEventListener('dragover', (e) => {
      e.preventDefault();
      panel.classList.add('drop-target');
    });
    panel.addEventListener('dragleave', () => panel.classList.remove('drop-target'));
    panel.addEventListener('drop', (e) => {
      e.preventDefault();
      panel.classList.remove('drop-target');
      const file = e.dataTransfer?.files?.[0];
      if (file) this.read(file);
    });
  }

  // Every path ends in a result or a message: never a "Reading…" that stays.
  async read(file, { compare = false } = {}) {
    if (file.size > this.maxBytes) {
      this.say(`${file.name} is ${megabytes(file.size)}: a weights file for this lab is at most `
        + `${megabytes(this.maxBytes)}. Nothing was loaded; the current model is kept.`, 'error');
      return;
    }
    this.say(`Reading ${file.name}…`);
    let bytes;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (error) {
      this.say(`${file.name} could not be read (${error?.message ?? error}). Nothing was loaded; the `
        + 'current model is kept.', 'error');
      return;
    }
    (compare ? this.onCompare : this.onFile)(bytes, file.name);
  }

  /** The line under the buttons: what the file the student gave came to (kind 'error' for a refusal). */
  say(text, kind = 'info') {
    setMessage(this.message, text, kind);
  }
}
