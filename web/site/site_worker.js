// The page's side of the service worker (public/sw.js): register it, offer a new version, and, where
// threads cannot be had, say why in words the badge can show.
//   const site = await startSiteWorker({scriptUrl, offerUpdate, firstVisitDone}) -> {isolated, reason, reloading}
// scriptUrl: public/sw.js's URL. The caller at web/ forms it, because this module's own import.meta.url
// is the bundle's in the hosted build (scripts/bundle_site.mjs), not web/site/'s.
// `reloading` means the page is about to reload: the caller starts nothing.
// A first visit starts the lab at once, without threads, and registers the worker only once
// `firstVisitDone` settles (the lab's first figure is drawn): the worker's install downloads the whole
// site for offline use, and on a slow network that would hold the lab back (Slow 4G: 29 s to the first
// figure when the page waited for the install and reloaded through it; benchmarks/page_first_visit.mjs).
// The worker's headers only apply to pages it served, so the next load is cross-origin isolated.

// At most one automatic reload per COEP value per tab session, so that no browser can loop: one
// that ignores the headers ends up single-threaded with the reason, not reloading forever.
const RELOADS_KEY = 'attnlab-isolation-reloads';
// How long a later load waits for the browser to register the worker before the page starts without it.
const REGISTER_WAIT_MS = 20000;

export const REASONS = {
  singleFile: 'the single file runs from file://, where no service worker can make the page cross-origin isolated',
  sandboxed: 'the page is in a sandboxed frame without storage of its own, where no service worker can run',
  noServiceWorker: 'this browser offers no service worker here (it needs https or localhost)',
  frame: 'the page is embedded in a frame, and the embedding page is not cross-origin isolated',
  noSharedMemory: 'this browser has no SharedArrayBuffer',
  ignored: 'this browser did not isolate the page with the service worker\'s headers',
  failed: (why) => `the service worker could not be installed (${why})`,
  installing: 'the service worker was still caching the site; the next load runs threads',
  firstVisit: 'a first visit starts at once, while the service worker caches the site for offline use; the next load runs threads',
  hardReload: 'a hard reload bypasses the site\'s worker: reload normally for threads',
};

function reloadsDone() {
  try {
    return JSON.parse(sessionStorage.getItem(RELOADS_KEY) ?? '{}');
  } catch {
    return null; // no session storage: no guard, so no automatic reload
  }
}

/** Reloads once for this COEP value; false (and no reload) if that was done already or cannot be guarded. */
function reloadOnce(policy) {
  const done = reloadsDone();
  if (!done || done[policy]) return false;
  done[policy] = true;
  sessionStorage.setItem(RELOADS_KEY, JSON.stringify(done));
  location.reload();
  return true;
}

function inFrame() {
  try {
    return window.self !== window.top;
  } catch {
    return true; // a cross-origin parent
  }
}

const tell = (worker, message) => new Promise((resolve) => {
  const channel = (event) => {
    if (event.data?.type === 'coep-set') {
      navigator.serviceWorker.removeEventListener('message', channel);
      resolve();
    }
  };
  navigator.serviceWorker.addEventListener('message', channel);
  worker.postMessage(message);
});

export async function startSiteWorker({ scriptUrl, offerUpdate = () => {}, firstVisitDone = Promise.resolve() }) {
  if (globalThis.ATTNLAB_INLINE || location.protocol === 'file:') return { isolated: false,
    reason: REASONS.singleFile };
  let container;
  try {
    container = navigator.serviceWorker;
  } catch {
    return { isolated: false, reason: REASONS.sandboxed }; // an opaque origin: the getter throws
  }
  // A host that sends the two headers itself (docs/hosting.md) isolates the page without a worker.
  if (!container) return globalThis.crossOriginIsolated ? isolation() : { isolated: false,
    reason: REASONS.noServiceWorker };
  const register = () => container.register(scriptUrl, { updateViaCache: 'none' });
  // No worker of this site yet (or one still installing from a visit before): start at once, without
  // threads, and register once the lab is drawn. Nothing reloads under the student's hands.
  const existing = container.controller ? null : await container.getRegistration().catch(() => null);
  if (!container.controller && !existing?.active) {
    firstVisitDone.then(register).then((registration) => watchForUpdates(registration, offerUpdate), () => {});
    if (globalThis.crossOriginIsolated) return isolation();
    return { isolated: false, reason: inFrame() ? REASONS.frame : REASONS.firstVisit };
  }
  // A worker that is already active but does not control this page: the page was loaded past it (a
  // hard reload, Ctrl+Shift+R), and it will not take this page over. Start at once, without threads,
  // and say how to get them; the registration below still looks for a new version.
  const bypassed = !container.controller && !globalThis.crossOriginIsolated;
  const deadline = new Promise((resolve) => setTimeout(() => resolve(null), REGISTER_WAIT_MS));
  let registration;
  try {
    registration = await Promise.race([register(), deadline]);
  } catch (error) {
    return { isolated: globalThis.crossOriginIsolated === true, reason: REASONS.failed(error?.message ?? error) };
  }
  if (!registration) return globalThis.crossOriginIsolated ? isolation() : { isolated: false,
    reason: REASONS.installing };
  watchForUpdates(registration, offerUpdate);
  if (bypassed) return { isolated: false, reason: REASONS.hardReload };
  if (globalThis.crossOriginIsolated) return isolation();
  if (inFrame()) return { isolated: false, reason: REASONS.frame };
  // The worker served this page and it is still not isolated: the browser may not know credentialless;
  // try require-corp once, then give up.
  if (reloadsDone()?.['require-corp']) return { isolated: false, reason: REASONS.ignored };
  await tell(container.controller, { type: 'coep', value: 'require-corp' });
  return reloadOnce('require-corp') ? { reloading: true } : { isolated: false, reason: REASONS.ignored };
}

function isolation() {
  if (!globalThis.crossOriginIsolated) return { isolated: false, reason: REASONS.ignored };
  if (typeof SharedArrayBuffer !== 'function') return { isolated: false, reason: REASONS.noSharedMemory };
  return { isolated: true, reason: null };
}

/**
 * Calls offerUpdate(apply) when a new build has installed beside this one; apply() switches to it
 * and reloads the page (the new worker deletes the old build's cache as it takes over).
 */
function watchForUpdates(registration, offerUpdate) {
  const container = navigator.serviceWorker;
  const offer = (waiting) => offerUpdate(() => {
    container.addEventListener('controllerchange', () => location.reload(), { once: true });
    waiting.postMessage({ type: 'skip-waiting' });
  });
  // A worker that installs while another controls the page waits for the word.
  if (registration.waiting && container.controller) offer(registration.waiting);
  registration.addEventListener('updatefound', () => {
    const installing = registration.installing;
    installing?.addEventListener('statechange', () => {
      if (installing.state === 'installed' && container.controller) offer(installing);
    });
  });
}
