// Every canvas figure's numbers as a table (issue 45, item 5; WCAG 2.1 1.1.1 and 1.4.1): under the figure,
// a "Values as a table" fold that a keyboard reaches (a <details>, Tab then Enter) and a screen reader
// reads as a table with headers, for anyone who cannot see the picture or tell its colours apart. A kind
// says what its table is (figureTable below, by kind); the board renders it when the fold is open and
// again as the figure changes. A long series is shown every few steps, and says so.

import { shapeText } from './answer_check.js';
import { markedBar } from './bars_figure.js';

const MAX_ROWS = 200;
// Four decimals, so a column's digits line up (whole numbers as they are: a step, a count); a value too
// large or too small for that in scientific notation.
const number = (v) => (typeof v !== 'number' ? String(v ?? '') : !Number.isFinite(v) ? String(v)
  : Number.isInteger(v) && Math.abs(v) < 1e15 ? String(v)
    : Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(3) : v.toFixed(4));

/** Every `step`-th of n rows (and the last), at most `most`: -> the indices and a note when rows were left out. */
function sampled(n, most = MAX_ROWS) {
  const step = Math.max(1, Math.ceil(n / most));
  const at = [];
  for (let i = 0; i < n; i += step) at.push(i);
  if (at.at(-1) !== n - 1 && n > 0) at.push(n - 1);
  return { at, note: step > 1 ? ` (every ${step}th row of ${n.toLocaleString('en')}, and the last)` : '' };
}

/**
 * A heatmap model (heatmap.js): a row per query, a column per key, headed by its ticks (their full names,
 * xNames / yNames, as the headers' titles). format, caption and most (rows): the training labs' own table of
 * their main heatmap (heatmap_table.js) prints every row, two decimals, under its own words.
 */
export function heatmapTable(f, { format = number, caption = null, most = MAX_ROWS } = {}) {
  const { at, note } = sampled(f.rows, most);
  return {
    caption: caption ?? `${f.title}: rows are ${f.yTitle ?? 'rows'}, columns ${f.xTitle ?? 'columns'}${note}.`,
    columns: Array.from({ length: f.cols }, (_, c) => f.xTicks?.[c] || String(c)),
    columnTitles: f.xNames, rowTitles: at.map((r) => f.yNames?.[r]),
    rows: at.map((r) => [f.yTicks?.[r] || String(r), ...Array.from({ length: f.cols }, (_, c) => format(f.values[r * f.cols + c]))]),
  };
}

/** Bars: a row per bar, its label and value. */
function barsTable(f) {
  const { at, note } = sampled(f.values.length);
  // The highlighted bar is always a row (a long series may skip it), and says so in words.
  const marked = markedBar(f);
  if (marked >= 0 && !at.includes(marked)) {
    at.push(marked);
    at.sort((a, b) => a - b);
  }
  return {
    caption: `${f.title}${note}.`,
    columns: [f.yTitle ?? 'value'],
    rows: at.map((i) => [`${f.labels?.[i] ?? String(i)}${i === marked ? ' (marked ▼)' : ''}`, number(f.values[i])]),
    corner: f.xTitle ?? '',
  };
}

/** A chart (chart.js spec): a row per step or x, a column per series. */
function chartTable(f) {
  const xs = new Map(); // x -> {series label: y}
  const put = (x, label, y) => {
    if (!xs.has(x)) xs.set(x, {});
    xs.get(x)[label] = y;
  };
  const series = (f.series ?? []).filter((s) => s.kind !== 'dashed');
  for (const s of series) {
    if (s.ys) s.ys.forEach((y, k) => put((k + 1) * (s.every ?? 1), s.label, y));
    for (const p of s.points ?? []) put(p.x, s.label, p.y);
  }
  const keys = [...xs.keys()].sort((a, b) => a - b);
  const { at, note } = sampled(keys.length);
  const dashed = (f.series ?? []).filter((s) => s.kind === 'dashed').map((s) => `${s.label}: ${number(s.y)}`);
  return {
    caption: `${f.title}${note}.${dashed.length ? ` Reference lines: ${dashed.join('; ')}.` : ''}`,
    columns: series.map((s) => s.label),
    corner: f.xTitle ?? 'x',
    rows: at.map((i) => [number(keys[i]), ...series.map((s) => number(xs.get(keys[i])[s.label] ?? ''))]),
  };
}

