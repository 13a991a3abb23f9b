#!/usr/bin/env node
// Builds dist/attention-lab.html: the whole site in one file that works from file:// with no network.
//   node scripts/build_single_file.mjs [--root public] [--out dist/attention-lab.html]
// Reads the built site (public/: index.html, styles.css, build/ as left by scripts/build.sh) and inlines:
//   - CSS (<link rel="stylesheet">) as <style>, with its url(...) files as data: URLs;
//   - other files the page links (icons, images) as data: URLs;
//   - every ES module reachable from the page's <script type="module" src> and from the worker that
//     it starts (new Worker(new URL('./worker.js', import.meta.url))), plus the Emscripten glue of
//     both builds, as JSON texts whose import specifiers are cut out, to be filled at start-up with
//     blob: URLs (scripts/single_file_boot.js, which says what file:// pages may and may not do);
//   - both WASM modules (SIMD128 and scalar), gzipped, as base64.
// No bundler: a small JavaScript lexer finds the import/export forms below; anything else fails the
// build with the file, line and the reason, so the single file never breaks silently.
//   import {a, b as c} from './x.js'    import x from './x.js'    import * as x from './x.js'
//   import x, {a} from './x.js'         import './x.js'           import('./x.js')  (literal only)
//   export {a, b as c} from './x.js'    export * from './x.js'    export * as x from './x.js'
//   export {a}  export function/class/const/let/var/async/default   (no specifier: kept as written)
// Specifiers must be relative ('./', '../') and name a .js or .mjs file under the root. import.meta and
// computed import() are allowed only where the code has a single-file hook (HOOKED below), and fetch()
// only in the Emscripten glue (it never runs there: the WASM bytes are passed in).
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { LABS } from '../web/labs/registry.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BOOT = path.join(REPO, 'scripts', 'single_file_boot.js');
const BUILDS = ['simd', 'scalar'];
// Where import.meta or a computed import() is fine, because the code reads globalThis.ATTNLAB_INLINE.
const HOOKED = {
  'build/web/app.js': { meta: 'the worker: ATTNLAB_INLINE.createWorker(); the service worker: none where ATTNLAB_INLINE is set' },
  'build/web/loader.js': { meta: 'the glue and WASM: ATTNLAB_INLINE.modules / .wasm', computedImport: 'the glue: ATTNLAB_INLINE.modules' },
  // The early start of the WASM's download returns before it forms a URL where ATTNLAB_INLINE is set.
  'build/web/build_choice.js': { meta: 'none: prefetchBuild returns first where ATTNLAB_INLINE is set',
    computedImport: 'none: prefetchBuild returns first', fetch: 'none: prefetchBuild returns first' },
  'build/web/worker.js': { meta: 'the labs\' data files: ATTNLAB_INLINE.assets', fetch: 'only where ATTNLAB_INLINE.assets has no file' },
  // A model the user asks for by its Hub id: a request to the Hub (an https URL, which a file:// page
  // may fetch; the Hub allows any origin), never a file of the app.
  'build/web/models/hub_store.js': { fetch: 'the Hub, for a model the user names' },
};
const isGlue = (id) => /^build\/attnlab-(simd|scalar)\.mjs$/.test(id);
const MIME = {
  '.png': 'image/png', '.svg': 'image/svg+xml', '.ico': 'image/x-icon', '.jpg': 'image/jpeg', '.webp': 'image/webp',
  '.woff2': 'font/woff2', '.woff': 'font/woff', '.json': 'application/json', '.gif': 'image/gif',
};

export class SingleFileError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SingleFileError';
  }
}

// ---- A small JavaScript lexer: enough to tell code from strings, templates, comments and regexps.

const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw',
  'case', 'do', 'else', 'yield', 'await']);

