// Boot: start the training worker, restore the lab's settings from the URL, fill the header badge
// (which backend ran and why, module version and build), and hand the page to the lab machinery.
import { WorkerClient } from './ui/worker_client.js';
import { Notices } from './ui/notice.js';
import { LabPage } from './ui/lab_page.js';
import { fromQuery, labIdOf, linkFor, toQuery } from './ui/url_state.js';
import { setUpTheme } from './ui/theme.js';
import { forwardDeckKeys } from './ui/deck_keys.js';
import { LABS, labById, nextLab } from './labs/registry.js';
import { showHome, labNavigation } from './ui/home_page.js';
import { startSiteWorker } from './site/site_worker.js';

const $ = (id) => document.getElementById(id);
const notices = new Notices($('notices'));

// Settings that belong to the page, not to a lab: a link with only these still shows the home page.
const HOME_PARAMETERS = new Set(['theme']);

/**
 * The lab the link asks for; null for the home page (a link with no settings, or a lab= that does not
 * exist). A link with settings but no lab= predates the registry: it opens the course's first lab.
 */
function chooseLab(search) {
  const id = labIdOf(search);
  if (id === undefined) {
    const given = [...new URLSearchParams(search).keys()].filter((k) => !HOME_PARAMETERS.has(k));
    return given.length ? LABS[0] : null;
  }
  if (!labById(id)) notices.show(`Unknown lab '${id}' in the link: choose one of the labs below.`,
    { kind: 'warning', key: 'lab' });
  return labById(id) ?? null;
}

const badge = {
  set(id, text, title) {
    const node = $(id);
    node.textContent = text;
    if (title !== undefined) node.title = title;
  },
};

/** "SIMD128 + 2 threads", "SIMD128 build" or "scalar build": the module that runs, and its threads. */
function moduleLabel(m) {
  if (m.build === 'simd-threads') return `SIMD128 + ${m.threads.count} thread${m.threads.count === 1 ? '' : 's'}`;
  return `${m.build === 'simd' ? 'SIMD128' : 'scalar'} build`;
}

function showReady(m) {
  const why = m.threads.reason ? `; no threads: ${m.threads.reason}` : '';
  badge.set('badge-version', `v${m.version} · ${moduleLabel(m)}`, `WASM module ${m.version}, ${m.build} build `
    + `(${m.buildNote}${why})`);
  $('badge-version').dataset.build = m.build;
  $('badge-version').dataset.threads = String(m.threads.count);
  $('badge-version').dataset.noThreads = m.threads.reason ?? '';
  $('badge-version').dataset.version = m.version;
  if (m.webgpu.available) {
    badge.set('badge-webgpu', `WebGPU: ${m.webgpu.adapter || 'adapter found'}`, 'A WebGPU adapter is available for the '
      + 'attention kernel');
  } else {
    badge.set('badge-webgpu', `WebGPU unavailable: ${m.webgpu.reason}`,
      'The attention kernel runs in WebAssembly instead');
  }
  $('badge-webgpu').dataset.available = String(m.webgpu.available);
  $('badge-cpu').textContent = `CPU kernels: ${m.cpuBackends.map((b) => (b === 'simd128' ? 'SIMD128' : b)).join(', ')}`;
  // Until an attention has run (a checkpoint lab before its checkpoint is open) the badge says the
  // module is ready, not "starting…", which read as a hang.
  if (!$('badge-backend').dataset.backend) {
    badge.set('badge-backend', 'ready', 'The module is loaded; the badge names the kernel that ran once an attention '
      + 'has been computed');
    badge.set('badge-plain', 'Runs on this computer: ready');
  }
}

// What the header says in plain words, for each kernel (the details name it and say why it ran).
const PLAIN = { webgpu: 'GPU', simd128: 'fast CPU path', scalar: 'CPU (basic path)' };

function showChoice(choice) {
  badge.set('badge-plain', `Runs on this computer: ${PLAIN[choice.backend] ?? choice.label}`);
  badge.set('badge-backend', `${choice.label} ran`, `Backend that runs the attention kernel: ${choice.label}`);
  badge.set('badge-reason', choice.reason);
  $('badge-backend').dataset.backend = choice.backend;
}

/** The theme (the link's theme= wins over the stored one) and its toggle button, labelled with what it does. */
function themeButton(redraw, forced = 'auto') {
  const toggleTheme = setUpTheme(redraw, { forced });
  const button = $('theme-toggle');
  const label = () => {
    const dark = document.documentElement.dataset.theme === 'dark';
    button.textContent = dark ? '☀ Light' : '☾ Dark';
    button.setAttribute('aria-label', dark ? 'Switch to the light theme' : 'Switch to the dark theme');
  };
  label();
  button.addEventListener('click', () => {
    toggleTheme();
    label();
  });
}

const STARTUP_WATCH_MS = 30000;
const FIRST_VISIT_REGISTER_MS = 10000;

