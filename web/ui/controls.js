// Form controls for a list of properties (see properties.js): one labelled field each, a help icon
// with the property's help text, and a message slot beside it. It reports parsed values and parse
// errors; deciding what a change does belongs to the lab page.

import { parseProperty } from '../shared/properties.js';

// Characters of a menu's longest choice beyond which the menu takes its own line in the settings.
const WIDE_CHOICE = 18;

/** Properties shown under the "Advanced" fold, wherever they are. */
const ADVANCED = ['backend'];

export class ControlsPanel {
  /**
   * container: element to fill; properties: the table's rows to show; onInput(name, {value}|{error})
   * while typing; onCommit(name, {value}|{error}) when a field is committed (change event);
   * grouped: a fieldset per property group.
   */
  constructor(container, properties, { onInput = () => {}, onCommit = () => {}, grouped = true } = {}) {
    this.properties = properties;
    this.fields = new Map();
    this.hiddenNames = new Set();
    // Field ids are prop-<name>: property names are unique in a lab, across all its panels.
    this.prefix = 'prop';
    const groups = new Map();
    // The backend (where the kernel runs) is for the curious, not the first minute: it sits in a fold.
    const advanced = properties.filter((p) => ADVANCED.includes(p.name));
    for (const prop of properties.filter((p) => !advanced.includes(p))) {
      const group = grouped ? prop.group ?? '' : '';
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(prop);
    }
    for (const [group, props] of groups) {
      const box = group ? document.createElement('fieldset') : document.createElement('div');
      box.className = 'control-group';
      if (group) box.append(Object.assign(document.createElement('legend'), { textContent: group }));
      for (const prop of props) box.append(this.createRow(prop, onInput, onCommit));
      container.append(box);
    }
    if (advanced.length) {
      const fold = Object.assign(document.createElement('details'), { className: 'control-group advanced' });
      fold.append(Object.assign(document.createElement('summary'), { textContent: 'Advanced' }));
      for (const prop of advanced) fold.append(this.createRow(prop, onInput, onCommit));
      container.append(fold);
    }
  }

  createRow(prop, onInput, onCommit) {
    const id = `${this.prefix}-${prop.name}`;
    const row = document.createElement('div');
    row.className = `control control-${prop.type}`;
    row.dataset.property = prop.name;
    const label = Object.assign(document.createElement('label'), { htmlFor: id, textContent: prop.label });
    let input;
    if (prop.type === 'choice') {
      input = document.createElement('select');
      // A menu whose longest choice would not fit beside its label in the settings' column ("auto (best
      // available)", "smallest to largest (seaborn)") goes under the label, the column's full width.
      if (Math.max(...prop.choices.map((c) => String(c.label).length)) > WIDE_CHOICE) row.classList.add('control-wide');
      for (const choice of prop.choices) {
        input.append(Object.assign(document.createElement('option'),
          { value: String(choice.value), textContent: choice.label }));
      }
    } else if (prop.type === 'bool') {
      input = Object.assign(document.createElement('input'), { type: 'checkbox' });
    } else if (prop.stepper) {
      input = Object.assign(document.createElement('input'), { type: 'text', inputMode: 'numeric', size: 4 });
      input.autocomplete = 'off';
      input.setAttribute('role', 'spinbutton');
    } else if (prop.slider) {
      input = Object.assign(document.createElement('input'),
        { type: 'range', min: prop.min, max: prop.max, step: prop.step ?? 1 });
    } else if (prop.type === 'text') {
      // No HTML maxlength: the browser would cut a long paste silently; the property's check refuses it
      // beside the field, saying how long it is and what the lab reads.
      input = Object.assign(document.createElement('input'), { type: 'text', size: 40 });
      input.spellcheck = false;
    } else {
      // type=text with inputmode: a number field would hide what the user typed ("abc") from us.
      input = Object.assign(document.createElement('input'),
        { type: 'text', inputMode: prop.type === 'int' ? 'numeric' : prop.type === 'heads' ? 'text' : 'decimal' });
      if (prop.type === 'heads') input.size = 16; // a list of heads: 0.1,2.3,…
      input.autocomplete = 'off';
      input.spellcheck = false;
    }
    input.id = id;
    input.name = prop.name;
    // The help opens on click, tap and keyboard (a button, not a title tooltip that cannot be focused or
    // touched); the text stays the field's description for screen readers whether open or not.
    // pageHelp: what only the page has (a thumbnail to click), after the help the CLI prints too.
    const hint = Object.assign(document.createElement('span'),
      { className: 'visually-hidden', id: `${id}-help`, textContent: prop.pageHelp ? `${prop.help} ${prop.pageHelp}` : prop.help });
    const help = Object.assign(document.createElement('button'),
      { type: 'button', className: 'help-icon', textContent: '?' });
    help.setAttribute('aria-label', `Help: ${prop.label}`);
    help.setAttribute('aria-expanded', 'false');
    help.setAttribute('aria-controls', `${id}-help`);
    help.addEventListener('click', () => {
      const open = help.getAttribute('aria-expanded') !== 'true';
      help.setAttribute('aria-expanded', String(open));
      hint.className = open ? 'help-text' : 'visually-hidden';
    });
    const message = Object.assign(document.createElement('span'), { className: 'field-error', id: `${id}-error` });
    message.setAttribute('aria-live', 'polite');
    input.setAttribute('aria-describedby', `${id}-help ${id}-error`);
    const read = () => parseProperty(prop, prop.type === 'bool' ? String(input.checked) : input.value);
    // A stepper: − and + beside the field (and the arrow keys in it) change the value by one and apply
    // it at once, within the range and the limit the open model sets (setLimits).
    const stepper = prop.stepper ? this.createStepper(prop, input, (delta) => {
      const parsed = read();
      const from = 'value' in parsed ? parsed.value : prop.default;
      const field = this.fields.get(prop.name);
      const next = Math.max(prop.min, Math.min(field.limit ?? prop.max, from + delta));
      input.value = String(next);
      this.showStepperLimits(field);
      onCommit(prop.name, read());
    }) : null;
    // A slider commits as it moves (its value is always valid) and shows its value beside it.
    const shown = prop.slider ? Object.assign(document.createElement('output'), { className: 'slider-value' }) : null;
    if (shown) shown.htmlFor = id;
    input.addEventListener('input', () => {
      if (shown) shown.textContent = input.value;
      if (stepper) this.showStepperLimits(this.fields.get(prop.name));
      (prop.slider ? onCommit : onInput)(prop.name, read());
    });
    input.addEventListener('change', () => onCommit(prop.name, read()));
    // The field before its "?" in the Tab order: the value first, its help on the way.
    if (prop.type === 'bool') row.append(input, label, help, hint, message);
    else row.append(label, stepper?.box ?? input, help, ...(shown ? [shown] : []), hint, message);
    // Why the field does not apply to the open model (setUnavailable), said beside it.
    const unavailable = Object.assign(document.createElement('span'), { className: 'field-note', id: `${id}-note` });
    unavailable.hidden = true;
    row.append(unavailable);
    this.fields.set(prop.name, { row, input, message, prop, shown, stepper, limit: undefined, unavailable });
    return row;
  }