/** A flow graph: a row per edge drawn, query to key, with its weight. */
function graphTable(f) {
  const edges = f.edges ?? [];
  const { at, note } = sampled(edges.length);
  const name = (i) => f.nodes?.[i] ?? String(i);
  // A diagram (arrowsOnly: every arrow the same) has no weights to list, only who reads whom.
  if (f.arrowsOnly) {
    return { caption: `${f.title}: the arrows drawn${note}.`, columns: ['to'], corner: 'from',
      rows: at.map((i) => [name(edges[i].from), name(edges[i].to)]) };
  }
  return {
    caption: `${f.title}: the arrows drawn, from the query to the key it gives weight to${note}.`,
    columns: ['to (key)', 'weight'],
    corner: 'from (query)',
    rows: at.map((i) => [name(edges[i].from), name(edges[i].to), number(edges[i].weight)]),
  };
}

/** Images (digits): a row per image, what it is (its label, caption or name). */
function imagesTable(f) {
  const n = f.images?.length ?? 0;
  const { at, note } = sampled(n);
  const has = (key) => Array.isArray(f[key]) && f[key].some((x) => x !== undefined && x !== null && x !== '');
  const columns = [...(has('labels') ? ['label'] : []), ...(has('captions') ? ['caption'] : []), ...(has('names') ? ['name'] : []),
    ...(has('tint') ? ['weight'] : [])];
  return {
    caption: `${f.title}: ${n} image${n === 1 ? '' : 's'}${note}.`,
    corner: 'image',
    columns,
    rows: at.map((i) => [String(i + 1), ...(has('labels') ? [String(f.labels[i] ?? '')] : []),
      ...(has('captions') ? [String(f.captions[i] ?? '')] : []), ...(has('names') ? [String(f.names[i] ?? '')] : []),
      ...(has('tint') ? [number(f.tint[i])] : [])]),
  };
}

/** Attention of heads over tokens (head view): a row per head and query, a column per key. */
function headViewTable(f) {
  const queries = f.queryTokens ?? f.tokens ?? [], keys = f.keyTokens ?? f.tokens ?? [];
  const T = queries.length, S = keys.length, H = f.heads ?? 1;
  const heads = f.headNames ?? Array.from({ length: H }, (_, h) => `head ${h}`);
  const { at, note } = sampled(H * T);
  return {
    caption: `${f.title}: each row a head and its ${f.queryTitle ?? 'query'}, each column a ${f.keyTitle ?? 'key'}${note}.`,
    corner: `head · ${f.queryTitle ?? 'query'}`,
    columns: keys.map(String),
    rows: at.map((i) => {
      const h = Math.floor(i / T), t = i % T;
      return [`${heads[h] ?? `head ${h}`} · ${queries[t]}`, ...Array.from({ length: S }, (_, k) => number(f.weights[(h * T + t) * S + k]))];
    }),
  };
}

/** Every head of every layer (model view): a row per layer, head and query, a column per key. */
function modelGridTable(f) {
  const queries = f.queryTokens ?? f.tokens ?? [], keys = f.keyTokens ?? f.tokens ?? [];
  const T = queries.length, S = keys.length, L = f.layers, H = f.heads;
  const { at, note } = sampled(L * H * T);
  return {
    caption: `${f.title}: each row a layer, a head and a ${f.queryTitle ?? 'query'}; each column a ${f.keyTitle ?? 'key'}${note}.`,
    corner: `layer.head · ${f.queryTitle ?? 'query'}`,
    columns: keys.map(String),
    rows: at.map((i) => {
      const t = i % T, h = Math.floor(i / T) % H, l = Math.floor(i / (T * H));
      return [`${l}.${h} · ${queries[t]}`, ...Array.from({ length: S }, (_, k) => number(f.attentions[((l * H + h) * T + t) * S + k]))];
    }),
  };
}

/** Arrows in a plane: a row per arrow, its x and y (and the angle marked, in the caption). */
function arrowsTable(f) {
  const arrows = f.arrows ?? [];
  const angle = f.angle ? ` The arc from ${arrows[f.angle.from]?.label} to ${arrows[f.angle.to]?.label}: ${f.angle.label}.` : '';
  return { caption: `${f.title}.${angle}`, corner: 'arrow', columns: ['x', 'y'],
    rows: arrows.map((a) => [String(a.label), number(a.x), number(a.y)]) };
}

