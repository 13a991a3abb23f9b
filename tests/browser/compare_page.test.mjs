// "Your model beside this run" (issue 28, item 1): a notebook's model (torch.save's .pt) chosen with
// "Compare beside this run…" is shown beside the lab's run, which it does not change: its evaluation is
// the CLI's `attnlab evaluate` of the same file (the same fresh data), its attention on the run's fixed
// sample is the module's for that model (the heatmap's pixels), and the run keeps its model, step and
// figure. A file that does not fit is refused by name and the run is unchanged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, paletteValue, readHeatmap, startLab, waitDrawn } from './support.mjs';
import { PALETTES } from '../../web/shared/palette.js';
import { REPO_ROOT, loadAttnLabNode } from '../../web/node_loader.mjs';
import { readWeightsFile } from '../../web/io/weights_file.js';
import { parseSafetensors } from '../../web/io/safetensors.js';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures');
const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const compared = (page) => page.waitForFunction(() => !document.getElementById('compare').hidden
  && document.querySelector('#compare-yours-evaluation [data-metric="accuracy"]'), null, { timeout: 30000 });
/** A heatmap's cells on its 0..1 scale, read near each cell's corner (the One query map writes its digit in the middle). */
async function cellsOf(page, selector) {
  const pixels = await page.$eval(selector, (canvas) => {
    const layout = JSON.parse(canvas.dataset.layout);
    const k = canvas.width / canvas.getBoundingClientRect().width;
    const ctx = canvas.getContext('2d');
    const out = [];
    for (let r = 0; r < layout.rows; r++) {
      for (let c = 0; c < layout.cols; c++) {
        const x = Math.round((layout.x + c * layout.cellW + 5) * k), y = Math.round((layout.y + r * layout.cellH + 5) * k);
        out.push(Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3)));
      }
    }
    return out;
  });
  return pixels.map((p) => paletteValue(PALETTES.viridis, p));
}
const metric = (page, side, id) => page.getAttribute(`#compare-${side}-evaluation [data-metric="${id}"]`, 'data-value').then(Number);

test('One query: the notebook\'s model beside the run: the CLI\'s evaluation, the module\'s attention, the run unchanged', async () => {
  const { page, problems } = await openPage(lab, '?lab=count&steps=40&speed=max&backend=simd');
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 60000 });
  // The run's last frame first: 'done' can come a frame before the figures of its last step are drawn.
  await waitDrawn(page);
  const before = { step: await page.textContent('#progress-text'), heatmap: await readHeatmap(page, '#heatmap-main') };
  const file = path.join(FIXTURES, 'count_model.pt');
  await page.setInputFiles('#compare-file', file);
  await compared(page);
  assert.match(await page.textContent('#weights-message'), /count_model\.pt is shown beside this run .* this run is unchanged/);
  assert.match(await page.textContent('#compare-intro'), /^count_model\.pt: a One query model\. Both models answer the same fixed sample/);
  // Its evaluation is `attnlab evaluate`'s of the same file: the same fresh sequences.
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'evaluate', '--lab', 'count', '--weights', file, '--backend', 'simd', '--json']);
  const cli = JSON.parse(stdout);
  assert.equal(await metric(page, 'yours', 'accuracy'), cli.accuracy);
  assert.equal(await metric(page, 'yours', 'tie-accuracy'), cli.tieAccuracy);
  // Its attention on the run's fixed sample: the module's, for this model (pixels, 0.02 of the scale).
  const module = await loadAttnLabNode({ build: 'simd' });
  const trainer = new module.CountTrainer({});
  for (const [name, t] of Object.entries(readWeightsFile(module, new Uint8Array(readFileSync(file)), 'count_model.pt').tensors)) trainer.setParameter(name, t.data);
  // The run's fixed sample: the 5 sequences its seed draws (the run's heatmap rows).
  const run = new module.CountTrainer({ seed: Number(await page.inputValue('#prop-seed')) });
  const tokens = Array.from(run.fixedSample().tokens);
  run.delete();
  const want = Array.from(trainer.inspect({ batch: tokens }, { backend: 'simd128' }).weights);
  const got = await cellsOf(page, '#compare-yours-heatmap');
  assert.equal(got.length, want.length);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 0.02, `cell ${i}: ${g} vs ${want[i]}`)); // the scale is 0..1
  // The run is as it was: its step, its figure; its own column shows it.
  assert.equal(await page.textContent('#progress-text'), before.step);
  await waitDrawn(page);
  assert.deepEqual(await readHeatmap(page, '#heatmap-main'), before.heatmap);
  assert.match(await page.textContent('#compare .compare-run h3'), /^This lab's run, step 40$/);
  await page.waitForSelector('#compare-run-evaluation [data-metric="accuracy"]');
  assert.deepEqual(problems, []);
  await page.close();
});

