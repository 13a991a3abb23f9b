// A section's tensor input (section.input === 'tensor'): a box to paste what a notebook printed and a
// file picker for torch.save(t, 'step.pt'), with a Check button. Its value is {text} or {bytes, name}
// (the last one given), or {} before anything is given (the section still shows its own tensors).
// The verdict is written beside the Check button, where the student pressed (issue 38): the section
// panel hands it over with showVerdict(); the caption above the box says which step it takes.
import { el } from './el.js';
import { megabytes } from '../shared/megabytes.js';

const MAX_FILE_BYTES = 16 * 1024 * 1024; // one intermediate of a small model: a few KB

export class TensorInput {
  constructor(parent, { label, onDone, id }) {
    this.value = {};
    // Each input given gets a number; a result computed from an earlier one (a request already in flight
    // when Check was pressed) is not its verdict.
    this.version = 0;
    this.text = el('textarea', { id: `${id}-text`, rows: 4, spellcheck: false, className: 'tensor-paste',
      placeholder: 'tensor([[0.3314, 0.3274, ...]])' });
    this.file = el('input', { type: 'file', id: `${id}-file`, accept: '.pt,.pth,application/octet-stream',
      className: 'visually-hidden' });
    const fileLabel = el('label', { htmlFor: `${id}-file`, className: 'button-like', textContent: 'Open a .pt…' });
    this.check = el('button', { type: 'button', id: `${id}-check`, textContent: 'Check' });
    this.message = el('p', { className: 'inline-message build-verdict', id: `${id}-verdict` });
    // Where the checked step's tensor is out of sight after the verdict: a button that goes to it.
    this.jump = el('button', { type: 'button', id: `${id}-jump`, className: 'tensor-input-jump', hidden: true });
    this.jump.addEventListener('click', () => this.jumpTarget?.scrollIntoView({ block: 'start' }));
    // The student asked (Check, or a file opened) and the answer has not been shown yet.
    this.asked = false;
    this.message.setAttribute('role', 'status');
    this.caption = el('label', { htmlFor: `${id}-text`, textContent: label, id: `${id}-caption` });
    parent.append(el('div', { className: 'tensor-input' }, this.caption, this.text,
      el('div', { className: 'tensor-input-buttons' }, this.check, fileLabel, this.file), this.message, this.jump));
    this.check.addEventListener('click', () => {
      this.value = { text: this.text.value, version: ++this.version };
      this.say('', '');
      this.asked = true;
      onDone();
    });
    this.file.addEventListener('change', async () => {
      const file = this.file.files?.[0];
      this.file.value = '';
      if (!file) return;
      if (file.size > MAX_FILE_BYTES) {
        this.say(`${file.name} is ${megabytes(file.size)}: one step's tensor is a few KB. Nothing was read.`, 'bad');
        return;
      }
      try {
        this.value = { bytes: new Uint8Array(await file.arrayBuffer()), name: file.name, version: ++this.version };
        this.say(`Checking ${file.name}…`, '');
        this.asked = true;
      } catch (error) {
        this.say(`${file.name} could not be read (${error?.message ?? error}).`, 'bad');
        return;
      }
      onDone();
    });
  }

  /**
   * The line above the box: which step it takes (the section's inputCaption). Another step forgets the
   * input given for the last one, and its verdict: the box is for the step chosen now.
   */
  setCaption(text) {
    if (this.caption.textContent === text) return;
    if (this.captioned) {
      this.value = {};
      this.asked = false;
      this.say('', '');
    }
    this.caption.textContent = text;
    this.captioned = true;
  }

  say(text, status) {
    this.message.textContent = text;
    this.message.dataset.status = status;
    this.jump.hidden = true;
  }

  /** Offers a way to the checked step's tensor (target), which the verdict's place leaves out of sight. */
  offerJump(label, target, below) {
    this.jumpTarget = target;
    this.jump.textContent = `Show ${label} ${below ? '↓' : '↑'}`;
    this.jump.hidden = false;
  }

  /**
   * The section's answer: verdict {status ('ok' | 'bad', or '' when nothing was given), text, version (of
   * the input it judged: value.version)}. -> true when this
   * answers the student's Check or file, so the panel may bring the checked step into view once (a
   * refresh while training does not move the page).
   */
  showVerdict(verdict) {
    if (verdict.version !== this.value.version) return false; // computed from an earlier input (or none)
    // Nothing judged (no input yet): an old verdict goes, a refused file's line stays.
    if (verdict.status || this.message.dataset.status !== 'bad' || this.asked) this.say(verdict.text, verdict.status);
    const asked = this.asked;
    this.asked = false;
    return asked;
  }
}
