// BertViz's head view on a canvas (a figure kind of figure_kinds.js): the queries in the left column and the
// keys in the right one, and a line from every query to every key whose opacity is the attention
// weight (weight 1: fully opaque; weight 0: nothing), so the figure's pixels follow the weights.
// Self-attention has the same tokens on both sides; cross-attention (an encoder-decoder's generated tokens
// reading the source) has two lists, and the shorter column is centred beside the longer one. Several
// heads overlay their lines, one colour per head. Selecting a token (hover, click, or the arrow keys
// on the focused canvas: headViewKind below, figures.js) keeps only its lines and highlights its label.
//
// figure: {kind: 'headview', id, title,
//          tokens: [string] (T: the same on both sides) | queryTokens: [string] (T) and keyTokens: [string] (S),
//          weights: Array | Float32Array, heads x T x S row-major ([head][query][key]; S = T for `tokens`),
//          queryTitle?, keyTitle? (the columns' headings and the tooltip's words; default 'query', 'key'),
//          heads? (default 1), headNames? ([string], default 'head 0'..), selected? (token index or
//          null), side? ('query' (default) | 'key': the column of the selected token), caption?}
//
// Colours: one head in the theme's first series colour; several heads in the Okabe-Ito palette
// (Okabe & Ito 2008, "Color Universal Design": told apart under the common colour-vision
// deficiencies), ordered so that the first colours contrast with the panel: dark ones first on the light
// theme, light ones first on the dark theme. Heads past the eighth reuse the colours with dashed
// lines, so no two heads look the same.
// Opacity is a colour's alpha (rgba), not ctx.globalAlpha, so the SVG export (svg_canvas.js) keeps it.
import { themeColors } from './theme.js';
import { titledCanvas } from './figure_canvas.js';

const TITLE_H = 22;
const FONT_PX = 12;
const ROW_H = 17; // readable tokens for up to ~64 tokens; the canvas grows with max(T, S)
const HEADER_H = 18; // the column headings ("query" / "key" by default)
const LEGEND_ROW_H = 18;
const PAD = 6;
const LABEL_GAP = 6; // between a label and its lines' end
const LABEL_MAX = 140; // longer tokens are cut with an ellipsis (the tooltip names them in full)
const LINE_W = 2;

// Okabe-Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue, yellow (light panel);
// sky blue, orange, bluish green, reddish purple, vermillion, blue, yellow (dark panel, where the blue
// is too dark to see). The eighth (black in the original) is the theme's text colour.
const OKABE_ITO_LIGHT = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#f0e442'];
const OKABE_ITO_DARK = ['#56b4e9', '#e69f00', '#009e73', '#cc79a7', '#d55e00', '#0072b2', '#f0e442'];

function rgbOf(css) {
  const s = String(css).trim();
  const long = /^#([0-9a-f]{6})$/i.exec(s);
  const short = /^#([0-9a-f]{3})$/i.exec(s);
  const fn = /^rgba?\(([^)]+)\)$/i.exec(s);
  if (long) return [0, 2, 4].map((i) => parseInt(long[1].slice(i, i + 2), 16));
  if (short) return [0, 1, 2].map((i) => parseInt(short[1][i] + short[1][i], 16));
  if (fn) return fn[1].split(',').slice(0, 3).map((x) => Number(x.trim()));
  return null;
}

/** A CSS colour (#rgb, #rrggbb, rgb()) with opacity `alpha`. */
function withAlpha(css, alpha) {
  const rgb = rgbOf(css);
  if (!rgb) return String(css);
  return `rgba(${rgb[0]}, ${rgb[1]}, ${rgb[2]}, ${Math.round(alpha * 1000) / 1000})`;
}

/** Head h's line colour and dash (figures with one head use the theme's first series colour). */
function headStyle(f, h, colors = themeColors()) {
  const heads = f.heads ?? 1;
  if (heads <= 1) return { color: colors.series[0], dash: [] };
  const bg = rgbOf(colors.background) ?? [255, 255, 255];
  const dark = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2] < 128;
  const palette = [...(dark ? OKABE_ITO_DARK : OKABE_ITO_LIGHT), colors.text];
  return { color: palette[h % palette.length], dash: h >= palette.length ? [5, 3] : [] };
}

function headName(f, h) {
  return f.headNames?.[h] ?? `head ${h}`;
}

