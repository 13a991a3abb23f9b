// BertViz's model view on a canvas (a figure kind of figure_kinds.js): every head of every layer as a small
// T x S heatmap (rows the queries, columns the keys), layers as rows and heads as columns, so the
// patterns (the diagonal, the previous token, [CLS] and [SEP] sinks, the words of an input sentence read
// in order) are seen side by side. Clicking a thumbnail, or Enter on the one the arrow keys moved to,
// picks that layer and head (modelGridKind below; figures.js calls the board's onPick).
//
// figure: {kind: 'modelgrid', id, title, layers: L, heads: H,
//          tokens: [string] (T: queries and keys, S = T) | queryTokens: [string] (T) and keyTokens: [string] (S),
//          attentions: Array | Float32Array, L x H x T x S ([layer][head][query][key]),
//          queryTitle?, keyTitle? (the tooltip's words; default 'query', 'key'),
//          selected? ({layer, head}: outlined), palette? (a palette.js name; default the board's),
//          off? ([{layer, head}]: heads switched off, dimmed and crossed out; issue 39's head ablation),
//          focus? ({layer, head}: the keyboard's place, dashed; figures.js sets it),
//          kvHeads? (Hkv < H, grouped-query attention: query head h reads key/value head floor(h / (H / Hkv)),
//                    as Hugging Face's repeat_kv; each group is bracketed and labelled "K/V k" over its heads)}
//
// Thumbnail size: 768 px / max(L, H), clamped to 48..96 px (bert-base's 12 x 12: 64 px) for the longer
// of T and S, then a whole number of pixels per token when the tokens fit in 96 px, so every cell of a
// thumbnail is a square of the same size (bert-large's 24 x 16 at 64 tokens: 64 px, one pixel a token);
// T != S makes the thumbnails rectangles (3 generated tokens over 9 source tokens: 90 x 30 px).
import { colorAt, PALETTES } from '../shared/palette.js';
import { titledCanvas } from './figure_canvas.js';
import { kvGroups } from '../shared/kv_groups.js';

const TITLE_H = 22;
const FONT_PX = 12;
const CHAR_W = 6.6; // CSS px per character at FONT_PX (system-ui): the layout needs no canvas
const HEADER_H = 18;
const GAP = 8; // between thumbnails: room for the selection's outline
const PAD = 6;
const BAR_W = 10; // the colour bar
const GROUP_H = 20; // the "K/V k" row over the heads that share a key/value head

/** The thumbnails' tokens: {queries: [string] (T), keys: [string] (S)}; one list (`tokens`) is both. */
function modelGridTokens(f) {
  if (f.queryTokens || f.keyTokens) return { queries: f.queryTokens ?? [], keys: f.keyTokens ?? [] };
  return { queries: f.tokens ?? [], keys: f.tokens ?? [] };
}

function checkModelGrid(f) {
  const { queries, keys } = modelGridTokens(f);
  const T = queries.length, S = keys.length;
  const { layers, heads } = f;
  if (!Number.isInteger(layers) || !Number.isInteger(heads) || layers < 1 || heads < 1 || T < 1 || S < 1) {
    throw new Error(`model grid: layers, heads and tokens must be positive, got ${layers} x ${heads} x ${T} x ${S}`);
  }
  if (!f.attentions || f.attentions.length !== layers * heads * T * S) {
    throw new Error(`model grid needs L x H x T x S = ${layers} x ${heads} x ${T} x ${S} = ${layers * heads * T * S} `
      + `attentions, got ${f.attentions?.length}`);
  }
  return { L: layers, H: heads, T, S, queries, keys };
}

/** The thumbnail's size (CSS px) for L x H heads of T queries x S keys: {w, h}. */
function thumbnailSize(L, H, T, S) {
  const side = Math.max(48, Math.min(96, Math.round(768 / Math.max(L, H))));
  const n = Math.max(T, S);
  // More tokens than pixels: the thumbnail is a smoothed reduction, scaled as the longer side.
  if (n > 96) return { w: Math.max(1, Math.round((side * S) / n)), h: Math.max(1, Math.round((side * T) / n)) };
  if (n > side) return { w: S, h: T };
  let k = Math.max(1, Math.round(side / n));
  if (n * k > 96 && k > 1) k -= 1;
  return { w: S * k, h: T * k };
}

