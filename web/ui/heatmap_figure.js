// A section's heatmap (a figure kind of figure_kinds.js): the heatmap.js model with no ticks unless it
// brings them, drawn by a HeatmapView (its own tooltip, keyboard and colour bar), exported as every
// figure is: the page's drawing at 2x, or as SVG.
//   {kind: 'heatmap', id, ...the heatmap model of heatmap.js, cell? (CSS px, default 5)}
import { HeatmapView, drawHeatmap } from './heatmap.js';

const withTicks = (f) => ({ xTicks: [], yTicks: [], ...f });

export const heatmapKind = {
  create(view, f, board) {
    view.node = Object.assign(document.createElement('figure'), { className: `figure figure-${f.kind}` });
    view.heatmap = new HeatmapView(view.node, { cell: f.cell ?? 5, label: f.title });
    view.canvas = view.heatmap.canvas;
    view.canvas.dataset.figure = f.id;
    board.addExport(view, (c, scale) => drawHeatmap(c, withTicks(view.figure), { cell: view.figure.cell ?? 5, scale, palette: view.heatmap.palette }));
  },
  show(view, f, palette) {
    view.heatmap.cell = f.cell ?? 5; // a figure may size its cells to what it shows (a longer sentence: smaller)
    view.heatmap.show(withTicks(f), { palette });
    // Its name follows what it shows (a stepped layer or head): the title it was created with went stale.
    view.canvas.setAttribute('aria-label', f.title);
  },
};
