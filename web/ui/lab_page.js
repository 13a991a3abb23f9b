// The page shell every lab shares: the settings (the values the controls show, those the model was
// built with, and the link that carries them), the worker client, and the panels a lab lists
// (lab.panels, in page order) placed beside the settings sidebar:
//   'transport' (play / pause / step / reset), 'curves' (loss and accuracy, the evaluation),
//   'attention' (timeline + heatmaps of the fixed sample), 'rows' (token rows), 'inspect' (your own
//   input), 'open' (the user's checkpoint), and 'section:<id>' for each of the lab's sections that
//   compute outside training; the sidebar holds the settings and, for a lab with weights, 'weights'.
// A lab without training lists none of the training panels. A lab plugs in by declaring (web/labs/*.js):
// properties, checks, presets, intro, configureRequest, trainer, metrics, sections, weights, and
// view-model functions. The worker does all the computing; this file keeps the page in step.
//
// A panel (web/ui/panels/*.js) is {node, handles(message) -> bool, render(dirty)}, and where it needs:
//   parts: {name: [words]}  what it draws, and the words besides its name that make a part due
//                           ('snapshot': the timeline moved; 'palette'); draw_scheduler.js paces them
//                           and calls render with the due ones, one at a time
//   alwaysDrawn             its parts draw even off screen while training
//   controls                its settings controls (values, errors and hidden names come from here)
//   refresh(errors)         the settings or the run's state changed
// The worker's answers are followed in worker_answers.js: the page takes what it keeps (the run, the
// applied values), then offers each message to every panel.
import { DrawScheduler } from './draw_scheduler.js';
import { EmbedLayout } from './embed_layout.js';
import { watchVisibility } from './visibility.js';
import { stateDictBytes } from '../io/state_dict.js';
import { crossCheck, isRelevant, defaultValues, resettingChanges } from '../shared/properties.js';
import { followWorker } from './worker_answers.js';
import { el } from './el.js';
import { settingsPanel } from './panels/settings.js';
import { weightsPanel } from './panels/weights.js';
import { comparePanel } from './panels/compare.js';
import { openPanel } from './panels/open.js';
import { transportPanel } from './panels/transport.js';
import { curvesPanel } from './panels/curves.js';
import { attentionPanel } from './panels/attention.js';
import { rowsPanel } from './panels/rows.js';
import { inspectPanel } from './panels/inspect.js';
import { sectionPanel } from './panels/section.js';
import { SectionPlay } from './panels/section_play.js';

export class LabPage {
  /**
   * root: the element to fill; lab: the declaration; client: WorkerClient; notices: Notices;
   * values: the starting values; onValues(values) when the settings that a link would carry change;
   * onChoice(choice) when the backend that runs changes; mode: the page's settings
   * (page_properties.js: embed, controls, hide, show, autoplay).
   */
  constructor({ root, lab, client, notices, values, onValues = () => {}, onChoice = () => {}, mode = {} }) {
    this.lab = lab;
    this.client = client;
    this.notices = notices;
    this.onValues = onValues;
    this.onChoice = onChoice;
    this.applied = { ...values }; // what the worker's model was built with
    this.draft = { ...values }; // what the controls show
    this.requested = null; // the values of a configure or import in flight
    this.fieldErrors = {};
    this.run = null; // TrainingRun
    this.opened = null; // the summary of the checkpoint the worker has open
    this.moduleReady = false; // a lab without training: the module is ready and its sections compute
    this.playAfterConfigure = false; // a preset trains once its model is built
    this.mode = mode;
    this.autoplay = !!mode.autoplay;
    this.visible = true;
    this.resumeWhenVisible = false;
    this.root = root;
    // show= (a link's page setting) keeps only some panels: one section on a slide.
    this.panelIds = new Set((lab.panels ?? []).filter((id) => !mode.show?.length || mode.show.includes(id)));
    this.sectionPlay = new SectionPlay({
      sections: () => this.sectionPanels, values: () => this.draft, change: (fn) => this.changeValues(fn),
    });
    this.build(root);
    for (const c of this.allControls()) {
      c.setHidden(mode.hide ?? []);
      c.setValues(this.draft);
    }
    this.refreshControls();
    followWorker(this);
    if (mode.embed) this.fitEmbed();
    watchVisibility(root, (visible) => this.setVisible(visible));
  }

