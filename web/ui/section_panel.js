// One section of a lab that computes outside training (web/labs/*: `sections`): its title and text,
// the controls of its own properties, its buttons (e.g. "New random vectors"), and its figures. The
// page's section panel (panels/section.js) sends the worker the section's request and hands the result back here.
//
// An action is a button: {id, label, title, change(values, result) -> values} (result: the section's
// last result, or null), or a play button: {id, label, pauseLabel, title, play: {everyMs, start(values,
// result) -> values, next(values, result) -> values | null (the end)}}; the page paces a play (panels/section_play.js).
import { ControlsPanel } from './controls.js';
import { FigureBoard } from './figures.js';
import { DrawPad } from './draw_pad.js';
import { TensorInput } from './tensor_input.js';
import { el } from './el.js';
import { predictionBlock, questionsBlock } from './questions.js';
import { toggleHead } from '../labs/head_list.js';

/**
 * A page with answers=0 (docs/embedding.md) keeps the lab's own numbers to itself: a figure marked `answer`
 * (a Check your build step's tensor) keeps its title, shape and verdict, and loses its values, so copying
 * the page cannot pass the check, which still judges a paste.
 */
function withoutAnswers(figures, answers) {
  return answers ? figures : figures.map((f) => (f.answer ? { ...f, values: null, extra: null, hidden: true,
    note: f.withheldNote ?? f.note } : f));
}

