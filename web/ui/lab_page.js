// The page shell every lab shares: controls from the property table, presets, URL state, weights import
// and export, embed mode, pausing while unseen, notices for the worker's errors; and the panels a lab
// lists (lab.panels, in page order): 'transport' (play / pause / step / reset), 'curves' (loss and
// accuracy with the lab's reference lines, and the evaluation), 'attention' (timeline + heatmaps of the
// fixed sample), 'rows' (token rows), 'inspect' (your own input), and 'section:<id>' for each of the
// lab's sections that compute outside training (section_panel.js). A lab without training lists
// none of the training panels.
// A lab plugs in by declaring (web/labs/*.js): properties, checks, presets, intro, configureRequest,
// trainer, metrics, sections, weights, and view-model functions. The worker does all the computing;
// this file keeps the page in step.
import { ControlsPanel } from './controls.js';
import { drawChart, LineChart } from './chart.js';
import { HeatmapPanel } from './heatmap_panel.js';
import { drawHeatmap, HeatmapView } from './heatmap.js';
import { addFigureButtons } from './figure_buttons.js';
import { EmbedLayout } from './embed_layout.js';
import { WeightsPanel } from './weights_panel.js';
import { watchVisibility } from './visibility.js';
import { download } from './export.js';
import { parseSafetensors } from '../io/safetensors.js';
import { stateDictBytes } from '../io/state_dict.js';
import { Timeline } from './timeline.js';
import { SampleInput } from './sample_input.js';
import { renderTokenRows } from './token_rows.js';
import { renderEvaluation } from './evaluation_panel.js';
import { crossCheck, defaultValues, isRelevant, resettingChanges } from './properties.js';
import { TrainingRun } from './training_run.js';
import { SectionPanel } from './section_panel.js';
import { OpenPanel } from './open_panel.js';
import { BACKEND_LABELS } from '../backends.js';

const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const TRANSPORT_PROPERTIES = ['speed'];

/**
 * How long each part took to draw, the last 512 draws (bounded: a lab may train for hours). Read by
 * benchmarks/page_frames.mjs through the page's root element (`root.drawTimes.summary()`).
 */
class DrawTimes {
  static SIZE = 512;
  constructor() {
    this.parts = [];
    this.ms = new Float64Array(DrawTimes.SIZE);
    this.count = 0;
  }

  record(part, ms) {
    this.parts[this.count % DrawTimes.SIZE] = part;
    this.ms[this.count % DrawTimes.SIZE] = ms;
    this.count++;
  }

  /** -> {part: [ms, ...]} over the draws kept. */
  summary() {
    const out = {};
    for (let i = 0; i < Math.min(this.count, DrawTimes.SIZE); i++) (out[this.parts[i]] ??= []).push(this.ms[i]);
    return out;
  }
}
// Script time per animation frame: with style, layout and paint after it, a frame stays near 16 ms.
const FRAME_BUDGET_MS = 8;

export class LabPage {
  /**
   * root: the element to fill; lab: the declaration; client: WorkerClient; notices: Notices;
   * values: the starting values; onValues(values) when the settings that a link would carry change;
   * onChoice(choice) when the backend that runs changes; mode: the page's settings
   * (page_properties.js: embed, controls, hide, autoplay).
   */
  constructor({ root, lab, client, notices, values, onValues = () => {}, onChoice = () => {}, mode = {} }) {
    this.lab = lab;
    this.client = client;
    this.notices = notices;
    this.onValues = onValues;
    this.onChoice = onChoice;
    this.applied = { ...values }; // what the worker's model was built with
    this.draft = { ...values }; // what the controls show
    this.requested = null; // a configure in flight
    this.fieldErrors = {};
    this.run = null;
    this.inspection = null;
    this.dirty = new Set();
    this.mode = mode;
    this.autoplay = !!mode.autoplay;
    this.visible = true;
    this.resumeWhenVisible = false;
    this.root = root;
    this.drawTimes = new DrawTimes();
    // show= (a link's page setting) keeps only some panels: one section on a slide.
    this.panelIds = new Set((lab.panels ?? []).filter((id) => !mode.show?.length || mode.show.includes(id)));
    this.sections = new Map(); // section id -> SectionPanel
    this.sectionRequests = new Map(); // section id -> {id, values} of the request in flight
    this.sectionAgain = new Set(); // sections to ask again when their request returns
    this.playing = null; // a section's play: {id, action, timer}
    this.build(root);
    for (const c of this.allControls()) {
      c.setHidden(mode.hide ?? []);
      c.setValues(this.draft);
    }
    this.refreshControls();
    this.listen();
    if (mode.embed && this.heatmaps) {
      this.embedLayout = new EmbedLayout({ heatmap: this.heatmaps.large, charts: [this.lossChart], onResize: () => this.schedule('charts') });
    } else if (mode.embed && this.lossChart) {
      // No main heatmap to fit to the frame: the panels stack and the charts may narrow.
      for (const chart of [this.lossChart, this.accChart]) chart.minWidth = 160;
    }
    watchVisibility(root, (visible) => this.setVisible(visible));
  }

  has(panel) { return this.panelIds.has(panel); }

  allControls() {
    return [this.controls, this.speedControls, ...[...this.sections.values()].map((p) => p.controls)].filter(Boolean);
  }

  // ---- page structure ----