/** The two columns' tokens: {queries: [string] (T), keys: [string] (S)}; one list (`tokens`) is both. */
function headViewTokens(f) {
  if (f.queryTokens || f.keyTokens) return { queries: f.queryTokens ?? [], keys: f.keyTokens ?? [] };
  return { queries: f.tokens ?? [], keys: f.tokens ?? [] };
}

/** The columns' headings: {query, key}. */
const titlesOf = (f) => ({ query: f.queryTitle ?? 'query', key: f.keyTitle ?? 'key' });

/** Checks the weights' size: heads x T x S. Throws a clear error otherwise. -> {T, S, heads, queries, keys} */
function checkHeadView(f) {
  const { queries, keys } = headViewTokens(f);
  const T = queries.length, S = keys.length;
  const heads = f.heads ?? 1;
  if (!Number.isInteger(heads) || heads < 1) throw new Error('head view: heads must be a positive '
    + `integer, got ${f.heads}`);
  if (!f.weights || f.weights.length !== heads * T * S) {
    throw new Error(`head view needs heads x T x S = ${heads} x ${T} x ${S} = ${heads * T * S} weights, got `
      + `${f.weights?.length}`);
  }
  return { T, S, heads, queries, keys };
}

function fitLabel(ctx, text) {
  let s = String(text);
  if (ctx.measureText(s).width <= LABEL_MAX) return s;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > LABEL_MAX) s = s.slice(0, -1);
  return `${s}…`;
}

/**
 * Where things go, in CSS px: {width, height, T, S, heads, rowsTop, rowH, queryTop, keyTop (each
 * column's first row), query: [{x, y}] (T), key: [{x, y}] (S) (each token's anchor, where its lines
 * start or end), labels: {query, key} (drawn text), widths: {query, key}, queryRight (the left labels'
 * right edge), keyLeft, legend: [{x, y, h}], captionLines, captionTop}. The line from query i to key
 * j runs from query[i] to key[j]; its midpoint is their mean.
 */
function headViewLayout(ctx, f) {
  const { T, S, heads, queries, keys } = checkHeadView(f);
  const titles = titlesOf(f);
  const colors = themeColors();
  ctx.font = `${FONT_PX}px ${colors.font}`;
  const labels = { query: queries.map((t) => fitLabel(ctx, t)), key: keys.map((t) => fitLabel(ctx, t)) };
  const widths = { query: labels.query.map((t) => ctx.measureText(t).width),
    key: labels.key.map((t) => ctx.measureText(t).width) };
  const widestQuery = Math.max(24, ctx.measureText(titles.query).width, ...widths.query);
  const widestKey = Math.max(24, ctx.measureText(titles.key).width, ...widths.key);
  const rows = Math.max(T, S);
  // Longer lines for longer sentences: the slope stays readable as the columns grow.
  const span = Math.max(160, Math.min(260, 120 + 2 * rows));
  const bodyW = widestQuery + widestKey + 2 * LABEL_GAP + span + 2 * PAD;
  ctx.font = `600 ${FONT_PX + 1}px ${colors.font}`;
  const titleW = ctx.measureText(f.title ?? '').width + 2 * PAD;
  ctx.font = `${FONT_PX}px ${colors.font}`;
  // Legend: a short line and the head's name per head, wrapped to the figure's width.
  const legend = [];
  let legendH = 0;
  if (heads > 1) {
    const room = Math.max(bodyW, titleW, 300) - 2 * PAD;
    let x = 0, row = 0;
    for (let h = 0; h < heads; h++) {
      const w = 22 + ctx.measureText(headName(f, h)).width + 12;
      if (x > 0 && x + w > room) { x = 0; row += 1; }
      legend.push({ x: PAD + x, y: TITLE_H + row * LEGEND_ROW_H + LEGEND_ROW_H / 2, w });
      x += w;
    }
    legendH = (row + 1) * LEGEND_ROW_H + 2;
  }
  const legendW = Math.max(0, ...legend.map((l) => l.x + l.w)) + PAD;
  const width = Math.ceil(Math.max(bodyW, titleW, legendW, 120));
  const offset = (width - bodyW) / 2; // a wide title or legend: the columns move to the middle
  const queryRight = offset + PAD + widestQuery;
  const keyLeft = queryRight + 2 * LABEL_GAP + span;
  const rowsTop = TITLE_H + legendH + HEADER_H;
  // The shorter column is centred beside the longer one (on whole rows).
  const queryTop = rowsTop + Math.floor((rows - T) / 2) * ROW_H, keyTop = rowsTop + Math.floor((rows - S) / 2) * ROW_H;
  const query = Array.from({ length: T }, (_, i) => ({ x: queryRight + LABEL_GAP, y: queryTop + (i + 0.5) * ROW_H }));
  const key = Array.from({ length: S }, (_, j) => ({ x: keyLeft - LABEL_GAP, y: keyTop + (j + 0.5) * ROW_H }));
  // The caption wraps to the figure's width.
  const captionLines = [];
  if (f.caption) {
    let line = '';
    for (const word of String(f.caption).split(/\s+/)) {
      const next = line ? `${line} ${word}` : word;
      if (line && ctx.measureText(next).width > width - 2 * PAD) { captionLines.push(line); line = word; } else line = next;
    }
    if (line) captionLines.push(line);
  }
  const captionTop = rowsTop + rows * ROW_H + 8;
  const height = Math.ceil(captionTop + captionLines.length * (FONT_PX + 4) + (captionLines.length ? 4 : 0));
  return { width, height, T, S, heads, titles, rowsTop, rowH: ROW_H, queryTop, keyTop, query, key, labels, widths,
    queryRight, keyLeft, legend, captionLines, captionTop };
}

