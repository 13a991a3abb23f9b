// A lab's "Check your build" section for one build of registry.js (issue 39): the fixed input and the
// module's weights as Python lines to copy, each step's tensor printed as PyTorch prints it with its
// shape, and the student's paste or torch.save file for the chosen step judged by judge.js, the checker
// `attnlab check` uses. The verdict is written beside the Check button (section_panel.js asks
// `verdict(result)`), and on the step's own tensor.
import { judgeStep, readTheirs, shapeText } from './judge.js';
import { buildByName, inputPython, modelPython, stateDictData } from './registry.js';
import { forStudent, studentIdProblem } from './student_input.js';

/**
 * build: a declaration of registry.js. options:
 *   id, property     the section's id and the lab's choice property that picks the step
 *   title, text      the section's heading and prose
 *   params(ctx)      the weights to compare with (default: the build's state_dict); the One query lab
 *                    gives its trainer's, so a student's imported model.pt is what is compared
 *   modelLine(r)     a line under the steps saying where the numbers come from
 *   hint             the sentence a wrong number ends with (default: the build's)
 *   studentField     whether the section holds the Student ID field (a lab with two builds shows it once;
 *                    both read it: with an ID, the input and weights are that student's, student_input.js)
 *   buildOf({params, values})  where one section checks one of several builds with the same steps (One
 *                    query's Embedding or one-hot Linear): the build of these weights (params, when the
 *                    section has them) or of these settings (values); default: `build` alone. A build
 *                    whose model has sizes (One query's embed_dim, att_dim) carries them (build.sizes), and
 *                    build.withSizes(sizes) gives it again on the page, where the figures are drawn
 *   the rest (needsModel, refreshWhileTraining, questions) is the section's own.
 */
