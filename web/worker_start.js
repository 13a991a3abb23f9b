// The training worker's first module: it starts the WASM this context will run (its download and
// compile, beside the Emscripten glue: web/build_choice.js) before the rest of the worker's code
// (web/worker.js, most of the worker's bytes) has arrived, so that the two download side by side.
// The page starts this file (public/index.html, web/app.js). Messages that come meanwhile are kept and
// handed to web/worker.js's handler, in order, once it is there.
import { prefetchBuild } from './build_choice.js';

prefetchBuild('auto');
const early = [];
self.onmessage = (event) => early.push(event);
await import('./worker.js'); // sets self.onmessage to the worker's own handler
for (const event of early) self.onmessage(event);