  build(root) {
    const lab = this.lab;
    this.introText = el('p', { id: 'intro' });
    const intro = el('section', { className: 'panel intro full-only', ariaLabel: 'About this lab' },
      el('h2', { textContent: `${lab.title}` }, el('span', { className: 'subtitle', textContent: ` — ${lab.subtitle}` })), this.introText);

    this.presetText = el('p', { id: 'preset-text', className: 'preset-text' });
    this.presetText.setAttribute('role', 'status');
    const presetButtons = el('div', { className: 'preset-buttons' });
    for (const preset of lab.presets) {
      const button = el('button', { type: 'button', textContent: preset.label, title: preset.text });
      button.dataset.preset = preset.id;
      button.addEventListener('click', () => this.applyPreset(preset));
      presetButtons.append(button);
    }
    const presets = lab.presets.length ? el('section', { className: 'panel presets full-only' }, el('h2', { textContent: 'Presets' }),
      el('p', { className: 'muted', textContent: 'One click sets up, resets and trains a classic experiment.' }), presetButtons, this.presetText) : '';

    const controlsBox = el('section', { className: 'panel settings full-only' }, el('h2', { textContent: 'Settings' }));
    // A section's own properties sit in the section.
    const sidebarProps = lab.properties.filter((p) => !TRANSPORT_PROPERTIES.includes(p.name) && !p.section);
    this.controls = new ControlsPanel(controlsBox, sidebarProps, {
      onInput: (name, parsed) => this.fieldInput(name, parsed, false),
      onCommit: (name, parsed) => this.fieldInput(name, parsed, true),
    });
    this.pendingText = el('p', { id: 'pending-text' });
    this.applyButton = el('button', { type: 'button', id: 'apply-reset', className: 'primary', textContent: 'Apply & reset' });
    this.applyButton.title = 'Rebuild the model with these settings and start from step 0';
    this.undoButton = el('button', { type: 'button', id: 'undo-changes', textContent: 'Keep the current model' });
    this.pending = el('div', { className: 'pending', id: 'pending', hidden: true }, this.pendingText, this.applyButton, this.undoButton);
    this.pending.setAttribute('role', 'status');
    // What the settings cost, before the model is built (refreshControls).
    this.costText = el('p', { id: 'cost-estimate', className: 'muted cost-estimate' });
    this.costText.setAttribute('role', 'status');
    controlsBox.append(this.pending, this.costText);
    this.applyButton.addEventListener('click', () => this.configure(this.draft));
    this.undoButton.addEventListener('click', () => this.revertDraft());
    const sidebar = el('div', { className: 'sidebar full-only' }, intro, presets, controlsBox);
    // A lab without training (a viewer: lab.trainer absent) has no weights, transport or curves.
    if (lab.weights) {
      this.weightsPanel = new WeightsPanel(sidebar, {
        onFile: (bytes, name) => this.importWeights(bytes, name),
        onExport: () => this.exportWeights(),
      });
    }
    const built = lab.trainer ? this.buildTraining() : {};
    this.buildPanels(root, sidebar, built);
  }

  /** The transport (play / pause / step / reset, speed, progress) and the learning curves. */
  buildTraining() {
    const lab = this.lab;

    // Transport: play / pause, step, reset, speed, progress.
    this.playButton = el('button', { type: 'button', id: 'play', className: 'primary', textContent: '▶ Play' });
    this.playButton.title = 'Train until the step count (space bar works while a button has focus)';
    this.stepButton = el('button', { type: 'button', id: 'step', textContent: 'Step' });
    this.stepButton.title = 'Train one step, then pause';
    this.resetButton = el('button', { type: 'button', id: 'reset', textContent: 'Reset' });
    this.resetButton.title = 'Start again from step 0 with the current settings';
    const speedBox = el('div', { className: 'speed full-only' });
    this.speedControls = new ControlsPanel(speedBox, lab.properties.filter((p) => TRANSPORT_PROPERTIES.includes(p.name)), {
      grouped: false,
      onInput: (name, parsed) => this.fieldInput(name, parsed, true),
    });
    // A div bar, not <progress>: its fill moves by a composited transform, so a new step repaints
    // nothing (a <progress> value change repainted the page around it in Chromium, every frame).
    this.progressFill = el('div', { className: 'progress-fill' });
    this.progressBar = el('div', { id: 'progress-bar', className: 'progress-track full-only' }, this.progressFill);
    this.progressBar.setAttribute('role', 'progressbar');
    this.progressBar.setAttribute('aria-label', 'training progress');
    this.progressBar.setAttribute('aria-valuemin', '0');
    this.progressText = el('span', { id: 'progress-text', textContent: 'loading the module…' });
    const transport = el('section', { className: 'panel transport', ariaLabel: 'Training' },
      this.playButton, this.stepButton, this.resetButton, speedBox, this.progressBar, this.progressText);
    this.playButton.addEventListener('click', () => this.togglePlay());
    this.stepButton.addEventListener('click', () => this.client.send('step', { count: 1 }));
    this.resetButton.addEventListener('click', () => this.configure(this.validDraft() ? this.draft : this.applied));

    // Charts and evaluation.
    const charts = el('div', { className: 'charts' });
    const lossBox = el('div', { className: 'chart-box' }), accBox = el('div', { className: 'chart-box full-only' });
    charts.append(lossBox, accBox);
    this.lossChart = new LineChart(lossBox, { label: `${lab.metrics.loss.title} per training step, and evaluations` });
    this.accChart = new LineChart(accBox, { label: `${lab.metrics.accuracy.title} per training step, and evaluations` });
    this.lossChart.canvas.id = 'chart-loss';
    this.accChart.canvas.id = 'chart-accuracy';
    const chartMessage = el('p', { className: 'inline-message', id: 'chart-export-message' });
    chartMessage.setAttribute('role', 'status');
    for (const [box, chart, what, id] of [[lossBox, this.lossChart, 'the loss chart', 'loss'], [accBox, this.accChart, 'the accuracy chart', 'accuracy']]) {
      const bar = el('div', { className: 'figure-toolbar full-only' });
      box.append(bar);
      addFigureButtons(bar, { what, idPrefix: `export-${id}`, message: chartMessage, figure: () => this.chartFigure(chart, id) });
    }
    this.evaluationBox = el('div', { id: 'evaluation', className: 'full-only' });
    const metrics = el('section', { className: 'panel metrics-panel' }, el('h2', { textContent: 'Learning curves' }), charts, chartMessage,
      el('h3', { className: 'full-only', textContent: lab.metrics.evaluationTitle }), this.evaluationBox);
    return { transport, curves: metrics };
  }