  /**
   * Fields the open model cannot take (reasons: {name: why, or '' where it can}; a property's
   * unavailable(summary)): disabled, the reason in the empty field itself (and its title), or under it when
   * it holds a value (a link's), so that a phone's first screen keeps its figure (the Writing lab's Chat
   * box without a chat template). A screen reader hears the reason with the field either way.
   */
  setUnavailable(reasons) {
    for (const [name, why] of Object.entries(reasons)) {
      const field = this.fields.get(name);
      if (!field) continue;
      field.input.disabled = !!why;
      field.input.placeholder = why;
      field.input.title = why;
      field.unavailable.textContent = why;
      field.unavailable.hidden = !why || field.input.value === '';
      field.row.classList.toggle('unavailable', !!why);
      field.input.setAttribute('aria-describedby', `${field.input.id}-help ${field.input.id}-error${why ? ` ${field.input.id}-note` : ''}`);
    }
  }

  /** The − and + around a stepper's field -> {box, less, more}; step(±1) applies a step. */
  createStepper(prop, input, step) {
    const button = (text, delta, what) => {
      const b = Object.assign(document.createElement('button'),
        { type: 'button', className: 'step-button', textContent: text });
      b.setAttribute('aria-label', `${prop.label}: ${what}`);
      b.tabIndex = -1; // the field's arrow keys do the same from the keyboard: one Tab stop per setting
      b.addEventListener('click', () => step(delta));
      return b;
    };
    const less = button('−', -1, 'one less'), more = button('+', 1, 'one more');
    input.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      e.preventDefault();
      step(e.key === 'ArrowUp' ? 1 : -1);
    });
    const box = Object.assign(document.createElement('span'), { className: 'stepper' });
    box.append(less, input, more);
    return { box, less, more };
  }

  /** A stepper's buttons stop at the ends of its range; a spin button says its value and range. */
  showStepperLimits(field) {
    const { stepper, input, prop, limit } = field;
    if (!stepper) return;
    const value = Number(input.value), max = limit ?? prop.max;
    stepper.less.disabled = !(value > prop.min);
    stepper.more.disabled = !(value < max);
    input.setAttribute('aria-valuemin', String(prop.min));
    input.setAttribute('aria-valuemax', String(max));
    if (Number.isFinite(value)) input.setAttribute('aria-valuenow', String(value));
  }

  /** The largest value a stepper offers now (limits: {name: max}, e.g. the open model's last layer). */
  setLimits(limits) {
    for (const [name, max] of Object.entries(limits)) {
      const field = this.fields.get(name);
      if (!field || !Number.isFinite(max)) continue;
      field.limit = Math.max(field.prop.min, Math.min(field.prop.max, max));
      this.showStepperLimits(field);
    }
  }

  /** Writes values into the fields (without events). */
  setValues(values) {
    for (const [name, { input, prop, shown }] of this.fields) {
      if (!(name in values)) continue;
      if (prop.type === 'bool') input.checked = !!values[name];
      else input.value = String(values[name]);
      if (shown) shown.textContent = String(values[name]);
      this.showStepperLimits(this.fields.get(name));
    }
  }

  /** errors: {name: message}; fields not named are cleared. */
  setErrors(errors) {
    for (const [name, { input, message, row }] of this.fields) {
      const text = errors[name] ?? '';
      message.textContent = text;
      row.classList.toggle('invalid', !!text);
      if (text) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
  }

  /** Hides these fields for good (classroom mode: the link's hide=). */
  setHidden(names) {
    this.hiddenNames = new Set(names);
    for (const { row, prop } of this.fields.values()) if (this.hiddenNames.has(prop.name)) row.hidden = true;
  }

  /** Hides the fields that do not apply (relevant(prop) false), and the ones hidden for good. */
  setRelevance(relevant) {
    for (const { row, prop } of this.fields.values()) row.hidden = !relevant(prop) || this.hiddenNames.has(prop.name);
    for (const group of new Set([...this.fields.values()].map((f) => f.row.parentElement))) {
      group.hidden = [...group.querySelectorAll('.control')].every((r) => r.hidden);
    }
  }

  /** Marks fields whose value differs from the model's (a pending reset). */
  markPending(names) {
    for (const [name, { row }] of this.fields) row.classList.toggle('pending', names.includes(name));
  }
}
