// Every notebook's build checked on the page (issue 39, item 1): the Alignment, Lookup and Scaled labs
// each show their builds' fixed input and weights as Python lines and every step's tensor; a student's
// print or torch.save file of a step gets the verdict `attnlab check` gives for it (the same checker,
// web/labs/builds/judge.js), read beside the Check button. The fixtures are PyTorch's right
// implementations and common mistakes (tests/fixtures/make_build_check_fixtures.py). The One query lab's
// build compares with its live model instead (tests/browser/count_build.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, startLab } from './support.mjs';
import { buildByName } from '../../web/labs/builds/registry.js';
import { judgeFolder } from '../../web/cli/check_command.mjs';
import { parsePrintedTensors } from '../../web/io/printed_tensor.js';
import { loadAttnLabNode } from '../../web/node_loader.mjs';

const DIR = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'build_check');
const verdicts = JSON.parse(readFileSync(path.join(DIR, 'verdicts.json'), 'utf8'));
// build -> [lab, section id, step property]
const ON_PAGE = {
  'cross-attn-seq-classifier': ['alignment', 'build', 'checkStep'],
  'attention-test': ['lookup', 'build', 'checkStep'],
  'simple-attention': ['scaled', 'build-simple', 'simpleStep'],
  'self-attention': ['scaled', 'build-self', 'selfStep'],
};

let lab, reader;
before(async () => {
  lab = await startLab();
  const module = await loadAttnLabNode({ build: 'simd' });
  reader = async () => (bytes, name) => module.readTorchTensor(bytes, name);
});
after(async () => { await lab?.close(); });

/** The CLI's record of one fixture folder: {step name: message}. */
async function cliVerdicts(build, folder) {
  const { record } = await judgeFolder(buildByName(build), path.join(DIR, build, folder), reader);
  return Object.fromEntries(record.steps.map((s) => [s.name, s]));
}

/** Chooses a step, gives the file (pasted for a .txt, opened for a .pt), presses Check; -> the verdict beside the button. */
async function check(page, id, property, step, file) {
  await page.selectOption(`#prop-${property}`, step);
  await page.waitForFunction(([sid, s]) => document.getElementById(`${sid}-tensor-caption`)?.textContent.includes(`. ${s}, `), [id, step]);
  if (file.endsWith('.txt')) {
    await page.fill(`#${id}-tensor-text`, readFileSync(file, 'utf8'));
    await page.click(`#${id}-tensor-check`);
  } else {
    await page.setInputFiles(`#${id}-tensor-file`, file);
  }
  await page.waitForFunction((sid) => {
    const v = document.getElementById(`${sid}-tensor-verdict`);
    return v && /^(ok|bad)$/.test(v.dataset.status) && !/^Checking/.test(v.textContent);
  }, id, { timeout: 20000 });
  return page.$eval(`#${id}-tensor-verdict`, (v) => ({ status: v.dataset.status, text: v.textContent }));
}

for (const [build, [labId, id, property]] of Object.entries(ON_PAGE)) {
  test(`${build} on the ${labId} lab: the Python lines, each step's tensor, and the CLI's verdicts for the right build and each mistake`, async () => {
    const { page, problems } = await openPage(lab, `?lab=${labId}`);
    await page.waitForFunction((sid) => document.getElementById(`section-${sid}`)?.dataset.state === 'shown', id, { timeout: 30000 });
    const declared = buildByName(build);
    // The input's lines, as the student copies them; every step's tensor with its shape, PyTorch's numbers.
    const lines = await page.textContent(`[data-figure="${id}-input"] pre`);
    for (const name of Object.keys(declared.input)) assert.match(lines, new RegExp(`^${name} = `, 'm'));
    if (declared.stateDict) assert.match(await page.textContent(`[data-figure="${id}-model"] pre`), /^state_dict = \{/);
    for (const step of declared.steps) {
      const figure = page.locator(`[data-figure="${id}-${step.name}"]`);
      assert.match(await figure.locator('figcaption').textContent(), new RegExp(`shape \\(${step.shape.join(', ')}\\)$`));
      const [shown] = parsePrintedTensors(await figure.locator('pre').textContent());
      const [torch] = parsePrintedTensors(readFileSync(path.join(DIR, build, 'right_printed', `${step.name}.txt`), 'utf8'));
      assert.deepEqual(shown.shape, torch.shape, step.name);
      // Both printed to 4 decimals, ties to even: the same numbers as the student's print.
      shown.data.forEach((v, i) => assert.ok(Object.is(v, torch.data[i]) || v === torch.data[i], `${step.name}[${i}]: ${v} vs ${torch.data[i]}`));
    }
    // The right build: every step, from its torch.save file, matches as the CLI says.
    const right = await cliVerdicts(build, 'right');
    for (const step of declared.steps) {
      const v = await check(page, id, property, step.name, path.join(DIR, build, 'right', `${step.name}.pt`));
      assert.deepEqual(v, { status: 'ok', text: right[step.name].message }, `${build} right ${step.name}`);
    }
    assert.equal(await page.$eval(`[data-figure="${id}-${declared.steps.at(-1).name}"]`, (f) => f.dataset.status), 'ok',
      'the checked step\'s tensor is marked too');
    // Each mistake, pasted as printed: the step before the first changed one matches, the changed one does not, in the CLI's words.
    for (const [variant, first] of Object.entries(verdicts[build]).filter(([, f]) => f)) {
      const cli = await cliVerdicts(build, `${variant}_printed`);
      const at = declared.steps.findIndex((s) => s.name === first);
      for (const step of declared.steps.slice(Math.max(0, at - 1), at + 1)) {
        const v = await check(page, id, property, step.name, path.join(DIR, build, `${variant}_printed`, `${step.name}.txt`));
        assert.deepEqual(v, { status: step.name === first ? 'bad' : 'ok', text: cli[step.name].message }, `${build} ${variant} ${step.name}`);
      }
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}