/** source -> [{type: 'word' | 'string' | 'punct' | 'number' | 'template' | 'regex', value, start, end}] */
export function tokenize(source, where = 'source') {
  const tokens = [];
  const braces = []; // for each open '${': the brace depth at which its '}' resumes the template
  let depth = 0;
  let i = 0;
  const n = source.length;
  const fail = (message, at) => {
    throw new SingleFileError(`${where}:${lineOf(source, at)}: ${message}`);
  };
  const prev = () => tokens[tokens.length - 1];
  const regexAllowed = () => {
    const p = prev();
    if (!p) return true;
    if (p.type === 'word') return REGEX_AFTER_WORD.has(p.value);
    if (p.type === 'punct') return ![')', ']', '}'].includes(p.value);
    return false;
  };
  // Scans a template from i (just after ` or after the '}' closing a substitution).
  const templateChunk = (start) => {
    while (i < n) {
      const c = source[i];
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        tokens.push({ type: 'template', value: source.slice(start, i), start, end: i });
        return;
      } else if (c === '$' && source[i + 1] === '{') {
        i += 2;
        tokens.push({ type: 'template', value: source.slice(start, i), start, end: i });
        braces.push(depth);
        depth++;
        return;
      } else i++;
    }
    fail('unterminated template literal', start);
  };
  while (i < n) {
    const c = source[i];
    const start = i;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      if (close < 0) fail('unterminated comment', start);
      i = close + 2;
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      while (i < n && source[i] !== c) {
        if (source[i] === '\\') i++;
        else if (source[i] === '\n') fail('unterminated string', start);
        i++;
      }
      if (i >= n) fail('unterminated string', start);
      i++;
      tokens.push({ type: 'string', value: source.slice(start + 1, i - 1), start, end: i });
      continue;
    }
    if (c === '`') {
      i++;
      templateChunk(start);
      continue;
    }
    if (c === '/' && regexAllowed()) {
      i++;
      let inClass = false;
      while (i < n) {
        const d = source[i];
        if (d === '\\') i++;
        else if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
        else if (d === '\n') fail('unterminated regular expression', start);
        i++;
      }
      i++;
      while (i < n && /[a-z]/i.test(source[i])) i++;
      tokens.push({ type: 'regex', value: source.slice(start, i), start, end: i });
      continue;
    }
    if (/[A-Za-z_$\u0080-\uffff]/.test(c)) {
      while (i < n && /[\w$\u0080-\uffff]/.test(source[i])) i++;
      tokens.push({ type: 'word', value: source.slice(start, i), start, end: i });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(source[i + 1]))) {
      while (i < n && /[\w.]/.test(source[i])) i++;
      tokens.push({ type: 'number', value: source.slice(start, i), start, end: i });
      continue;
    }
    i++;
    if (c === '{') depth++;
    if (c === '}') {
      depth--;
      if (braces.length && braces[braces.length - 1] === depth) {
        braces.pop();
        templateChunk(start);
        continue;
      }
    }
    tokens.push({ type: 'punct', value: c, start, end: i });
  }
  return tokens;
}

function lineOf(source, at) {
  let line = 1;
  for (let k = 0; k < at && k < source.length; k++) if (source[k] === '\n') line++;
  return line;
}

/**
 * Finds a module's import specifiers and its uses of import.meta, computed import() and fetch().
 * -> {specifiers: [{start, end, spec, form}], meta: [at], computedImports: [at], fetches: [at]}
 */
