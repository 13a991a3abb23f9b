// "Your model beside this run" (issue 28, item 1): a model a student trained in the course notebook
// (torch.save(model.state_dict(), 'model.pt'), or a .safetensors), chosen with the weights panel's
// "Compare beside this run…", shown beside the lab's own run, which it never replaces: its attention
// on the run's fixed sample (the lab's own figure, lab.views.heatmaps) and its evaluation on fresh
// held-out data (lab.views.evaluation), each beside the run's at the step it is at. The worker builds
// the student's model once, inspects and evaluates it, and drops it (web/worker.js: compare).
import { HeatmapView } from '../heatmap.js';
import { renderEvaluation } from '../evaluation_panel.js';
import { el } from '../el.js';
import { FigureBoard } from '../figures.js';

export function comparePanel(page) {
  const { lab } = page;
  const node = el('section', { className: 'panel compare', id: 'compare', hidden: true },
    el('h2', { textContent: 'Your model beside this run' }));
  const intro = el('p', { className: 'muted', id: 'compare-intro' });
  const columns = el('div', { className: 'compare-columns' });
  const column = (side, title) => {
    const box = el('div', { className: `compare-column compare-${side}` });
    const heading = el('h3', { textContent: title });
    box.append(heading);
    const map = new HeatmapView(box, { cell: 18, label: title });
    map.canvas.id = `compare-${side}-heatmap`;
    // A lab whose attention is a retrieval (Lookup): its own figures of the fixed query instead.
    const figures = lab.views.retrievalFigures ? new FigureBoard(box, { stem: `${lab.id}-compare-${side}` }) : null;
    const evaluation = el('div', { className: 'compare-evaluation', id: `compare-${side}-evaluation` });
    box.append(evaluation);
    columns.append(box);
    return { heading, map, figures, evaluation };
  };
  const run = column('run', 'This lab\'s run');
  const theirs = column('yours', 'Your model');
  node.append(intro, columns);
  let compared = null; // the worker's answer: {name, what, config, sample, ownSample, snapshot, evaluation}

  function draw() {
    node.hidden = !compared;
    if (!compared || !page.run) return;
    const palette = page.applied.palette;
    const snapshot = page.run.snapshots.at(-1);
    const sameSample = !compared.ownSample;
    intro.textContent = `${compared.name}: ${compared.what}. `
      + (sameSample ? 'Both models answer the same fixed sample; their evaluations use fresh held-out data.'
        : 'Its settings differ from this run\'s, so it answers a sample of its own settings; the evaluations use '
          + 'fresh held-out data.');
    run.heading.textContent = `This lab's run, step ${page.run.step}`;
    theirs.heading.textContent = `Your model (${compared.name})`;
    const mean = (models) => models?.mean ?? null;
    const runModel = snapshot && lab.views.heatmaps ? mean(lab.views.heatmaps(page.run.config, page.run.sample,
      snapshot, ' — this run')) : null;
    const yourModel = lab.views.heatmaps ? mean(lab.views.heatmaps(compared.config, compared.sample, compared.snapshot,
      ' — your model')) : null;
    run.map.figure.hidden = !runModel;
    theirs.map.figure.hidden = !yourModel;
    if (runModel) run.map.show(runModel, { palette });
    if (yourModel) theirs.map.show(yourModel, { palette });
    if (run.figures && snapshot) run.figures.show(lab.views.retrievalFigures(page.run.config, snapshot, null,
      ' — this run', 'compare-run'), { palette });
    if (theirs.figures) theirs.figures.show(lab.views.retrievalFigures(compared.config, compared.snapshot, null,
      ' — your model', 'compare-yours'), { palette });
    renderEvaluation(run.evaluation, lab.views.evaluation(page.run.config, page.run.evaluations.at(-1)));
    renderEvaluation(theirs.evaluation, lab.views.evaluation(compared.config, compared.evaluation));
  }

  return {
    node,
    parts: { compare: ['snapshot', 'palette'] },
    /** The worker's 'compared' answer (panels/weights.js hands it over). */
    show(m) {
      compared = m;
      page.schedule('compare');
      node.hidden = false;
      node.scrollIntoView?.({ block: 'nearest' });
    },
    handles(m) {
      // The run's column follows the run: a new snapshot or evaluation redraws it.
      if (compared && (m.type === 'progress' || m.type === 'configured')) page.schedule('compare');
      return false;
    },
    render(dirty) {
      if (dirty.has('compare')) draw();
    },
  };
}
