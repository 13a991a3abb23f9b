// `attnlab check`: the build checker of every lab, headless, for graders (issue 39, item 2).
//   attnlab check --list [--json]                    every build: its lab, notebook, fixed input (and the
//                                                    Python lines that make it), state_dict, steps and shapes
//   attnlab check --build NAME --dir DIR [--json]    judges the files in DIR named after the build's steps:
//                                                    STEP.pt (torch.save of one tensor) or STEP.txt (what
//                                                    print() showed), with the page's own checker (judge.js)
// --student ID (both forms): that student's own input (student_input.js), so a copy of the page's or a
// classmate's tensors does not pass; --gradescope FILE: the verdicts as Gradescope's results.json.
// Exit codes: 0 every given step matches (or --list), 1 one does not, 2 bad input (a flag, an unknown
// build, a folder that is not there or holds none of the steps' files), with one line on stderr.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILDS, buildByName, listRecord, referenceSteps } from '../labs/builds/registry.js';
import { forStudent, studentIdProblem } from '../labs/builds/student_input.js';
import { jsonNumber, judgeStep, readTheirs, shapeText } from '../labs/builds/judge.js';
import { safeLines } from './output.mjs';
import { checkFiles, FileError } from './file_flags.mjs';
import { megabytes } from '../shared/megabytes.js';

export class CheckInputError extends Error {}

const ABOUT = 'judge a student\'s build of a notebook\'s module, step by step, as the page\'s "Check your build" does';

export const CHECK_USAGE = [
  `attnlab check: ${ABOUT}`,
  '',
  'usage: attnlab check --list [--student ID] [--json]',
  '       attnlab check --build NAME --dir DIR [--student ID] [--gradescope FILE] [--json]',
  '  --list                     every build: lab, notebook, fixed input, state_dict, steps and their shapes',
  `  --build NAME               the build to judge (${BUILDS.map((b) => b.name).join(', ')})`,
  '  --dir DIR                  a folder with STEP.pt (torch.save of one tensor) or STEP.txt (what print() '
    + 'showed) per step',
  '  --student ID               that student\'s own input and weights (drawn from the ID and the build\'s name), '
    + 'listed or judged against',
  '  --gradescope FILE          also write the verdicts as Gradescope\'s results.json (a test per step)',
  '  --json                     one JSON record instead of text (docs/cli.md has its fields)',
  'exit codes: 0 every given step matches, 1 one does not, 2 bad input',
].join('\n');

// A step's tensor is a few KB; a file far larger is not one step's tensor.
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** argv after `check` -> {list, build, dir, student, gradescope, json, help}; a CheckInputError names the problem. */
export function parseCheckArgs(argv) {
  const values = { list: false, json: false, help: false, build: undefined, dir: undefined, student: undefined,
    gradescope: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const key = eq > 0 ? arg.slice(2, eq) : arg.replace(/^--?/, '');
    if (arg === '-h' || arg === '--help') values.help = true;
    else if (arg === '--list' || arg === '--json') values[key] = true;
    else if (arg.startsWith('--') && ['build', 'dir', 'student', 'gradescope'].includes(key)) {
      const text = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (text === undefined || text === '') throw new CheckInputError(`--${key} needs a value`);
      values[key] = text;
    } else throw new CheckInputError(`unknown argument ${JSON.stringify(arg)} (attnlab check --help lists the flags)`);
  }
  if (values.help) return values;
  if (values.list && (values.build || values.dir)) throw new CheckInputError('--list takes no --build or --dir: list '
    + 'the builds, or judge one');
  if (values.student !== undefined && studentIdProblem(values.student)) {
    throw new CheckInputError(`--student ${studentIdProblem(values.student)}`);
  }
  if (values.gradescope !== undefined) {
    if (values.list) throw new CheckInputError('--gradescope goes with --build NAME --dir DIR: it writes their verdicts');
    // Checked before anything is judged, as every command's output files are.
    try {
      checkFiles({ gradescope: values.gradescope });
    } catch (error) {
      if (error instanceof FileError) throw new CheckInputError(error.message);
      throw error;
    }
  }
  if (!values.list) {
    if (!values.build) throw new CheckInputError('give --list, or --build NAME --dir DIR');
    if (!buildByName(values.build)) throw new CheckInputError(`--build ${JSON.stringify(values.build)} is not a build `
      + `(there are: ${BUILDS.map((b) => b.name).join(', ')})`);
    if (!values.dir) throw new CheckInputError('--build needs --dir DIR: the folder with the steps\' files');
  }
  return values;
}