export function scanModule(source, where = 'module') {
  const tokens = tokenize(source, where);
  const found = { specifiers: [], meta: [], computedImports: [], fetches: [] };
  const fail = (message, at) => {
    throw new SingleFileError(`${where}:${lineOf(source, at)}: ${message}`);
  };
  const is = (t, type, value) => t && t.type === type && (value === undefined || t.value === value);
  const spec = (t, form) => found.specifiers.push({ start: t.start, end: t.end, spec: t.value, form });
  // From tokens[k] on: a clause of names, braces, commas, '*' and 'as', then `from '...'`. -> index after
  const fromClause = (k, form, at) => {
    let braceDepth = 0;
    for (; k < tokens.length; k++) {
      const t = tokens[k];
      if (braceDepth === 0 && is(t, 'word', 'from') && is(tokens[k + 1], 'string')) {
        spec(tokens[k + 1], form);
        return k + 2;
      }
      if (is(t, 'punct', '{')) braceDepth++;
      else if (is(t, 'punct', '}')) braceDepth--;
      else if (!(t.type === 'word' || is(t, 'punct', ',') || is(t, 'punct', '*') || (braceDepth > 0 && t.type === 'string'))) break;
    }
    return fail(`unsupported ${form} form (expected names, then from '<file>')`, at);
  };
  let depth = 0; // of (), [] and {} (template substitutions included): declarations live at 0
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.type === 'punct' && '([{'.includes(t.value)) depth++;
    else if (t.type === 'punct' && ')]}'.includes(t.value)) depth--;
    else if (t.type === 'template') depth += (t.value.endsWith('${') ? 1 : 0) - (t.value.startsWith('}') ? 1 : 0);
    if (t.type !== 'word' || is(tokens[k - 1], 'punct', '.')) continue;
    const next = tokens[k + 1];
    // A property or method named import/export ({export() {}}, {import: 1}) is not a declaration.
    if (depth > 0 && (t.value === 'export' || (t.value === 'import' && !is(next, 'punct', '(') && !is(next, 'punct', '.')))) continue;
    if (depth > 0 && t.value === 'import' && is(next, 'punct', '(') && (is(tokens[k - 1], 'punct', ',') || is(tokens[k - 1], 'punct', '{'))) {
      // `{ import() { ... } }`: a method, unless it is a call (then the ')' is followed by no '{').
      let j = k + 2;
      for (let open = 1; j < tokens.length && open > 0; j++) open += is(tokens[j], 'punct', '(') ? 1 : is(tokens[j], 'punct', ')') ? -1 : 0;
      if (is(tokens[j], 'punct', '{')) continue;
    }
    if (t.value === 'fetch' && is(next, 'punct', '(')) found.fetches.push(t.start);
    if (t.value === 'import') {
      if (is(next, 'punct', '(')) {
        if (is(tokens[k + 2], 'string') && is(tokens[k + 3], 'punct', ')')) spec(tokens[k + 2], 'import()');
        else found.computedImports.push(t.start);
      } else if (is(next, 'punct', '.')) {
        if (!is(tokens[k + 2], 'word', 'meta')) fail('unsupported import.<name>', t.start);
        found.meta.push(t.start);
      } else if (is(next, 'string')) {
        spec(next, 'import');
      } else if (next && (next.type === 'word' || is(next, 'punct', '{') || is(next, 'punct', '*'))) {
        k = fromClause(k + 1, 'import', t.start) - 1;
        const after = tokens[k + 1];
        if (is(after, 'word', 'with') || is(after, 'word', 'assert')) fail('import attributes (with/assert) are not supported', t.start);
      } else {
        fail('unsupported import form', t.start);
      }
    } else if (t.value === 'export') {
      if (is(next, 'punct', '*')) {
        k = fromClause(k + 1, 'export', t.start) - 1;
      } else if (is(next, 'punct', '{')) {
        let j = k + 2;
        while (j < tokens.length && !is(tokens[j], 'punct', '}')) j++;
        if (is(tokens[j + 1], 'word', 'from')) k = fromClause(k + 1, 'export', t.start) - 1;
      } else if (!(next?.type === 'word' && ['function', 'class', 'const', 'let', 'var', 'async', 'default'].includes(next.value))) {
        fail('unsupported export form', t.start);
      }
    }
  }
  return found;
}

// ---- The module graph.

// The single file is made of the modules as written. A hosted build's bundles (scripts/bundle_site.mjs)
// sit over build/web/app.js and the worker's first modules: those are read from the repository's web/,
// of which public/build/web/ is a copy.
function modulesAsWritten(root) {
  const listed = path.join(root, 'build', 'web', 'bundle.json');
  if (!existsSync(listed)) return new Map();
  const { outputs } = JSON.parse(readFileSync(listed, 'utf8'));
  return new Map(outputs.filter((id) => id.startsWith('build/web/') && id.endsWith('.js'))
    .map((id) => [id, path.join(REPO, 'web', id.slice('build/web/'.length))]));
}