export function buildCheckSection(build,
  { id = 'build', property = 'checkStep', title, text, params = null, modelLine = null, hint = build.hint,
    studentField = true, buildOf = () => build, ...rest }) {
  const stepOf = (name, b = build) => b.steps.find((s) => s.name === name) ?? b.steps[0];
  const label = (step, i) => step.label ?? `${i + 1}. ${step.name}`;
  // The build as the values give it: the student's own input and weights where the link names one.
  const buildFor = (student, base = build) => (student ? forStudent(base, student) : base);
  return {
    id, title, text,
    // A study tool (a paste box and the notebook's steps), never a slide's figure: controls=min hides it.
    fullOnly: true,
    properties: studentField ? [property, 'student'] : [property],
    input: 'tensor',
    inputLabel: 'Your tensor for the step chosen above',
    dependsOn: [property, 'student'],
    ...rest,
    /** The choice property's choices: one per step. */
    stepChoices: build.steps.map((s, i) => ({ value: s.name, label: label(s, i) })),
    compute(ctx, values, input) {
      const weights = params ? params(ctx) : null;
      const base = buildOf({ params: weights, values });
      const b = buildFor(values.student, base);
      const tensors = b.compute(b.input, weights ?? stateDictData(b));
      const step = stepOf(values[property], base);
      let check = null;
      if (input && (input.text?.trim() || input.bytes)) {
        const { tensors: theirs, printed } = readTheirs((bytes, name) => ctx.module.readTorchTensor(bytes, name), input);
        const v = judgeStep(step, theirs, tensors[step.name], { printed, hint });
        check = { ok: v.ok, text: v.message, withheld: v.withheld ?? v.message };
      }
      return { tensors, step: ctx.session?.step ?? null, check, checkStep: step.name, inputVersion: input?.version,
        student: values.student || null, build: base.name, sizes: base.sizes ?? null };
    },
    /**
     * The verdict beside the Check button: {status ('' when nothing was given), text, figure (the step's
     * tensor's id), label, version (of the input)}; answers false (a page with answers=0): without the
     * lab's number at the first difference.
     */
    verdict(r, { answers = true } = {}) {
      if (!r.check) return { status: '', text: '', version: r.inputVersion };
      const step = stepOf(r.checkStep);
      return { status: r.check.ok ? 'ok' : 'bad', text: answers ? r.check.text : r.check.withheld,
        figure: `${id}-${step.name}`,
        label: label(step, build.steps.indexOf(step)), version: r.inputVersion };
    },
    /** The paste box's caption, from the values (it follows the step chosen even while the last paste is refused). */
    inputCaption(values) {
      const base = buildOf({ values });
      const i = base.steps.indexOf(stepOf(values[property], base));
      const step = base.steps[i];
      return `Paste or open yours below: ${label(step, i)}, ${step.code}, shape `
        + `${shapeText(step.shape)}${step.note ? ` (${step.note})` : ''}.`;
    },
    figures(r) {
      // By its name (and its sizes, where the model's differ from the build's): the result was computed in
      // the worker, the figures are drawn on the page.
      let base = buildByName(r.build) ?? build;
      if (r.sizes && base.withSizes) base = base.withSizes(r.sizes);
      const b = buildFor(r.student, base);
      const figures = [{ kind: 'code', id: `${id}-input`, title: r.student ? `Your own input (student ${r.student}), to `
        + 'paste in your notebook: your grader checks your steps on it' : 'The fixed input, to paste in your notebook',
        lines: inputPython(b) }];
      const model = modelPython(b);
      const what = build.stateDict ? 'The module\'s weights and the call' : 'The call';
      if (model.length && !params) figures.push({ kind: 'code', id: `${id}-model`,
        title: `${what} (define ${build.module} first)`, lines: model });
      for (const note of base.notes) figures.push({ kind: 'text',
        id: `${id}-note-${base.notes.indexOf(note)}`, text: note });
      base.steps.forEach((step, i) => {
        const checked = step.name === r.checkStep && r.check;
        const shown = step.shown ?? step.shape;
        const extra = step.extra ? { label: step.extra.label, shape: step.extra.shape,
          values: r.tensors[step.extra.key], integer: step.extra.integer } : null;
        // answer: the lab's own numbers, which a page with answers=0 leaves out (section_panel.js).
        figures.push({ kind: 'tensor', id: `${id}-${step.name}`, title: `${label(step, i)}: ${step.code}`, shape: shown,
          values: r.tensors[step.name], integer: !!step.integer, extra, answer: true,
          status: checked ? (r.check.ok ? 'ok' : 'bad') : '', note: checked ? r.check.text : '',
          withheldNote: checked ? r.check.withheld : '' });
      });
      // The build's pipeline, where it draws one (notebook 05's AttentionModel), under its steps (above them
      // it pushed the checked step's tensor out of the screen that holds the Check button): the step being
      // checked outlined, a checked one marked.
      if (base.pipeline) figures.push({ kind: 'pipeline', id: `${id}-pipeline`, ...base.pipeline(), current: r.checkStep,
        status: r.check ? { [r.checkStep]: r.check.ok ? 'ok' : 'bad' } : {} });
      // A note about the last steps (notesAfter) follows them, so it does not push the steps away from the paste box.
      for (const note of base.notesAfter ?? []) figures.push({ kind: 'text',
        id: `${id}-note-after-${base.notesAfter.indexOf(note)}`, text: note });
      if (modelLine) figures.push({ kind: 'text', id: `${id}-source`, text: modelLine(r) });
      return figures;
    },
  };
}

/**
 * The Student ID a course's link gives each student (student=ID): the Check your build sections then show that
 * student's own input and weights, which `attnlab check --student ID` judges against; empty, the fixed input
 * everyone practises on. section: the one that holds the field (its lab's first build section).
 */
export const studentProperty = ({ section = 'build' } = {}) => ({
  name: 'student', type: 'text', default: '', maxLength: 64, check: studentIdProblem, label: 'Student ID',
  page: true, effect: 'view', group: 'Explore', section,
  help: 'Your ID from the course\'s link (an email or a roster ID): the input and weights below become yours alone, '
    + 'and the grader\'s attnlab check --student judges your steps against them. Empty: the fixed input everyone '
    + 'practises on.',
});

/** The lab's property that picks which step of `build` the student's tensor is (declared once, in the lab's table). */
export const buildStepProperty = (build, { name = 'checkStep', section = 'build', help }) => ({
  name, type: 'choice', default: build.steps[0].name, label: 'Step', page: true, effect: 'view', group: 'Explore',
  section, choices: build.steps.map((s, i) => ({ value: s.name, label: s.label ?? `${i + 1}. ${s.name}` })),
  help: help ?? `Which step of ${build.module} (notebook ${build.notebook.slice(0, 2)}) your pasted or opened tensor `
    + `is: it is compared with the lab's tensor of that step.`,
});