/**
 * Where things go, in CSS px: {width, height, cellW, cellH, gap, left, top, layers, heads, T, S, cells:
 * [{layer, head, x, y, w, h}] (row-major: layer by layer), bar: {x, y, h}}.
 */
function modelGridLayout(f) {
  const { L, H, T, S } = checkModelGrid(f);
  const { w: cellW, h: cellH } = thumbnailSize(L, H, T, S);
  const left = PAD + Math.ceil(`Layer ${L - 1}`.length * CHAR_W) + 8;
  const groups = kvGroups(H, f.kvHeads);
  const top = TITLE_H + (groups.length ? GROUP_H : 0) + HEADER_H;
  // The "Head h" headings need room when the thumbnails are narrow.
  const stepX = Math.max(cellW, Math.ceil(`Head ${H - 1}`.length * CHAR_W)) + GAP;
  const gridW = H * stepX - GAP, gridH = L * cellH + (L - 1) * GAP;
  const bar = { x: left + gridW + 14, y: top, h: Math.max(40, Math.min(gridH, 160)) };
  const width = Math.ceil(Math.max(bar.x + BAR_W + 6 + 3 * CHAR_W + PAD, PAD + (f.title ?? '').length * 7.2 + PAD));
  const height = Math.ceil(Math.max(top + gridH, bar.y + bar.h) + PAD + 4);
  const cells = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) cells.push({ layer: l, head: h, x: left + h * stepX, y: top + l * (cellH + GAP),
      w: cellW, h: cellH });
  }
  // Each group's bracket spans its heads' columns (their "Head h" headings included: they can be wider
  // than a thumbnail).
  const groupBoxes = groups.map(({ kv, heads }) => {
    const x = left + heads[0] * stepX, w = (heads.length - 1) * stepX + Math.max(cellW, stepX - GAP);
    return { kv, heads, x, y: TITLE_H, w, h: GROUP_H };
  });
  return { width, height, cellW, cellH, stepX, stepY: cellH + GAP, gap: GAP, left, top, layers: L, heads: H, T, S,
    cells, bar, groups: groupBoxes };
}

/** The thumbnail under (x, y) CSS px: {layer, head}, or null (the gaps and margins). */
function hitModelGrid(layout, x, y) {
  const head = Math.floor((x - layout.left) / layout.stepX), layer = Math.floor((y - layout.top) / layout.stepY);
  if (head < 0 || layer < 0 || head >= layout.heads || layer >= layout.layers) return null;
  if (x - layout.left - head * layout.stepX >= layout.cellW || y - layout.top - layer * layout.stepY >= layout.cellH) return null;
  return { layer, head };
}

/** As hitModelGrid, with the query (row) and key (column) of the thumbnail's cell under the pointer. */
function modelGridCell(layout, x, y) {
  const hit = hitModelGrid(layout, x, y);
  if (!hit) return null;
  const key = Math.min(layout.S - 1,
    Math.floor(((x - layout.left - hit.head * layout.stepX) * layout.S) / layout.cellW));
  const query = Math.min(layout.T - 1,
    Math.floor(((y - layout.top - hit.layer * layout.stepY) * layout.T) / layout.cellH));
  return { ...hit, query, key };
}

const newCanvas = (w, h) => {
  if (typeof document === 'undefined') return new OffscreenCanvas(w, h);
  return Object.assign(document.createElement('canvas'), { width: w, height: h });
};