/** The token label under (x, y) CSS px: {side: 'query' | 'key', index}, or null (the lines, the margins). */
function hitHeadView(L, x, y) {
  // A label's whole row counts, from the edge to its lines' end (a short token is still easy to hit).
  const side = x >= 0 && x <= L.queryRight + LABEL_GAP ? 'query' : x >= L.keyLeft - LABEL_GAP && x <= L.width ? 'key' : null;
  if (!side) return null;
  const top = side === 'query' ? L.queryTop : L.keyTop, n = side === 'query' ? L.T : L.S;
  const index = Math.floor((y - top) / L.rowH);
  if (y < top || index < 0 || index >= n) return null;
  return { side, index };
}

/** Draws the head view, sizing the canvas (CSS px x scale). Returns the layout. */
function drawHeadView(canvas, f, scale = globalThis.devicePixelRatio || 1) {
  const ctx = canvas.getContext('2d');
  const L = headViewLayout(ctx, f);
  const { T, S, heads } = L;
  const { colors } = titledCanvas(canvas, L, scale,
    { title: f.title ?? '', titleH: TITLE_H, titleX: PAD, fontPx: FONT_PX });

  ctx.font = `${FONT_PX}px ${colors.font}`;
  // Legend: one line sample per head, drawn as the head's lines are.
  L.legend.forEach((item, h) => {
    const { color, dash } = headStyle(f, h, colors);
    ctx.strokeStyle = color;
    ctx.lineWidth = 3;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(item.x, item.y);
    ctx.lineTo(item.x + 18, item.y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = colors.text;
    ctx.fillText(headName(f, h), item.x + 22, item.y);
  });
  // Column headings.
  const headerY = L.rowsTop - HEADER_H / 2;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'right';
  ctx.fillText(L.titles.query, L.queryRight, headerY);
  ctx.textAlign = 'left';
  ctx.fillText(L.titles.key, L.keyLeft, headerY);

  const side = f.side === 'key' ? 'key' : 'query';
  const selected = Number.isInteger(f.selected) && f.selected >= 0 && f.selected < (side === 'key' ? S : T) ? f.selected : null;
  // With one head and a selection, the other column's labels are shaded by their weight (as BertViz
  // does): the strongest partners read at a glance, and the numbers are in the tooltip.
  if (selected !== null && heads === 1) {
    const otherSide = side === 'query' ? 'key' : 'query';
    const other = L[otherSide];
    for (let j = 0; j < other.length; j++) {
      const w = side === 'query' ? f.weights[selected * S + j] : f.weights[j * S + selected];
      if (!(w > 0.004)) continue;
      const lw = L.widths[otherSide][j] + 6;
      const x = side === 'query' ? L.keyLeft - 3 : L.queryRight - lw + 3;
      ctx.fillStyle = withAlpha(colors.series[0], 0.35 * Math.min(1, w));
      ctx.fillRect(x, other[j].y - ROW_H / 2 + 1, lw, ROW_H - 2);
    }
  }
  // Lines, head by head: alpha = weight (in steps of 0.01, the tooltip's precision). The lines of one
  // head and one step are one path, stroked once: 64 tokens are 4096 lines, and one stroke per line
  // made each redraw (every hover) slow. Lines of one path do not darken where they cross; lines of
  // different steps and heads do, so overlaid heads mix their colours.
  ctx.lineWidth = LINE_W;
  ctx.lineCap = 'butt';
  const qFrom = selected !== null && side === 'query' ? selected : 0;
  const qTo = selected !== null && side === 'query' ? selected + 1 : T;
  const kFrom = selected !== null && side === 'key' ? selected : 0;
  const kTo = selected !== null && side === 'key' ? selected + 1 : S;
  for (let h = 0; h < heads; h++) {
    const { color, dash } = headStyle(f, h, colors);
    const steps = Array.from({ length: 101 }, () => []);
    for (let q = qFrom; q < qTo; q++) {
      for (let k = kFrom; k < kTo; k++) {
        const w = f.weights[(h * T + q) * S + k];
        // Below 0.005 a line would hardly change a pixel; NaN draws nothing.
        const step = Math.round(Math.min(1, w) * 100);
        if (step >= 1) steps[step].push(q, k);
      }
    }
    ctx.setLineDash(dash);
    steps.forEach((pairs, step) => {
      if (!pairs.length) return;
      ctx.strokeStyle = withAlpha(color, step / 100);
      ctx.beginPath();
      for (let i = 0; i < pairs.length; i += 2) {
        ctx.moveTo(L.query[pairs[i]].x, L.query[pairs[i]].y);
        ctx.lineTo(L.key[pairs[i + 1]].x, L.key[pairs[i + 1]].y);
      }
      ctx.stroke();
    });
  }
  ctx.setLineDash([]);
  // Labels over everything; the selected one bold, in the focus colour and boxed (not colour alone).
  for (const column of ['query', 'key']) {
    const points = column === 'query' ? L.query : L.key;
    ctx.textAlign = column === 'query' ? 'right' : 'left';
    const x = column === 'query' ? L.queryRight : L.keyLeft;
    for (let i = 0; i < points.length; i++) {
      const isSelected = selected === i && side === column;
      ctx.font = `${isSelected ? '600 ' : ''}${FONT_PX}px ${colors.font}`;
      if (isSelected) {
        const w = ctx.measureText(L.labels[column][i]).width + 6;
        const bx = column === 'query' ? x - w + 3 : x - 3;
        ctx.strokeStyle = colors.focus;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(bx, points[i].y - ROW_H / 2 + 1, w, ROW_H - 2);
      }
      ctx.fillStyle = isSelected ? colors.focus : colors.text;
      ctx.fillText(L.labels[column][i], x, points[i].y + 0.5);
    }
  }
  if (L.captionLines.length) {
    ctx.font = `${FONT_PX}px ${colors.font}`;
    ctx.fillStyle = colors.muted;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    L.captionLines.forEach((line, i) => ctx.fillText(line, PAD, L.captionTop + i * (FONT_PX + 4)));
  }
  if (canvas.dataset) {
    const round = (p) => [Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10];
    canvas.dataset.tokenPoints = JSON.stringify({ query: L.query.map(round), key: L.key.map(round) });
  }
  return L;
}

const quote = (t) => `'${t}'`;

/**
 * The strongest lines of one token, for the tooltip: "query 'cat' → key 'the': 0.42; ..." (n lines,
 * over all heads; each named by its head when there are several; the columns' titles as the words).
 */
function describeHeadViewToken(f, side, index, n = 3) {
  const { queries, keys } = headViewTokens(f);
  const T = queries.length, S = keys.length, heads = f.heads ?? 1;
  const titles = titlesOf(f);
  const lines = [];
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < (side === 'key' ? T : S); j++) {
      const q = side === 'key' ? j : index, k = side === 'key' ? index : j;
      const w = f.weights[(h * T + q) * S + k];
      if (Number.isFinite(w)) lines.push({ h, q, k, w });
    }
  }
  lines.sort((a, b) => b.w - a.w);
  const text = lines.slice(0, n).map(({ h, q, k, w }) => `${heads > 1 ? `${headName(f, h)}: ` : ''}${titles.query} `
    + `${quote(queries[q])} → ${titles.key} ${quote(keys[k])}: ${w.toFixed(2)}`);
  return text.join('; ') || `${titles[side]} ${quote((side === 'key' ? keys : queries)[index])}: no weights`;
}

