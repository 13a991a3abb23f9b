// The transport panel ('transport'): play / pause, step, reset, the speed, and the progress bar.
import { ControlsPanel } from '../controls.js';
import { el } from '../el.js';

/** The properties set beside the buttons (not in the sidebar): they apply at once. */
export const TRANSPORT_PROPERTIES = ['speed'];

export function transportPanel(page) {
  const { lab } = page;
  const playButton = el('button', { type: 'button', id: 'play', className: 'primary', textContent: '▶ Play' });
  playButton.title = 'Train until the step count (space bar works while a button has focus)';
  const stepButton = el('button', { type: 'button', id: 'step', textContent: 'Step' });
  stepButton.title = 'Train one step, then pause';
  const resetButton = el('button', { type: 'button', id: 'reset', textContent: 'Reset' });
  resetButton.title = 'Start again from step 0 with the current settings';
  const speedBox = el('div', { className: 'speed full-only' });
  const controls = new ControlsPanel(speedBox, lab.properties.filter((p) => TRANSPORT_PROPERTIES.includes(p.name)), {
    grouped: false,
    onInput: (name, parsed) => page.fieldInput(name, parsed, true),
  });
  // A div bar, not <progress>: its fill moves by a composited transform, so a new step repaints
  // nothing (a <progress> value change repainted the page around it in Chromium, every frame).
  const progressFill = el('div', { className: 'progress-fill' });
  const progressBar = el('div', { id: 'progress-bar', className: 'progress-track full-only' }, progressFill);
  progressBar.setAttribute('role', 'progressbar');
  progressBar.setAttribute('aria-label', 'training progress');
  progressBar.setAttribute('aria-valuemin', '0');
  const progressText = el('span', { id: 'progress-text', textContent: 'loading the module…' });
  const node = el('section', { className: 'panel transport', ariaLabel: 'Training' },
    playButton, stepButton, resetButton, speedBox, progressBar, progressText);
  playButton.addEventListener('click', () => page.togglePlay());
  stepButton.addEventListener('click', () => page.client.send('step', { count: 1 }));
  resetButton.addEventListener('click', () => page.configure(page.validDraft() ? page.draft : page.applied));

  /** The buttons follow the run: disabled before the first model, Play or Pause as it trains. */
  function refresh() {
    const running = !!page.run?.running;
    const label = running ? '❚❚ Pause' : '▶ Play';
    if (playButton.textContent === label && playButton.disabled === !page.run) return;
    playButton.textContent = label;
    playButton.setAttribute('aria-pressed', String(running));
    playButton.disabled = !page.run;
    stepButton.disabled = !page.run;
    resetButton.disabled = !page.run;
  }

  return {
    node,
    controls,
    // The progress is drawn even while the panel is off screen: it is one bar and a line of text.
    parts: { progress: [] },
    alwaysDrawn: true,
    handles(m) {
      if (m.type !== 'progress' && m.type !== 'state') return false;
      page.schedule('progress');
      return true;
    },
    render() {
      const run = page.run;
      const max = Math.max(1, run.targetSteps), value = Math.min(run.step, run.targetSteps);
      progressBar.setAttribute('aria-valuemax', String(max));
      progressBar.setAttribute('aria-valuenow', String(value));
      progressFill.style.transform = `scaleX(${value / max})`;
      const rate = run.running && run.stepsPerSecond ? ` · ${Math.round(run.stepsPerSecond)} steps/s` : '';
      const state = run.running ? 'training' : run.step >= run.targetSteps ? 'done' : 'paused';
      progressText.textContent = `step ${run.step} of ${run.targetSteps} · ${state}${rate}`;
      progressText.dataset.step = String(run.step);
      progressText.dataset.state = state;
      refresh();
    },
    refresh,
  };
}
