// Every notebook's build checked headless (issue 39, items 1 and 2): each build's reference steps are
// PyTorch's (tests/fixtures/build_check, from make_build_check_fixtures.py: a right implementation and
// common mistakes, saved with torch.save and printed); `attnlab check --build` passes the right ones and
// names the first step each mistake changes, as the fixture script found it; `--list` describes every
// build; bad input exits 2 with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FIXTURES, lab } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { BUILDS, buildByName, referenceSteps } from '../../web/labs/builds/registry.js';
import { judgeFolder } from '../../web/cli/check_command.mjs';
import { LABS } from '../../web/labs/registry.js';
import { printTensor } from '../../web/ui/tensor_figure.js';

const DIR = path.join(FIXTURES, 'build_check');
const verdicts = JSON.parse(readFileSync(path.join(DIR, 'verdicts.json'), 'utf8'));
const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');

async function attnlab(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'check', ...args], { cwd: REPO_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout, stderr: error.stderr };
  }
}

test('every build\'s steps are PyTorch\'s for its fixed input and state_dict, to 1e-5 (-inf where PyTorch has -inf)', async () => {
  const module = await lab('simd');
  for (const build of BUILDS) {
    const mine = referenceSteps(build);
    for (const step of build.steps.filter((s) => !s.rule)) {
      const want = module.readTorchTensor(new Uint8Array(readFileSync(path.join(DIR, build.name, 'right', `${step.name}.pt`))), `${step.name}.pt`);
      assert.deepEqual(want.shape, step.shape, `${build.name} ${step.name}: the listed shape is PyTorch's`);
      let worst = 0;
      for (let i = 0; i < want.data.length; i++) {
        const a = mine[step.name][i], b = want.data[i];
        if (a === b) continue;
        assert.ok(Number.isFinite(a) && Number.isFinite(b), `${build.name} ${step.name}[${i}]: ${a} vs PyTorch's ${b}`);
        worst = Math.max(worst, Math.abs(a - b) / (1 + Math.abs(b)));
      }
      assert.ok(worst <= 1e-5, `${build.name} ${step.name}: largest difference ${worst}`);
    }
  }
  assert.ok(referenceSteps(buildByName('simple-attention')).masked.includes(-Infinity), 'the causal mask leaves -inf in the masked scores');
});

test('the page prints every step\'s numbers as PyTorch\'s print() does, ties to even included (0.03125 -> 0.0312)', () => {
  const numbers = (text) => text.match(/-?(?:\d+\.\d*|inf|nan)/g);
  let ties = 0;
  for (const build of BUILDS) {
    const mine = referenceSteps(build);
    for (const step of build.steps.filter((s) => !s.rule)) {
      const torch = numbers(readFileSync(path.join(DIR, build.name, 'right_printed', `${step.name}.txt`), 'utf8'));
      const shown = numbers(printTensor(mine[step.name], step.shape));
      assert.deepEqual(shown, torch, `${build.name} ${step.name}`);
      ties += Array.from(mine[step.name]).filter((v) => Math.abs(v * 1e4 - Math.trunc(v * 1e4)) === 0.5).length;
    }
  }
  assert.ok(ties >= 5, `the fixed inputs make exact ties (${ties}), so the rounding rule is exercised`);
});

