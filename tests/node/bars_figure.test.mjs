// The bar chart's geometry (web/ui/bars_figure.js, issue 29's figures): a negative bar hangs below the
// zero line but never reaches the axis labels, and the neuron view's keys are named by their tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barsGeometry } from '../../web/ui/bars_figure.js';

test('negative values: zero inside the plot, every bar between the plot top and its bottom, labels below', () => {
  const f = { values: [1.5, -2.25, 0.3, -0.1], labels: ['[CLS]', 'the', 'cat', '[SEP]'] };
  const g = barsGeometry(f);
  assert.equal(g.lo, -2.25);
  assert.equal(g.hi, 1.5);
  assert.ok(g.zeroY > g.L.top && g.zeroY < g.plotBottom, 'the zero line is inside the plot');
  for (const v of f.values) {
    const [a, b] = [g.y(v), g.zeroY].sort((p, q) => p - q);
    assert.ok(a >= g.L.top - 1e-9 && b <= g.plotBottom + 1e-9, `bar ${v} stays in the plot`);
  }
  assert.equal(g.y(-2.25), g.plotBottom, 'the lowest bar ends at the plot bottom, where the labels begin');
  assert.deepEqual(g.labels, f.labels, 'the keys are named by their tokens');
  assert.ok(g.L.height - g.plotBottom >= 38, 'room under the plot for the slanted labels and the axis title');
});

test('long labels are cut; many bars get index ticks; non-negative values start at zero as before', () => {
  assert.deepEqual(barsGeometry({ values: [1, 2], labels: ['extraordinarily', 'a'] }).labels, ['extraordina…', 'a']);
  assert.equal(barsGeometry({ values: new Array(100).fill(0.01), labels: new Array(100).fill('x') }).labels, null);
  const g = barsGeometry({ values: [0.2, 0.8] });
  assert.equal(g.lo, 0);
  assert.equal(g.zeroY, g.plotBottom);
});
