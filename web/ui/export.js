// Files for the teacher's slides: every figure (heatmap, chart) as PNG at 2x or as vector SVG, from one
// drawing function per figure, and the timeline as a WebM animation.
import { SvgCanvas } from './svg_canvas.js';

export const FIGURE_FORMATS = {
  png: { label: 'PNG (2x)', extension: 'png', help: 'a picture at twice the screen resolution' },
  svg: { label: 'SVG', extension: 'svg', help: 'a vector figure: sharp at any size, editable text' },
};

export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** draw(canvas, scale) draws the figure onto a fresh canvas at `scale`; -> a PNG Blob. */
function renderPng(draw, scale = 2) {
  const canvas = document.createElement('canvas');
  draw(canvas, scale);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be made'))), 'image/png'));
}

/** draw(canvas, scale) drawn onto an SvgCanvas (same code, vector output); -> an SVG Blob. */
export function renderSvg(draw, { title = '' } = {}) {
  const canvas = new SvgCanvas({ title });
  draw(canvas, 1);
  return new Blob([canvas.toSvg()], { type: 'image/svg+xml' });
}

/**
 * The one export path for figures: draw(canvas, scale) as 'png' (2x) or 'svg', downloaded as
 * `${stem}.${extension}`. -> the file name.
 */
export async function exportFigure(draw, format, stem, { title = '' } = {}) {
  const blob = format === 'svg' ? renderSvg(draw, { title }) : await renderPng(draw, 2);
  const filename = `${stem}.${FIGURE_FORMATS[format].extension}`;
  download(blob, filename);
  return filename;
}

/** Whether this browser can record a canvas to WebM, and if not, why. */
export function webmSupport() {
  if (typeof MediaRecorder === 'undefined') return { ok: false, reason: 'this browser has no MediaRecorder' };
  if (!HTMLCanvasElement.prototype.captureStream) return { ok: false,
    reason: 'this browser cannot capture a canvas stream' };
  const type = ['video/webm;codecs=vp9',
    'video/webm;codecs=vp8', 'video/webm'].find((t) => MediaRecorder.isTypeSupported(t));
  if (!type) return { ok: false, reason: 'this browser cannot record WebM video' };
  return { ok: true, type };
}

/**
 * Records `frames` frames, drawn by drawFrame(canvas, i) onto one canvas, at `fps`; -> a WebM Blob.
 * The first frame sizes the canvas; every frame must keep that size.
 */
export async function recordWebm(frames, drawFrame, { fps = 8 } = {}) {
  const support = webmSupport();
  if (!support.ok) throw new Error(`Cannot export the animation: ${support.reason}.`);
  const canvas = document.createElement('canvas');
  drawFrame(canvas, 0);
  const stream = canvas.captureStream(fps);
  const recorder = new MediaRecorder(stream, { mimeType: support.type });
  const chunks = [];
  recorder.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
  const stopped = new Promise((resolve) => { recorder.onstop = resolve; });
  recorder.start();
  for (let i = 0; i < frames; i++) {
    drawFrame(canvas, i);
    await new Promise((r) => setTimeout(r, 1000 / fps));
  }
  // Hold the last frame a little, so players do not cut it.
  await new Promise((r) => setTimeout(r, 500));
  recorder.stop();
  await stopped;
  stream.getTracks().forEach((t) => t.stop());
  return new Blob(chunks, { type: 'video/webm' });
}