export class SectionPanel {
  /**
   * lab: the declaration; section: one of lab.sections; onInput(name, parsed, commit) as the settings
   * panel; onAction(change) with a function of the values (a button); onPlay(action) for a play
   * button (start or pause); onDrawn() when the user finished a drawing or edited a matrix cell (a
   * section with input: 'drawing' or 'edits').
   */
  constructor({ lab, section, onInput, onAction, onPlay = () => {}, onUserInput = () => {}, onPick = () => {},
    answers = true, questions: questionsShown = true, predict: predictShown = questionsShown }) {
    this.lab = lab;
    this.section = section;
    this.answers = answers;
    this.node = el('section',
      { className: `panel lab-section${section.fullOnly ? ' full-only' : ''}`, id: `section-${section.id}` },
      el('h2', { textContent: section.title }), el('p', { className: 'section-text', textContent: section.text }));
    this.node.dataset.section = section.id;
    const props = section.properties.map((name) => lab.properties.find((p) => p.name === name));
    // Its buttons and settings are for the full page: controls=min (a slide) shows the figures alone.
    const row = el('div', { className: 'section-controls full-only' });
    this.controls = new ControlsPanel(row, props,
      { grouped: false, onInput, onCommit: (name, parsed) => onInput(name, parsed, true) });
    this.buttons = new Map(); // action id -> button
    // The buttons wrap as one group (they belong together: play, step, show all, ...).
    const actions = el('div', { className: 'section-actions' });
    // The section's buttons first (its main action: ▶ Play, a new draw), then its settings.
    if (section.actions?.length) row.prepend(actions);
    for (const action of section.actions ?? []) {
      const button = el('button',
        { type: 'button', textContent: action.label, title: action.title, id: `action-${action.id}` });
      if (action.play) {
        button.setAttribute('aria-pressed', 'false');
        button.addEventListener('click', () => onPlay(action));
      } else {
        button.addEventListener('click', () => {
          this.pressed = { button, at: performance.now() };
          onAction((v) => action.change(v, this.current));
        });
      }
      this.buttons.set(action.id, button);
      actions.append(button);
    }
    this.status = el('p', { className: 'inline-message section-status' });
    this.status.setAttribute('role', 'status');
    this.message = el('p', { className: 'inline-message' });
    this.message.setAttribute('role', 'status');
    this.node.append(row);
    if (section.input === 'drawing') this.pad = new DrawPad(this.node,
      { onDone: onUserInput, label: section.inputLabel ?? 'Draw a digit' });
    if (section.input === 'tensor') this.tensorInput = new TensorInput(this.node,
      { onDone: onUserInput, label: section.inputLabel ?? 'Your tensor', id: `${section.id}-tensor` });
    this.node.append(this.status);
    // Figures left from the last input that worked, while the input now is refused (a compute error, or
    // a setting in error): dimmed, with this note, until a good result replaces them (issue 29).
    this.staleNote = el('p', { className: 'inline-message stale-note', textContent: 'Not updated: fix the input above. '
      + 'The figures below show the last input that worked.' });
    this.staleNote.hidden = true;
    this.failed = false;
    this.inputRefused = false;
    this.node.append(this.staleNote);
    // Cells the user edited, for the inputs they belong to (a new random draw has another key).
    this.edits = { key: null, cells: {} };
    const onEdit = ({ key, cell, value }) => {
      if (this.edits.key !== key) this.edits = { key, cells: {} };
      this.edits.cells[cell] = value;
      onUserInput();
    };
    // A figure may map what the user picks in it to properties (figure.picks: {layer: 'layer', ...}):
    // a thumbnail of the model view sets the layer and head, a token of the head view the query token.
    const pick = (figureId, detail) => {
      const figure = this.figures?.find((f) => f.id === figureId);
      // A grid of heads that switches them (figure.toggles: a 'heads' property, web/labs/head_list.js):
      // the head clicked goes in or out of the list.
      if (figure?.toggles && Number.isInteger(detail.layer) && Number.isInteger(detail.head)) {
        onPick((v) => ({ ...v, [figure.toggles]: toggleHead(v[figure.toggles], detail.layer, detail.head) }));
        return;
      }
      const map = figure?.picks ?? {};
      const change = Object.fromEntries(Object.entries(map).filter(([k]) => Number.isInteger(detail[k])).map(([k, name]) => [name, detail[k]]));
      if (Object.keys(change).length) onPick((v) => ({ ...v, ...change }));
    };
    this.board = new FigureBoard(this.node,
      { stem: `${lab.id}-${section.id}`, message: this.message, onEdit, onPick: pick });
    this.node.append(this.message);
    // The lab's "predict, then run" question where the lab asks it in this section (lab.predictIn: the
    // Lookup's first figure is too tall to have anything above it on a phone): under the figures, or
    // above them (lab.predictAboveFigures) where the figures would give the answer away before the action.
    // Figures that would give its answer away (lab.predictHolds: figure ids) are held back, covered,
    // until the student answers or asks to see them; with no question on the page (questions=false,
    // answers=false) nothing is held, and controls=min shows them (the cover is full-only, styles.css).
    // predictShown: false on a slide (embed), as the transport panel's question is.
    const asks = predictShown && answers && lab.predict && lab.predictIn === `section:${section.id}`;
    this.held = asks && lab.predictHolds?.length ? new Set(lab.predictHolds) : null;
    this.prediction = predictShown && lab.predict && lab.predictIn === `section:${section.id}`
      ? predictionBlock(lab, { answers, onJudged: () => this.releaseHeld() }) : null;
    if (this.prediction && lab.predictAboveFigures) this.board.box.before(this.prediction.node);
    else if (this.prediction) this.node.append(this.prediction.node);
    // The notebook's questions this section's figures answer (questions.js), after the figures.
    this.questions = questionsBlock(section.questions, { answers, shown: questionsShown });
    if (this.questions) this.node.append(this.questions.node);
    this.result = null;
    this.values = null;
  }

  /** What the user made for the section (its drawing, its edited cells), or null while there is none. */
  get input() {
    if (this.section.input === 'edits') return { key: this.edits.key, cells: { ...this.edits.cells } };
    if (this.tensorInput) return { ...this.tensorInput.value };
    if (!this.pad) return undefined;
    return this.pad.empty ? null : { pixels: Array.from(this.pad.pixels()) };
  }

