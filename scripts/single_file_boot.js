// Bootstrap of dist/attention-lab.html: scripts/build_single_file.mjs inlines this file as the page's
// one module script, after the data blocks it reads. Not loaded by the served site.
//
// What a file:// page may do, as measured in Chromium 156 (headless, no flags):
//   - inline <script type="module">: yes; fetch() or <script src> of a file: URL: no (opaque origin);
//   - import() of a blob: URL the page made: yes, and the module's own imports of blob: URLs too;
//   - new Worker(blobUrl, {type: 'module'}): refused (an error event, whatever the module holds);
//   - new Worker(blobUrl) (classic): yes, but the worker can't load the page's blob: URLs (fetch,
//     importScripts and import() all fail); it can import() blob: URLs that it made itself.
// So the page links its module graph from blob: URLs made here, and the worker is a classic script
// (a blob: URL) that carries the module texts and the WASM as base64, makes its own blob: URLs and
// import()s web/worker.js from them. All of this is standard and within Firefox >= 114 (import() in
// workers), which is not tested here (docs/offline.md).
//
// Data blocks (written by the build):
//   #attnlab-modules      JSON {modules: {id: {parts, deps}}, page: [id], worker: id, glue: {simd, scalar}}
//                         parts: strings, and numbers that stand for the URL of deps[n] (quoted)
//   #attnlab-wasm-simd, #attnlab-wasm-scalar   the two WASM modules, gzipped, base64
//   #attnlab-assets       JSON {file: base64}: the labs' data files (web/labs/*: trainer.assets)

/** Makes a blob: URL for `entry` and, first, for everything it imports. urls: id -> URL, shared. */
function linkModules(modules, entry, urls) {
  const visit = (id) => {
    if (urls[id]) return urls[id];
    const m = modules[id];
    if (!m) throw new Error(`single file: module ${id} is not inlined`);
    const text = m.parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(visit(m.deps[p])))).join('');
    urls[id] = URL.createObjectURL(new Blob([`${text}\n//# sourceURL=attention-lab/${id}\n`], { type: 'text/javascript' }));
    return urls[id];
  };
  return visit(entry);
}

/** The hook that web/loader.js and web/app.js read: globalThis.ATTNLAB_INLINE. */
function inlineHook(graph, wasmBase64, urls, createWorker, assetsBase64 = {}) {
  const decode = (base64) => {
    const text = atob(base64());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  };
  // The WASM is stored gzipped; the browser inflates it (DecompressionStream, as for the digits asset).
  const gunzip = async (bytes) => new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
  return {
    modules: {
      get simd() { return linkModules(graph.modules, graph.glue.simd, urls); },
      get scalar() { return linkModules(graph.modules, graph.glue.scalar, urls); },
    },
    // Promises of the bytes (web/loader.js awaits them).
    wasm: {
      get simd() { return gunzip(decode(() => wasmBase64.simd)); },
      get scalar() { return gunzip(decode(() => wasmBase64.scalar)); },
    },
    // file -> () => its bytes, decoded when asked for (web/worker.js reads a lab's data files here).
    assets: Object.fromEntries(Object.keys(assetsBase64).map((file) => [file, () => decode(() => assetsBase64[file])])),
    createWorker,
  };
}

/**
 * Runs in the classic worker. Messages that arrive while the modules load are held, then replayed in
 * order once web/worker.js has installed its handler.
 */
function workerMain(graph, wasmBase64, assetsBase64) {
  const held = [];
  const hold = (event) => held.push(event);
  self.addEventListener('message', hold);
  const urls = {};
  self.ATTNLAB_INLINE = inlineHook(graph, wasmBase64, urls, null, assetsBase64);
  import(linkModules(graph.modules, graph.worker, urls)).then(() => {
    self.removeEventListener('message', hold);
    for (const event of held) self.dispatchEvent(new MessageEvent('message', { data: event.data }));
  }, (error) => {
    self.postMessage({ type: 'error', request: 'worker', message: `the worker's modules failed to load: ${error?.message ?? error}` });
  });
}

const text = (id) => document.getElementById(id).textContent;
const graphJson = text('attnlab-modules');
const graph = JSON.parse(graphJson);
const wasmBase64 = { get simd() { return text('attnlab-wasm-simd'); }, get scalar() { return text('attnlab-wasm-scalar'); } };
const pageUrls = {};

function createWorker() {
  const source = new Blob([
    '"use strict";\n', linkModules.toString(), '\n', inlineHook.toString(), '\n', workerMain.toString(), '\n',
    'workerMain(', graphJson, ', {simd: "', wasmBase64.simd, '", scalar: "', wasmBase64.scalar, '"}, ', text('attnlab-assets'), ');\n',
  ], { type: 'text/javascript' });
  return new Worker(URL.createObjectURL(source), { name: 'attention-lab' }); // classic: see above
}

globalThis.ATTNLAB_INLINE = inlineHook(graph, wasmBase64, pageUrls, createWorker);
for (const entry of graph.page) await import(linkModules(graph.modules, entry, pageUrls));