// All the thumbnails at one pixel per token in one canvas (an atlas: head h of layer l at (h S, l T)),
// kept per attentions array and palette: moving the keyboard's outline, or a pick, redraws the figure
// without colouring 1.6 million pixels again (bert-large at 64 tokens: ~90 ms of the ~120 ms a draw costs).
const atlases = new WeakMap();
function atlasFor(f, L, H, T, S, palette) {
  const cached = atlases.get(f.attentions);
  if (cached && cached.palette === palette && cached.L === L && cached.H === H && cached.T === T && cached.S === S) return cached.canvas;
  const canvas = newCanvas(H * S, L * T);
  const actx = canvas.getContext('2d');
  const image = actx.createImageData(H * S, L * T);
  // palette.js's table read directly (colorAt's mapping for the range 0..1, without an array per pixel).
  const lut = PALETTES[palette] ?? PALETTES.viridis;
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const base = (l * H + h) * T * S;
      for (let q = 0; q < T; q++) {
        let o = 4 * ((l * T + q) * H * S + h * S);
        for (let k = 0; k < S; k++, o += 4) {
          const v = f.attentions[base + q * S + k];
          const j = 3 * Math.max(0, Math.min(255, Math.round((Number.isFinite(v) ? v : 0) * 255)));
          image.data[o] = lut[j];
          image.data[o + 1] = lut[j + 1];
          image.data[o + 2] = lut[j + 2];
          image.data[o + 3] = 255;
        }
      }
    }
  }
  actx.putImageData(image, 0, 0);
  atlases.set(f.attentions, { palette, L, H, T, S, canvas });
  return canvas;
}

// One thumbnail alone, for contexts that only take drawImage(source, x, y, w, h) (svg_canvas.js reads
// its pixels back as one rect per cell) and for smoothed reductions (no bleeding from a neighbour).
let scratch = null;
function thumbnail(atlas, layer, head, T, S) {
  if (!scratch || scratch.width !== S || scratch.height !== T) scratch = newCanvas(S, T);
  const sctx = scratch.getContext('2d');
  sctx.clearRect(0, 0, S, T);
  sctx.drawImage(atlas, head * S, layer * T, S, T, 0, 0, S, T);
  return scratch;
}

