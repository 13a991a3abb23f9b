// The page's side of the service worker (public/sw.js): register it, reload once so that the page is
// cross-origin isolated (the worker's headers only apply to pages it served), offer a new version,
// and, where threads cannot be had, say why in words the badge can show.
//   const site = await startSiteWorker({offerUpdate}) -> {isolated, reason, reloading}
// `reloading` means the page is about to reload: the caller starts nothing.

// At most one automatic reload per COEP value per tab session, so that no browser can loop: one
// that ignores the headers ends up single-threaded with the reason, not reloading forever.
const RELOADS_KEY = 'attnlab-isolation-reloads';
// How long a first visit waits for the worker to install (it caches the whole site) before the page
// starts without threads; the next load is isolated either way.
const INSTALL_WAIT_MS = 20000;

export const REASONS = {
  singleFile: 'the single file runs from file://, where no service worker can make the page cross-origin isolated',
  sandboxed: 'the page is in a sandboxed frame without storage of its own, where no service worker can run',
  noServiceWorker: 'this browser offers no service worker here (it needs https or localhost)',
  frame: 'the page is embedded in a frame, and the embedding page is not cross-origin isolated',
  noSharedMemory: 'this browser has no SharedArrayBuffer',
  ignored: 'this browser did not isolate the page with the service worker\'s headers',
  failed: (why) => `the service worker could not be installed (${why})`,
  installing: 'the service worker was still caching the site; the next load runs threads',
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

export async function startSiteWorker({ offerUpdate = () => {} } = {}) {
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
  // A worker that is already active but does not control this page: the page was loaded past it (a
  // hard reload, Ctrl+Shift+R), and it will not take this page over. Start at once, without threads,
  // and say how to get them; the registration below still looks for a new version.
  const bypassed = !container.controller && !globalThis.crossOriginIsolated
    && !!(await container.getRegistration().catch(() => null))?.active;
  const deadline = new Promise((resolve) => setTimeout(() => resolve(null), INSTALL_WAIT_MS));
  let registration;
  try {
    registration = await Promise.race([container.register(new URL('../../../sw.js', import.meta.url),
      { updateViaCache: 'none' }), deadline]);
  } catch (error) {
    return { isolated: globalThis.crossOriginIsolated === true, reason: REASONS.failed(error?.message ?? error) };
  }
  if (!registration) return globalThis.crossOriginIsolated ? isolation() : { isolated: false,
    reason: REASONS.installing };
  watchForUpdates(registration, offerUpdate);
  if (bypassed) return { isolated: false, reason: REASONS.hardReload };
  if (globalThis.crossOriginIsolated) return isolation();
  if (inFrame()) return { isolated: false, reason: REASONS.frame };
  if (container.controller) {
    // The worker served this page and it is still not isolated: the browser may not know
    // credentialless; try require-corp once, then give up.
    if (reloadsDone()?.['require-corp']) return { isolated: false, reason: REASONS.ignored };
    await tell(container.controller, { type: 'coep', value: 'require-corp' });
    return reloadOnce('require-corp') ? { reloading: true } : { isolated: false, reason: REASONS.ignored };
  }
  // A first visit: wait for the worker to take this page, then reload through it.
  const claimed = await Promise.race([
    new Promise((resolve) => container.addEventListener('controllerchange', () => resolve(true), { once: true })),
    deadline.then(() => false),
  ]);
  if (!claimed) return { isolated: false, reason: REASONS.installing };
  return reloadOnce('credentialless') ? { reloading: true } : { isolated: false, reason: REASONS.ignored };
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
