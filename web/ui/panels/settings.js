// The settings sidebar (the full page only): the lab's title and intro, its presets, the controls of
// its properties (those of the transport and of the sections sit there), the bar that says a change
// rebuilds the model (Apply & reset, or keep the current model), and what a training step would cost.
import { ControlsPanel } from '../controls.js';
import { isRelevant, resettingChanges } from '../properties.js';
import { el } from '../el.js';
import { TRANSPORT_PROPERTIES } from './transport.js';

/**
 * A model's cost per training step, from the lab's count of its operations and this machine's
 * multiply-add rate (gflops, measured by the worker): a rough figure (the trainers reach 25-55% of
 * that rate), to see before building that a setting makes training slow. Memory is checked by the
 * trainer itself (refused over 512 MB).
 */
function costEstimate(lab, values, gflops) {
  const flops = lab.trainer?.flopsPerStep?.(values);
  if (!flops) return '';
  const work = flops >= 1e9 ? `${(flops / 1e9).toFixed(1)} GFLOP` : `${Math.max(0.1, flops / 1e6).toFixed(1)} MFLOP`;
  if (!gflops) return `About ${work} per training step.`;
  const stepsPerSecond = (0.35 * gflops * 1e9) / flops;
  const pace = stepsPerSecond >= 1 ? `roughly ${stepsPerSecond >= 10 ? Math.round(stepsPerSecond) : stepsPerSecond.toFixed(1)} steps/s`
    : `roughly ${(1 / stepsPerSecond).toFixed(1)} s per step: slow; lower the batch or the width`;
  return `About ${work} per training step: ${pace} on this machine's CPU (an estimate, within about 2x).`;
}

export function settingsPanel(page) {
  const { lab } = page;
  let gflops = 0;
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
  const presets = lab.presets.length ? el('section', { className: 'panel presets full-only' }, el('h2', { textContent: 'Presets' }),
    el('p', { className: 'muted', textContent: 'One click sets up, resets and trains a classic experiment.' }), presetButtons, presetText) : '';

  const controlsBox = el('section', { className: 'panel settings full-only' }, el('h2', { textContent: 'Settings' }));
  // A section's own properties sit in the section.
  const sidebarProps = lab.properties.filter((p) => !TRANSPORT_PROPERTIES.includes(p.name) && !p.section);
  const controls = new ControlsPanel(controlsBox, sidebarProps, {
    onInput: (name, parsed) => page.fieldInput(name, parsed, false),
    onCommit: (name, parsed) => page.fieldInput(name, parsed, true),
  });
  const pendingText = el('p', { id: 'pending-text' });
  const applyButton = el('button', { type: 'button', id: 'apply-reset', className: 'primary', textContent: 'Apply & reset' });
  applyButton.title = 'Rebuild the model with these settings and start from step 0';
  const undoButton = el('button', { type: 'button', id: 'undo-changes', textContent: 'Keep the current model' });
  const pending = el('div', { className: 'pending', id: 'pending', hidden: true }, pendingText, applyButton, undoButton);
  pending.setAttribute('role', 'status');
  // What the settings cost, before the model is built (refresh).
  const costText = el('p', { id: 'cost-estimate', className: 'muted cost-estimate' });
  costText.setAttribute('role', 'status');
  controlsBox.append(pending, costText);
  applyButton.addEventListener('click', () => page.configure(page.draft));
  undoButton.addEventListener('click', () => page.revertDraft());

  return {
    // The sidebar: the page adds the weights panel at its foot.
    node: el('div', { className: 'sidebar full-only' }, controlsBox, presets),
    // The lab's intro heads the lesson under the stage (lab_page.js places it).
    intro,
    controls,
    handles(m) {
      if (m.type !== 'machine') return false;
      gflops = m.gflops;
      page.refreshControls();
      return true;
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
      pending.hidden = !changes.length;
      if (changes.length) {
        const labels = changes.map((n) => lab.properties.find((p) => p.name === n).label);
        pendingText.textContent = valid
          ? `Changing ${labels.join(', ')} rebuilds the model: training restarts from step 0.`
          : `Changing ${labels.join(', ')} rebuilds the model — fix the settings marked in red first.`;
      }
      applyButton.disabled = !valid;
      costText.textContent = valid ? costEstimate(lab, draft, gflops) : '';
    },
  };
}
