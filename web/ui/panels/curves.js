// The curves panel ('curves'): the loss and accuracy per training step with the evaluations and the
// lab's reference lines (lab.metrics), each chart exportable, and the last evaluation below them.
import { drawChart, LineChart } from '../chart.js';
import { addFigureButtons } from '../figure_buttons.js';
import { renderEvaluation } from '../evaluation_panel.js';
import { el } from '../el.js';
import { dataFold } from '../figure_data.js';

export function curvesPanel(page) {
  const { lab } = page;
  const charts = el('div', { className: 'charts' });
  const lossBox = el('div', { className: 'chart-box' }), accBox = el('div', { className: 'chart-box full-only' });
  charts.append(lossBox, accBox);
  const lossChart = new LineChart(lossBox, { label: `${lab.metrics.loss.title} per training step, and evaluations` });
  const accChart = new LineChart(accBox, { label: `${lab.metrics.accuracy.title} per training step, and evaluations` });
  lossChart.canvas.id = 'chart-loss';
  accChart.canvas.id = 'chart-accuracy';
  const chartMessage = el('p', { className: 'inline-message', id: 'chart-export-message' });
  chartMessage.setAttribute('role', 'status');
  // Each chart's numbers as a table too, in a fold under it (figure_data.js: every reader of a figure).
  const folds = {};
  for (const [box, chart, what, id] of [[lossBox, lossChart, 'the loss chart', 'loss'],
    [accBox, accChart, 'the accuracy chart', 'accuracy']]) {
    const bar = el('div', { className: 'figure-toolbar full-only' });
    folds[id] = dataFold(`chart-${id}`);
    box.append(bar, folds[id].node);
    addFigureButtons(bar, { what, idPrefix: `export-${id}`, message: chartMessage,
      figure: () => chartFigure(chart, id) });
  }
  const evaluationBox = el('div', { id: 'evaluation', className: 'full-only' });
  // The lowest training loss so far, for labs whose notebook prints it (lab.metrics.loss.lowest: its words).
  const lowest = el('p', { id: 'lowest-loss', className: 'chart-note' });
  lowest.hidden = !lab.metrics.loss.lowest;
  const node = el('section', { className: 'panel metrics-panel' }, el('h2', { textContent: 'Learning curves' }), charts,
    lowest, chartMessage, el('h3',
      { className: 'full-only', textContent: lab.metrics.evaluationTitle }), evaluationBox);

  /** A chart as an exportable figure: the spec on screen, at the size on screen. */
  function chartFigure(chart, id) {
    if (!chart.spec || !page.run) return null;
    const spec = chart.spec, size = chart.size();
    return { draw: (canvas, scale) => drawChart(canvas, spec, { ...size, scale }),
      stem: `${id}-${lab.figureStem(page.run.config)}-step${page.run.step}`, title: spec.title };
  }

  function drawCharts() {
    const run = page.run;
    const m = lab.metrics;
    const xMax = Math.max(run.targetSteps, run.step, 10);
    const evals = run.evaluations.items;
    const last = evals.at(-1);
    const lossOf = m.loss.evaluation, accuracyOf = m.accuracy.evaluation;
    const references = (metric) => (last ? metric.references(last, run.config) : [])
      .map((r) => ({ label: r.label, kind: 'dashed', y: r.y }));
    const lossMax = Math.max(0.1, ...run.losses.head(20), ...evals.map(lossOf),
      ...references(m.loss).map((r) => r.y * 1.1));
    const lossSpec = {
      title: m.loss.title, xTitle: 'training step', yTitle: m.loss.yTitle, xMax, yMin: 0, yMax: Math.min(lossMax, 50),
      series: [
        { label: m.batchLabel, kind: 'line', ys: run.losses.ys.slice(), every: run.losses.every },
        { label: m.evaluationLabel, kind: 'points', points: evals.map((e) => ({ x: e.step, y: lossOf(e) })) },
        ...references(m.loss),
      ],
    };
    lossChart.draw(lossSpec);
    folds.loss.update({ kind: 'chart', ...lossSpec });
    const series = [
      { label: m.batchLabel, kind: 'line', ys: run.accuracies.ys.slice(), every: run.accuracies.every },
      { label: m.evaluationLabel, kind: 'points', points: evals.map((e) => ({ x: e.step, y: accuracyOf(e) })) },
      ...references(m.accuracy),
    ];
    const accSpec = { title: m.accuracy.title, xTitle: 'training step', yTitle: m.accuracy.yTitle, xMax, yMin: 0,
      yMax: 1, series };
    accChart.draw(accSpec);
    folds.accuracy.update({ kind: 'chart', ...accSpec });
    if (m.loss.lowest) {
      lowest.textContent = run.lowestLoss ? `${m.loss.lowest}: ${run.lowestLoss.value.toPrecision(4)} (training batch `
        + `of step ${run.lowestLoss.step})` : '';
    }
  }

  return {
    node,
    lossChart,
    charts: [lossChart, accChart],
    parts: { charts: [], evaluation: [] },
    handles(m) {
      if (m.type !== 'progress') return false;
      page.schedule('charts', ...(m.evaluation ? ['evaluation'] : []));
      return true;
    },
    render(dirty) {
      if (dirty.has('charts')) drawCharts();
      if (dirty.has('evaluation')) renderEvaluation(evaluationBox,
        lab.views.evaluation(page.run.config, page.run.evaluations.at(-1)));
    },
  };
}