test('the right build passes and each mistake is named at the first step it changes, from .pt files and from prints', async () => {
  const module = await lab('simd');
  const reader = async () => (bytes, name) => module.readTorchTensor(bytes, name);
  for (const build of BUILDS) {
    for (const [variant, firstChanged] of Object.entries(verdicts[build.name])) {
      for (const folder of [variant, `${variant}_printed`]) {
        const { record, code } = await judgeFolder(build, path.join(DIR, build.name, folder), reader);
        const what = `${build.name}/${folder}`;
        assert.equal(record.first_wrong, firstChanged, `${what}: ${JSON.stringify(record.steps.find((s) => s.given && !s.ok))}`);
        assert.equal(code, firstChanged ? 1 : 0, what);
        const given = record.steps.filter((s) => s.given);
        assert.equal(given.length, readdirSync(path.join(DIR, build.name, folder)).length, `${what}: every file is judged`);
        if (!firstChanged) {
          for (const s of given) assert.match(s.message, folder.endsWith('_printed') ? /within 1e-4 \(a print's 4 decimals\)/ : /within 1e-5 of the lab's/, `${what} ${s.name}`);
        } else {
          // Every step before the first changed one matches; the changed one says what differs.
          const at = build.steps.findIndex((s) => s.name === firstChanged);
          for (const s of record.steps.slice(0, at)) assert.ok(!s.given || s.ok, `${what}: ${s.name} before ${firstChanged}`);
          const wrong = record.steps[at];
          assert.ok(wrong.first_difference || wrong.shape.join() !== wrong.expected_shape.join(), `${what}: ${wrong.message}`);
        }
      }
    }
  }
});

test('the messages a student reads: a masked score, a swapped shape, a print of -inf', async () => {
  const module = await lab('simd');
  const reader = async () => (bytes, name) => module.readTorchTensor(bytes, name);
  const step = async (build, folder, name) => (await judgeFolder(buildByName(build), path.join(DIR, build, folder), reader)).record.steps.find((s) => s.name === name);
  // The mask ignored: the first masked position holds a number where the lab's is -inf.
  let s = await step('simple-attention', 'mask_ignored', 'masked');
  assert.deepEqual(s.first_difference.index, [0, 0, 1]);
  assert.equal(s.first_difference.expected, '-inf', 'JSON has no -inf: the string PyTorch prints');
  assert.match(s.message, /yours -?\d\.\d{4}, the lab's -inf\. The lab's is -inf there, a masked position: was masked_fill\(mask == 0, float\('-inf'\)\) applied/);
  // The mask inverted: -inf on the diagonal, where the lab's is a number.
  s = await step('self-attention', 'mask_inverted', 'energy');
  assert.deepEqual(s.first_difference.index, [0, 0, 0]);
  assert.match(s.message, /yours -inf, the lab's -?\d\.\d{4}\. Yours is -inf where the lab's position is not masked: is the mask inverted/);
  // The per-head weights averaged (nn.MultiheadAttention's default): the shape says so.
  s = await step('cross-attn-seq-classifier', 'weights_averaged', 'weights');
  assert.deepEqual(s.shape, [2, 6, 6]);
  assert.equal(s.message, 'Shape (2, 6, 6); the lab\'s attn_w (average_attn_weights=False) is (2, 2, 6, 6).');
  // Heads split without the transpose: the same shape, other numbers.
  s = await step('cross-attn-seq-classifier', 'heads_without_transpose_printed', 'q_heads');
  assert.match(s.message, /^The shape \(2, 2, 6, 4\) is right; the numbers first differ at \[0, 0, 1, 0\]/);
  // The masked scores as print() shows them (-inf included) match.
  s = await step('simple-attention', 'right_printed', 'masked');
  assert.equal(s.ok, true, s.message);
});

test('attnlab check --list --json: every build with its lab, notebook, input, state_dict, Python lines and steps', async () => {
  const { code, stdout, stderr } = await attnlab('--list', '--json');
  assert.equal(code, 0, stderr);
  const { builds } = JSON.parse(stdout);
  assert.deepEqual(builds.map((b) => b.name), ['cross-attn-seq-classifier', 'attention-test', 'attention-model', 'attention-model-one-hot', 'simple-attention', 'self-attention']);
  for (const b of builds) {
    const lab = LABS.find((l) => l.id === b.lab);
    assert.ok(lab, `${b.name}: lab ${b.lab}`);
    assert.ok(lab.notebook.includes(b.notebook), `${b.name}: the lab follows ${b.notebook}`);
    assert.ok(lab.sections.some((s) => s.stepChoices?.every((c, i) => c.value === b.steps[i].name)), `${b.name}: the ${b.lab} lab's page has this build`);
    assert.equal(typeof b.python, 'string');
    for (const [name, value] of Object.entries(b.input)) {
      assert.ok(Array.isArray(value), `${b.name} input ${name}`);
      assert.match(b.python, new RegExp(`^${name} = `, 'm'));
    }
    assert.equal('state_dict' in b, b.name !== 'simple-attention', `${b.name}: a state_dict where the module has weights`);
    for (const step of b.steps) assert.ok(typeof step.name === 'string' && Array.isArray(step.shape), `${b.name} ${step.name}`);
  }
  // The shapes of the steps are those of PyTorch's tensors (the right .pt files, read by the fixture script).
  const simple = builds.find((b) => b.name === 'simple-attention');
  assert.deepEqual(simple.steps.map((s) => [s.name, s.shape]), [['scores', [1, 5, 5]], ['masked', [1, 5, 5]], ['weights', [1, 5, 5]], ['output', [1, 5, 4]]]);
  assert.deepEqual(simple.input.mask, [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]);
  const text = await attnlab('--list');
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^simple-attention +lab scaled +notebook 04_intro_to_attention: SimpleAttention; steps scores \(1, 5, 5\), masked/m);
});

