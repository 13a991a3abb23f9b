// Layers import downward only (issue 36, item 5): the JS API over the module (wasm_bindings/js,
// wasm_bindings/attnlab.js) imports nothing from web/, and the CLI (web/cli) nothing from the page
// (web/ui), directly or through any module it imports. What both sides use lives below them (web/shared).
// Reads the import statements of the files themselves: static `import ... from`, `export ... from` and
// `import('...')` with a literal path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every relative import reachable from `files`: [{from, to}], paths relative to the repository. */
function reachable(files) {
  const seen = new Set();
  const edges = [];
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    for (const m of source.matchAll(IMPORT)) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2] ?? m[3]));
      edges.push({ from: file, to });
      walk(to);
    }
  };
  files.forEach(walk);
  return edges;
}

const jsFiles = (dir) => readdirSync(path.join(REPO_ROOT, dir), { recursive: true })
  .filter((name) => /\.m?js$/.test(name)).map((name) => path.posix.join(dir, name.split(path.sep).join('/')));

test('web/cli imports nothing from web/ui, directly or through what it imports', () => {
  const edges = reachable(jsFiles('web/cli'));
  assert.ok(edges.some((e) => e.to === 'web/shared/properties.js'), 'the walk reaches what the CLI shares with the page');
  assert.deepEqual(edges.filter((e) => e.to.startsWith('web/ui/')).map((e) => `${e.from} -> ${e.to}`), []);
});

test('the JS API over the module (wasm_bindings) imports nothing from web/', () => {
  const edges = reachable(['wasm_bindings/attnlab.js', ...jsFiles('wasm_bindings/js')]);
  assert.ok(edges.length > 0, 'the walk reads wasm_bindings\' imports');
  assert.deepEqual(edges.filter((e) => e.to.startsWith('web/')).map((e) => `${e.from} -> ${e.to}`), []);
});
