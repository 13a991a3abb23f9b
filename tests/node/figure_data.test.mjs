// The tables under the canvas figures (web/ui/figure_data.js figureTable, issue 45 item 5): for each kind
// that has one, the numbers of the figure, headed; a long series is shown every few rows and says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { figureTable, hasTable } from '../../web/ui/figure_data.js';

test('a heatmap: a row per query with its tick, a column per key', () => {
  const t = figureTable({ kind: 'heatmap', title: 'W', rows: 2, cols: 3, values: [0.5, 0.25, 0.25, 0, 1, 0],
    xTicks: ['a', 'b', 'c'], yTicks: ['a', 'b'], xTitle: 'key', yTitle: 'query' });
  assert.equal(t.caption, 'W: rows are query, columns key.');
  assert.deepEqual(t.columns, ['a', 'b', 'c']);
  assert.deepEqual(t.rows, [['a', '0.5000', '0.2500', '0.2500'], ['b', '0', '1', '0']]);
});

test('bars, a chart and a graph', () => {
  assert.deepEqual(figureTable({ kind: 'bars', title: 'p', values: [0.1, -2e-5], labels: ['x', 'y'], yTitle: 'probability' }).rows,
    [['x', '0.1000'], ['y', '-2.000e-5']]);
  // The highlighted bar says so in words (its colour is not the only cue), and is a row even in a long series.
  assert.deepEqual(figureTable({ kind: 'bars', title: 'p', values: [0.1, 0.5], highlight: 1 }).rows, [['0', '0.1000'], ['1 (marked ▼)', '0.5000']]);
  const long = figureTable({ kind: 'bars', title: 'w', values: Array.from({ length: 1000 }, (_, i) => i), highlight: 3 });
  assert.ok(long.rows.some((r) => r[0] === '3 (marked ▼)'), 'the marked bar is listed');
  const chart = figureTable({ kind: 'chart', title: 'loss', xTitle: 'step', series: [
    { label: 'train', kind: 'line', ys: [3, 2, 1] }, { label: 'eval', kind: 'points', points: [{ x: 2, y: 2.5 }] },
    { label: 'chance', kind: 'dashed', y: 2.3 }] });
  assert.deepEqual(chart.columns, ['train', 'eval']);
  assert.deepEqual(chart.rows, [['1', '3', ''], ['2', '2', '2.5000'], ['3', '1', '']]);
  assert.match(chart.caption, /Reference lines: chance: 2\.3000\./);
  const graph = figureTable({ kind: 'graph', title: 'flow', nodes: ['The', 'cat'], edges: [{ from: 1, to: 0, weight: 0.75 }] });
  assert.deepEqual(graph.rows, [['cat', 'The', '0.7500']]);
  assert.deepEqual(figureTable({ kind: 'graph', title: 'rnn', arrowsOnly: true, nodes: ['a', 'b'], edges: [{ from: 0, to: 1 }] }).rows, [['a', 'b']]);
  assert.equal(hasTable('code'), false);
  assert.equal(figureTable({ kind: 'code', lines: [] }), null);
});

test('a long series: every few rows and the last, at most about 200, said in the caption', () => {
  const t = figureTable({ kind: 'chart', title: 'loss', series: [{ label: 'train', kind: 'line', ys: Array.from({ length: 1000 }, (_, i) => i) }] });
  assert.ok(t.rows.length <= 201, String(t.rows.length));
  assert.equal(t.rows.at(-1)[0], '1000');
  assert.match(t.caption, /every 5th row of 1,000, and the last/);
});

test('images, the head view, the model view, arrows and the phase timeline', () => {
  const images = figureTable({ kind: 'images', title: 'Database', images: [[0], [1]], labels: [7, 2], tint: [0.25, 0.75] });
  assert.deepEqual(images.columns, ['label', 'weight']);
  assert.deepEqual(images.rows, [['1', '7', '0.2500'], ['2', '2', '0.7500']]);
  const head = figureTable({ kind: 'headview', title: 'heads', tokens: ['a', 'b'], heads: 2, headNames: ['h0', 'h1'],
    weights: [1, 0, 0.5, 0.5, 0, 1, 1, 0] });
  assert.deepEqual(head.columns, ['a', 'b']);
  assert.deepEqual(head.rows, [['h0 · a', '1', '0'], ['h0 · b', '0.5000', '0.5000'], ['h1 · a', '0', '1'], ['h1 · b', '1', '0']]);
  const grid = figureTable({ kind: 'modelgrid', title: 'model', layers: 1, heads: 2, tokens: ['a'], attentions: [1, 1] });
  assert.deepEqual(grid.rows, [['0.0 · a', '1'], ['0.1 · a', '1']]);
  const arrows = figureTable({ kind: 'arrows', title: 'q and k', arrows: [{ label: 'q', x: 1, y: 0 }, { label: 'k', x: 0, y: 1 }],
    angle: { from: 0, to: 1, label: '90°' } });
  assert.deepEqual(arrows.rows, [['q', '1', '0'], ['k', '0', '1']]);
  assert.match(arrows.caption, /The arc from q to k: 90°\./);
  const timeline = figureTable({ kind: 'phasetimeline', title: 'Induction', xTitle: 'step', steps: [10, 20],
    panes: [{ title: 'loss', series: [{ label: 'train', ys: [2, 1] }] }, { title: 'score', series: [{ label: '1.0', ys: [NaN, 0.5] }] }],
    marker: { step: 20, label: 'phase change' } });
  assert.deepEqual(timeline.columns, ['loss: train', 'score: 1.0']);
  assert.deepEqual(timeline.rows, [['10', '2', ''], ['20', '1', '0.5000']]);
  assert.match(timeline.caption, /Marked: phase change \(step 20\)\./);
});

test('a pipeline: a row per step in order, its shape, code, the steps it reads and its check in words', async () => {
  const { attentionModelBuild } = await import('../../web/labs/builds/attention_model.js');
  const f = { kind: 'pipeline', ...attentionModelBuild.withSizes({ E: 8, A: 3 }).pipeline(), current: 'keys', status: { keys: 'bad' } };
  const t = figureTable(f);
  assert.deepEqual(t.columns, ['shape', 'code', 'reads', 'checked']);
  assert.deepEqual(t.rows.map((r) => r[0]), ['1. make_batch', '2. embedding', 'query', '3. keys', '4. values', '5. attention',
    '6. weighted', '7. forward']);
  assert.deepEqual(t.rows[3], ['3. keys', '(4, 10, 3)', 'model.WK(model.embed(x))', '2. embedding', '✗ differs']);
  assert.deepEqual(t.rows[5].slice(1, 4), ['(4, 1, 10)', 'model.attention(model.embed(x))', 'query, 3. keys']);
  assert.equal(t.rows[1][1], '(4, 10, 8)');
  assert.deepEqual(figureTable({ ...f, status: {} }).rows[3][4], 'being checked');
});
