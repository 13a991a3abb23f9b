// "Type your own input": labelled text fields (declared by the lab), a message slot for bad input,
// and a debounce, so the prediction follows the typing without a request per keystroke.

export class SampleInput {
  /** onSubmit(fields) with {name: text}; called on Enter, on the button, and after typing pauses. */
  constructor(container, { onSubmit }) {
    this.onSubmit = onSubmit;
    this.form = document.createElement('form');
    this.form.className = 'sample-input';
    this.form.noValidate = true;
    this.fieldsBox = document.createElement('div');
    this.fieldsBox.className = 'sample-fields';
    const button = Object.assign(document.createElement('button'),
      { type: 'submit', textContent: 'Predict', id: 'inspect-submit' });
    this.message = Object.assign(document.createElement('p'), { className: 'inline-message', id: 'inspect-message' });
    this.message.setAttribute('role', 'alert');
    this.form.append(this.fieldsBox, button, this.message);
    container.append(this.form);
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    this.inputs = new Map();
  }

  /** fields: [{name, label, placeholder, help}] — rebuilt when the task changes, typed text is kept. */
  setFields(fields) {
    const key = fields.map((f) => `${f.name}|${f.help}`).join(';');
    if (key === this.key) return;
    this.key = key;
    const old = new Map([...this.inputs].map(([n, i]) => [n, i.value]));
    this.fieldsBox.replaceChildren();
    this.inputs = new Map();
    for (const f of fields) {
      const id = `inspect-${f.name}`;
      const label = Object.assign(document.createElement('label'), { htmlFor: id, textContent: f.label });
      const input = Object.assign(document.createElement('input'),
        { type: 'text', id, name: f.name, placeholder: f.placeholder, title: f.help, autocomplete: 'off' });
      input.spellcheck = false;
      input.value = old.get(f.name) ?? '';
      const help = Object.assign(document.createElement('small'), { id: `${id}-help`, textContent: f.help });
      input.setAttribute('aria-describedby', `${id}-help inspect-message`);
      input.addEventListener('input', () => {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.submit(), 400);
      });
      const box = document.createElement('div');
      box.className = 'sample-field';
      box.append(label, input, help);
      this.fieldsBox.append(box);
      this.inputs.set(f.name, input);
    }
  }

  values() {
    return Object.fromEntries([...this.inputs].map(([n, i]) => [n, i.value]));
  }

  hasText() {
    return [...this.inputs.values()].some((i) => i.value.trim());
  }

  submit() {
    clearTimeout(this.timer);
    this.onSubmit(this.values());
  }

  showError(text) {
    this.message.textContent = text ?? '';
    this.message.classList.toggle('error', !!text);
  }
}
