// The figure kinds a lab's sections can ask for (figures.js draws them), by the `kind` of a figure:
//   images, bars, heatmap, text, matrices, graph, chart, headview, modelgrid, table, code, arrows, pipeline,
//   phasetimeline, files
// (each kind's file documents its figure's fields). A kind is one of:
//   an element:  {create(view, figure, board) (sets view.node), show(view, figure, palette)}
//   a canvas:    {draw(canvas, figure, scale?) -> layout ({width, height, ...} in CSS px),
//                 label?(figure) -> the canvas's aria-label (default: the title),
//                 textAt?(figure, layout, x, y) -> the tooltip at that point ('' for none; a tap shows it too),
//                 spots?(figure, layout) -> [{x, y}] the points the keyboard's arrows step through, in
//                 order, the tooltip saying textAt there}
//   a canvas that answers clicks and keys: a canvas kind with `pick`, the behaviour of its picks
//                (head_view_figure.js, model_grid_figure.js: what FigureBoard asks of it is there).
// A new kind is a file with its drawing and one line here.
import { drawChart } from './chart.js';
import { imagesKind } from './images_figure.js';
import { barsKind } from './bars_figure.js';
import { heatmapKind } from './heatmap_figure.js';
import { matricesKind } from './matrix_figure.js';
import { graphKind } from './graph_figure.js';
import { headViewKind } from './head_view_figure.js';
import { modelGridKind } from './model_grid_figure.js';
import { tensorKind } from './tensor_figure.js';
import { tableKind } from './table_figure.js';
import { codeKind } from './code_figure.js';
import { arrowsKind } from './arrows_figure.js';
import { pipelineKind } from './pipeline_figure.js';
import { phaseTimelineKind } from './phase_timeline_figure.js';
import { filesKind } from './files_figure.js';

/**
 * {kind: 'text', id, text, status? ('ok' | 'bad'), ran? (the backend that computed it)}: a line of the
 * section's prose that its result writes. The backend is kept as data, not words: the badge says it once
 * for the page (issue 29: every caption repeated "(SIMD128 ran: auto: ...)").
 */
const textKind = {
  create(view, f) {
    view.node = Object.assign(document.createElement('p'), { className: 'figure-text' });
    view.node.dataset.figure = f.id;
  },
  show(view, f) {
    view.node.textContent = f.text;
    view.node.dataset.status = f.status ?? '';
    view.node.dataset.ran = f.ran ?? '';
  },
};

/** {kind: 'chart', id, ...the spec of chart.js, width?, height?}: a line chart at a fixed size, no tooltip. */
const chartKind = {
  draw(canvas, f, scale = devicePixelRatio || 1) {
    const size = { width: f.width ?? 460, height: f.height ?? 250 };
    drawChart(canvas, f, { ...size, scale });
    return size;
  },
};

const FIGURE_KINDS = {
  images: imagesKind,
  bars: barsKind,
  heatmap: heatmapKind,
  text: textKind,
  matrices: matricesKind,
  graph: graphKind,
  chart: chartKind,
  headview: headViewKind,
  modelgrid: modelGridKind,
  tensor: tensorKind,
  table: tableKind,
  code: codeKind,
  arrows: arrowsKind,
  pipeline: pipelineKind,
  phasetimeline: phaseTimelineKind,
  files: filesKind,
};

/** The kind of a figure, or a clear error naming the kinds there are. */
export function figureKind(kind) {
  if (!Object.hasOwn(FIGURE_KINDS, kind)) throw new Error(`unknown figure kind '${kind}' (known: `
    + `${Object.keys(FIGURE_KINDS).join(', ')})`);
  return FIGURE_KINDS[kind];
}
