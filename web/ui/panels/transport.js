// The transport panel ('transport'): play / pause, step, reset, the replay of a finished run, the speed,
// and the progress bar. Two rows of fixed size, the buttons and then the progress: nothing in it changes
// width while training (issue 29: the bar wrapped onto two lines as the status grew, and the page jumped).
// Under them, the lab's "predict, then run" question (lab.predict; issue 39), beside Play on the first
// screen (after it in the Tab order, which must reach Play in 6 presses); a lab may ask it under a
// section's figures instead (lab.predictIn: 'section:<id>'). On the full page only (not embedded on a
// slide, not with controls=min), and not with questions=false.
import { ControlsPanel } from '../controls.js';
import { el } from '../el.js';
import { predictionBlock } from '../questions.js';

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
  // A finished run offers its replay (the timeline's, from step 0) beside Play: the pattern formed once
  // while the student watched, or too fast to see. Disabled, not hidden, until then: nothing moves when
  // it is offered, and it says from the start that a run can be watched again.
  const replayButton = page.has('attention') ? el('button',
    { type: 'button', id: 'replay-run', className: 'full-only', textContent: '↺ Replay' }) : null;
  if (replayButton) replayButton.title = 'Play the attention snapshots again, from step 0 to the end of the run';
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
  // Why Play did not start (a setting shows an error): said until the settings are fixed or it plays.
  const refusal = el('p', { id: 'play-refused' });
  refusal.setAttribute('role', 'alert');
  const { mode } = page;
  const asked = lab.predict && (lab.predictIn ?? 'transport') === 'transport' && mode.questions !== false && !mode.embed;
  const prediction = asked ? predictionBlock(lab, { answers: mode.answers !== false }) : null;
  const node = el('section', { className: 'panel transport', ariaLabel: 'Training' },
    el('div', { className: 'transport-buttons' }, playButton, stepButton, resetButton,
      ...(replayButton ? [replayButton] : []), speedBox),
    el('div', { className: 'transport-progress' }, progressBar, progressText), refusal,
    ...(prediction ? [prediction.node] : []));
  playButton.addEventListener('click', () => page.togglePlay());
  replayButton?.addEventListener('click', () => page.replayRun());
  stepButton.addEventListener('click', () => page.client.send('step', { count: 1 }));
  resetButton.addEventListener('click', () => page.configure(page.validDraft() ? page.draft : page.applied));

  /** The buttons follow the run: disabled before the first model, Play or Pause as it trains. */
  function refresh(errors) {
    prediction?.follow(page.draft);
    const running = !!page.run?.running;
    if (running || (errors && !Object.keys(errors).length)) refusal.textContent = '';
    const label = running ? '❚❚ Pause' : '▶ Play';
    if (replayButton) {
      const offered = !!page.run && !running && page.run.step > 0 && page.run.step >= page.run.targetSteps;
      replayButton.classList.toggle('offered', offered);
      replayButton.disabled = !offered;
    }
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
      // The pace it trains at: the speed chosen, or what this computer manages when that is less
      // (the worker measures steps per second of computing, whatever the pace).
      const paced = lab.speedOf(page.applied);
      const pace = paced > 0 && run.stepsPerSecond ? Math.min(paced, run.stepsPerSecond) : run.stepsPerSecond;
      const rate = run.running && pace ? ` · ${Math.round(pace)} steps/s` : '';
      const state = run.running ? 'training' : run.step >= run.targetSteps ? 'done' : 'paused';
      progressText.textContent = `step ${run.step} of ${run.targetSteps} · ${state}${rate}`;
      progressText.dataset.step = String(run.step);
      progressText.dataset.state = state;
      refresh();
    },
    refresh,
    /** Play was refused: why, in words. */
    refused(text) {
      refusal.textContent = text;
    },
  };
}