/** Draws the grid, sizing the canvas (CSS px x scale). Returns the layout. */
function drawModelGrid(canvas, f, scale = globalThis.devicePixelRatio || 1) {
  const layout = modelGridLayout(f);
  const { layers: L, heads: H, T, S, cellW, cellH } = layout;
  const { ctx, colors } = titledCanvas(canvas, layout, scale,
    { title: f.title ?? '', titleH: TITLE_H, titleX: PAD, fontPx: FONT_PX });
  const palette = f.palette ?? 'viridis';
  // Column and row labels.
  ctx.font = `${FONT_PX}px ${colors.font}`;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  const headsY = layout.top - HEADER_H / 2;
  for (const cell of layout.cells.slice(0, H)) ctx.fillText(`Head ${cell.head}`, cell.x + cellW / 2, headsY);
  // Grouped-query attention: a bracket over the heads that share a key/value head, labelled with it, and a
  // thin frame around their thumbnails down every layer (the sharing holds in each layer).
  for (const g of layout.groups) {
    const y = g.y + g.h - 4;
    ctx.strokeStyle = colors.muted;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(g.x + 1, y + 3);
    ctx.lineTo(g.x + 1, y);
    ctx.lineTo(g.x + g.w - 1, y);
    ctx.lineTo(g.x + g.w - 1, y + 3);
    ctx.stroke();
    ctx.strokeRect(g.x - 3.5, layout.top - 3.5, g.w + 7, layout.layers * layout.stepY - GAP + 7);
    const label = `K/V ${g.kv}`;
    ctx.fillStyle = colors.background;
    ctx.fillRect(g.x + g.w / 2 - (label.length * CHAR_W) / 2 - 3, y - 8, label.length * CHAR_W + 6, 12);
    ctx.fillStyle = colors.text;
    ctx.fillText(label, g.x + g.w / 2, y - 2);
    ctx.fillStyle = colors.muted;
  }
  ctx.textAlign = 'right';
  for (let l = 0; l < L; l++) ctx.fillText(`Layer ${l}`, layout.left - 8, layout.top + l * layout.stepY + cellH / 2);

  const atlas = atlasFor(f, L, H, T, S, palette);
  // Whole pixels per token: crisp cells; more tokens than pixels: a smoothed reduction.
  const reduced = T > cellH || S > cellW;
  ctx.imageSmoothingEnabled = reduced;
  const fromAtlas = !reduced && ((typeof CanvasRenderingContext2D !== 'undefined' && ctx instanceof CanvasRenderingContext2D)
    || (typeof OffscreenCanvasRenderingContext2D !== 'undefined' && ctx instanceof OffscreenCanvasRenderingContext2D));
  for (const cell of layout.cells) {
    if (fromAtlas) ctx.drawImage(atlas, cell.head * S, cell.layer * T, S, T, cell.x, cell.y, cellW, cellH);
    else ctx.drawImage(thumbnail(atlas, cell.layer, cell.head, T, S), cell.x, cell.y, cellW, cellH);
    ctx.strokeStyle = colors.grid;
    ctx.lineWidth = 1;
    ctx.strokeRect(cell.x - 0.5, cell.y - 0.5, cellW + 1, cellH + 1);
  }
  // The selected head: a thick outline in the focus colour; the keyboard's place: dashed, further out.
  const at = (p) => (p && Number.isInteger(p.layer) && Number.isInteger(p.head) && p.layer >= 0 && p.layer < L && p.head >= 0 && p.head < H
    ? layout.cells[p.layer * H + p.head] : null);
  // Heads switched off: their thumbnail dimmed and crossed in the focus colour (what they would have
  // contributed is gone).
  for (const p of f.off ?? []) {
    const cell = at(p);
    if (!cell) continue;
    ctx.globalAlpha = 0.65;
    ctx.fillStyle = colors.background;
    ctx.fillRect(cell.x, cell.y, cellW, cellH);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = colors.focus;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(cell.x + 2, cell.y + 2);
    ctx.lineTo(cell.x + cellW - 2, cell.y + cellH - 2);
    ctx.moveTo(cell.x + cellW - 2, cell.y + 2);
    ctx.lineTo(cell.x + 2, cell.y + cellH - 2);
    ctx.stroke();
  }
  const selected = at(f.selected);
  if (selected) {
    ctx.strokeStyle = colors.focus;
    ctx.lineWidth = 3;
    ctx.strokeRect(selected.x - 2, selected.y - 2, cellW + 4, cellH + 4);
  }
  const focus = at(f.focus);
  if (focus) {
    ctx.strokeStyle = colors.text;
    ctx.lineWidth = 1.5;
    ctx.setLineDash([3, 2]);
    const o = selected === focus ? 4.5 : 2.5;
    ctx.strokeRect(focus.x - o, focus.y - o, cellW + 2 * o, cellH + 2 * o);
    ctx.setLineDash([]);
  }
  // Colour bar: 0 at the bottom, 1 at the top, in steps drawn as rects (vector in the SVG export).
  const steps = 64;
  for (let s = 0; s < steps; s++) {
    ctx.fillStyle = `rgb(${colorAt(palette, 1 - (s + 0.5) / steps, 0, 1).join(', ')})`;
    ctx.fillRect(layout.bar.x, layout.bar.y + (s * layout.bar.h) / steps, BAR_W, layout.bar.h / steps + 0.5);
  }
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'left';
  ctx.fillText('1', layout.bar.x + BAR_W + 4, layout.bar.y + FONT_PX / 2);
  ctx.fillText('0', layout.bar.x + BAR_W + 4, layout.bar.y + layout.bar.h - FONT_PX / 2);
  if (canvas.dataset) {
    canvas.dataset.cells = JSON.stringify(layout.cells);
    if (layout.groups.length) canvas.dataset.kvGroups = JSON.stringify(layout.groups);
    else delete canvas.dataset.kvGroups;
  }
  return layout;
}

/**
 * Text for the canvas's aria-label: the grid's shape, the selected head, and the most and least
 * focused heads (mean over queries of the query's largest weight: 1 = each query looks at one key).
 */
