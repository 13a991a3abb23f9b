// The panel of a lab that opens the user's own files (lab.open: a pretrained checkpoint): a model by its
// Hub id (kept in the browser for offline use; the models kept, with their size and a Remove button),
// a folder picker, a files picker and a drop zone (a dropped folder is walked for its files), a progress
// bar while the worker downloads or reads them (with Cancel), and what was opened or why not. The files
// go to the worker as File objects: the page never reads them, so a 440 MB checkpoint costs the page nothing.
import { el } from './el.js';
import { DEFAULT_ENDPOINT, parseEndpoint, parseModelId, revisionProblem } from '../models/hub_ids.js';
import { SHARD_INDEX } from '../models/checkpoint_files.js';
import { megabyteFigure, megabytes } from '../shared/megabytes.js';

// The lab's files as the panel lists them: model.safetensors may come sharded (its index and the shards
// it names: checkpoint_files.js), which every opener reads.
const filesRead = (files) => files.filter((f) => f !== SHARD_INDEX)
  .map((f) => (f === 'model.safetensors' ? `${f} (or ${SHARD_INDEX} and its shards)` : f)).join(', ');

/**
 * Every File under a dropped DataTransfer (folders walked, one level of nesting is what HF folders have,
 * any depth works).
 */
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

const quoted = (name) => `“${name}”`;

