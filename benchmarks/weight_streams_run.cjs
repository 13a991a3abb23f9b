// Runs an Emscripten 3.1.6 build of benchmarks/weight_streams.c under Node (its loader would fetch() a
// file path): node benchmarks/weight_streams_run.cjs /tmp/weight_streams   (for .js and .wasm)
const base = process.argv[2] ?? '/tmp/weight_streams';
globalThis.Module = { wasmBinary: require('node:fs').readFileSync(`${base}.wasm`) };
globalThis.fetch = undefined;
require(`${base}.js`);