/** Text for the canvas's aria-label: what the figure shows and each query's strongest key. */
function describeHeadView(f) {
  const { T, S, heads, queries, keys } = checkHeadView(f);
  const titles = titlesOf(f);
  const strongest = [];
  for (let q = 0; q < T; q++) {
    let best = null;
    for (let h = 0; h < heads; h++) {
      for (let k = 0; k < S; k++) {
        const w = f.weights[(h * T + q) * S + k];
        if (Number.isFinite(w) && (!best || w > best.w)) best = { h, k, w };
      }
    }
    if (best) strongest.push(`${quote(queries[q])} → ${quote(keys[best.k])} `
      + `${best.w.toFixed(2)}${heads > 1 ? ` (${headName(f, best.h)})` : ''}`);
  }
  const what = heads > 1 ? `${heads} heads overlaid `
    + `(${Array.from({ length: heads }, (_, h) => headName(f, h)).join(', ')})` : 'one head';
  const side = f.side === 'key' ? 'key' : 'query';
  const column = side === 'key' ? keys : queries;
  const selected = Number.isInteger(f.selected) && f.selected >= 0 && f.selected < column.length
    ? ` Showing only the lines of ${titles[side]} ${quote(column[f.selected])}.` : '';
  const two = !!(f.queryTokens || f.keyTokens);
  const shape = two ? `${T} ${titles.query} token${T === 1 ? '' : 's'} and ${S} ${titles.key} `
    + `token${S === 1 ? '' : 's'}` : `${T} tokens`;
  const columns = two ? `${titles.query} tokens on the left, ${titles.key} tokens on the right` : 'queries on the left, keys on the right';
  return `Head view of ${shape}, ${what}: ${columns}, a line's opacity is its weight.${selected}`
    + ` Each ${two ? `${titles.query} token's strongest ${titles.key} token` : 'query\'s strongest key'}: `
    + `${strongest.join('; ')}.`;
}

/**
 * The kind as figure_kinds.js lists it. A pick is a token ({index, side}): a click picks the token
 * under the pointer and a second click lets it go; on the focused canvas, up and down move along a
 * column, left and right change column, Enter or Space picks, Escape lets go. The lab is told
 * {token, side}, or {token: null} when the token is let go.
 */
export const headViewKind = {
  draw: drawHeadView,
  label: (f) => `${f.title}: ${describeHeadView(f)}`,
  pick: {
    /** The token the figure itself selects (the lab's answer), or null. */
    selectedOf: (f) => (Number.isInteger(f.selected) ? { index: f.selected,
      side: f.side === 'key' ? 'key' : 'query' } : null),
    /**
     * The figure as drawn: the hovered token, else the keyboard's place, else the pick (only the pick
     * when exported).
     */
    asDrawn(f, { pinned, pointer, cursor, forExport }) {
      const shown = forExport ? pinned : pointer ?? cursor ?? pinned;
      return { ...f, selected: shown?.index ?? null, side: shown?.side ?? 'query' };
    },
    hit: hitHeadView,
    choose(pinned, hit) {
      const same = pinned && pinned.index === hit.index && pinned.side === hit.side;
      return same ? { pick: null, detail: { token: null } } : { pick: { index: hit.index, side: hit.side },
        detail: { token: hit.index, side: hit.side } };
    },
    release: { token: null }, // Escape lets the picked token go
    move(f, start, moving, down, right) {
      // Up and down move along a column; left and right change column (queries | keys), where the
      // place is kept within the other column's length (a cross-attention's columns differ).
      const { queries, keys } = headViewTokens(f);
      const side = !start ? 'query' : right < 0 ? 'query' : right > 0 ? 'key' : start.side;
      const n = (side === 'key' ? keys : queries).length;
      return { index: !start ? 0 : Math.max(0, Math.min(n - 1, start.index + (moving ? down : 0))), side };
    },
    cursorTip(f, L, c) {
      const p = (c.side === 'key' ? L.key : L.query)[c.index];
      return { text: describeHeadViewToken(f, c.side, c.index), x: p.x, y: p.y };
    },
    /** Hover shows the token's lines only (pointer), and their weights. */
    hover(f, L, x, y) {
      const hit = hitHeadView(L, x, y);
      return { pointer: hit, text: hit ? describeHeadViewToken(f, hit.side, hit.index) : '' };
    },
  },
};
