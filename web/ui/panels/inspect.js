// The inspect panel ('inspect'): the user's own input, what the current model predicts for it and its
// attention (exportable). It asks again when a new model is built and when training stops.
import { drawHeatmap, HeatmapView } from '../heatmap.js';
import { addFigureButtons } from '../figure_buttons.js';
import { SampleInput } from '../sample_input.js';
import { renderTokenRows } from '../token_rows.js';
import { el } from '../el.js';

export function inspectPanel(page) {
  const { lab } = page;
  const inspectRows = el('div', { id: 'inspect-results' });
  const node = el('section', { className: 'panel inspect-panel full-only' },
    el('h2', { textContent: 'Try your own input' }),
    el('p', { className: 'muted', textContent: 'The current model predicts your sequence at once; its '
      + 'attention is drawn below.' }));
  const sampleInput = new SampleInput(node, { onSubmit: (fields) => inspect(fields) });
  node.append(inspectRows);
  const inspectMap = new HeatmapView(node, { cell: 20, label: 'Attention for your input' });
  inspectMap.canvas.id = 'heatmap-inspect';
  const inspectMessage = el('p', { className: 'inline-message', id: 'inspect-export-message' });
  inspectMessage.setAttribute('role', 'status');
  const inspectBar = el('div', { className: 'figure-toolbar' });
  inspectMap.figure.append(inspectBar, inspectMessage);
  addFigureButtons(inspectBar,
    { what: 'the heatmap of your input', idPrefix: 'export-inspect', message: inspectMessage,
      figure: () => inspectFigure() });
  let inspection = null; // the worker's last answer: {sample, result}

  function inspect(fields) {
    if (!page.run) return;
    const { sample, error } = lab.views.parseInput(page.run.config, fields);
    if (error) {
      failed(error);
      return;
    }
    page.client.send('inspect', { sample });
  }

  function failed(message) {
    inspection = null;
    sampleInput.showError(message);
    page.schedule('inspect');
  }

  function inspectFigure() {
    if (!inspectMap.model) return null;
    const model = inspectMap.model, cell = inspectMap.cell, palette = inspectMap.palette;
    return { draw: (canvas, scale) => drawHeatmap(canvas, model, { cell, scale, palette }),
      stem: `attention-${lab.figureStem(page.run.config)}-your-input`, title: model.title };
  }

  return {
    node,
    parts: { inspect: ['palette'] },
    handles(m) {
      if (m.type === 'configured') {
        inspection = null;
        sampleInput.setFields(lab.views.inputFields(m.config));
        if (sampleInput.hasText()) sampleInput.submit();
      } else if (m.type === 'state') {
        if (m.stopped && sampleInput.hasText()) sampleInput.submit();
      } else if (m.type === 'inspection') {
        inspection = m;
        sampleInput.showError('');
        page.schedule('inspect');
      } else if (m.type === 'error' && m.request === 'inspect') {
        failed(m.message);
      } else {
        return false;
      }
      return true;
    },
    render() {
      const run = page.run;
      inspectRows.replaceChildren();
      inspectMap.figure.hidden = !inspection;
      if (!inspection || !run) return;
      const sample = lab.views.sampleOf(run.config, inspection.sample);
      renderTokenRows(inspectRows, lab.views.tokenRows(run.config, sample, inspection.result));
      inspectMap.show(lab.views.heatmaps(run.config, sample, inspection.result, ' — your input').mean,
        { palette: page.applied.palette });
    },
  };
}