  has(panel) { return this.panelIds.has(panel); }

  allControls() {
    return this.panels.map((p) => p.controls).filter(Boolean);
  }

  // ---- page structure ----

  /**
   * The panels, in the order they draw (the most urgent first) and hear the worker: the training
   * panels of a lab that trains even when show= leaves them off the page, the others when listed.
   */
  build(root) {
    const { lab, mode } = this;
    const listed = (id, make) => (this.has(id) ? make(this) : null);
    this.settings = settingsPanel(this);
    this.weights = lab.weights ? weightsPanel(this) : null;
    const byId = {
      open: lab.open ? listed('open', openPanel) : null,
      transport: lab.trainer ? transportPanel(this) : null,
      curves: lab.trainer ? curvesPanel(this) : null,
      attention: listed('attention', attentionPanel),
      rows: listed('rows', rowsPanel),
      inspect: listed('inspect', inspectPanel),
      compare: lab.weights ? listed('compare', comparePanel) : null,
    };
    this.sectionPanels = [];
    for (const section of lab.sections ?? []) {
      const id = `section:${section.id}`;
      if (this.has(id)) this.sectionPanels.push(byId[id] = sectionPanel(this, section));
    }
    this.curves = byId.curves;
    this.attention = byId.attention;
    this.transport = byId.transport;
    this.compare = byId.compare;
    this.panels = [
      this.settings, this.weights, byId.open, byId.transport, byId.curves, byId.attention, byId.compare,
      byId.rows, byId.inspect, ...this.sectionPanels,
    ].filter(Boolean);

    if (this.weights) this.settings.node.append(this.weights.node); // at the foot of the sidebar
    // The full page opens as an instrument (issue 29): the stage (lab.firstScreen.panels: the main
    // action and the main figure) comes first, then the settings, then the rest of the lesson with the
    // lab's intro at its head. The stylesheet puts the settings in a column beside both on a wide screen,
    // and under the stage on a phone; in the DOM the stage comes first, so Play is the first stop of Tab.
    // Embedded, there is no stage: the slide's layout (styles.css) places the panels itself.
    const shown = lab.panels.filter((id) => this.has(id) && byId[id]);
    const staged = mode.embed ? [] : shown.filter((id) => lab.firstScreen?.panels?.includes(id));
    this.stage = el('div', { className: 'stage' }, ...staged.map((id) => byId[id].node));
    const main = el('div', { className: 'main-column' },
      ...shown.filter((id) => !staged.includes(id)).map((id) => byId[id].node));
    if (!mode.embed) main.prepend(this.settings.intro);
    this.mainColumn = main;
    // Embedded, the loss curve sits beside the main heatmap when there is one (styles.css).
    main.classList.toggle('beside-attention', !!byId.attention && this.has('curves'));
    root.append(this.stage, this.settings.node, main);
    this.drawing = new DrawScheduler({
      root, panels: this.panels,
      ready: () => !!this.run || !lab.trainer,
      training: () => !!this.run?.running,
    });
  }

  /**
   * Embed mode: the main heatmap fits the frame with the loss curve beside it; without one, the panels
   * stack and the charts may narrow.
   */
  fitEmbed() {
    if (this.attention) {
      this.embedLayout = new EmbedLayout({
        heatmap: this.attention.heatmaps.large,
        charts: this.curves ? [this.curves.lossChart] : [],
        onResize: () => this.schedule('charts'),
      });
    } else if (this.curves) {
      for (const chart of this.curves.charts) chart.minWidth = 160;
    }
  }

  // ---- settings ----

