// The site's service worker (registered by web/site/site_worker.js; docs/hosting.md). Two jobs:
//  1. Cross-origin isolation on any static host: every same-origin response it serves gets
//     Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy (credentialless, so
//     that the Hub's downloads need no CORP header; require-corp in browsers without it), so that
//     the page is crossOriginIsolated and can run the SIMD128 + threads module.
//  2. Offline: the install caches the whole site of this build (build/site_manifest.js, written by
//     scripts/build_site_manifest.mjs) in one cache named for the build; pages and files are served
//     from it. A new build installs beside the old one and waits until the page says to switch
//     ("Reload for the new version"); only then is the old cache deleted.
// Requests to other origins (the Hub) are not touched: they go to the network as without a worker.
/* eslint-env serviceworker */
importScripts('build/site_manifest.js'); // self.ATTNLAB_SITE = {id, files}

const SITE = self.ATTNLAB_SITE;
const PREFIX = 'attnlab-site-';
const CACHE = PREFIX + SITE.id;
// Where the page's choice of COEP is kept (a worker's globals do not survive its restarts).
const SETTINGS = 'attnlab-settings';
const COEP_KEY = 'coep';
let coep = null; // 'credentialless' | 'require-corp', read from SETTINGS once per worker start

const inScope = (file) => new URL(file, self.registration.scope).href;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // cache: 'reload' skips the HTTP cache, so an old copy of a file never enters a new build's cache.
    // addAll stores all or nothing: a failed file fails the install and the old build stays.
    await cache.addAll(SITE.files.map((file) => new Request(inScope(file), { cache: 'reload' })));
    // The first install takes the page at once (it reloads to become isolated); a later one waits.
    if (!self.registration.active) await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('message', async (event) => {
  const message = event.data ?? {};
  if (message.type === 'skip-waiting') await self.skipWaiting();
  if (message.type === 'coep' && ['credentialless', 'require-corp'].includes(message.value)) {
    coep = message.value;
    const settings = await caches.open(SETTINGS);
    await settings.put(inScope(COEP_KEY), new Response(coep));
    event.source?.postMessage({ type: 'coep-set', value: coep });
  }
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(respond(request));
});

async function respond(request) {
  const cache = await caches.open(CACHE);
  // A page is one file whatever its query (index.html?lab=copy is index.html).
  const page = request.mode === 'navigate';
  const key = page && request.url.split('?')[0].endsWith('/') ? request.url.split('?')[0] + 'index.html' : request;
  const response = (await cache.match(key, { ignoreSearch: page })) ?? await fetch(request);
  return isolated(response, await embedderPolicy());
}

async function embedderPolicy() {
  if (coep) return coep;
  const kept = await caches.match(inScope(COEP_KEY), { cacheName: SETTINGS }); // opens no empty cache
  coep = kept ? await kept.text() : 'credentialless';
  return coep;
}

/** The response with the two headers that make a page cross-origin isolated. */
function isolated(response, policy) {
  if (response.status === 0) return response; // an opaque response cannot be rebuilt (none expected)
  const headers = new Headers(response.headers);
  headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  headers.set('Cross-Origin-Embedder-Policy', policy);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