/** `attnlab check --list [--student ID]`: {record, lines}. */
export function listBuilds(student) {
  const builds = student === undefined ? BUILDS : BUILDS.map((b) => forStudent(b, student));
  const record = { ...(student === undefined ? {} : { student }),
    builds: builds.map((b) => ({ ...listRecord(b), ...(student === undefined ? {} : { student }) })) };
  const lines = builds.map((b) => `${b.name.padEnd(26)} lab ${b.lab.padEnd(9)} notebook ${b.notebook}: `
    + `${b.module}; steps ` + b.steps.map((s) => `${s.name} ${shapeText(s.shape)}`).join(', '));
  const whose = student === undefined ? 'each build\'s input' : `student ${student}'s input for each build`;
  return { record, lines: [...lines, '', `attnlab check --list${student === undefined ? '' : ` --student ${student}`} `
    + `--json gives ${whose}, state_dict and Python lines.`] };
}

/** The file a step is given in, or null: STEP.pt first, STEP.txt otherwise. -> {file, kind, also?}. */
async function stepFile(dir, step) {
  const found = [];
  for (const kind of ['pt', 'txt']) {
    const file = path.join(dir, `${step.name}.${kind}`);
    const info = await stat(file).catch(() => null);
    if (info?.isFile()) found.push({ file, kind, size: info.size });
  }
  return found.length ? { ...found[0], also: found[1] ?? null } : null;
}

/**
 * `attnlab check --build NAME --dir DIR`: {record, lines, code}. readTorchTensor: the WASM module's .pt
 * reader, asked for only when a .pt is there. A file that cannot be read is that step's verdict (not ok).
 */
export async function judgeFolder(build, dir, getReader) {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new CheckInputError(`--dir ${JSON.stringify(dir)} is not a folder`);
  const files = await Promise.all(build.steps.map((s) => stepFile(dir, s)));
  if (!files.some(Boolean)) {
    throw new CheckInputError(`${dir} holds none of the steps' files: `
      + `${build.steps.map((s) => `${s.name}.pt or ${s.name}.txt`).join(', ')}`);
  }
  const expected = referenceSteps(build);
  const steps = [];
  for (const [i, step] of build.steps.entries()) {
    const given = files[i];
    if (!given) {
      steps.push({ name: step.name, given: false, ok: null, shape: null, expected_shape: step.shape,
        first_difference: null, message: `not given (${step.name}.pt or ${step.name}.txt)` });
      continue;
    }
    const name = path.basename(given.file);
    let verdict;
    try {
      if (given.size > MAX_FILE_BYTES) throw new Error(`${name} is ${megabytes(given.size)}: one step's `
        + 'tensor is a few KB');
      const input = given.kind === 'pt' ? { bytes: new Uint8Array(await readFile(given.file)), name } : { text: await readFile(given.file, 'utf8') };
      const { tensors, printed } = readTheirs(given.kind === 'pt' ? await getReader() : null, input);
      verdict = judgeStep(step, tensors, expected[step.name], { printed, hint: build.hint });
    } catch (error) {
      if (error.name !== 'AttnLabError' && !/^The pasted text was not read|MB: one step/.test(error.message)) throw error;
      verdict = { ok: false, shape: null, expected_shape: step.shape, first_difference: null,
        message: `${name} was not read: ${error.message}` };
    }
    const difference = verdict.first_difference;
    steps.push({ name: step.name, given: true, file: name, ok: verdict.ok, shape: verdict.shape,
      expected_shape: verdict.expected_shape,
      first_difference: difference ? { index: difference.index, yours: jsonNumber(difference.yours),
        expected: jsonNumber(difference.expected) } : null,
      message: verdict.message + (given.also ? ` (${path.basename(given.also.file)} was not read: ${name} was)` : '') });
  }
  const firstWrong = steps.find((s) => s.given && !s.ok)?.name ?? null;
  const givenCount = steps.filter((s) => s.given).length;
  const whose = build.student === undefined ? '' : `, student ${build.student}'s input`;
  const lines = [`${build.name} (${build.module}, notebook ${build.notebook}${whose}), folder ${dir}:`,
    ...steps.map((s) => `${s.given ? (s.ok ? '✓' : '✗') : '-'} ${s.name}: ${s.message}`),
    firstWrong ? `first wrong step: ${firstWrong}` : `every given step matches (${givenCount} of `
      + `${steps.length} given)`];
  const record = { build: build.name, ...(build.student === undefined ? {} : { student: build.student }), dir, steps,
    first_wrong: firstWrong };
  return { record, lines, code: firstWrong ? 1 : 0 };
}

