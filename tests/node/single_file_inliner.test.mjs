// The single-file inliner's lexer (scripts/build_single_file.mjs): every import/export form it claims
// is found, strings, comments, templates and regexps never fool it, and an unsupported form fails with
// the file and line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scanModule } from '../../scripts/build_single_file.mjs';

const specs = (source) => scanModule(source, 'm.js').specifiers.map((s) => `${s.form} ${s.spec}`);

test('inliner: every supported import/export form yields its specifier', () => {
  const source = [
    "import { a, b as c } from './named.js';",
    "import d from './default.js';",
    "import * as ns from './namespace.js';",
    "import e, { f } from './mixed.js';",
    "import './side_effect.js';",
    "export { g, h as i } from './reexport.js';",
    "export * from './star.js';",
    "export * as star from './star_as.js';",
    'export { a };',
    'export function fn() { return import("./dynamic.js"); }',
    'export class K {}',
    'export const x = 1, y = 2;',
    'export default x;',
    'export async function later() {}',
  ].join('\n');
  assert.deepEqual(specs(source), [
    'import ./named.js', 'import ./default.js', 'import ./namespace.js', 'import ./mixed.js', 'import ./side_effect.js',
    'export ./reexport.js', 'export ./star.js', 'export ./star_as.js', 'import() ./dynamic.js',
  ]);
});

test('inliner: strings, comments, templates, regexps and property names are not imports', () => {
  const source = [
    "const s = \"import x from './no1.js'\";",
    "// import y from './no2.js'",
    "/* export * from './no3.js' */",
    'const t = `import z from \'./no4.js\' ${ { a: `nested ${1}` }.a } export {}`;',
    "const r = /import x from '.\\/no5.js'/g;",
    'const o = { export() { return 1; }, import: 2 };',
    'o.import; o.export();',
    "import { real } from './yes.js';",
  ].join('\n');
  assert.deepEqual(specs(source), ['import ./yes.js']);
});

test('inliner: import.meta, computed import() and fetch() are reported for the build to check', () => {
  const found = scanModule("const u = new URL('./w.js', import.meta.url);\nawait import(u.href);\nfetch('x.bin');", 'm.js');
  assert.equal(found.meta.length, 1);
  assert.equal(found.computedImports.length, 1);
  assert.equal(found.fetches.length, 1);
});

test('inliner: unsupported forms fail with the file and line', () => {
  assert.throws(() => scanModule("\nimport data from './d.json' with { type: 'json' };", 'web/m.js'), /web\/m\.js:2: import attributes/);
  assert.throws(() => scanModule('export = 1;', 'web/m.js'), /web\/m\.js:1: unsupported export form/);
  assert.throws(() => scanModule('import.other;', 'web/m.js'), /unsupported import\.<name>/);
  assert.throws(() => scanModule("const s = 'open", 'web/m.js'), /web\/m\.js:1: unterminated string/);
});
