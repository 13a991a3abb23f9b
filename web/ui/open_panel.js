// The panel of a lab that opens the user's own files (lab.open: a pretrained checkpoint): a folder
// picker, a files picker and a drop zone (a dropped folder is walked for its files), a progress bar
// while the worker reads them, and what was opened or why not. The files go to the worker as File
// objects: the page never reads them, so a 440 MB checkpoint costs the page nothing.
import { el } from './el.js';

/** Every File under a dropped DataTransfer (folders walked, one level of nesting is what HF folders have, any depth works). */
async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return { files: [...(dataTransfer.files ?? [])], name: '' };
  const files = [];
  const walk = async (entry) => {
    if (entry.isFile) {
      files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (!batch.length) break;
        for (const e of batch) await walk(e);
      }
    }
  };
  for (const e of entries) await walk(e);
  const folder = entries.length === 1 && entries[0].isDirectory ? entries[0].name : '';
  return { files, name: folder };
}

/** The folder a picked file came from ("bert-base-uncased/config.json" -> "bert-base-uncased"). */
const folderOf = (files) => (files[0]?.webkitRelativePath ?? '').split('/').slice(0, -1).join('/');

export class OpenPanel {
  /** onOpen(files, name): the user chose files. */
  constructor(lab, { onOpen }) {
    const spec = lab.open;
    this.onOpen = onOpen;
    this.folderInput = el('input', { type: 'file', id: 'open-folder', multiple: true, className: 'visually-hidden' });
    this.folderInput.setAttribute('webkitdirectory', '');
    this.folderInput.setAttribute('aria-label', 'Checkpoint folder');
    this.filesInput = el('input', { type: 'file', id: 'open-files', multiple: true, className: 'visually-hidden',
      accept: spec.files.map((f) => `.${f.split('.').pop()}`).join(',') });
    this.filesInput.setAttribute('aria-label', 'Checkpoint files');
    const folderButton = el('button', { type: 'button', id: 'open-folder-button', textContent: 'Choose a folder…' });
    const filesButton = el('button', { type: 'button', id: 'open-files-button', textContent: 'Choose files…' });
    folderButton.addEventListener('click', () => this.folderInput.click());
    filesButton.addEventListener('click', () => this.filesInput.click());
    this.folderInput.addEventListener('change', () => this.chosen([...this.folderInput.files], folderOf([...this.folderInput.files])));
    this.filesInput.addEventListener('change', () => this.chosen([...this.filesInput.files], ''));
    this.progress = el('progress', { id: 'open-progress', max: 1, value: 0, hidden: true });
    this.progress.setAttribute('aria-label', 'Reading the checkpoint');
    this.status = el('p', { className: 'inline-message open-status', id: 'open-status', textContent: 'No checkpoint is open yet.' });
    this.status.setAttribute('role', 'status');
    this.zone = el('div', { className: 'drop-zone', id: 'open-drop' },
      el('p', { textContent: 'Drop a checkpoint folder or its files here, or' }), el('div', { className: 'open-buttons' }, folderButton, filesButton),
      el('p', { className: 'muted', textContent: `Files read: ${spec.files.join(', ')}.` }));
    this.node = el('section', { className: 'panel open-panel', id: 'panel-open' }, el('h2', { textContent: spec.title }),
      el('p', { className: 'section-text', textContent: spec.text }), this.zone, this.folderInput, this.filesInput, this.progress, this.status);
    this.node.dataset.state = 'empty';
    for (const type of ['dragenter', 'dragover']) {
      this.zone.addEventListener(type, (e) => {
        e.preventDefault();
        this.zone.classList.add('dragging');
      });
    }
    this.zone.addEventListener('dragleave', () => this.zone.classList.remove('dragging'));
    this.zone.addEventListener('drop', async (e) => {
      e.preventDefault();
      this.zone.classList.remove('dragging');
      const { files, name } = await droppedFiles(e.dataTransfer);
      this.chosen(files, name);
    });
  }

  chosen(files, name) {
    if (!files.length) return;
    this.onOpen(files, name || 'checkpoint');
  }

  reading(bytes, total, tensor) {
    this.node.dataset.state = 'reading';
    this.progress.hidden = false;
    this.progress.max = Math.max(1, total);
    this.progress.value = bytes;
    const mb = (n) => (n / 1e6).toFixed(n < 1e7 ? 2 : 0);
    this.status.textContent = total ? `Reading model.safetensors: ${mb(bytes)} of ${mb(total)} MB${tensor ? ` (${tensor})` : ''}…` : 'Checking the files…';
  }

  opened(summary) {
    this.node.dataset.state = 'open';
    this.progress.hidden = true;
    this.status.dataset.status = 'ok';
    const memory = summary.heapBytes ? ` WebAssembly memory: ${Math.round(summary.heapBytes / 1e6)} MB.` : '';
    this.status.textContent = `Open: ${summary.text}${memory}`;
    this.node.dataset.heapBytes = String(summary.heapBytes ?? '');
  }

  failed(message, hadModel) {
    this.node.dataset.state = hadModel ? 'open' : 'empty';
    this.progress.hidden = true;
    this.status.dataset.status = 'bad';
    this.status.textContent = `Not opened: ${message}${hadModel ? ' The checkpoint that was open is still open.' : ''}`;
  }
}
