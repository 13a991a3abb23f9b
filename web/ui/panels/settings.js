// The settings sidebar (the full page only): the lab's title and intro, its presets, the controls of
// its properties (those of the transport and of the sections sit there), the bar that says a change
// rebuilds the model (Apply & reset, or keep the current model), and what a training step costs.
import { ControlsPanel } from '../controls.js';
import { isRelevant, resettingChanges } from '../../shared/properties.js';
import { el } from '../el.js';
import { TRANSPORT_PROPERTIES } from './transport.js';

// Steps a run must have taken before its rate stands for the model's (the first steps warm the JIT).
const MEASURED_AFTER_STEPS = 20;

/**
 * A model's cost per training step (the lab's count of its operations) and, once this computer has
 * trained a model of this lab, its pace: the rate measured on this model, or for other settings that
 * rate scaled by the ratio of their operations. No pace before a measurement: a guess from the CPU's
 * peak rate was 5 to 9 times off (issue 29: "roughly 49-89 steps/s" for a run that did 400-450).
 * measured: {stepsPerSecond, flops} of the last run that trained enough steps, or null. Memory is
 * checked by the trainer itself (refused over 512 MB).
 */
function costEstimate(lab, values, measured) {
  const flops = lab.trainer?.flopsPerStep?.(values);
  if (!flops) return '';
  const work = flops >= 1e9 ? `${(flops / 1e9).toFixed(1)} GFLOP` : `${Math.max(0.1, flops / 1e6).toFixed(1)} MFLOP`;
  if (!measured) return `About ${work} per training step; its pace on this computer shows once a few steps have run.`;
  const rate = (measured.stepsPerSecond * measured.flops) / flops;
  const pace = rate >= 10 ? `${Math.round(rate)} steps/s` : rate >= 1 ? `${rate.toFixed(1)} steps/s` : `${(1 / rate).toFixed(1)} s per step`;
  if (flops === measured.flops) return `About ${work} per training step: ${pace} at most on this computer (measured).`;
  return `About ${work} per training step: roughly ${pace} at most on this computer (scaled from the current `
    + `model's measured pace).`;
}

/**
 * What a click on a preset does, true of every preset the lab has (One query's "Solve it by hand" loads a
 * model, it does not train).
 */
function presetsText(presets) {
  const loading = presets.filter((p) => p.weights).map((p) => `“${p.label}”`);
  if (!loading.length) return 'One click sets up, resets and trains a classic experiment.';
  return `One click sets up, resets and trains a classic experiment; ${loading.join(', ')} loads a finished model `
    + 'instead, to train on or not.';
}