  /** The lab's panels in its order, beside the sidebar. */
  buildPanels(root, sidebar, built) {
    const lab = this.lab;
    if (this.has('attention')) built.attention = this.buildAttention();
    if (this.has('rows')) built.rows = this.buildRows();
    if (this.has('inspect')) built.inspect = this.buildInspect();
    if (this.has('open') && lab.open) {
      this.openPanel = new OpenPanel(lab, { onOpen: (files, name) => this.openFiles(files, name) });
      built.open = this.openPanel.node;
    }
    for (const section of lab.sections ?? []) {
      if (!this.has(`section:${section.id}`)) continue;
      const panel = new SectionPanel({
        lab, section,
        onInput: (name, parsed, commit) => this.fieldInput(name, parsed, commit),
        onAction: (change) => {
          this.stopSectionPlay(); // a button the user pressed ends a play
          this.sectionAction(change);
        },
        onPlay: (action) => this.toggleSectionPlay(section.id, action),
        onUserInput: () => this.requestSections([section.id]),
        onPick: (change) => this.sectionAction(change),
      });
      this.sections.set(section.id, panel);
      built[`section:${section.id}`] = panel.node;
    }
    const main = el('div', { className: 'main-column' }, ...lab.panels.filter((id) => this.has(id)).map((id) => built[id]));
    // Embedded, the loss curve sits beside the main heatmap when there is one (styles.css).
    main.classList.toggle('beside-attention', !!built.attention && this.has('curves'));
    root.append(sidebar, main);
    root.drawTimes = this.drawTimes;
    const panelOf = { charts: built.curves, evaluation: built.curves, heatmaps: built.attention, heads: built.attention, rows: built.rows, inspect: built.inspect };
    for (const [id, panel] of this.sections) panelOf[`section:${id}`] = panel.node;
    this.watchPanels(Object.fromEntries(Object.entries(panelOf).filter(([, node]) => node)));
  }

  buildAttention() {
    const texts = this.lab.attentionPanel ?? {};
    const attention = el('section', { className: 'panel attention' }, el('h2', { textContent: texts.title ?? 'Attention on a fixed sample' }),
      el('p', { className: 'muted attention-help', textContent: `${texts.help ?? 'Rows are the queries, columns the keys. Bright = much weight.'} Hover a cell, or focus the map and use the arrow keys.` }));
    this.timeline = new Timeline(attention, {
      onShow: () => this.schedule('heatmaps', 'rows'),
      stepOf: (i) => this.run?.snapshots.at(i)?.step ?? 0,
    });
    attention.querySelector('.timeline').classList.add('full-only');
    const heatmapBox = el('div', { className: 'heatmap-area' });
    attention.append(heatmapBox);
    this.heatmaps = new HeatmapPanel(heatmapBox, {
      modelsAt: (i) => this.modelsFor(this.run.snapshots.at(i)),
      snapshotCount: () => this.run?.snapshots.length ?? 0,
      nameOf: () => `attention-${this.run ? this.lab.figureStem(this.run.config) : this.lab.id}-step${this.shownSnapshot()?.step ?? 0}`,
      notices: this.notices,
    });
    return attention;
  }

  buildRows() {
    this.rowsBox = el('div', { id: 'results' });
    const rows = el('section', { className: 'panel results-panel full-only' }, el('h2', { textContent: 'Prediction on the fixed sample' }),
      el('p', { className: 'muted', textContent: 'As the notebook prints it. Wrong tokens are marked ✗ and underlined.' }), this.rowsBox);
    return rows;
  }

  buildInspect() {
    this.inspectRows = el('div', { id: 'inspect-results' });
    const inspect = el('section', { className: 'panel inspect-panel full-only' }, el('h2', { textContent: 'Try your own input' }),
      el('p', { className: 'muted', textContent: 'The current model predicts your sequence at once; its attention is drawn below.' }));
    this.sampleInput = new SampleInput(inspect, { onSubmit: (fields) => this.inspect(fields) });
    inspect.append(this.inspectRows);
    this.inspectMap = new HeatmapView(inspect, { cell: 20, label: 'Attention for your input' });
    this.inspectMap.canvas.id = 'heatmap-inspect';
    const inspectMessage = el('p', { className: 'inline-message', id: 'inspect-export-message' });
    inspectMessage.setAttribute('role', 'status');
    const inspectBar = el('div', { className: 'figure-toolbar' });
    this.inspectMap.figure.append(inspectBar, inspectMessage);
    addFigureButtons(inspectBar, { what: 'the heatmap of your input', idPrefix: 'export-inspect', message: inspectMessage, figure: () => this.inspectFigure() });
    return inspect;
  }