export class OpenPanel {
  /**
   * onOpen(files, name): the user chose files; onHub({model, revision, endpoint, token}): a Hub id;
   * onCancel(): stop the download; onRemove(model): forget a kept model.
   */
  constructor(lab, { onOpen, onHub = () => {}, onCancel = () => {}, onRemove = () => {} }) {
    const spec = lab.open;
    this.onOpen = onOpen;
    this.hub = this.buildHub(spec, { onHub, onCancel, onRemove });
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
    this.folderInput.addEventListener('change',
      () => this.chosen([...this.folderInput.files], folderOf([...this.folderInput.files])));
    this.filesInput.addEventListener('change', () => this.chosen([...this.filesInput.files], ''));
    this.progress = el('progress', { id: 'open-progress', max: 1, value: 0, hidden: true });
    this.progress.setAttribute('aria-label', 'Reading the checkpoint');
    this.status = el('p', { className: 'inline-message open-status', id: 'open-status',
      textContent: 'No checkpoint is open yet.' });
    this.status.setAttribute('role', 'status');
    this.zone = el('div', { className: 'drop-zone', id: 'open-drop' },
      el('p', { textContent: 'Drop a checkpoint folder or its files here, or' }),
      el('div', { className: 'open-buttons' }, folderButton, filesButton),
      el('p', { className: 'muted', textContent: `Files read: ${filesRead(spec.files)}.` }));
    this.node = el('section', { className: 'panel open-panel', id: 'panel-open' },
      el('h2', { textContent: spec.title }), el('p', { className: 'section-text', textContent: spec.text }),
      this.hub.node, this.zone, this.folderInput, this.filesInput, this.progress, this.hub.cancel, this.status,
      this.hub.stored);
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

  // The Hub row: an id (the lab's example to start with), Open; under "Hub settings" the endpoint (a
  // mirror) and a token for gated or private models, which stays in this tab's memory only.
  buildHub(spec, { onHub, onCancel, onRemove }) {
    const id = el('input', { type: 'text', id: 'hub-id', value: spec.hubExample ?? '', spellcheck: false,
      autocomplete: 'off' });
    id.setAttribute('aria-label', 'Hugging Face Hub model id');
    const open = el('button', { type: 'submit', id: 'hub-open', textContent: 'Open from the Hub' });
    const endpoint = el('input', { type: 'url', id: 'hub-endpoint', value: DEFAULT_ENDPOINT, spellcheck: false });
    endpoint.setAttribute('aria-label', 'Hub endpoint');
    const token = el('input',
      { type: 'password', id: 'hub-token', autocomplete: 'off',
        placeholder: 'hf_… (only for gated or private models)' });
    token.setAttribute('aria-label', 'Hub token');
    const settings = el('details', { className: 'hub-settings' }, el('summary', { textContent: 'Hub settings' }),
      el('label', { textContent: 'Endpoint ' }, endpoint),
      el('label', { textContent: 'Token (kept in this tab only) ' }, token));
    const form = el('form', { className: 'hub-row', id: 'hub-form' },
      el('label', { htmlFor: 'hub-id', textContent: 'Hub id ' }), id, open);
    // Other models this lab reads, one click from the field (a datalist is invisible on a phone). A
    // suggestion is a Hub id, or {id, size} with its download's size ("257 MB"), said beside it. With
    // sizes, the example is listed too: its size is worth knowing before Open.
    const listed = (spec.hubSuggestions ?? []).map((m) => (typeof m === 'string' ? { id: m } : m));
    const others = listed.filter((m) => m.id !== spec.hubExample || m.size);
    const suggestions = others.length ? el('p', { className: 'hub-suggestions', id: 'hub-suggestions' },
      others.some((m) => m.id === spec.hubExample) ? 'Models that fit this lab: ' : 'Others that fit this lab: ',
      ...others.flatMap(({ id: model, size }, i) => {
        const pick = el('button', { type: 'button', className: 'link-button', textContent: model });
        pick.dataset.model = model;
        pick.addEventListener('click', () => {
          id.value = model;
          open.focus();
        });
        // The size never breaks inside ("257 MB" on one line).
        const item = size ? [pick, ` (${size.replace(/ /g, '\u00a0')})`] : [pick];
        return i ? [', ', ...item] : item;
      })) : null;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const parsed = parseModelId(id.value);
      const base = parseEndpoint(endpoint.value);
      const at = id.value.lastIndexOf('@');
      const badRevision = !parsed && at > 0 && parseModelId(id.value.slice(0, at)) ? revisionProblem(id.value.trim().slice(at + 1)) : null;
      if (badRevision) return this.failed(`'${id.value.slice(0, 60)}': the ${badRevision}.`, false);
      if (!parsed) return this.failed(`'${id.value.slice(0, 60)}' is not a Hub model id: ORG/NAME or NAME, optionally `
        + `@REVISION (e.g. ${spec.hubExample}).`, false);
      if (!base) return this.failed(`'${endpoint.value.slice(0, 60)}' is not an http(s) address for the Hub endpoint.`, false);
      // Ask the browser to keep what is downloaded (not evicted under storage pressure); no prompt in most browsers.
      globalThis.navigator?.storage?.persist?.().catch?.(() => {});
      this.endpoint = base;
      onHub({ model: parsed.id, revision: parsed.revision, endpoint: base, token: token.value.trim() || null });
    });
    const cancel = el('button', { type: 'button', id: 'hub-cancel', textContent: 'Cancel', hidden: true });
    cancel.addEventListener('click', () => onCancel());
    const stored = el('div', { className: 'hub-stored', id: 'hub-stored' });
    stored.addEventListener('click', (e) => {
      const button = e.target.closest('button[data-model]');
      if (button) onRemove(JSON.parse(button.dataset.model));
      const resume = e.target.closest('button[data-resume]');
      if (resume) {
        const { model, endpoint: at } = JSON.parse(resume.dataset.resume);
        this.fill(model, at);
        this.submitHub();
      }
    });
    return { node: el('div', { className: 'hub' }, form, ...(suggestions ? [suggestions] : []), settings), cancel,
      stored, form, id, endpoint };
  }

  /** A link's model: the id (and endpoint) filled in. */
  fill(model, endpoint) {
    this.hub.id.value = model;
    if (endpoint) this.hub.endpoint.value = endpoint;
  }

  /** Opens what the Hub fields say, as the Open button does. */
  submitHub() {
    this.hub.form.requestSubmit();
  }

  /** The models kept in this browser: [{id, revision, endpoint, files, bytes}]. */
  storedModels(models) {
    const list = this.hub.stored;
    list.replaceChildren();
    if (!models.length) {
      list.append(el('p', { className: 'muted', textContent: 'No model is kept in this browser yet: one opened from '
        + 'the Hub is, for offline use.' }));
      return;
    }
    list.append(el('p', { textContent: 'Kept in this browser (they open with no network):' }));
    const ul = el('ul');
    for (const m of models) {
      const where = m.endpoint === DEFAULT_ENDPOINT ? '' : ` from ${m.endpoint}`;
      const remove = el('button', { type: 'button', textContent: 'Remove' });
      remove.dataset.model = JSON.stringify({ model: m.id, revision: m.revision, endpoint: m.endpoint });
      remove.setAttribute('aria-label', `Remove ${m.id} from this browser`);
      const name = `${m.id}${m.revision === 'main' ? '' : `@${m.revision}`}`;
      const size = !m.partial ? `${megabytes(m.bytes)} `
        : `${m.stalled ? 'stalled: the Hub stopped sending; ' : ''}${megabytes(m.bytes)} downloaded so far (Open `
          + 'goes on from there) ';
      // A download that stopped: Open, beside it, goes on from its parts.
      const resume = m.partial ? el('button', { type: 'button', textContent: 'Open' }) : null;
      if (resume) {
        resume.dataset.resume = JSON.stringify({ model: name, endpoint: m.endpoint });
        resume.setAttribute('aria-label', `Open ${m.id}, going on from what was downloaded`);
      }
      ul.append(el('li', {}, el('span', { textContent: `${name}${where}: ${size}` }),
        ...(resume ? [resume, ' '] : []), remove));
    }
    list.append(ul);
  }

  chosen(files, name) {
    if (!files.length) return;
    this.onOpen(files, name); // name: the folder's, or '' for loose files
  }

  reading(bytes, total, tensor, downloading = '', planned = 0) {
    this.node.dataset.state = 'reading';
    this.progress.hidden = false;
    this.progress.max = Math.max(1, total);
    this.progress.value = bytes;
    this.hub.cancel.hidden = !downloading;
    if (downloading) {
      const all = planned ? ` (${megabytes(planned)} in all, kept in this browser)` : '';
      this.status.textContent = `Downloading ${downloading}: `
        + `${megabyteFigure(bytes)}${total ? ` of ${megabyteFigure(total)}` : ''} MB…${all}`;
      return;
    }
    this.status.textContent = total ? `Reading the weights: ${megabyteFigure(bytes)} of ${megabyteFigure(total)} `
      + `MB${tensor ? ` (${tensor})` : ''}…` : 'Checking the files…';
  }

  /** A link copied with a model opened from files (opened=NAME): which files to open here. */
  asked(name) {
    this.status.dataset.status = '';
    this.status.textContent = `This link was copied with ${quoted(name)} open from its owner's files, which a link `
      + 'cannot carry: choose or drop the same files here to see what was shared.';
  }

  /** fromFiles: the name a link gives the files it was opened from ('' for a Hub model): said with it. */
  opened(summary, fromFiles = '') {
    this.node.dataset.state = 'open';
    this.progress.hidden = true;
    this.hub.cancel.hidden = true;
    this.status.dataset.status = 'ok';
    const memory = summary.heapBytes ? ` WebAssembly memory: ${megabytes(summary.heapBytes)}.` : '';
    const kept = summary.hub ? (summary.hub.fromCache ? ' Opened from this browser\'s copy (no network).' : ' Kept in this browser for offline use.') : '';
    const link = fromFiles ? ` Copy link names ${quoted(fromFiles)} but cannot carry files from this computer: whoever `
      + 'opens it is asked for them (a Hub id travels in the link).' : '';
    // The tiny checkpoints of the tests (their README.md says so): said right after what was opened, so no
    // one takes their noise for a bug.
    const random = summary.randomWeights ? ' These are random test weights (its README.md says so): a tiny model made '
      + 'for the tests, so what it writes or predicts is noise. Open a real model by its Hub id for figures that mean '
      + 'something.' : '';
    this.status.textContent = `Open: ${summary.text}${random}${memory}${kept}${link}`;
    this.node.dataset.heapBytes = String(summary.heapBytes ?? '');
  }

  /**
   * openIn: {id, title} of the lab that opens a checkpoint of another kind: its name in the message
   * becomes a link there.
   */
  failed(message, hadModel, openIn = null) {
    this.node.dataset.state = hadModel ? 'open' : 'empty';
    this.progress.hidden = true;
    this.hub.cancel.hidden = true;
    this.status.dataset.status = 'bad';
    // The core's messages are one line without a full stop: one goes between them and the next sentence
    // (a message ending in a bracket, "(0 to 412)", has none of its own either).
    const ended = /[.!?][)"”']*$/.test(message) ? message : `${message}.`;
    const text = `Not opened: ${hadModel ? `${ended} The checkpoint that was open is still open.` : message}`;
    const name = openIn ? `the ${openIn.title} lab` : null;
    const at = name ? text.lastIndexOf(name) : -1;
    if (at < 0) {
      this.status.textContent = text;
      return;
    }
    const link = el('a', { href: `?lab=${encodeURIComponent(openIn.id)}`, id: 'open-right-lab', textContent: name });
    this.status.replaceChildren(text.slice(0, at), link, text.slice(at + name.length));
  }
}