  /** The section's values changed in a way that changes its result. */
  dependsOnAny(names) {
    return names.some((n) => (this.section.dependsOn ?? []).includes(n));
  }

  setValues(values) { this.controls.setValues(values); }

  /** The values now (asked for or not): a tensor input's caption names the step they choose. */
  followValues(values) {
    this.questions?.follow(values); // a question whose answer follows a setting (the Lookup's database size)
    if (this.tensorInput && this.section.inputCaption) this.tensorInput.setCaption(this.section.inputCaption(values));
  }

  /** A play button's state: its label says what a click does (play, or pause). */
  setPlaying(action, playing) {
    const button = this.buttons.get(action.id);
    if (!button) return;
    button.textContent = playing ? action.pauseLabel ?? 'Pause' : action.label;
    button.setAttribute('aria-pressed', String(playing));
  }
  setErrors(errors) { this.controls.setErrors(errors); }
  setHidden(names) { this.controls.setHidden(names); }

  /**
   * Whether the section applies to what is open (section.appliesTo: the Writing lab's rotary positions, for
   * a model that has them): one that does not is hidden, its state 'not-applicable', until one that does is opened.
   */
  setApplies(applies) {
    this.node.hidden = !applies;
    if (!applies) this.node.dataset.state = 'not-applicable';
  }

  /** Waits with a message; `actionable` false (nothing to act on yet: no checkpoint open) disables the buttons. */
  waiting(text, { actionable = true } = {}) {
    this.status.textContent = text;
    this.node.dataset.state = 'waiting';
    for (const button of this.buttons.values()) button.disabled = !actionable;
  }

  /**
   * An action with `when(values)` is on only where it has something to do (Drop again: train mode), its
   * title saying why not (whenText) otherwise.
   */
  actionsFollow(values) {
    for (const action of this.section.actions ?? []) {
      if (!action.when) continue;
      const button = this.buttons.get(action.id), on = !!action.when(values ?? {});
      if (!on) button.disabled = true;
      else if (this.node.dataset.state !== 'waiting') button.disabled = false;
      button.title = on ? action.title : `${action.title} (${action.whenText})`;
    }
  }

  /**
   * The result an action or a play goes on from: the last one shown, or null while the section is in
   * error (issue 45: Next token counted tokens it never wrote from the result before the refusal).
   */
  get current() { return this.failed ? null : this.result; }

  show(result, values, { palette } = {}) {
    this.palette = palette;
    for (const button of this.buttons.values()) button.disabled = false;
    this.actionsFollow(values);
    this.failed = false;
    this.result = result;
    this.values = values;
    this.status.textContent = '';
    this.node.dataset.state = 'shown';
    this.figures = withoutAnswers(this.section.figures(result, values, this.lab), this.answers);
    this.board.show(this.figures, { palette });
    this.coverHeld();
    this.markStale();
    if (this.tensorInput) this.answerTensorInput(result);
    // The answer to a button of this section (Mask a word's guesses): brought into view as far as the
    // button stays in view (issue 38). Only the first answer, and only soon after the press: a result
    // that comes later, for another reason, leaves the page where the student put it.
    if (this.pressed && performance.now() - this.pressed.at < 10000) keepInView(this.pressed.button,
      this.board.box, Infinity);
    this.pressed = null;
  }

  fail(message) {
    this.status.textContent = message;
    this.node.dataset.state = 'error';
    this.failed = true;
    if (this.tensorInput) {
      // The refusal beside the Check button too, and no earlier "✓ Matches" left on the figures: the
      // figures stay (dimmed), without the verdict of an input that is no longer the one given (issue 38).
      const asked = this.tensorInput.showVerdict({ status: 'bad', text: message,
        version: this.tensorInput.value.version });
      if (this.result?.check) {
        this.result = { ...this.result, check: null };
        this.redraw(this.palette);
      }
      if (asked) keepInView(this.tensorInput.message, null);
    }
    this.markStale();
  }

