// Questions that take an answer (issue 28; issue 39, item 3). A section may carry the course notebook's
// questions, `questions: [{number, text, ask, answer}]` (the notebook's numbering and wording), and every
// lab asks one "predict, then run" question before its main action (`lab.predict(values)`): a training
// lab's under Play (panels/transport.js), or under a section's figures (`lab.predictIn: 'section:<id>'`,
// above them with `lab.predictAboveFigures`; section_panel.js). `ask` takes a choice, a number or a shape
// (answer_check.js judges it); the student's answer is judged right or wrong with its reason beside the
// Check button, in a live region, and only then does the explanation (`answer`) open. Page settings:
// answers=false shows the questions alone, with nothing to check, for a class working them out;
// questions=false shows none.
import { el } from './el.js';
import { judgeAnswer } from './answer_check.js';

/**
 * The questions block for a section, or null when it has none (or the link turned questions off).
 * `questions`: a list, or a function of the section's values -> a list, for a question whose answer
 * follows a setting (the Lookup's 3.1 and 3.2 follow the database size). follow(values) shows the list
 * for those values, anew only when it changed: a student's answer stays otherwise. A study tool, never
 * a slide's figure: controls=min hides it (full-only).
 */
export function questionsBlock(questions, { answers = true, shown = true } = {}) {
  if (!shown || !questions || (Array.isArray(questions) && !questions.length)) return null;
  const node = el('div', { className: 'questions full-only' });
  let shownKey = null;
  const block = {
    node,
    follow(values) {
      const list = typeof questions === 'function' ? questions(values) : questions;
      const key = JSON.stringify(list);
      if (key === shownKey) return;
      shownKey = key;
      node.replaceChildren(el('h3',
        { textContent: list.length > 1 ? 'Questions from the notebook' : 'A question from the notebook' }),
        ...list.map((q) => questionNode(q, { answers })));
      node.hidden = !list.length;
    },
  };
  // A list is shown at once; a function waits for the section's first values.
  if (Array.isArray(questions)) block.follow(null);
  else node.hidden = true;
  return block;
}

/** A question's element id: question-6-2 for the notebook's 6.2. */
const questionId = (number) => `question-${String(number).replace(/\W/g, '-')}`;

/**
 * One question: its number and text, then (answers on) the control that takes the answer, the Check
 * button, the verdict beside them, and the explanation, hidden until the first answer is judged.
 */
function questionNode(q, { answers = true, heading = null, onJudged = () => {} } = {}) {
  const id = questionId(q.number);
  const textId = `${id}-text`;
  const node = el('div', { className: 'question', id },
    el('p', { id: textId }, ...(heading ? [el('strong', { textContent: `${heading} ` })] : [el('strong',
      { textContent: `${q.number} ` })]), q.text));
  if (!answers || !q.ask) return node;
  const explanation = el('details', { className: 'answer', hidden: true },
    el('summary', { textContent: 'Why: the explanation' }), el('p', { textContent: q.answer }));
  const feedback = el('p', { className: 'question-feedback', id: `${id}-feedback` });
  feedback.setAttribute('role', 'status'); // a live region: the verdict is read out where it appears
  feedback.setAttribute('aria-live', 'polite');
  const check = el('button', { type: 'submit', className: 'question-check', textContent: 'Check' });
  // A heading's question (the prediction, under Play or a section's figures) is its own prompt: the
  // choices' legend is for screen readers only.
  const { control, given } = answerControl(q.ask, id, textId, { quietLegend: !!heading });
  const form = el('form', { className: `question-ask ${q.ask.kind}` }, control,
    el('div', { className: 'question-verdict' }, check, feedback));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const verdict = judgeAnswer(q.ask, given());
    feedback.textContent = verdict.text;
    node.dataset.state = verdict.status;
    feedback.dataset.status = verdict.status;
    // Judged (right or wrong): the explanation opens under the verdict. Text that could not be read
    // is not an answer yet: it opens nothing. A prediction's stays folded under its title: the run it
    // asks for is watched in the figure below, which the open text would push off the screen.
    if (verdict.status !== 'unread' && explanation.hidden) {
      explanation.hidden = false;
      explanation.open = !heading;
    }
    if (verdict.status !== 'unread') onJudged(verdict);
    // The verdict where the student pressed Check: in view, without moving the page when it is.
    feedback.scrollIntoView?.({ block: 'nearest' });
  });
  node.dataset.state = 'unanswered';
  node.append(form, explanation);
  return node;
}

/** The control for an ask: radio buttons in a fieldset, or a labelled text field. -> {control, given() -> answer} */
function answerControl(ask, id, textId, { quietLegend = false } = {}) {
  if (ask.kind === 'choice') {
    const name = `${id}-choice`;
    const inputs = ask.choices.map((c, i) => el('input',
      { type: 'radio', name, value: String(i), id: `${name}-${i}` }));
    const fieldset = el('fieldset', { className: 'question-choices' },
      el('legend', { textContent: ask.prompt, className: quietLegend ? 'visually-hidden' : '' }),
      ...ask.choices.map((c, i) => el('label', { htmlFor: `${name}-${i}` }, inputs[i], ` ${c.label}`)));
    fieldset.setAttribute('aria-describedby', textId);
    return { control: fieldset,
      given: () => { const i = inputs.findIndex((input) => input.checked); return i < 0 ? undefined : i; } };
  }
  const input = el('input',
    { type: 'text', id: `${id}-input`, className: 'question-input', autocomplete: 'off', spellcheck: false });
  input.setAttribute('aria-describedby', textId);
  if (ask.kind === 'number') input.inputMode = 'decimal';
  input.placeholder = ask.kind === 'shape' ? 'e.g. (4, 10, 5)' : 'e.g. 0.25';
  const label = el('label', { htmlFor: input.id, textContent: ask.prompt });
  return { control: el('div', { className: 'question-field' }, label, input), given: () => input.value };
}

/**
 * The "predict, then run" question a lab asks before its main action (lab.predict(values) -> a
 * question or null): a block that replaces its question when the settings change the prediction (the
 * Alignment lab's task), and keeps it (and the student's answer) otherwise. On the full page only:
 * controls=min (a slide) hides it. onJudged(verdict): the student answered (right or wrong), so what
 * the figures held back for it may show (section_panel.js).
 */
export function predictionBlock(lab, { answers = true, onJudged = () => {} } = {}) {
  const node = el('div', { className: 'prediction full-only' });
  let shownNumber = null;
  return {
    node,
    /** Shows the prediction for these values (a new one only when it changed). */
    follow(values) {
      const q = lab.predict?.(values) ?? null;
      if ((q?.number ?? null) === shownNumber) return;
      shownNumber = q?.number ?? null;
      node.replaceChildren(...(q ? [questionNode(q, { answers, heading: 'Predict, then run:', onJudged })] : []));
      node.hidden = !q;
    },
  };
}