function describeModelGrid(f) {
  const { L, H, T, S } = checkModelGrid(f);
  let most = null, least = null;
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const base = (l * H + h) * T * S;
      let sum = 0;
      for (let q = 0; q < T; q++) {
        let max = 0;
        for (let k = 0; k < S; k++) max = Math.max(max, f.attentions[base + q * S + k] || 0);
        sum += max;
      }
      const focus = { layer: l, head: h, value: sum / T };
      if (!most || focus.value > most.value) most = focus;
      if (!least || focus.value < least.value) least = focus;
    }
  }
  const name = (p) => `layer ${p.layer}, head ${p.head}`;
  const selected = f.selected && Number.isInteger(f.selected.layer) ? ` Selected: ${name(f.selected)}.` : '';
  const off = f.off?.length ? ` Switched off: ${f.off.map(name).join('; ')}.` : '';
  const two = !!(f.queryTokens || f.keyTokens);
  const query = f.queryTitle ?? 'query', key = f.keyTitle ?? 'key';
  const over = two ? `of ${T} ${query} token${T === 1 ? '' : 's'} over ${S} ${key} token${S === 1 ? '' : 's'}` : `over ${T} tokens`;
  const inEach = two ? `rows are ${query} tokens and columns ${key} tokens` : 'rows are queries and columns keys';
  const groups = kvGroups(H, f.kvHeads);
  const shared = groups.length ? ' Key/value heads shared: '
    + `${groups.map((g) => `heads ${g.heads.join(', ')} read K/V ${g.kv}`).join('; ')}.` : '';
  return `Model view: ${L} layer${L > 1 ? 's' : ''} x ${H} head${H > 1 ? 's' : ''} of attention ${over}, one heatmap `
    + `per head (rows: layers, columns: heads; in each, ${inEach}).${shared}${selected}${off} Most focused: `
    + `${name(most)} (mean strongest weight ${most.value.toFixed(2)}); most spread: ${name(least)} `
    + `(${least.value.toFixed(2)}).`
    + (f.toggles ? ' Click a heatmap, or use the arrow keys and Enter, to switch its head off or on.' : ' Click a heatmap, or use the arrow keys and Enter, to pick a head.');
}

/**
 * The kind as figure_kinds.js lists it. A pick is a head ({layer, head}): a click picks the thumbnail
 * under the pointer; on the focused canvas the arrow keys move the keyboard's place and Enter or
 * Space picks it. The lab is told {layer, head}.
 */
export const modelGridKind = {
  draw: drawModelGrid,
  label: (f) => `${f.title}: ${describeModelGrid(f)}`,
  pick: {
    selectedOf: (f) => f.selected ?? null,
    /** The figure as drawn: the pick outlined, the keyboard's place dashed (not when exported). */
    asDrawn: (f, { pinned, cursor, palette, forExport }) => ({ ...f, palette: f.palette ?? palette, selected: pinned,
      focus: forExport ? null : cursor }),
    hit: hitModelGrid,
    choose: (pinned, hit) => ({ pick: { layer: hit.layer, head: hit.head },
      detail: { layer: hit.layer, head: hit.head } }),
    move(f, start, moving, down, right) {
      return !start ? { layer: 0, head: 0 } : {
        layer: Math.max(0, Math.min(f.layers - 1, start.layer + (moving ? down : 0))),
        head: Math.max(0, Math.min(f.heads - 1, start.head + (moving ? right : 0))),
      };
    },
    cursorTip(f, L, c, picked) {
      const cell = L.cells[c.layer * f.heads + c.head];
      return { text: `Layer ${c.layer}, head ${c.head}${picked ? ' (selected)' : ' · Enter picks it'}`,
        x: cell.x + cell.w, y: cell.y + cell.h };
    },
    /** Hover names the thumbnail's cell under the pointer and its weight. */
    hover(f, L, x, y) {
      const cell = modelGridCell(L, x, y);
      if (!cell) return { text: '' };
      const { queries, keys } = modelGridTokens(f);
      const T = queries.length, S = keys.length;
      const w = f.attentions[((cell.layer * f.heads + cell.head) * T + cell.query) * S + cell.key];
      return { text: `Layer ${cell.layer}, head ${cell.head} · ${f.queryTitle ?? 'query'} '${queries[cell.query]}' `
        + `→ ${f.keyTitle ?? 'key'} '${keys[cell.key]}': ${Number(w).toFixed(2)}` };
    },
  },
};