test('Alignment: the notebook\'s copy model beside a run of other settings; a file that does not fit is refused by name', async () => {
  const { page, problems } = await openPage(lab, '?lab=alignment&heads=2&seed=3');
  await page.setInputFiles('#compare-file', path.join(FIXTURES, 'notebook_copy_model.pt'));
  await compared(page);
  assert.match(await page.textContent('#compare-intro'), /notebook_copy_model\.pt: /);
  assert.equal(await page.inputValue('#prop-heads'), '2', 'the run keeps its settings');
  assert.ok(await metric(page, 'yours', 'accuracy') > 0.5, 'the notebook\'s trained copy model copies');
  await page.setInputFiles('#compare-file', path.join(FIXTURES, 'count_model.pt'));
  await page.waitForFunction(() => /was not compared; this run is unchanged/.test(document.body.textContent), null, { timeout: 20000 });
  assert.match(await page.textContent('#weights-message'), /^count_model\.pt was not compared; this run is unchanged\. This lab loads an Alignment model of the \w+ task, and this file is another model's \(not the notebook's CrossAttnSeqClassifier: missing tok_emb\.weight.*\)\. It is a One query model: open the One query lab and load it there\.$/);
  assert.equal(await page.inputValue('#prop-heads'), '2');
  assert.deepEqual(problems.filter((p) => !/count_model/.test(p)), []);
  await page.close();
});

test('Lookup: notebook 02\'s model beside the run: PyTorch\'s own top-1 on the lab\'s held-out queries, and what it retrieves for the run\'s query', async () => {
  const { page, problems } = await openPage(lab, '?lab=lookup');
  await page.setInputFiles('#compare-file', path.join(FIXTURES, 'notebook_lookup_model.pt'));
  await page.waitForFunction(() => document.querySelector('#compare-yours-evaluation [data-metric="top1"]'), null, { timeout: 60000 });
  const want = parseSafetensors(readFileSync(path.join(FIXTURES, 'notebook_lookup_expected.safetensors'))).tensors;
  assert.equal(Math.round(await metric(page, 'yours', 'top1') * 2000), Math.round(want.top1.data[0] * 2000));
  // What it looks at for the run's fixed query (held-out query 0): its weights over the database, the
  // largest where PyTorch's largest is, and its retrieval beside the run's.
  const w0 = Array.from(want.weights.data.subarray(0, 100));
  const bars = JSON.parse(await page.getAttribute('canvas[data-figure="compare-yours-weights"]', 'data-bars'));
  assert.equal(bars.highlight, w0.indexOf(Math.max(...w0)));
  assert.ok(await page.isVisible('canvas[data-figure="compare-run-retrieval"]'));
  assert.ok(await page.isVisible('canvas[data-figure="compare-yours-retrieval"]'));
  assert.match(await page.textContent('#compare-intro'), /^notebook_lookup_model\.pt: a Lookup model/);
  assert.deepEqual(problems, []);
  await page.close();
});