  /** A field was edited (commit: the change is final, e.g. on blur or a select's change). */
  fieldInput(name, parsed, commit) {
    if (parsed.error) {
      this.fieldErrors[name] = parsed.error;
      this.refreshControls();
      return;
    }
    delete this.fieldErrors[name];
    this.draft = { ...this.draft, [name]: parsed.value };
    if (commit) {
      // A new input for the section that plays (a new sentence, other beams) ends the play; a view
      // setting of another section (a layer, a head) does not.
      this.sectionPlay.inputChanged(name);
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
      const changed = this.lab.properties
        .filter((p) => p.effect === 'view' && this.applied[p.name] !== this.draft[p.name]).map((p) => p.name);
      this.applied = { ...this.applied, ...Object.fromEntries(changed.map((n) => [n, this.draft[n]])) };
      if (changed.includes('palette') || changed.includes('colourRange')) this.schedule('palette');
      this.requestSections(changed);
    }
    const changes = resettingChanges(this.lab.properties, this.applied, this.draft);
    // Nothing to lose before the first step: rebuild at once. Otherwise ask (the pending bar).
    if (changes.length && this.run && this.run.step === 0 && !this.run.running) this.configure(this.draft);
    this.onValues(this.linkValues());
  }

  /**
   * A section's button, a pick in its figures or a step of its play: a change of the values (e.g. the
   * next random draw).
   */
  changeValues(change) {
    const before = this.draft;
    this.draft = change(this.draft);
    const changed = Object.keys(this.draft).filter((k) => this.draft[k] !== before[k]);
    for (const c of this.allControls()) c.setValues(this.draft);
    this.applied = { ...this.applied, ...Object.fromEntries(changed.map((k) => [k, this.draft[k]])) };
    this.requestSections(changed);
    this.onValues(this.linkValues());
  }

  /** The sections whose result depends on one of these settings ask the worker again. */
  requestSections(changed) {
    for (const section of this.sectionPanels) if (section.dependsOnAny(changed)) section.request();
  }

