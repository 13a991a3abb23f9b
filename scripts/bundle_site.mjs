#!/usr/bin/env node
// Bundles the hosted page's modules with esbuild: web/app.js (the page), web/worker_start.js (the
// training worker's first module) and web/worker.js (the rest of the worker, which worker_start imports)
// become bundles and the chunks they share, written over their own copies in public/build/web/. A lab
// loaded ~170 modules in a waterfall of imports, one round trip per level; bundled, it loads 7 files
// (docs/benchmarks.md: "First visit on a slow network").
//   node scripts/bundle_site.mjs [--root public]
// The development build skips it (ATTNLAB_BUNDLE=0 bash scripts/build.sh) and runs the modules as
// written. The unbundled modules stay in public/build/web/ beside the bundles, for what imports them by
// path (the CLI's figures, web/cli/figure.html; a few browser tests), but the service worker does not
// cache them: public/build/web/bundle.json lists what went into the bundles, and
// scripts/build_site_manifest.mjs leaves those out.
//
// Bundling keeps every URL the code forms from import.meta.url, because each bundle sits where its
// entry module sat and every use is in an entry-level module of web/ (app.js: ./worker_start.js and
// ../../sw.js; worker.js: ../../ for the labs' data; loader.js and build_choice.js, bundled into the
// worker: ../ for the Emscripten glue). The glue is imported by a computed URL (the build the loader picks), so it stays
// its own file, as does the WASM.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const i = process.argv.indexOf('--root');
const ROOT = path.resolve(i > 0 ? process.argv[i + 1] : path.join(REPO, 'public'));
const OUT = path.join(ROOT, 'build', 'web');

const result = await build({
  absWorkingDir: REPO,
  entryPoints: ['web/app.js', 'web/worker_start.js'], // worker_start imports web/worker.js: a bundle of its own
  outdir: OUT,
  outbase: 'web',
  bundle: true,
  splitting: true, // what the page and the worker share (the labs' declarations) is loaded once
  format: 'esm',
  target: 'es2022', // top-level await (web/app.js), as the page already needs
  minify: true,
  keepNames: true, // an error's or a class's name reads as in the source
  sourcemap: 'linked', // DevTools shows the source; the .map is fetched only when DevTools asks
  chunkNames: 'chunk-[hash]',
  allowOverwrite: true,
  metafile: true,
  logLevel: 'warning',
});

// public/-relative paths: the sources as the unbundled site has them (web/x.js -> build/web/x.js, and
// the same for wasm_bindings/ and node_modules/), and the bundles with their chunks.
const site = (file) => path.relative(ROOT, path.join(ROOT, 'build', file)).split(path.sep).join('/');
const inputs = Object.keys(result.metafile.inputs).map(site);
const outputs = Object.keys(result.metafile.outputs)
  .map((file) => path.relative(ROOT, path.resolve(REPO, file)).split(path.sep).join('/'));
writeFileSync(path.join(OUT, 'bundle.json'), `${JSON.stringify({ inputs, outputs }, null, 1)}\n`);
const bytes = Object.entries(result.metafile.outputs).filter(([file]) => !file.endsWith('.map'))
  .reduce((sum, [, out]) => sum + out.bytes, 0);
console.log(`[bundle] ${inputs.length} modules -> ${outputs.filter((f) => !f.endsWith('.map')).length} files, ${(bytes / 1024).toFixed(0)} KiB`);