/**
 * A judged folder's record -> Gradescope's results.json (its autograder specification): a test per step,
 * 1 point when it matches and 0 otherwise (a step not given included), in the build's order, each with
 * the verdict as its output; the total `score` is the steps matched.
 */
export function gradescopeResults(build, record) {
  const tests = record.steps.map((s, i) => ({
    name: `${i + 1}. ${s.name} ${shapeText(build.steps[i].shape)}`, number: String(i + 1),
    score: s.ok ? 1 : 0, max_score: 1, status: s.ok ? 'passed' : 'failed', output: s.message, visibility: 'visible',
  }));
  const score = tests.reduce((n, t) => n + t.score, 0);
  const whose = record.student === undefined ? 'the fixed input' : `student ${record.student}'s input`;
  return {
    score,
    output: `${build.name} (${build.module}, notebook ${build.notebook}) on ${whose}: ${score} of ${tests.length} `
      + `steps match${record.first_wrong ? `; the first wrong step is ${record.first_wrong}` : ''}.`,
    visibility: 'visible',
    tests,
  };
}

/** The command: argv after `check` -> {lines (stdout), code}; a CheckInputError for bad input (exit 2). */
export async function runCheck(argv, load) {
  const values = parseCheckArgs(argv);
  if (values.help) return { lines: [CHECK_USAGE], code: 0 };
  if (values.list) {
    const { record, lines } = listBuilds(values.student);
    return { lines: values.json ? [JSON.stringify(record)] : lines, code: 0 };
  }
  let reader = null;
  const getReader = async () => {
    const module = await load();
    reader ??= (bytes, name) => module.readTorchTensor(bytes, name);
    return reader;
  };
  const build = values.student === undefined ? buildByName(values.build) : forStudent(buildByName(values.build), values.student);
  const { record, lines, code } = await judgeFolder(build, values.dir, getReader);
  if (values.gradescope) {
    await writeFile(values.gradescope, `${JSON.stringify(gradescopeResults(build, record), null, 2)}\n`);
    if (!values.json) lines.push(`wrote ${values.gradescope} (Gradescope's results.json)`);
  }
  // The text lines quote the student's files (a STEP.txt's first words): made safe for a terminal, as
  // every message is; the JSON record escapes them itself.
  return { lines: values.json ? [JSON.stringify(record)] : lines.map(safeLines), code };
}

/**
 * The command's one declaration, read by args.mjs (TOOL_COMMANDS: `attnlab --help` lists it as it lists
 * the labs' commands, and `attnlab labs` names each lab's builds: inLab) and by attnlab.mjs, which runs it.
 */
export const checkCommand = {
  name: 'check',
  about: `${ABOUT}: --list, or --build NAME --dir DIR [--student ID] [--gradescope FILE] [--json]; exit 1 when a `
    + 'step does not match',
  /**
   * What `attnlab labs` says on a lab's line: the builds of it this judges (its "Check your build"
   * sections), or null.
   */
  inLab(lab) {
    const names = BUILDS.filter((b) => b.lab === lab.id).map((b) => `attnlab check --build ${b.name}`);
    return names.length ? `check your build: ${names.join(', ')}` : null;
  },
  run: runCheck,
  InputError: CheckInputError,
};
