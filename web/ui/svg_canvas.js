// A stand-in for a <canvas> whose 2D context writes SVG elements instead of pixels, so the page's own
// drawing code (drawHeatmap, drawChart) makes a real vector figure: rects for cells and fills, text
// for titles, ticks and legends, paths for lines. It covers the subset of CanvasRenderingContext2D
// that those functions use. Images (the heatmap's cells, its colour bar) become one rect per source
// pixel, so each heatmap cell is one <rect> with exactly the colour the canvas shows.

// Rasters up to this many pixels become rects (editable, crisp in any viewer); larger ones one PNG.
const MAX_RECT_PIXELS = 4096;
const SVG_NS = 'http://www.w3.org/2000/svg';
const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x) => String(Math.round(x * 100) / 100);
const IDENTITY = [1, 0, 0, 1, 0, 0];

// [a, b, c, d, e, f] as in setTransform: x' = a x + c y + e, y' = b x + d y + f.
function multiply(m, n) {
  return [
    m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

const TEXT_ANCHOR = { left: 'start', start: 'start', center: 'middle', right: 'end', end: 'end' };
const BASELINE = { middle: 'central', top: 'hanging', hanging: 'hanging', bottom: 'text-after-edge',
  alphabetic: 'alphabetic' };

class SvgContext2D {
  constructor(canvas) {
    this.canvas = canvas;
    this.parts = [];
    this.state = {
      transform: IDENTITY, fillStyle: '#000', strokeStyle: '#000', lineWidth: 1, font: '10px sans-serif',
      textAlign: 'start', textBaseline: 'alphabetic', dash: [], openGroups: 0,
    };
    this.stack = [];
    this.path = '';
    this.clipCount = 0;
    this.imageSmoothingEnabled = true;
    this.measurer = document.createElement('canvas').getContext('2d');
  }

  // ---- state ----
  get fillStyle() { return this.state.fillStyle; }
  set fillStyle(v) { this.state.fillStyle = v; }
  get strokeStyle() { return this.state.strokeStyle; }
  set strokeStyle(v) { this.state.strokeStyle = v; }
  get lineWidth() { return this.state.lineWidth; }
  set lineWidth(v) { this.state.lineWidth = v; }
  get font() { return this.state.font; }
  set font(v) { this.state.font = v; }
  get textAlign() { return this.state.textAlign; }
  set textAlign(v) { this.state.textAlign = v; }
  get textBaseline() { return this.state.textBaseline; }
  set textBaseline(v) { this.state.textBaseline = v; }
  setLineDash(dash) { this.state.dash = [...dash]; }

  save() {
    this.stack.push(this.state);
    this.state = { ...this.state, dash: [...this.state.dash], openGroups: 0 };
  }

  restore() {
    // Clip groups opened since the matching save() end here, as a canvas clip would.
    for (let i = 0; i < this.state.openGroups; i++) this.parts.push('</g>');
    this.state = this.stack.pop() ?? this.state;
  }

  setTransform(a, b, c, d, e, f) { this.state.transform = [a, b, c, d, e, f]; }
  translate(x, y) { this.state.transform = multiply(this.state.transform, [1, 0, 0, 1, x, y]); }
  rotate(angle) {
    const cos = Math.cos(angle), sin = Math.sin(angle);
    this.state.transform = multiply(this.state.transform, [cos, sin, -sin, cos, 0, 0]);
  }
  scale(x, y) { this.state.transform = multiply(this.state.transform, [x, 0, 0, y, 0, 0]); }

  transformAttribute() {
    const t = this.state.transform;
    return t.every((v, i) => v === IDENTITY[i]) ? '' : ` transform="matrix(${t.map(num).join(' ')})"`;
  }

  // ---- shapes ----
  fillRect(x, y, w, h) {
    this.parts.push(`<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" `
      + `fill="${escape(this.state.fillStyle)}"${this.transformAttribute()}/>`);
  }

  strokeRect(x, y, w, h) {
    this.parts.push(`<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" `
      + `fill="none"${this.strokeAttributes()}${this.transformAttribute()}/>`);
  }

  strokeAttributes() {
    const dash = this.state.dash.length ? ` stroke-dasharray="${this.state.dash.map(num).join(' ')}"` : '';
    return ` stroke="${escape(this.state.strokeStyle)}" stroke-width="${num(this.state.lineWidth)}"${dash}`;
  }

  beginPath() { this.path = ''; }
  moveTo(x, y) { this.path += `M${num(x)} ${num(y)}`; }
  lineTo(x, y) { this.path += `L${num(x)} ${num(y)}`; }
  closePath() { this.path += 'Z'; }
  rect(x, y, w, h) { this.path += `M${num(x)} ${num(y)}h${num(w)}v${num(h)}h${num(-w)}Z`; }
  arc(x, y, r, start, end) {
    if (Math.abs(end - start) >= 2 * Math.PI - 1e-9) {
      // A full circle as two half arcs (one SVG arc cannot start and end at the same point).
      this.path += `M${num(x + r)} ${num(y)}A${num(r)} ${num(r)} 0 1 1 ${num(x - r)} ${num(y)}A${num(r)} ${num(r)} 0 1 `
        + `1 ${num(x + r)} ${num(y)}`;
      return;
    }
    const sx = x + r * Math.cos(start), sy = y + r * Math.sin(start);
    const ex = x + r * Math.cos(end), ey = y + r * Math.sin(end);
    const large = end - start > Math.PI ? 1 : 0;
    this.path += `${this.path ? 'L' : 'M'}${num(sx)} ${num(sy)}A${num(r)} ${num(r)} 0 ${large} 1 ${num(ex)} ${num(ey)}`;
  }

  stroke() {
    if (this.path) this.parts.push(`<path d="${this.path}" `
      + `fill="none"${this.strokeAttributes()}${this.transformAttribute()}/>`);
  }

  fill() {
    if (this.path) this.parts.push(`<path d="${this.path}" `
      + `fill="${escape(this.state.fillStyle)}"${this.transformAttribute()}/>`);
  }

  clip() {
    const id = `clip-${this.canvas.id}-${++this.clipCount}`;
    this.parts.push(`<clipPath id="${id}"><path d="${this.path}"${this.transformAttribute()}/></clipPath><g `
      + `clip-path="url(#${id})">`);
    this.state.openGroups += 1;
  }

  // ---- text ----
  measureText(text) {
    this.measurer.font = this.state.font;
    return this.measurer.measureText(text);
  }

  fillText(text, x, y) {
    const s = this.state;
    const anchor = TEXT_ANCHOR[s.textAlign] ?? 'start';
    const baseline = BASELINE[s.textBaseline] ?? 'alphabetic';
    this.parts.push(`<text x="${num(x)}" y="${num(y)}" fill="${escape(s.fillStyle)}" style="font: ${escape(s.font)}" `
      + `text-anchor="${anchor}" dominant-baseline="${baseline}"${this.transformAttribute()}>${escape(text)}</text>`);
  }

  // ---- images: one rect per source pixel (up to MAX_RECT_PIXELS) (a heatmap cell, a colour bar row) ----
  putImageData(image, x, y) {
    this.pixelRects(image.data, image.width, image.height, x, y, 1, 1, IDENTITY);
  }

  drawImage(source, x, y, w = source.width, h = source.height) {
    // A large raster (a model view of 144 heads at 128 tokens: 2.4M cells) would be millions of rects
    // and a file of hundreds of MB: past MAX_RECT_PIXELS it is one embedded PNG, drawn unsmoothed.
    if (source.width * source.height > MAX_RECT_PIXELS && typeof source.toDataURL === 'function') {
      const t = this.state.transform.every((v, i) => v === IDENTITY[i]) ? '' : ` transform="matrix(${this.state.transform.map(num).join(' ')})"`;
      this.parts.push(`<image x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" `
        + 'preserveAspectRatio="none" style="image-rendering: pixelated" '
        + `href="${source.toDataURL('image/png')}"${t}/>`);
      return;
    }
    const data = source.getContext('2d').getImageData(0, 0, source.width, source.height).data;
    this.pixelRects(data, source.width, source.height, x, y, w / source.width, h / source.height, this.state.transform);
  }

  pixelRects(data, width, height, x, y, pw, ph, transform) {
    const t = transform.every((v, i) => v === IDENTITY[i]) ? '' : ` transform="matrix(${transform.map(num).join(' ')})"`;
    const rects = [];
    for (let r = 0; r < height; r++) {
      // Runs of one colour along a row share a rect (a colour bar row is one rect, not twelve).
      let c = 0;
      while (c < width) {
        const o = (r * width + c) * 4;
        let end = c + 1;
        while (end < width && data[(r * width + end) * 4] === data[o] && data[(r * width + end) * 4 + 1] === data[o + 1]
          && data[(r * width + end) * 4 + 2] === data[o + 2]) end++;
        if (pw > 1) end = c + 1; // an image of wide pixels (heatmap cells) keeps one rect per cell
        rects.push(`<rect x="${num(x + c * pw)}" y="${num(y + r * ph)}" width="${num((end - c) * pw)}" `
          + `height="${num(ph)}" fill="rgb(${data[o]},${data[o + 1]},${data[o + 2]})"/>`);
        c = end;
      }
    }
    this.parts.push(`<g class="${pw > 1 ? 'cells' : 'image'}"${t}>${rects.join('')}</g>`);
  }
}

/** A canvas-like object: set width / height, draw through getContext('2d'), then toSvg(). */
export class SvgCanvas {
  constructor({ id = 'figure', title = '' } = {}) {
    this.id = id;
    this.title = title;
    this.width = 300;
    this.height = 150;
    this.style = {};
    this.dataset = {};
    this.context = new SvgContext2D(this);
  }

  getContext() {
    return this.context;
  }

  /** The SVG document text, sized like the canvas. */
  toSvg() {
    const title = this.title ? `<title>${escape(this.title)}</title>` : '';
    return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="${SVG_NS}" width="${this.width}" `
      + `height="${this.height}" viewBox="0 0 ${this.width} `
      + `${this.height}">${title}${this.context.parts.join('')}</svg>\n`;
  }
}