/** id: a path under root, with '/' ('build/web/app.js'). -> {modules: {id: {parts, deps}}, order} */
export function collectModules(root, entries) {
  const asWritten = modulesAsWritten(root);
  const modules = {};
  const workers = [];
  const state = {}; // id -> 'visiting' | 'done'
  const visit = (id, trail) => {
    if (state[id] === 'done') return;
    if (state[id] === 'visiting') {
      throw new SingleFileError(`import cycle ${[...trail.slice(trail.indexOf(id)), id].join(' -> ')}: `
        + 'the single file links each module after its imports, so cycles are not supported');
    }
    state[id] = 'visiting';
    const file = asWritten.get(id) ?? path.join(root, id);
    if (!existsSync(file)) throw new SingleFileError(`${trail.at(-1) ?? 'index.html'} imports ${id}, which is not in ${root}`);
    const source = readFileSync(file, 'utf8');
    const found = scanModule(source, id);
    const hook = HOOKED[id] ?? {};
    if (found.meta.length && !hook.meta && !isGlue(id)) {
      throw new SingleFileError(`${id}:${lineOf(source, found.meta[0])}: import.meta has no single-file hook `
        + '(a blob: URL has no directory, and file:// pages cannot fetch): read globalThis.ATTNLAB_INLINE there, '
        + 'and list the file in HOOKED in scripts/build_single_file.mjs');
    }
    if (found.computedImports.length && !hook.computedImport) {
      throw new SingleFileError(`${id}:${lineOf(source, found.computedImports[0])}: import() of a computed specifier `
        + 'cannot be inlined; use a string literal');
    }
    if (found.fetches.length && !isGlue(id) && !hook.fetch) {
      throw new SingleFileError(`${id}:${lineOf(source, found.fetches[0])}: fetch() fails from file:// pages; `
        + 'import the data as a module instead (or give it a single-file hook)');
    }
    // The worker that this module starts is a second entry.
    for (const m of source.matchAll(/new\s+Worker\(\s*new\s+URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g)) {
      const line = source.slice(source.lastIndexOf('\n', m.index) + 1, source.indexOf('\n', m.index));
      if (!line.includes('ATTNLAB_INLINE')) {
        throw new SingleFileError(`${id}:${lineOf(source, m.index)}: a worker started without ATTNLAB_INLINE.createWorker() `
          + 'cannot start from file://');
      }
      workers.push(resolveSpecifier(id, m[2]));
    }
    const parts = [];
    const deps = [];
    let last = 0;
    for (const s of found.specifiers.sort((a, b) => a.start - b.start)) {
      const dep = resolveSpecifier(id, s.spec, source, s.start);
      visit(dep, [...trail, id]);
      parts.push(source.slice(last, s.start));
      let index = deps.indexOf(dep);
      if (index < 0) index = deps.push(dep) - 1;
      parts.push(index);
      last = s.end;
    }
    parts.push(source.slice(last));
    modules[id] = { parts, deps };
    state[id] = 'done';
  };
  for (const entry of entries) visit(entry, []);
  return { modules, workers, visit };
}

function resolveSpecifier(from, spec, source = '', at = 0) {
  if (!spec.startsWith('./') && !spec.startsWith('../')) {
    throw new SingleFileError(`${from}:${lineOf(source, at)}: '${spec}' is not a relative specifier (no bundler resolves bare names here)`);
  }
  if (!/\.m?js$/.test(spec)) throw new SingleFileError(`${from}:${lineOf(source, at)}: '${spec}' is not a .js or .mjs module`);
  const id = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  if (id.startsWith('../')) throw new SingleFileError(`${from}: '${spec}' leaves the site's root`);
  return id;
}

// ---- The page.

function dataUrl(file) {
  const mime = MIME[path.extname(file).toLowerCase()];
  if (!mime) throw new SingleFileError(`${file}: no data: URL type for ${path.extname(file) || 'a file without extension'}`);
  return `data:${mime};base64,${readFileSync(file).toString('base64')}`;
}

const isLocal = (url) => !/^(data:|blob:|https?:|mailto:|#|javascript:)/i.test(url) && url !== '';

function inlineCss(root, cssFile) {
  const css = readFileSync(cssFile, 'utf8');
  if (/@import/i.test(css)) throw new SingleFileError(`${path.relative(root, cssFile)}: @import is not supported; link each stylesheet`);
  const inlined = css.replace(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g, (whole, quote, url) => (isLocal(url)
    ? `url("${dataUrl(path.resolve(path.dirname(cssFile), url))}")` : whole));
  if (/<\/style/i.test(inlined)) throw new SingleFileError(`${path.relative(root, cssFile)} contains </style`);
  return inlined;
}

const attr = (tag, name) => tag.match(new RegExp(`\\s${name}\\s*=\\s*(["'])(.*?)\\1`, 'i'))?.[2];

/** root: the built site -> {html, sizes} */
export function buildSingleFile(root = path.join(REPO, 'public')) {
  let html = readFileSync(path.join(root, 'index.html'), 'utf8');
  const sizes = { css: 0, js: 0, wasm: 0, assets: 0 };
  const entries = [];
  html = html.replace(/<link\b[^>]*>/gi, (tag) => {
    const href = attr(tag, 'href');
    if (!href || !isLocal(href)) return tag;
    // The web app manifest installs the hosted site (public/sw.js keeps it offline); a file needs neither.
    if (/\brel\s*=\s*["']?manifest/i.test(tag)) return '';
    const file = path.join(root, href);
    if (/\brel\s*=\s*["']?stylesheet/i.test(tag)) {
      const css = inlineCss(root, file);
      sizes.css += css.length;
      return `<style>\n${css}</style>`;
    }
    const url = dataUrl(file);
    sizes.assets += url.length;
    return tag.replace(href, url);
  });
  let bootAt = -1;
  html = html.replace(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi, (tag, attrs, body) => {
    const src = attr(tag, 'src');
    if (!src) return tag;
    if (!isLocal(src)) throw new SingleFileError(`index.html: <script src="${src}"> would need the network`);
    if (attr(tag, 'type') !== 'module' || body.trim()) throw new SingleFileError(`index.html: <script src="${src}"> must be an empty type="module" script`);
    entries.push(path.posix.normalize(src));
    return bootAt < 0 ? ((bootAt = 0), '<!--ATTNLAB-BOOT-->') : '';
  });
  if (!entries.length) throw new SingleFileError('index.html has no <script type="module" src>');
  html = html.replace(/<(img|source|audio|video|iframe|embed|object|input)\b[^>]*>/gi, (tag) => {
    const src = attr(tag, 'src') ?? attr(tag, 'data');
    if (!src || !isLocal(src)) return tag;
    const url = dataUrl(path.join(root, src));
    sizes.assets += url.length;
    return tag.replace(src, url);
  });

  const graph = collectModules(root, entries);
  const uniqueWorkers = [...new Set(graph.workers)];
  if (uniqueWorkers.length !== 1) {
    throw new SingleFileError(`expected one worker started from the page, found ${uniqueWorkers.length} (${uniqueWorkers.join(', ')})`);
  }
  const glue = Object.fromEntries(BUILDS.map((b) => [b, `build/attnlab-${b}.mjs`]));
  for (const id of [uniqueWorkers[0], ...Object.values(glue)]) graph.visit(id, []);
  const modulesJson = JSON.stringify({ modules: graph.modules, page: entries, worker: uniqueWorkers[0], glue })
    .replace(/</g, '\\u003c'); // no '</script' or '<!--' inside the data block
  for (const m of Object.values(graph.modules)) for (const p of m.parts) if (typeof p === 'string') sizes.js += p.length;

  const wasm = Object.fromEntries(BUILDS.map((b) => {
    const file = path.join(root, 'build', `attnlab-${b}.wasm`);
    if (!existsSync(file)) throw new SingleFileError(`${file} is missing: build the WASM modules first (scripts/build.sh)`);
    // gzip first: WASM halves (both builds were 2.09 MB as plain base64 when the file neared its 5 MB
    // budget); the boot script inflates it with the browser's own DecompressionStream.
    return [b, gzipSync(readFileSync(file), { level: 9 }).toString('base64')];
  }));
  sizes.wasm = wasm.simd.length + wasm.scalar.length;
  const boot = readFileSync(BOOT, 'utf8');
  if (/<\/script|<!--/i.test(boot)) throw new SingleFileError(`${BOOT} contains '</script' or '<!--'`);
  sizes.js += boot.length;

  // The labs' data files (the Lookup lab's digits), for the worker: base64 in one JSON block.
  const assetFiles = [...new Set(LABS.flatMap((lab) => Object.values(lab.trainer?.assets ?? {}).map((a) => a.file)))];
  const assets = Object.fromEntries(assetFiles.map((file) => {
    const full = path.join(root, file);
    if (!existsSync(full)) throw new SingleFileError(`${full} is missing: build the assets first (scripts/build.sh)`);
    return [file, readFileSync(full).toString('base64')];
  }));
  const assetsJson = JSON.stringify(assets);
  sizes.assets += assetsJson.length;
  const blocks = [
    `<script type="application/json" id="attnlab-modules">${modulesJson}</script>`,
    `<script type="application/json" id="attnlab-assets">${assetsJson}</script>`,
    ...BUILDS.map((b) => `<script type="application/octet-stream" id="attnlab-wasm-${b}">${wasm[b]}</script>`),
    `<script type="module">\n${boot}</script>`,
  ].join('\n');
  html = html.replace('<!--ATTNLAB-BOOT-->', () => blocks);
  const header = `<!-- Generated by scripts/build_single_file.mjs from public/ (do not edit): Attention Lab in one file,
     for file:// and no network. The layout and the reasons are in scripts/single_file_boot.js and docs/offline.md. -->`;
  html = html.replace(/^(<!doctype html>\s*)/i, (doctype) => `${doctype}${header}\n`);
  if (!html.includes(header)) html = `${header}\n${html}`;
  return { html, sizes, modules: Object.keys(graph.modules) };
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const root = path.resolve(arg('--root', path.join(REPO, 'public')));
  const out = path.resolve(arg('--out', path.join(REPO, 'dist', 'attention-lab.html')));
  try {
    const { html, sizes, modules } = buildSingleFile(root);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, html);
    const size = statSync(out).size;
    console.log(`[single-file] ${path.relative(process.cwd(), out) || out}: ${mb(size)} (${size} bytes; target <= 5 MB) — `
      + `WASM ${mb(sizes.wasm)} as gzip + base64, JS ${mb(sizes.js)} in ${modules.length} modules, CSS ${mb(sizes.css)}, other assets ${mb(sizes.assets)}`);
  } catch (error) {
    if (error.name !== 'SingleFileError') throw error;
    console.error(`[single-file] build failed: ${error.message}`);
    process.exit(1);
  }
}