  /**
   * While a lab trains, only the panels on screen are redrawn; the others are marked and drawn when
   * they scroll into view or when training stops (a slow laptop should not paint what nobody sees).
   */
  watchPanels(panelOf) {
    this.panelOf = panelOf;
    this.onScreen = new Set(Object.values(panelOf)); // until the observer says otherwise
    this.deferred = new Set();
    if (typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) this.onScreen.add(e.target);
        else this.onScreen.delete(e.target);
      }
      const due = [...this.deferred].filter((part) => this.onScreen.has(this.panelOf[part]));
      if (due.length) this.schedule(...due);
    }, { rootMargin: '100px' });
    for (const panel of new Set(Object.values(panelOf))) observer.observe(panel);
  }

  // ---- worker messages ----

  listen() {
    const c = this.client;
    c.on('machine', (m) => {
      this.gflops = m.gflops;
      this.refreshControls();
    });
    c.on('configured', (m) => {
      this.applied = { ...(this.requested ?? this.applied) };
      this.requested = null;
      if (m.imported) this.weightsImported(m);
      if (m.recovered) {
        const from = m.recovered.step ? `the weights of step ${m.recovered.step}` : 'fresh weights';
        this.notices.show(`The training module stopped (${m.recovered.reason}). A fresh one was started with the same settings `
          + `and ${from}; the step count starts again from 0. Press Play to go on.`, { kind: 'warning', key: 'recovered' });
      }
      this.run = new TrainingRun(m);
      this.inspection = null;
      this.onChoice(m.choice);
      this.timeline?.setLive(true);
      this.timeline?.setCount(1);
      this.refreshControls();
      this.sampleInput?.setFields(this.lab.views.inputFields(m.config));
      if (this.sampleInput?.hasText()) this.sampleInput.submit();
      this.requestSections([...this.sections.keys()]);
      if (this.playAfterConfigure || this.autoplay) {
        this.playAfterConfigure = false;
        this.autoplay = false; // autoplay= starts the first model only
        // A lab that is not on screen waits: it starts when it is shown.
        if (this.visible) this.client.send('play');
        else this.resumeWhenVisible = true;
      }
      this.schedule('all');
    });
    c.on('progress', (m) => {
      const run = this.run;
      if (!run) return;
      const thinnings = run.snapshots.thinnings;
      run.progress(m);
      // A scrubbed-to snapshot keeps (about) its place when the timeline thins.
      if (this.timeline && run.snapshots.thinnings > thinnings && !this.timeline.live) this.timeline.index >>= run.snapshots.thinnings - thinnings;
      this.root.dataset.running = String(m.running); // at once, not on the next frame (none come while unseen)
      if (m.choice && m.choice.reason !== run.choice.reason) {
        run.choice = m.choice;
        this.onChoice(m.choice);
      }
      if (m.snapshots.length) this.timeline?.setCount(run.snapshots.length);
      // Sections that show the model follow it: at each evaluation while training, and when it stops.
      if (m.evaluation || !m.running) this.requestSections(this.modelSections());
      this.schedule('charts', 'progress', ...(m.evaluation ? ['evaluation'] : []), ...(m.running ? [] : this.deferred));
    });
    c.on('state', (m) => {
      if (!this.run) return;
      const stopped = this.run.state(m);
      this.root.dataset.running = String(m.running);
      if (stopped && this.sampleInput?.hasText()) this.sampleInput.submit();
      if (stopped) this.requestSections(this.modelSections());
      this.refreshControls();
      this.schedule('progress', ...(m.running ? [] : this.deferred));
    });
    c.on('inspection', (m) => {
      this.inspection = m;
      this.sampleInput.showError('');
      this.schedule('inspect');
    });
    c.on('weights', (m) => this.saveWeights(m));
    c.on('section', (m) => this.sectionResult(m));
    c.on('open-progress', (m) => {
      if (m.lab === this.lab.id) this.openPanel?.reading(m.bytes, m.total, m.tensor);
    });
    c.on('opened', (m) => {
      if (m.lab !== this.lab.id) return;
      this.stopSectionPlay(); // another model: another result to play
      this.opened = m.summary;
      this.openPanel?.opened(m.summary);
      this.requestSections([...this.sections.keys()]);
    });
    c.on('error', (m) => this.workerError(m));
  }

  workerError({ message, request, section }) {
    if (request === 'init' || request === 'worker') return; // the app's boot reports these
    if (request === 'open') {
      this.openPanel?.failed(message, !!this.opened);
      return;
    }
    if (request === 'recover') this.opened = null; // the restarted module has no checkpoint: open it again
    if (request === 'section' && this.sections.has(section)) {
      this.stopSectionPlay();
      this.sectionRequests.delete(section);
      this.sections.get(section).fail(message);
      return;
    }
    if (request === 'inspect') {
      this.inspection = null;
      this.sampleInput.showError(message);
      this.schedule('inspect');
      return;
    }
    if (request === 'import') {
      this.requested = null;
      this.weightsPanel.say('');
      this.notices.show(`${this.importName} was not loaded; the current model is kept. ${message}`, { kind: 'error', key: 'weights' });
      return;
    }
    if (request === 'configure') {
      this.requested = null;
      this.playAfterConfigure = false;
      if (!this.run) {
        // The first model (from a link) was refused, e.g. settings too large together: there is no
        // model to keep, so build the default one rather than leave the page without any.
        const labNames = new Set(this.lab.properties.map((p) => p.name));
        const keep = Object.fromEntries(Object.entries(this.draft).filter(([k]) => !labNames.has(k) || ['speed', 'palette'].includes(k)));
        const values = { ...defaultValues(this.lab.properties), ...keep };
        this.draft = values;
        this.fieldErrors = {};
        this.controls.setValues(values);
        this.configure(values); // (clears the 'configure' notice: show it after)
        this.notices.show(`The link's model was not built: ${message}. The default settings are used instead.`, { kind: 'error', key: 'configure' });
        this.onValues(this.linkValues());
        this.refreshControls();
        return;
      }
      this.notices.show(`The model was not rebuilt: ${message}`, { kind: 'error', key: 'configure' });
      this.refreshControls();
      return;
    }
    this.notices.show(`${request ? `${request}: ` : ''}${message}`, { kind: 'error', key: `worker-${request}` });
  }

  // ---- user actions ----

  /** A field was edited (commit: the change is final, e.g. on blur or a select's change). */
  fieldInput(name, parsed, commit) {
    if (parsed.error) {
      this.fieldErrors[name] = parsed.error;
      this.refreshControls();
      return;
    }
    delete this.fieldErrors[name];
    this.draft = { ...this.draft, [name]: parsed.value };
    // A new input for the section that plays (a new sentence, other beams) ends the play; a view
    // setting of another section (a layer, a head) does not.
    if (commit && this.playing && this.sections.get(this.playing.id)?.dependsOnAny([name])) this.stopSectionPlay();
    if (commit) {
      const next = this.lab.afterChange(name, this.draft);
      if (next !== this.draft) {
        this.draft = next;
        for (const c of this.allControls()) c.setValues(next);
      }
      this.commit(name);
    }
    this.refreshControls();
  }

  commit(name) {
    if (!this.validDraft()) return;
    const prop = this.lab.properties.find((p) => p.name === name);
    if (prop.effect === 'live') this.applyLive(name);
    if (prop.effect === 'view') {
      // This setting and any view setting it implied (afterChange: a padding mask brings a second sentence).
      const changed = this.lab.properties.filter((p) => p.effect === 'view' && this.applied[p.name] !== this.draft[p.name]).map((p) => p.name);
      this.applied = { ...this.applied, ...Object.fromEntries(changed.map((n) => [n, this.draft[n]])) };
      if (changed.includes('palette')) this.schedule('heatmaps', 'inspect', ...[...this.sections.keys()].map((id) => `section:${id}`));
      this.requestSections([...this.sections].filter(([, panel]) => panel.dependsOnAny(changed)).map(([id]) => id));
    }
    const changes = resettingChanges(this.lab.properties, this.applied, this.draft);
    // Nothing to lose before the first step: rebuild at once. Otherwise ask (the pending bar).
    if (changes.length && this.run && this.run.step === 0 && !this.run.running) this.configure(this.draft);
    this.onValues(this.linkValues());
  }

  // ---- sections that compute outside training ----

  /** The sections that show the trained model (they wait for one, and follow it while it trains). */
  modelSections() {
    return [...this.sections].filter(([, p]) => p.section.needsModel).map(([id]) => id);
  }

  /**
   * Asks the worker for these sections with the values applied now. One request per section is in
   * flight at a time; a change meanwhile asks again when it returns, so a dragged slider never queues
   * a request per pixel.
   */
  requestSections(ids) {
    for (const id of ids) {
      const panel = this.sections.get(id);
      if (!panel) continue;
      if (!this.lab.trainer && !this.moduleReady) continue; // configure() asks once the module is ready
      if (!panel.section.compute) {
        // Nothing to compute (a section of text and diagrams): its figures come from the values alone.
        this.sectionData = { ...(this.sectionData ?? {}), [id]: { result: null, values: this.sectionValues() } };
        this.schedule(`section:${id}`);
        continue;
      }
      if (panel.section.needsOpen && !this.opened) {
        panel.waiting(`${this.lab.open?.title ?? 'Open the files'} above to see this.`);
        continue;
      }
      if (panel.section.needsModel && !this.run) {
        panel.waiting('Waiting for the model to be built…');
        continue;
      }
      const input = panel.input;
      if (input === null) {
        panel.waiting(panel.section.inputHint ?? 'Waiting for your input.');
        continue;
      }
      if (this.sectionRequests.has(id)) {
        this.sectionAgain.add(id);
        continue;
      }
      const values = this.sectionValues();
      const request = (this.sectionCounter = (this.sectionCounter ?? 0) + 1);
      this.sectionRequests.set(id, { request, values });
      if (!panel.result) panel.waiting('Computing…');
      this.client.send('section', { lab: this.lab.id, section: id, values, input, backend: this.applied.backend, request });
    }
  }

  /** The values a section computes with: the applied model settings, the view settings as they are now. */
  sectionValues() {
    const valid = Object.keys(this.fieldErrors).length === 0;
    const view = this.lab.properties.filter((p) => p.effect === 'view').map((p) => p.name);
    return { ...this.applied, ...(valid ? Object.fromEntries(view.map((n) => [n, this.draft[n]])) : {}) };
  }

  sectionResult(m) {
    const panel = this.sections.get(m.section);
    const asked = this.sectionRequests.get(m.section);
    if (!panel || !asked || asked.request !== m.request) return;
    this.sectionRequests.delete(m.section);
    this.sectionData = { ...(this.sectionData ?? {}), [m.section]: { result: m.result, values: asked.values } };
    // A lab without training: its sections' kernel calls are what the badge reports.
    if (!this.lab.trainer && m.result?.choice) {
      const { backend, reason } = m.result.choice;
      this.onChoice({ backend, reason, label: BACKEND_LABELS[backend] ?? backend });
    }
    this.schedule(`section:${m.section}`);
    if (this.sectionAgain.delete(m.section)) this.requestSections([m.section]);
  }

  /** The user chose files for the lab's `open` (a checkpoint folder): the worker reads them. */
  openFiles(files, name) {
    this.openPanel.reading(0, 0, '');
    this.client.send('open', { lab: this.lab.id, files, name });
  }

  /**
   * A section's play button (action.play): starts stepping the values with action.play.next every
   * everyMs, or pauses. One play at a time, on timers (the tab never waits on it). The next step waits
   * until every section has shown the last one (a slow model never queues steps); a play ends at
   * next() -> null, on the user's own change of the section's inputs, another of its buttons, a new
   * open, an error, or when the lab leaves the screen.
   */
  toggleSectionPlay(id, action) {
    const playing = this.playing;
    this.stopSectionPlay();
    if (playing?.id === id && playing.action === action) return; // it was playing: Pause
    const panel = this.sections.get(id);
    if (!panel?.result) return; // nothing computed yet: nothing to play
    this.playing = { id, action, timer: 0 };
    panel.setPlaying(action, true);
    const start = action.play.start?.(this.draft, panel.result) ?? this.draft;
    if (start !== this.draft) this.sectionAction(() => start);
    this.playTick(action.play.everyMs);
  }

  playTick(delay) {
    const p = this.playing;
    if (!p) return;
    p.timer = setTimeout(() => {
      p.timer = 0;
      if (this.playing !== p) return;
      // The last step not computed yet: look again shortly, without stepping.
      if (this.sectionRequests.size) {
        this.playTick(50);
        return;
      }
      const panel = this.sections.get(p.id);
      const next = panel?.result ? p.action.play.next(this.draft, panel.result) : null;
      if (!next) {
        this.stopSectionPlay();
        return;
      }
      this.sectionAction(() => next);
      this.playTick(p.action.play.everyMs);
    }, delay);
  }

  stopSectionPlay() {
    const p = this.playing;
    if (!p) return;
    clearTimeout(p.timer);
    this.playing = null;
    this.sections.get(p.id)?.setPlaying(p.action, false);
  }

  /** A section's button: a change of the values (e.g. the next random draw). */
  sectionAction(change) {
    const before = this.draft;
    this.draft = change(this.draft);
    const changed = Object.keys(this.draft).filter((k) => this.draft[k] !== before[k]);
    for (const c of this.allControls()) c.setValues(this.draft);
    this.applied = { ...this.applied, ...Object.fromEntries(changed.map((k) => [k, this.draft[k]])) };
    this.requestSections([...this.sections].filter(([, panel]) => panel.dependsOnAny(changed)).map(([id]) => id));
    this.onValues(this.linkValues());
  }

  applyLive(name) {
    const v = this.draft;
    if (name === 'lr') this.client.send('set', { lr: v.lr });
    if (name === 'speed') this.client.send('set', { speed: this.lab.speedOf(v) });
    if (name === 'steps') this.client.send('set', { steps: v.steps });
    this.applied = { ...this.applied, [name]: v[name] };
  }

  validDraft() {
    return Object.keys(this.fieldErrors).length === 0 && crossCheck(this.lab, this.draft).length === 0;
  }

  /** Sends a configure with these values; `applied` follows when the worker confirms. */
  configure(values) {
    if (!this.lab.trainer) {
      // Nothing to build: the module is ready, so the sections compute.
      this.moduleReady = true;
      this.requestSections([...this.sections.keys()]);
      return;
    }
    if (values === this.draft && !this.validDraft()) return;
    this.requested = { ...values };
    this.notices.dismiss('configure');
    this.client.send('configure', { lab: this.lab.id, ...this.lab.configureRequest(values) });
    this.client.send('set', { speed: this.lab.speedOf(values), lr: values.lr });
  }

  revertDraft() {
    const resetting = new Set(this.lab.properties.filter((p) => p.effect === 'reset').map((p) => p.name));
    this.draft = Object.fromEntries(Object.entries(this.draft).map(([k, v]) => [k, resetting.has(k) ? this.applied[k] : v]));
    this.fieldErrors = {};
    this.controls.setValues(this.draft);
    this.refreshControls();
    this.onValues(this.linkValues());
  }

  applyPreset(preset) {
    // The page's own settings (embed, hide, …) and the run settings stay; the model's start over.
    const labNames = new Set(this.lab.properties.map((p) => p.name));
    const keep = Object.fromEntries(Object.entries(this.draft).filter(([k]) => !labNames.has(k) || ['backend', 'speed', 'palette'].includes(k)));
    let values = { ...defaultValues(this.lab.properties), ...keep };
    // What each preset value implies (the Alignment lab's task brings its step count), then the preset wins.
    for (const [name, value] of Object.entries(preset.values)) values = this.lab.afterChange(name, { ...values, [name]: value });
    values = { ...values, ...preset.values };
    this.draft = values;
    this.fieldErrors = {};
    for (const c of this.allControls()) c.setValues(values);
    this.presetText.textContent = `${preset.label}: ${preset.text}`;
    if (preset.weights) {
      // A preset that is a model (the One query lab's hand-built solution): loaded as a weights file
      // would be, so the page shows exactly what import shows; nothing to train.
      this.applied = { ...values };
      this.importWeights(stateDictBytes(preset.weights(), this.lab.weights.metadata(this.lab.configureRequest(values).config, 0)), preset.label);
      this.refreshControls();
      this.onValues(this.linkValues());
      return;
    }
    this.playAfterConfigure = true;
    this.configure(values);
    this.refreshControls();
    this.onValues(this.linkValues());
  }

  togglePlay() {
    if (!this.run) return;
    this.resumeWhenVisible = false; // the user decides from now on
    this.client.send(this.run.running ? 'pause' : 'play');
  }

  /**
   * The lab went off screen (hidden tab, slide moved on, iframe hidden) or came back. Training pauses
   * while unseen and resumes on return, only if it was playing.
   */
  setVisible(visible) {
    this.visible = visible;
    this.root.dataset.visible = String(visible);
    if (!visible) this.stopSectionPlay(); // the lab left the screen (a slide moved on): a section's play ends
    if (!visible && this.run?.running) {
      this.resumeWhenVisible = true;
      this.client.send('pause');
    } else if (visible && this.resumeWhenVisible) {
      this.resumeWhenVisible = false;
      if (this.run && !this.run.running) this.client.send('play');
    }
  }

  // ---- weights ----

  /** A .safetensors file from the picker or a drop: derive the model it fits, then load it there. */
  importWeights(bytes, name) {
    this.importName = name;
    this.notices.dismiss('weights');
    let patch;
    try {
      patch = this.lab.weights.valuesFromFile(parseSafetensors(bytes));
    } catch (error) {
      this.weightsPanel.say('');
      this.notices.show(`${name} was not loaded; the current model is kept. ${error.message}`, { kind: 'error', key: 'weights' });
      return;
    }
    // What a change implies (a task brings its step count), then the file's values win.
    let values = { ...this.applied, ...patch };
    for (const key of Object.keys(patch)) values = this.lab.afterChange(key, values);
    values = { ...values, ...patch };
    const problems = crossCheck(this.lab, values);
    if (problems.length) {
      this.weightsPanel.say('');
      this.notices.show(`${name} was not loaded: ${problems.map((p) => p.message).join('; ')}; the current model is kept.`, { kind: 'error', key: 'weights' });
      return;
    }
    this.requested = values;
    this.weightsPanel.say(`Loading ${name}…`);
    this.client.send('import', { lab: this.lab.id, ...this.lab.configureRequest(values), bytes });
  }

  weightsImported(m) {
    this.draft = { ...this.applied };
    this.fieldErrors = {};
    this.controls.setValues(this.draft);
    this.onValues(this.linkValues());
    // How good the loaded model is, at once (the evaluation the curves panel shows).
    this.client.send('evaluate');
    const text = `Loaded ${this.importName}: ${this.lab.weights.describe(m.config)}. Its attention is shown below; Play trains on from these weights.`;
    this.weightsPanel.say(text);
    this.notices.show(text, { kind: 'info', key: 'weights' });
  }

  exportWeights() {
    if (!this.run) return;
    this.client.send('export');
  }

  saveWeights({ tensors, config, step }) {
    const bytes = stateDictBytes(tensors, this.lab.weights.metadata(config, step));
    const name = this.lab.weights.fileName(config, step);
    download(new Blob([bytes], { type: 'application/octet-stream' }), name);
    this.weightsPanel.say(`Saved ${name} (step ${step}).`);
  }

  inspect(fields) {
    if (!this.run) return;
    const { sample, error } = this.lab.views.parseInput(this.run.config, fields);
    if (error) {
      this.inspection = null;
      this.sampleInput.showError(error);
      this.schedule('inspect');
      return;
    }
    this.client.send('inspect', { sample });
  }

  /** The values a link carries: the model's settings, with live and view settings as they are now. */
  linkValues() {
    return this.validDraft() ? { ...this.draft } : { ...this.applied };
  }

  // ---- drawing ----

  refreshControls() {
    const errors = { ...this.fieldErrors };
    for (const { name, message } of crossCheck(this.lab, this.draft)) errors[name] ??= message;
    for (const c of this.allControls()) c.setErrors(errors);
    this.controls.setRelevance((p) => isRelevant(p, this.draft));
    // The intro describes the model on screen, not settings that are not applied yet.
    this.introText.textContent = this.lab.intro(this.run ? this.applied : this.draft);
    const changes = this.run ? resettingChanges(this.lab.properties, this.applied, this.draft) : [];
    this.controls.markPending(changes);
    const valid = Object.keys(errors).length === 0;
    this.pending.hidden = !changes.length;
    if (changes.length) {
      const labels = changes.map((n) => this.lab.properties.find((p) => p.name === n).label);
      this.pendingText.textContent = valid
        ? `Changing ${labels.join(', ')} rebuilds the model: training restarts from step 0.`
        : `Changing ${labels.join(', ')} rebuilds the model — fix the settings marked in red first.`;
    }
    this.applyButton.disabled = !valid;
    this.costText.textContent = valid ? this.costEstimate(this.draft) : '';
    this.refreshTransport();
  }

  /**
   * A model's cost per training step, from the lab's count of its operations and this machine's
   * multiply-add rate: a rough figure (the trainers reach 25-55% of that rate), to see before building
   * that a setting makes training slow. Memory is checked by the trainer itself (refused over 512 MB).
   */
  costEstimate(values) {
    const flops = this.lab.trainer?.flopsPerStep?.(values);
    if (!flops) return '';
    const work = flops >= 1e9 ? `${(flops / 1e9).toFixed(1)} GFLOP` : `${Math.max(0.1, flops / 1e6).toFixed(1)} MFLOP`;
    if (!this.gflops) return `About ${work} per training step.`;
    const stepsPerSecond = (0.35 * this.gflops * 1e9) / flops;
    const pace = stepsPerSecond >= 1 ? `roughly ${stepsPerSecond >= 10 ? Math.round(stepsPerSecond) : stepsPerSecond.toFixed(1)} steps/s`
      : `roughly ${(1 / stepsPerSecond).toFixed(1)} s per step: slow; lower the batch or the width`;
    return `About ${work} per training step: ${pace} on this machine's CPU (an estimate, within about 2x).`;
  }

  refreshTransport() {
    if (!this.playButton) return;
    const running = !!this.run?.running;
    const label = running ? '❚❚ Pause' : '▶ Play';
    if (this.playButton.textContent === label && this.playButton.disabled === !this.run) return;
    this.playButton.textContent = label;
    this.playButton.setAttribute('aria-pressed', String(running));
    this.playButton.disabled = !this.run;
    this.stepButton.disabled = !this.run;
    this.resetButton.disabled = !this.run;
  }

  /** Marks parts to redraw on the next animation frame: at most one redraw per frame. */
  schedule(...parts) {
    for (const p of parts) this.dirty.add(p);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const dirty = this.dirty;
      this.dirty = new Set();
      this.render(dirty);
    });
  }

  redraw() {
    this.schedule('all');
  }

  /**
   * Draws the dirty parts, most urgent first. When a frame's budget is spent, the rest waits for the
   * next frame, so the page never blocks for long (the first draw of everything is the costly one).
   */
  render(dirty) {
    if (!this.run && this.lab.trainer) return;
    const all = dirty.has('all');
    const start = performance.now();
    const implied = { rows: 'heatmaps', heads: 'heatmaps' }; // drawn when the snapshot they show changes
    const present = { heatmaps: !!this.heatmaps, heads: !!this.heatmaps, rows: !!this.rowsBox, inspect: !!this.inspectMap };
    const sectionParts = [...this.sections.keys()].map((id) => `section:${id}`);
    const parts = [...(this.lab.trainer ? ['progress', 'charts', 'evaluation', 'heatmaps', 'heads', 'rows', 'inspect'] : []), ...sectionParts]
      .filter((p) => present[p] !== false && (all || dirty.has(p) || dirty.has(implied[p])));
    while (parts.length) {
      const part = parts.shift();
      if (this.run?.running && part !== 'progress' && !this.onScreen.has(this.panelOf[part])) {
        this.deferred.add(part);
      } else {
        this.deferred.delete(part);
        const t0 = performance.now();
        this.renderPart(part);
        this.drawTimes.record(part, performance.now() - t0);
      }
      if (parts.length && performance.now() - start > FRAME_BUDGET_MS) {
        this.schedule(...parts);
        break;
      }
    }
    // Tests and scripted figures wait for this: every part the page owes is drawn.
    this.root.dataset.drawn = this.frame || this.deferred.size ? 'pending' : 'all';
  }

  renderPart(part) {
    const run = this.run;
    if (part === 'progress') this.renderProgress();
    if (part === 'charts') this.renderCharts();
    if (part === 'evaluation') renderEvaluation(this.evaluationBox, this.lab.views.evaluation(run.config, run.evaluations.at(-1)));
    if (part === 'heatmaps') {
      const snapshot = this.shownSnapshot();
      if (snapshot) this.heatmaps.show(this.modelsFor(snapshot), { palette: this.applied.palette });
    }
    if (part === 'heads') this.heatmaps.showHeads();
    if (part === 'rows') {
      const snapshot = this.shownSnapshot();
      renderTokenRows(this.rowsBox, snapshot ? this.lab.views.tokenRows(run.config, run.sample, snapshot) : null);
    }
    if (part === 'inspect') this.renderInspection();
    if (part.startsWith('section:')) {
      const id = part.slice('section:'.length);
      const data = this.sectionData?.[id];
      if (data) this.sections.get(id).show(data.result, data.values, { palette: this.applied.palette });
    }
  }

  shownSnapshot() {
    return this.run?.snapshots.at(this.timeline.index) ?? this.run?.snapshots.at(-1);
  }

  modelsFor(snapshot) {
    return this.lab.views.heatmaps(this.run.config, this.run.sample, snapshot, ` — step ${snapshot.step}`);
  }

  renderProgress() {
    const run = this.run;
    const max = Math.max(1, run.targetSteps), value = Math.min(run.step, run.targetSteps);
    this.progressBar.setAttribute('aria-valuemax', String(max));
    this.progressBar.setAttribute('aria-valuenow', String(value));
    this.progressFill.style.transform = `scaleX(${value / max})`;
    const rate = run.running && run.stepsPerSecond ? ` · ${Math.round(run.stepsPerSecond)} steps/s` : '';
    const state = run.running ? 'training' : run.step >= run.targetSteps ? 'done' : 'paused';
    this.progressText.textContent = `step ${run.step} of ${run.targetSteps} · ${state}${rate}`;
    this.progressText.dataset.step = String(run.step);
    this.progressText.dataset.state = state;
    this.refreshTransport();
  }

  renderCharts() {
    const run = this.run;
    const m = this.lab.metrics;
    const xMax = Math.max(run.targetSteps, run.step, 10);
    const evals = run.evaluations.items;
    const last = evals.at(-1);
    const lossOf = m.loss.evaluation, accuracyOf = m.accuracy.evaluation;
    const references = (metric) => (last ? metric.references(last, run.config) : [])
      .map((r) => ({ label: r.label, kind: 'dashed', y: r.y }));
    const lossMax = Math.max(0.1, ...run.losses.head(20), ...evals.map(lossOf), ...references(m.loss).map((r) => r.y * 1.1));
    this.lossChart.draw({
      title: m.loss.title, xTitle: 'training step', yTitle: m.loss.yTitle, xMax, yMin: 0, yMax: Math.min(lossMax, 50),
      series: [
        { label: m.batchLabel, kind: 'line', ys: run.losses.ys.slice(), every: run.losses.every },
        { label: m.evaluationLabel, kind: 'points', points: evals.map((e) => ({ x: e.step, y: lossOf(e) })) },
        ...references(m.loss),
      ],
    });
    const series = [
      { label: m.batchLabel, kind: 'line', ys: run.accuracies.ys.slice(), every: run.accuracies.every },
      { label: m.evaluationLabel, kind: 'points', points: evals.map((e) => ({ x: e.step, y: accuracyOf(e) })) },
      ...references(m.accuracy),
    ];
    this.accChart.draw({ title: m.accuracy.title, xTitle: 'training step', yTitle: m.accuracy.yTitle, xMax, yMin: 0, yMax: 1, series });
  }

  /** A chart as an exportable figure: the spec on screen, at the size on screen. */
  chartFigure(chart, id) {
    if (!chart.spec || !this.run) return null;
    const spec = chart.spec, size = chart.size();
    return { draw: (canvas, scale) => drawChart(canvas, spec, { ...size, scale }), stem: `${id}-${this.lab.figureStem(this.run.config)}-step${this.run.step}`, title: spec.title };
  }

  inspectFigure() {
    const view = this.inspectMap;
    if (!view.model) return null;
    const model = view.model, cell = view.cell, palette = view.palette;
    return { draw: (canvas, scale) => drawHeatmap(canvas, model, { cell, scale, palette }), stem: `attention-${this.lab.figureStem(this.run.config)}-your-input`, title: model.title };
  }

  renderInspection() {
    const m = this.inspection;
    this.inspectRows.replaceChildren();
    this.inspectMap.figure.hidden = !m;
    if (!m || !this.run) return;
    const sample = this.lab.views.sampleOf(this.run.config, m.sample);
    renderTokenRows(this.inspectRows, this.lab.views.tokenRows(this.run.config, sample, m.result));
    this.inspectMap.show(this.lab.views.heatmaps(this.run.config, sample, m.result, ' — your input').mean, { palette: this.applied.palette });
  }
}