export function settingsPanel(page) {
  const { lab } = page;
  let measured = null; // {stepsPerSecond, flops}: the pace of the last model that trained enough steps
  const introText = el('p', { id: 'intro' });
  const intro = el('section', { className: 'panel intro full-only', ariaLabel: 'About this lab' },
    el('h2', { textContent: `About this lab: ${lab.title}` }), introText);

  const presetText = el('p', { id: 'preset-text', className: 'preset-text' });
  presetText.setAttribute('role', 'status');
  const presetButtons = el('div', { className: 'preset-buttons' });
  for (const preset of lab.presets) {
    const button = el('button', { type: 'button', textContent: preset.label, title: preset.text });
    button.dataset.preset = preset.id;
    button.addEventListener('click', () => {
      presetText.textContent = `${preset.label}: ${preset.text}`;
      page.applyPreset(preset);
    });
    presetButtons.append(button);
  }
  const presets = lab.presets.length ? el('section', { className: 'panel presets full-only' },
    el('h2', { textContent: 'Presets' }), el('p', { className: 'muted', textContent: presetsText(lab.presets) }),
    presetButtons, presetText) : '';

  const controlsBox = el('section', { className: 'panel settings full-only' }, el('h2', { textContent: 'Settings' }));
  // A section's own properties sit in the section.
  const sidebarProps = lab.properties.filter((p) => !TRANSPORT_PROPERTIES.includes(p.name) && !p.section);
  // The setting the student last touched: the Apply & reset bar goes right under it, where the eye is
  // (issue 45: at the foot of a long settings box it landed below the fold).
  let touched = null;
  const controls = new ControlsPanel(controlsBox, sidebarProps, {
    onInput: (name, parsed) => { touched = name; page.fieldInput(name, parsed, false); },
    onCommit: (name, parsed) => { touched = name; page.fieldInput(name, parsed, true); },
  });
  const pendingText = el('p', { id: 'pending-text' });
  const applyButton = el('button',
    { type: 'button', id: 'apply-reset', className: 'primary', textContent: 'Apply & reset' });
  applyButton.title = 'Rebuild the model with these settings and start from step 0';
  const undoButton = el('button', { type: 'button', id: 'undo-changes', textContent: 'Keep the current model' });
  const pending = el('div', { className: 'pending', id: 'pending', hidden: true }, pendingText,
    applyButton, undoButton);
  pending.setAttribute('role', 'status');
  // What the settings cost, before the model is built (refresh).
  const costText = el('p', { id: 'cost-estimate', className: 'muted cost-estimate' });
  costText.setAttribute('role', 'status');
  controlsBox.append(pending, costText);
  /** Under the row of `name` when it is shown (in its group), else at the box's foot above the cost. */
  const placePending = (name) => {
    const row = name ? controls.fields.get(name)?.row : null;
    if (row && !row.hidden && row.isConnected) {
      if (row.nextSibling !== pending) row.after(pending);
    } else if (pending.nextSibling !== costText) costText.before(pending);
  };
  applyButton.addEventListener('click', () => page.configure(page.draft));
  undoButton.addEventListener('click', () => page.revertDraft());

  return {
    // The sidebar: the page adds the weights panel at its foot.
    node: el('div', { className: 'sidebar full-only' }, controlsBox, presets),
    // The lab's intro heads the lesson under the stage (lab_page.js places it).
    intro,
    controls,
    handles(m) {
      // A run that stops (or a step) brings its measured pace: the estimate follows it.
      if (m.type !== 'state' && m.type !== 'progress') return false;
      const run = page.run;
      const flops = lab.trainer?.flopsPerStep?.(page.applied);
      if (!run || run.running || !flops || run.step < MEASURED_AFTER_STEPS || !run.stepsPerSecond) return false;
      measured = { stepsPerSecond: run.stepsPerSecond, flops };
      return false; // others take it too; refreshControls follows a stop
    },
    render() {},
    /** errors: {name: message} of the draft (the page marks them on every control). */
    refresh(errors) {
      const { draft, applied, run } = page;
      controls.setRelevance((p) => isRelevant(p, draft));
      // The intro describes the model on screen, not settings that are not applied yet.
      introText.textContent = lab.intro(run ? applied : draft);
      const changes = run ? resettingChanges(lab.properties, applied, draft) : [];
      controls.markPending(changes);
      const valid = Object.keys(errors).length === 0;
      // These very settings were refused by the trainer (together too large): why, beside the button.
      const refused = page.refused?.draft === JSON.stringify(draft) ? page.refused.message : null;
      pending.hidden = !changes.length;
      placePending(changes.includes(touched) ? touched : changes.at(-1));
      pendingText.classList.toggle('error', !!refused);
      if (changes.length) {
        const labels = changes.map((n) => lab.properties.find((p) => p.name === n).label);
        pendingText.textContent = refused
          ? `Not applied: ${refused}. The current model is kept; change a setting to try again.`
          : valid
            ? `Changing ${labels.join(', ')} rebuilds the model: training restarts from step 0.`
            : `Changing ${labels.join(', ')} rebuilds the model — fix the settings marked in red first.`;
      }
      applyButton.disabled = !valid || !!refused;
      costText.textContent = valid ? costEstimate(lab, draft, measured) : '';
    },
  };
}
