// A heatmap's matrix as an HTML table: the values in numbers, for screen readers and for anyone who
// cannot tell the colours apart. Row and column headers are the heatmap's own tick labels and names.
// The training labs' main heatmap (heatmap_panel.js) shows it under its checkbox; the table is
// figure_data.js's, as every figure's, with two decimals and its own caption.
import { heatmapTable, renderDataTable } from './figure_data.js';

/** model: a heatmap model (heatmap.js); fills `container` with a captioned table, or empties it. */
export function renderHeatmapTable(container, model) {
  if (!model) {
    container.replaceChildren();
    return;
  }
  renderDataTable(container, heatmapTable(model, { format: (v) => v.toFixed(2), most: Infinity,
    caption: `${model.title}: rows are ${model.yTitle}, columns ${model.xTitle}; each cell is the attention weight.` }),
  { className: 'heatmap-table' });
}