function boot(site, firstFigureDrawn) {
  const lab = chooseLab(location.search);
  if (!lab) {
    takeEarlyWorker()?.terminate(); // an unknown lab's link: the home page runs no module
    bootHome();
    firstFigureDrawn();
    return;
  }
  const { values, problems } = fromQuery(lab, location.search);
  if (problems.length) {
    notices.show(`Some settings in the link were not used: ${problems.join(' ')}`, { kind: 'warning', key: 'url' });
  }
  document.title = `${lab.title} — Attention Lab`;
  // Embed mode and controls=min are laid out by the stylesheet (html[data-embed], html[data-controls]).
  document.documentElement.dataset.embed = values.embed ? '1' : '0';
  document.documentElement.dataset.controls = values.controls;
  if (values.embed) forwardDeckKeys();

  let page = null;
  themeButton(() => page?.redraw(), values.theme);

  // Single-file mode (scripts/build_single_file.mjs) starts the worker its own way: file:// pages can't.
  const nav = labNavigation(lab, nextLab(lab));
  $('lab').before(nav.top);
  $('lab').after(nav.bottom);
  const worker = globalThis.ATTNLAB_INLINE?.createWorker() ?? takeEarlyWorker() ?? new Worker(new URL('./worker_start.js', import.meta.url),
    { type: 'module' });
  const client = new WorkerClient(worker);
  page = new LabPage({
    root: $('lab'), lab, client, notices, values,
    onValues: (v) => history.replaceState(null, '', toQuery(lab, v)),
    onChoice: showChoice,
    mode: { embed: values.embed, controls: values.controls, hide: values.hide, show: values.show,
      autoplay: values.autoplay, answers: values.answers, questions: values.questions,
      linked: new Set(new URLSearchParams(location.search).keys()) }, // the settings the link gave: they win over a checkpoint's
  });
  history.replaceState(null, '', toQuery(lab, values));

  $('copy-link').addEventListener('click', async () => {
    const link = linkFor(location, lab, page.linkValues());
    $('copy-link').dataset.link = link;
    // A model opened from files is named, not carried (page_properties.js 'opened'): say so where it is copied.
    const named = page.linkValues().opened;
    const files = named ? ` It names “${named}” but cannot carry files from this computer: whoever opens it is `
      + 'asked for them.' : '';
    try {
      await navigator.clipboard.writeText(link);
      notices.show(`Link copied: ${link}${files}`, { kind: 'info', key: 'link' });
    } catch {
      notices.show(`Copy this link: ${link}${files}`, { kind: 'info', key: 'link' });
    }
  });

  // No spinner waits forever: if the worker has not said 'ready' in 30 s, say so (and what to try).
  const startWatch = setTimeout(() => {
    notices.show('The training module has not started after 30 s. A very slow machine may still get there; '
      + 'otherwise reload the page (an embedding frame needs sandbox="allow-scripts allow-same-origin": '
      + 'docs/embedding.md).',
    { kind: 'warning', key: 'init-slow' });
  }, STARTUP_WATCH_MS);
  // The first step shown or the first section computed (training and computed labs), or a checkpoint
  // lab's panel ready for files: each comes after 'ready', once its figure is drawn. Once: progress
  // messages come ten times a second for as long as the lab trains.
  let drawn = false;
  const figureDrawn = () => {
    if (drawn) return;
    drawn = true;
    requestAnimationFrame(() => firstFigureDrawn());
  };
  for (const type of ['progress', 'section', 'configured']) client.on(type, figureDrawn);
  client.on('ready', (m) => {
    clearTimeout(startWatch);
    notices.dismiss('init-slow');
    showReady(m);
    page.configure(values);
    if (lab.open) figureDrawn(); // its panel waits for the student's files
  });
  client.on('error', (m) => {
    if (m.request === 'init' || m.request === 'worker') {
      clearTimeout(startWatch);
      notices.dismiss('init-slow');
      badge.set('badge-backend', 'not running');
      badge.set('badge-plain', 'Not running: see the message below');
      notices.show(`The training module could not start: ${m.message}`, { kind: 'error', key: 'init' });
    }
  });
  // The SIMD128 build also holds the scalar kernel, so 'auto' serves every backend choice.
  client.send('init', { build: 'auto', webgpu: true, noThreads: site.reason });
  window.addEventListener('resize', () => page.redraw());
}

/** The worker index.html started for a link that names a lab, if it did; a page ends one it does not use. */
function takeEarlyWorker() {
  const worker = window.attnlabEarlyWorker ?? null;
  window.attnlabEarlyWorker = undefined;
  return worker;
}

/** The home page: the labs in course order; no worker, no module. */
function bootHome() {
  document.title = 'Attention Lab';
  document.documentElement.dataset.page = 'home';
  badge.set('badge-backend', 'choose a lab', 'Each lab starts its own training module');
  $('badge').hidden = true; // no module runs on the home page: nothing to report
  for (const id of ['copy-link']) $(id).hidden = true;
  let home = null;
  themeButton(() => home?.redraw());
  home = showHome($('lab'), LABS);
}

/** A new build has been cached beside this one: offer it (switching reloads the page). */
function offerUpdate(apply) {
  const box = notices.show('A new version of Attention Lab is ready.', { kind: 'info', key: 'update' });
  const button = Object.assign(document.createElement('button'),
    { type: 'button', id: 'reload-new-version', textContent: 'Reload for the new version' });
  button.addEventListener('click', apply);
  box.querySelector('p').append(' ', button);
}

// The service worker first (it says whether threads can run); a first visit registers it only once the
// lab's first figure is drawn, so that its download of the whole site does not slow the lab's. A lab
// that never gets there (its module failed, a checkpoint lab waiting for files) registers it after 10 s.
let firstFigureDrawn;
const firstVisitDone = new Promise((resolve) => { firstFigureDrawn = resolve; });
setTimeout(firstFigureDrawn, FIRST_VISIT_REGISTER_MS);
// (A blob: URL, the single file's, is no base for a URL: it has no service worker anyway.)
const scriptUrl = globalThis.ATTNLAB_INLINE ? null : new URL('../../sw.js', import.meta.url);
const site = await startSiteWorker({ scriptUrl, offerUpdate, firstVisitDone });
if (!site.reloading) boot(site, firstFigureDrawn);
