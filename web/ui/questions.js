// A course notebook's questions where the figure that answers them is (issue 28): each section may
// carry `questions: [{number, text, answer}]`, the notebook's own numbering and wording. Each answer
// opens on purpose (a <details>); a class's link with answers=false shows the questions only.
import { el } from './el.js';

/** The questions block for a section, or null when it has none. */
export function questionsBlock(questions, { answers = true } = {}) {
  if (!questions?.length) return null;
  return el('div', { className: 'questions' },
    el('h3', { textContent: questions.length > 1 ? 'Questions from the notebook' : 'A question from the notebook' }),
    ...questions.map((q) => el('div', { className: 'question', id: `question-${q.number.replace(/\W/g, '-')}` },
      el('p', {}, el('strong', { textContent: `${q.number} ` }), q.text),
      ...(answers ? [el('details', { className: 'answer' }, el('summary', { textContent: 'Show an answer' }), el('p', { textContent: q.answer }))] : []))));
}
