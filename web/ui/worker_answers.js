// What the lab page (lab_page.js) does with each answer of the worker (web/protocol.md): it keeps the
// run (TrainingRun) and the values the worker's model was built with, takes a checkpoint's settings and
// limits when one opens, and turns a refused model or an error no panel answers into a notice. Every
// message is then offered to every panel; 'state' arrives with stopped: true when it ended a run that
// was training. The page's own state (draft, applied, run, ...) stays on the page; this file only
// follows the messages that change it.
import { TrainingRun } from './training_run.js';
import { defaultValues } from '../shared/properties.js';

// The worker's answers the page follows; 'ready' is the app's (app.js).
const ANSWERS = [
  'configured', 'progress', 'state', 'inspection', 'weights', 'weights-peeked', 'compared', 'section',
  'open-progress', 'opened', 'hub-stored', 'error',
];

/** Routes each of the worker's answers that the page follows to the page (and its panels). */
export function followWorker(page) {
  for (const type of ANSWERS) page.client.on(type, (m) => receive(page, m));
}

function receive(page, m) {
  if (m.type === 'configured') receiveConfigured(page, m);
  else if (m.type === 'progress') receiveProgress(page, m);
  else if (m.type === 'state') receiveState(page, m);
  else if (m.type === 'opened') receiveOpened(page, m);
  else if (m.type === 'error') receiveError(page, m);
  else offer(page, m);
}

/** Offers a message to every panel -> whether one took it. */
function offer(page, m) {
  let taken = false;
  for (const panel of page.panels) taken = panel.handles(m) || taken;
  return taken;
}

function receiveConfigured(page, m) {
  page.applied = { ...(page.requested ?? page.applied) };
  page.requested = null;
  if (m.imported) {
    // The model is the file's: the controls show its settings.
    page.draft = { ...page.applied };
    page.fieldErrors = {};
    page.settings.controls.setValues(page.draft);
    page.onValues(page.linkValues());
  }
  if (m.recovered) {
    const from = m.recovered.step ? `the weights of step ${m.recovered.step}` : 'fresh weights';
    page.notices.show(`The training module stopped (${m.recovered.reason}). `
      + `A fresh one was started with the same settings and ${from}; the step count starts again from 0. `
      + 'Press Play to go on.', { kind: 'warning', key: 'recovered' });
  }
  page.run = new TrainingRun(m);
  page.onChoice(m.choice);
  offer(page, m);
  page.refreshControls();
  if (page.playAfterConfigure || page.autoplay) {
    page.playAfterConfigure = false;
    page.autoplay = false; // autoplay= starts the first model only
    // A lab that is not on screen waits: it starts when it is shown.
    if (page.visible) page.client.send('play');
    else page.resumeWhenVisible = true;
  }
  page.schedule('all');
}

function receiveProgress(page, m) {
  const run = page.run;
  if (!run) return;
  run.progress(m);
  page.root.dataset.running = String(m.running); // at once, not on the next frame (none come while unseen)
  if (m.choice && m.choice.reason !== run.choice.reason) {
    run.choice = m.choice;
    page.onChoice(m.choice);
  }
  offer(page, m);
  if (!m.running) page.drawing.scheduleDeferred();
}

function receiveState(page, m) {
  if (!page.run) return;
  const stopped = page.run.state(m);
  page.root.dataset.running = String(m.running);
  offer(page, { ...m, stopped });
  page.refreshControls();
  if (!m.running) page.drawing.scheduleDeferred();
}

function receiveOpened(page, m) {
  if (m.lab !== page.lab.id) return;
  page.sectionPlay.stop(); // another model: another result to play
  page.opened = m.summary;
  // With a checkpoint open, the stage is its figure: the open panel (what was opened, open another)
  // steps down to head the lesson, out of the first screen and of the first Tab stops.
  const openNode = page.panels.find((p) => p.node.id === 'panel-open')?.node;
  if (openNode && page.stage.contains(openNode)) page.mainColumn.prepend(openNode);
  takeCheckpointSettings(page, m.summary?.settings ?? {});
  // The steppers stop at this model's last layer and head.
  const limits = Object.fromEntries(page.lab.properties.filter((p) => p.maxOf && m.summary)
    .map((p) => [p.name, p.maxOf(m.summary)]));
  for (const c of page.allControls()) c.setLimits(limits);
  // Settings this model cannot take (the Chat box without a chat template): disabled with the reason, and
  // the sections computed with their defaults meanwhile (lab_page.js sectionValues).
  page.unavailable = Object.fromEntries(page.lab.properties.filter((p) => p.unavailable && m.summary)
    .map((p) => [p.name, p.unavailable(m.summary)]));
  for (const c of page.allControls()) c.setUnavailable(page.unavailable);
  offer(page, m);
}

/**
 * Settings a checkpoint brings (a Marian config's num_beams and max_length, as generate() uses them)
 * replace those still at their default; a setting the link gave or the user changed is kept.
 */
function takeCheckpointSettings(page, settings) {
  const linked = page.mode.linked ?? new Set();
  const defaults = defaultValues(page.lab.properties);
  const taken = Object.entries(settings)
    .filter(([name]) => name in defaults && !linked.has(name) && page.draft[name] === defaults[name]);
  if (!taken.length) return;
  page.draft = { ...page.draft, ...Object.fromEntries(taken) };
  page.applied = { ...page.applied, ...Object.fromEntries(taken) };
  for (const c of page.allControls()) c.setValues(page.draft);
  page.onValues(page.linkValues());
}

function receiveError(page, m) {
  const { message, request } = m;
  if (request === 'init' || request === 'worker') return; // the app's boot reports these
  if (request === 'recover') page.opened = null; // the restarted module has no checkpoint: open it again
  if (request === 'configure') {
    configureRefused(page, message);
    return;
  }
  if (offer(page, m)) return;
  page.notices.show(`${request ? `${request}: ` : ''}${message}`, { kind: 'error', key: `worker-${request}` });
}

function configureRefused(page, message) {
  page.requested = null;
  page.playAfterConfigure = false;
  if (!page.run) {
    // The first model (from a link) was refused, e.g. settings too large together: there is no
    // model to keep, so build the default one rather than leave the page without any.
    const labNames = new Set(page.lab.properties.map((p) => p.name));
    const keep = Object.fromEntries(Object.entries(page.draft)
      .filter(([k]) => !labNames.has(k) || ['speed', 'palette'].includes(k)));
    const values = { ...defaultValues(page.lab.properties), ...keep };
    page.draft = values;
    page.fieldErrors = {};
    page.settings.controls.setValues(values);
    page.configure(values); // (clears the 'configure' notice: show it after)
    page.notices.show(`The link's model was not built: ${message}. The default settings are used instead.`,
      { kind: 'error', key: 'configure' });
    page.onValues(page.linkValues());
    page.refreshControls();
    return;
  }
  page.notices.show(`The model was not rebuilt: ${message}`, { kind: 'error', key: 'configure' });
  // Said beside Apply & reset too, where the student pressed it, until a setting changes.
  page.refused = { draft: JSON.stringify(page.draft), message };
  page.refreshControls();
}