test('attnlab check --build: exit 0 when every given step matches, 1 with the first wrong one, a JSON record', async () => {
  let r = await attnlab('--build', 'self-attention', '--dir', path.join(DIR, 'self-attention', 'right'), '--json');
  assert.equal(r.code, 0, r.stderr);
  let record = JSON.parse(r.stdout);
  assert.equal(record.build, 'self-attention');
  assert.equal(record.first_wrong, null);
  assert.deepEqual(Object.keys(record.steps[0]), ['name', 'given', 'file', 'ok', 'shape', 'expected_shape', 'first_difference', 'message']);
  r = await attnlab('--build', 'self-attention', '--dir', path.join(DIR, 'self-attention', 'dropout_on_printed'), '--json');
  assert.equal(r.code, 1);
  record = JSON.parse(r.stdout);
  assert.equal(record.first_wrong, 'attention');
  assert.deepEqual(record.steps.map((s) => s.ok), [true, true, true, true, false, false]);
  // Text: one line per step, then the first wrong step.
  r = await attnlab('--build', 'simple-attention', '--dir', path.join(DIR, 'simple-attention', 'no_scale'));
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^✗ scores: The shape \(1, 5, 5\) is right; the numbers first differ at \[0, 0, 0\]/m);
  assert.match(r.stdout, /first wrong step: scores\n$/);
  // Some steps given, one file unreadable: that step is not ok, the others are judged.
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-check-'));
  copyFileSync(path.join(DIR, 'simple-attention', 'right', 'scores.pt'), path.join(dir, 'scores.pt'));
  writeFileSync(path.join(dir, 'weights.pt'), 'not a torch file');
  writeFileSync(path.join(dir, 'output.txt'), 'tensor([[0.1, ..., 0.2]])');
  r = await attnlab('--build', 'simple-attention', '--dir', dir, '--json');
  assert.equal(r.code, 1);
  record = JSON.parse(r.stdout);
  assert.deepEqual(record.steps.map((s) => [s.name, s.given, s.ok]), [['scores', true, true], ['masked', false, null], ['weights', true, false], ['output', true, false]]);
  assert.match(record.steps[2].message, /^weights\.pt was not read: weights\.pt/);
  assert.match(record.steps[3].message, /^output\.txt was not read: The pasted text was not read: the print is abbreviated/);
  assert.equal(record.first_wrong, 'weights');
  // An expanded tensor (torch.zeros(1).expand(1000, 1000, 1000): a billion floats in 4 bytes) once aborted the
  // module and judged nothing: now its step says why and the others are judged.
  copyFileSync(path.join(FIXTURES, 'torch_bin', 'hostile', 'expanded.bin'), path.join(dir, 'weights.pt'));
  r = await attnlab('--build', 'simple-attention', '--dir', dir, '--json');
  assert.equal(r.code, 1, r.stderr);
  record = JSON.parse(r.stdout);
  assert.deepEqual(record.steps.map((s) => [s.name, s.given, s.ok]), [['scores', true, true], ['masked', false, null], ['weights', true, false], ['output', true, false]]);
  // A STEP.txt quoted in the text lines reaches the terminal with its escape sequence escaped (issue 48, item 6).
  writeFileSync(path.join(dir, 'output.txt'), 'tensor([[\u001b[31m0.1, 0.2]])');
  const text = await attnlab('--build', 'simple-attention', '--dir', dir);
  assert.match(text.stdout, /^✗ output: output\.txt was not read: The pasted text was not read: "\\x1b\[31m0\.1" at character 10 is not a number\.$/m);
  assert.doesNotMatch(text.stdout, /\u001b/);
  assert.equal(record.steps[2].message, 'weights.pt was not read: weights.pt: entry "expanded/data.pkl", byte 157: a tensor of size (1000, 1000, 1000) is '
    + 'expanded (stride 0 on axis 0): its 1000000000 elements repeat values of the file, more than the 16777216 read from such a tensor; save it with .contiguous()');
});

test('attnlab check: bad input exits 2 with one line naming the problem', async () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'attnlab-check-empty-'));
  for (const [args, message] of [
    [['--build', 'nope', '--dir', empty], /^attnlab: --build "nope" is not a build \(there are: cross-attn-seq-classifier, attention-test, attention-model, attention-model-one-hot, simple-attention, self-attention\)\n$/],
    [['--build', 'simple-attention', '--dir', path.join(empty, 'missing')], /^attnlab: --dir ".*missing" is not a folder\n$/],
    [['--build', 'simple-attention', '--dir', empty], /^attnlab: .* holds none of the steps' files: scores\.pt or scores\.txt, masked\.pt or masked\.txt/],
    [['--build', 'simple-attention'], /^attnlab: --build needs --dir DIR/],
    [['--list', '--build', 'simple-attention'], /^attnlab: --list takes no --build or --dir/],
    [['--frobnicate'], /^attnlab: unknown argument "--frobnicate" \(attnlab check --help lists the flags\)\n$/],
    [[], /^attnlab: give --list, or --build NAME --dir DIR\n$/],
  ]) {
    const r = await attnlab(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split('\n').length, 2, 'one line');
    assert.equal(r.stdout, '');
  }
  const help = await attnlab('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: attnlab check --list \[--student ID\] \[--json\]\n +attnlab check --build NAME --dir DIR \[--student ID\] \[--gradescope FILE\] \[--json\]/);
});