  /** The values a section computes with: the applied model settings, the view settings as they are now. */
  sectionValues() {
    const valid = Object.keys(this.fieldErrors).length === 0;
    const view = this.lab.properties.filter((p) => p.effect === 'view').map((p) => p.name);
    const values = { ...this.applied, ...(valid ? Object.fromEntries(view.map((n) => [n, this.draft[n]])) : {}) };
    // A setting the open model cannot take (its field disabled, saying why) counts as its default.
    for (const p of this.lab.properties) if (this.unavailable?.[p.name]) values[p.name] = p.default;
    return values;
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

  /** The worker was asked for a model with these values (null: the request failed); `applied` follows. */
  expectModel(values) {
    this.requested = values;
  }

  /** Sends a configure with these values; `applied` follows when the worker confirms. */
  configure(values) {
    if (!this.lab.trainer) {
      // Nothing to build: the module is ready, so the sections compute.
      this.moduleReady = true;
      for (const section of this.sectionPanels) section.request();
      return;
    }
    if (values === this.draft && !this.validDraft()) return;
    this.expectModel({ ...values });
    this.notices.dismiss('configure');
    this.client.send('configure', { lab: this.lab.id, ...this.lab.configureRequest(values) });
    this.client.send('set', { speed: this.lab.speedOf(values), lr: values.lr });
  }

  revertDraft() {
    const resetting = new Set(this.lab.properties.filter((p) => p.effect === 'reset').map((p) => p.name));
    this.draft = Object.fromEntries(Object.entries(this.draft)
      .map(([k, v]) => [k, resetting.has(k) ? this.applied[k] : v]));
    this.fieldErrors = {};
    this.settings.controls.setValues(this.draft);
    this.refreshControls();
    this.onValues(this.linkValues());
  }

  applyPreset(preset) {
    // The page's own settings (embed, hide, …) and the run settings stay; the model's start over.
    const labNames = new Set(this.lab.properties.map((p) => p.name));
    const keep = Object.fromEntries(Object.entries(this.draft)
      .filter(([k]) => !labNames.has(k) || ['backend', 'speed', 'palette', 'colourRange'].includes(k)));
    let values = { ...defaultValues(this.lab.properties), ...keep };
    // What each preset value implies (the Alignment lab's task brings its step count), then the preset wins.
    for (const [name, value] of Object.entries(preset.values)) {
      values = this.lab.afterChange(name, { ...values, [name]: value });
    }
    values = { ...values, ...preset.values };
    this.draft = values;
    this.fieldErrors = {};
    for (const c of this.allControls()) c.setValues(values);
    if (preset.weights) {
      // A preset that is a model (the One query lab's hand-built solution): loaded as a weights file
      // would be, so the page shows exactly what import shows; nothing to train.
      this.applied = { ...values };
      const metadata = this.lab.weights.metadata(this.lab.configureRequest(values).config, 0);
      this.weights.load(stateDictBytes(preset.weights(), metadata), preset.label, { preset: true });
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
    if (!this.run.running && this.refusePlay()) return;
    this.client.send(this.run.running ? 'pause' : 'play');
  }

  /**
   * Play while a setting of the model or of its training shows an error would train the settings before
   * it, silently (issue 29): instead the transport says which setting to fix, and that field takes the
   * focus. -> whether Play was refused. A view setting's error (a section's input) does not stop training.
   */
  refusePlay() {
    const errors = { ...this.fieldErrors };
    for (const { name, message } of crossCheck(this.lab, this.draft)) errors[name] ??= message;
    const trains = new Set(this.lab.properties
      .filter((p) => p.effect === 'reset' || p.effect === 'live').map((p) => p.name));
    const name = Object.keys(errors).find((n) => trains.has(n));
    if (!name) return false;
    const label = this.lab.properties.find((p) => p.name === name).label;
    this.transport.refused(`Not started: ${label} shows an error (${errors[name]}). `
      + 'Fix it, or set it back, then press Play.');
    const field = this.root.querySelector(`#prop-${name}`);
    const fold = field?.closest('details');
    if (fold) fold.open = true;
    field?.focus();
    return true;
  }

  /** A finished run's replay (the transport's button): the timeline plays its snapshots from step 0. */
  replayRun() {
    this.attention?.replay();
  }

  /**
   * The lab went off screen (hidden tab, slide moved on, iframe hidden) or came back. Training pauses
   * while unseen and resumes on return, only if it was playing.
   */
  setVisible(visible) {
    this.visible = visible;
    this.root.dataset.visible = String(visible);
    if (!visible) this.sectionPlay.stop(); // the lab left the screen (a slide moved on): a section's play ends
    if (!visible && this.run?.running) {
      this.resumeWhenVisible = true;
      this.client.send('pause');
    } else if (visible && this.resumeWhenVisible) {
      this.resumeWhenVisible = false;
      if (this.run && !this.run.running) this.client.send('play');
    }
  }

  /** Page settings that follow what the user did (the Hub model opened): kept in the draft and the link. */
  setPageValues(values) {
    this.draft = { ...this.draft, ...values };
    this.applied = { ...this.applied, ...values };
    this.onValues(this.linkValues());
  }

  /** The values a link carries: the model's settings, with live and view settings as they are now. */
  linkValues() {
    return this.validDraft() ? { ...this.draft } : { ...this.applied };
  }

  /** Every control shows the draft's errors (its field errors, then the lab's cross-checks); panels follow. */
  refreshControls() {
    const errors = { ...this.fieldErrors };
    for (const { name, message } of crossCheck(this.lab, this.draft)) errors[name] ??= message;
    for (const c of this.allControls()) {
      c.setErrors(errors);
      // A setting that applies to some choices only (Translation's layer and head: one head) shows with them.
      c.setRelevance((p) => isRelevant(p, this.draft));
    }
    for (const panel of this.panels) panel.refresh?.(errors);
  }

  // ---- drawing ----

  /** The snapshot the timeline shows (the newest without a timeline). */
  shownSnapshot() {
    return this.run?.snapshots.at(this.attention?.shownIndex ?? -1) ?? this.run?.snapshots.at(-1);
  }

  /** Marks panels' parts, or words that make parts due ('all', 'snapshot', 'palette'), to draw next frame. */
  schedule(...words) {
    this.drawing.schedule(...words);
  }

  redraw() {
    this.schedule('all');
  }
}