/** The Induction lab's timeline: a row per step, a column per series of every pane. */
function phaseTimelineTable(f) {
  const series = (f.panes ?? []).flatMap((p) => p.series.map((s) => ({ ...s, label: `${p.title}: ${s.label}` })));
  const steps = f.steps ?? [];
  const { at, note } = sampled(steps.length);
  const marker = f.marker ? ` Marked: ${f.marker.label} (step ${f.marker.step}).` : '';
  const valueAt = (s, i) => {
    if (!s.xs) return s.ys[i];
    const k = s.xs.indexOf(steps[i]);
    return k < 0 ? '' : s.ys[k];
  };
  return {
    caption: `${f.title}${note}.${marker}`,
    corner: f.xTitle ?? 'step',
    columns: series.map((s) => s.label),
    rows: at.map((i) => [String(steps[i]), ...series.map((s) => {
      const v = valueAt(s, i);
      return typeof v === 'number' && Number.isNaN(v) ? '' : number(v);
    })]),
  };
}

/** A pipeline (pipeline_figure.js): a row per step, in order: its shape, its code, what it reads, its check. */
function pipelineTable(f) {
  const label = (id) => f.nodes.find((n) => n.id === id)?.label ?? id;
  return {
    caption: `${f.title}: each step, its shape, its code and the steps it reads.`,
    corner: 'step',
    columns: ['shape', 'code', 'reads', 'checked'],
    rows: f.nodes.map((n) => [n.label, n.shape ? shapeText(n.shape) : '',
      n.code ?? '', (f.edges ?? []).filter((e) => e.to === n.id).map((e) => label(e.from)).join(', '),
      ({ ok: '✓ matches', bad: '✗ differs' })[f.status?.[n.id]] ?? (n.id === f.current ? 'being checked' : '')]),
  };
}

const TABLES = { heatmap: heatmapTable, bars: barsTable, chart: chartTable, graph: graphTable, images: imagesTable,
  headview: headViewTable, modelgrid: modelGridTable, arrows: arrowsTable, phasetimeline: phaseTimelineTable,
  pipeline: pipelineTable };

/** The table of a figure of this kind: {caption, corner?, columns, rows: [[header, ...cells]]}, or null for none. */
export function figureTable(f) {
  const make = TABLES[f?.kind];
  if (!make) return null;
  try {
    return make(f);
  } catch {
    return null; // a figure still computing its fields: no table yet
  }
}

/** Whether figures of this kind have a table. */
export const hasTable = (kind) => Object.hasOwn(TABLES, kind);

/**
 * Fills `container` with the table (a <table> with caption and headers; columnTitles / rowTitles: the
 * headers' titles where given; an empty corner is a plain cell). className: the table's class.
 */
export function renderDataTable(container, table, { className = 'figure-data-table' } = {}) {
  container.replaceChildren();
  if (!table) return;
  const cell = (tag, text, scope, title) => Object.assign(document.createElement(tag), { textContent: text,
    ...(scope ? { scope } : {}), ...(title ? { title } : {}) });
  const t = document.createElement('table');
  t.className = className;
  t.append(cell('caption', table.caption));
  const head = document.createElement('tr');
  head.append(table.corner ? cell('th', table.corner, 'col') : Object.assign(document.createElement('td'), { className: 'corner' }),
    ...table.columns.map((c, i) => cell('th', c, 'col', table.columnTitles?.[i])));
  const thead = document.createElement('thead');
  thead.append(head);
  const tbody = document.createElement('tbody');
  table.rows.forEach(([first, ...rest], r) => {
    const tr = document.createElement('tr');
    tr.append(cell('th', first, 'row', table.rowTitles?.[r]), ...rest.map((v) => cell('td', v)));
    tbody.append(tr);
  });
  t.append(thead, tbody);
  container.append(t);
}

/** The fold under a figure: -> {node, update(figure)} (the table is made only while the fold is open). */
export function dataFold(figureId) {
  const node = document.createElement('details');
  node.className = 'figure-data full-only';
  node.dataset.figureData = figureId;
  const summary = Object.assign(document.createElement('summary'), { textContent: 'Values as a table' });
  const box = Object.assign(document.createElement('div'), { className: 'figure-data-box' });
  box.tabIndex = 0; // a wide table scrolls in its box: the keyboard reaches it
  box.setAttribute('role', 'region');
  box.setAttribute('aria-label', 'The figure\'s values');
  node.append(summary, box);
  let figure = null, last = 0, timer = null;
  const render = () => {
    timer = null;
    last = performance.now();
    if (node.open) renderDataTable(box, figureTable(figure));
  };
  node.addEventListener('toggle', render);
  // A figure that changes every frame (a loss curve while training) rebuilds its open table at most
  // twice a second, and once more after the last change.
  const update = (f) => {
    figure = f;
    if (!node.open || timer) return;
    const wait = last + 500 - performance.now();
    if (wait <= 0) render();
    else timer = setTimeout(render, wait);
  };
  return { node, update };
}
