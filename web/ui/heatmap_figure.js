// A section's heatmap (a figure kind of figure_kinds.js): the heatmap.js model with no ticks unless it
// brings them, drawn by a HeatmapView (its own tooltip, keyboard and colour bar), exported as every
// figure is: the page's drawing at 2x, or as SVG.
//   {kind: 'heatmap', id, ...the heatmap model of heatmap.js, cell? (CSS px, default 5), picks? ({row: name, col:
//    name}: a click on a cell, or Enter on the keyboard's cell, tells the lab {row, col}: the Writing lab's head-role grid),
//    label? (the canvas's accessible name when it says more than the drawn title)}
import { HeatmapView, cellAt, drawHeatmap } from './heatmap.js';

const withTicks = (f) => ({ xTicks: [], yTicks: [], ...f });

export const heatmapKind = {
  create(view, f, board) {
    view.node = Object.assign(document.createElement('figure'), { className: `figure figure-${f.kind}` });
    view.heatmap = new HeatmapView(view.node, { cell: f.cell ?? 5, label: f.title });
    view.canvas = view.heatmap.canvas;
    view.canvas.dataset.figure = f.id;
    const pick = (cell) => { if (cell && view.figure?.picks) board.onPick(view.figure.id,
      { row: cell.row, col: cell.col }); };
    view.canvas.addEventListener('click', (e) => pick(cellAt(view.canvas, view.heatmap.layout, e.clientX, e.clientY)));
    view.canvas.addEventListener('keydown',
      (e) => { if (e.key === 'Enter' && view.heatmap.focus) pick(view.heatmap.focus); });
    board.addExport(view, (c, scale) => drawHeatmap(c, withTicks(view.figure),
      { cell: view.figure.cell ?? 5, scale, palette: view.heatmap.palette }));
  },
  show(view, f, palette) {
    view.heatmap.cell = f.cell ?? 5; // a figure may size its cells to what it shows (a longer sentence: smaller)
    view.heatmap.show(withTicks(f), { palette });
    // Its name follows what it shows (a stepped layer or head): the title it was created with went stale.
    const name = f.label ?? f.title;  // label: a longer name for a screen reader than the drawn title
    view.canvas.setAttribute('aria-label', f.picks ? `${name}. Click a cell, or use the arrow keys and `
      + 'Enter, to open it.' : name);
    view.canvas.style.cursor = f.picks ? 'pointer' : '';
  },
};