  /**
   * A tensor input's answer (section.verdict(result): {status, text, figure, label, version}) beside its Check
   * button, the box's caption (section.inputCaption), and, once per Check, the checked step's tensor
   * brought towards view without losing the verdict (issue 38: it was written ~1,500 px below the button).
   */
  answerTensorInput(result) {
    const verdict = this.section.verdict(result, { answers: this.answers });
    if (this.section.inputCaption) this.tensorInput.setCaption(this.section.inputCaption(this.values));
    const asked = this.tensorInput.showVerdict(verdict);
    if (!asked || !verdict.status) return;
    const figure = this.node.querySelector(`[data-figure="${verdict.figure}"]`);
    // From the Check button down (the verdict is under it), as far towards the step as that stays in view.
    keepInView(this.tensorInput.check.parentNode, figure);
    const box = figure?.getBoundingClientRect();
    if (box && (box.top > window.innerHeight - 40 || box.bottom < 40)) this.tensorInput.offerJump(verdict.label,
      figure, box.top > 0);
  }

  /** A setting the section depends on shows an error (its figures cannot follow it), or no longer does. */
  setInputRefused(refused) {
    this.inputRefused = refused;
    this.markStale();
  }

  markStale() {
    const stale = !!this.result && (this.failed || this.inputRefused);
    this.node.classList.toggle('stale', stale);
    this.staleNote.hidden = !stale;
  }

  redraw(palette) {
    if (!this.result) return;
    this.figures = withoutAnswers(this.section.figures(this.result, this.values, this.lab), this.answers);
    this.board.show(this.figures, { palette });
    this.coverHeld();
  }

  /**
   * Covers the figures held back for the prediction (drawn, but hidden under a note with a Show me
   * button): a figure's node is made anew by some kinds on each draw, so this runs after each.
   */
  coverHeld() {
    if (!this.held) return;
    for (const id of this.held) {
      const node = this.board.views.get(id)?.node;
      if (!node || node.querySelector(':scope > .held-cover')) continue;
      node.classList.add('held-back');
      const show = el('button', { type: 'button', className: 'held-show', textContent: 'Show me' });
      show.addEventListener('click', () => this.releaseHeld());
      // A span (phrasing content): a text figure is a <p>.
      node.append(el('span', { className: 'held-cover full-only' },
        el('span', { textContent: 'Held back: it answers the prediction below. Answer it first — or ' }), show));
    }
  }

  /** The prediction is answered (or the student chose to see): the held figures show, for good. */
  releaseHeld() {
    if (!this.held) return;
    for (const id of this.held) {
      const node = this.board.views.get(id)?.node;
      node?.classList.remove('held-back');
      node?.querySelector(':scope > .held-cover')?.remove();
    }
    this.held = null;
  }
}

/**
 * Scrolls the window so that `anchor` (the verdict, or the button pressed) is in view, then towards
 * `target` (the checked step's tensor, the section's figures, or null) as far as the anchor stays in view:
 * the student reads the verdict where they pressed, and sees the step's tensor too where both fit (its
 * first `most` CSS px: 12rem, of a tensor that on a phone may not fit).
 */
function keepInView(anchor, target, most = 16 * 12) {
  const margin = 8;
  const height = window.innerHeight;
  let a = anchor.getBoundingClientRect();
  if (a.top < margin || a.bottom > height - margin) {
    window.scrollBy(0, a.top < margin ? a.top - margin : a.bottom - height + margin);
    a = anchor.getBoundingClientRect();
  }
  if (!target) return;
  const t = target.getBoundingClientRect();
  const wanted = Math.min(t.height, most); // its title and first lines (most: how much of it to bring)
  if (t.top + wanted > height - margin) window.scrollBy(0,
    Math.max(0, Math.min(t.top + wanted - height + margin, a.top - margin)));
  else if (t.top < margin) window.scrollBy(0, -Math.max(0, Math.min(margin - t.top, height - margin - a.bottom)));
}
