// A student's own input (issue 45, item 1b and 1c): `attnlab check --student ID` judges against that
// student's input and weights (web/labs/builds/student_input.js), so the right steps computed by PyTorch on
// that student's input pass (tests/fixtures/build_check_student, from make_build_check_fixtures.py, which
// runs the Python lines `check --list --student` gives), while the page's fixed input's right tensors, the
// same hand-in without the ID, and another student's ID fail; `--gradescope FILE` writes Gradescope's
// results.json (a test per step, the score the steps matched). Bad input exits 2 with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { BUILDS, referenceSteps, stateDictData } from '../../web/labs/builds/registry.js';
import { forStudent } from '../../web/labs/builds/student_input.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const STUDENT = 'ada.lovelace@uni.example';
const MINE = path.join(FIXTURES, 'build_check_student');
const FIXED = path.join(FIXTURES, 'build_check');

async function check(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'check', ...args], { cwd: REPO_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout, stderr: error.stderr };
  }
}

test('a student\'s input: the same for the same ID, another for another ID or build; every build\'s steps change', () => {
  for (const build of BUILDS) {
    const a = forStudent(build, STUDENT), again = forStudent(build, STUDENT), b = forStudent(build, 'bob.b@uni.example');
    const steps = (x) => x.compute(x.input, stateDictData(x));
    const fixed = referenceSteps(build), mine = steps(a), theirs = steps(b);
    assert.deepEqual(steps(again), mine, `${build.name}: the same ID, the same numbers`);
    const changed = (x, y) => Object.keys(x).filter((k) => x[k].some((v, i) => !Object.is(v, y[k][i])));
    assert.ok(changed(mine, fixed).length > 0 && changed(mine, theirs).length > 0, build.name);
    // Every step the checker compares with numbers differs from the fixed input's (make_batch is its rule).
    for (const step of build.steps.filter((s) => !s.rule)) {
      assert.ok(changed(mine, fixed).includes(step.name), `${build.name} ${step.name}: the fixed input's copy would pass`);
    }
  }
});

test('check --build --student: PyTorch\'s right steps on the student\'s input pass; the fixed input\'s, the ID left out, and another ID fail', async () => {
  for (const build of BUILDS) {
    const mine = path.join(MINE, build.name);
    let r = await check('--build', build.name, '--dir', mine, '--student', STUDENT, '--json');
    assert.equal(r.code, 0, `${build.name}: ${r.stdout}${r.stderr}`);
    const record = JSON.parse(r.stdout);
    assert.equal(record.student, STUDENT);
    assert.ok(record.steps.filter((s) => s.given).every((s) => s.ok), build.name);
    for (const [dir, student] of [[path.join(FIXED, build.name, 'right'), STUDENT], [mine, null], [mine, 'bob.b@uni.example']]) {
      r = await check('--build', build.name, '--dir', dir, ...(student ? ['--student', student] : []), '--json');
      assert.equal(r.code, 1, `${build.name} ${dir} ${student}: ${r.stdout}`);
      assert.equal(JSON.parse(r.stdout).first_wrong, build.steps.find((s) => !s.rule).name, `${build.name}: from the first step`);
    }
  }
});

test('check --gradescope writes results.json as Gradescope\'s autograder specification reads it: a test per step, the score the steps matched', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-gradescope-'));
  const file = path.join(dir, 'results.json');
  const build = BUILDS.find((b) => b.name === 'self-attention');
  // The student's right steps; the fixed input's copied; a mistake on the fixed input (no ID), part way.
  for (const [hand, student, want] of [[path.join(MINE, build.name), STUDENT, 6],
    [path.join(FIXED, build.name, 'right'), STUDENT, 0], [path.join(FIXED, build.name, 'softmax_wrong_axis'), null, null]]) {
    const r = await check('--build', build.name, '--dir', hand, ...(student ? ['--student', student] : []), '--gradescope', file);
    assert.equal(r.code, want === 6 ? 0 : 1, r.stderr);
    assert.match(r.stdout, new RegExp(`wrote ${file} \\(Gradescope's results\\.json\\)\\n$`));
    const results = JSON.parse(readFileSync(file, 'utf8'));
    // The specification's fields and types: score (number), output, visibility, tests [{name, number
    // (a string), score, max_score, status ("passed" | "failed"), output, visibility}].
    assert.deepEqual(Object.keys(results).sort(), ['output', 'score', 'tests', 'visibility']);
    assert.equal(results.tests.length, build.steps.length);
    results.tests.forEach((t, i) => {
      assert.deepEqual(Object.keys(t).sort(), ['max_score', 'name', 'number', 'output', 'score', 'status', 'visibility']);
      assert.equal(t.number, String(i + 1));
      assert.ok(t.name.startsWith(`${i + 1}. ${build.steps[i].name} (`));
      assert.equal(t.max_score, 1);
      assert.equal(t.status, t.score === 1 ? 'passed' : 'failed');
      assert.ok(['visible', 'hidden', 'after_due_date', 'after_published'].includes(t.visibility));
      assert.equal(typeof t.output, 'string');
    });
    const matched = results.tests.filter((t) => t.status === 'passed').length;
    assert.equal(results.score, matched);
    if (want !== null) assert.equal(matched, want);
    else assert.ok(matched > 0 && matched < build.steps.length, `a mistake part way: ${matched}`);
    const whose = student ? `student ${student.replace(/\./g, '\\.')}'s input` : 'the fixed input';
    assert.match(results.output, new RegExp(`^self-attention \\(SelfAttention, notebook 03_self_attention\\) on ${whose}: ${matched} of 6 steps match`));
  }
});

test('check --list --student gives the student\'s input and weights, and the Python lines that make them', async () => {
  const r = await check('--list', '--student', STUDENT, '--json');
  assert.equal(r.code, 0, r.stderr);
  const record = JSON.parse(r.stdout);
  assert.equal(record.student, STUDENT);
  const simple = record.builds.find((b) => b.name === 'simple-attention');
  const mine = forStudent(BUILDS.find((b) => b.name === 'simple-attention'), STUDENT);
  assert.deepEqual(simple.input.query.flat(2), Array.from(mine.input.query.data));
  assert.match(simple.python, /^query = \(\(torch\.arange\(20\) \* \d+ % 13 - 6\) \/ 4\)\.reshape\(1, 5, 4\)$/m);
  assert.notEqual(simple.python, (JSON.parse((await check('--list', '--json')).stdout)).builds
    .find((b) => b.name === 'simple-attention').python);
});

test('a bad --student or --gradescope exits 2 with one line', async () => {
  const dir = path.join(MINE, 'simple-attention');
  for (const [args, said] of [
    [['--list', '--student', 'a b'], /^attnlab: --student "a b" is not a student ID: 1 to 64 letters, digits and \. _ @ \+ - /],
    [['--build', 'simple-attention', '--dir', dir, '--student', 'x'.repeat(65)], /is not a student ID/],
    [['--build', 'simple-attention', '--dir', dir, '--gradescope', path.join(tmpdir(), 'no-such-attnlab', 'r.json')],
      /^attnlab: --gradescope '.*r\.json': the folder '.*no-such-attnlab' does not exist\n$/],
    [['--build', 'simple-attention', '--dir', dir, '--gradescope', tmpdir()], /^attnlab: --gradescope '.*': is a folder; give a file name\n$/],
    [['--list', '--gradescope', path.join(tmpdir(), 'r.json')], /^attnlab: --gradescope goes with --build NAME --dir DIR/],
  ]) {
    const r = await check(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, said);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
