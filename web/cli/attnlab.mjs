#!/usr/bin/env node
// attnlab: the labs headless (autograding, CI, slide figures). Same trainer as the page
// (web/training/session.js), same WASM module, any lab of the registry (web/labs/registry.js): its
// flags come from the lab's property table, its texts from the lab's `cli` block. Exit codes: 0 ok,
// 2 bad usage or settings, 1 failure. Every error is one line on stderr (the stack too only with
// ATTNLAB_DEBUG=1), and every file flag is checked before training, so a run never fails at its end
// on a path it could have refused at the start. Everything printed goes through one Output
// (output.mjs): the command ends only once stdout and stderr have drained, its worker threads ended,
// never by process.exit() with output still held; a reader that leaves early ends it quietly.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkFiles, commandUsage, cut, LAB_COMMANDS, labCommands, parseArgs, parseCommandArgs, shown, TOOL_COMMANDS,
  USAGE, UsageError } from './args.mjs';
import { Output, OutputClosed } from './output.mjs';
import { writeFigures } from './figure.mjs';
import { loadAttnLabNode, REPO_ROOT } from '../node_loader.mjs';
import { LABS } from '../labs/registry.js';
import { courseLine } from '../labs/common.js';
import { TrainingSession } from '../training/session.js';
import { AssetCache } from '../training/assets.js';
import { probeGpu } from './kernel.mjs';
import { loadStateDict, saveStateDict } from '../io/state_dict.js';
import { readWeightsFile } from '../io/weights_file.js';
import { megabytes } from '../shared/megabytes.js';
import { PatternError } from '../tokenizers/regex_guard.js';

/**
 * The file's metadata (written by --save, or by the notebook snippet in docs/weights.md) against the run
 * -> what the file holds, when that is not what this run trains; else null. A file that says nothing
 * loads as before. Refused rather than followed, so that a run is what its flags say.
 */
function weightsRefusal(metadata, lab, values) {
  const m = metadata ?? {};
  if (m.lab !== undefined && m.lab !== lab.id) return `${cut(m.lab)} weights (metadata lab=${cut(m.lab)}); --lab `
    + `${lab.id} needs ${lab.id} weights`;
  for (const { name, kind } of lab.weights.mustMatch ?? []) {
    const want = String(values[name]);
    if (m[name] === undefined || m[name] === want) continue;
    return kind === 'count'
      ? `weights for ${name}=${cut(m[name])} (metadata); this run has ${want} ${name}: pass --${name} ${cut(m[name])}`
      : `${cut(m[name])} weights (metadata ${name}=${cut(m[name])}); --${name} ${want} needs ${want} weights`;
  }
  return null;
}

const readAsset = (file) => readFile(path.join(REPO_ROOT, 'public', file)).catch((error) => {
  throw new Error(error.code === 'ENOENT' ? `${path.join('public', file)} is missing: run bash scripts/build.sh` : error.message);
});

/** A JSON file the user names (the Induction lab's --data), read whole; a file that is not JSON says where. */
class InputFileError extends Error {}
const MAX_JSON_BYTES = 64 * 1024 * 1024; // the Induction lab reads at most 10 million ids: about 40 MB of JSON
async function readJsonFile(file) {
  const { size } = await stat(file);
  if (size > MAX_JSON_BYTES) throw new InputFileError(`${megabytes(size)}; the lab reads at most `
    + `${megabytes(MAX_JSON_BYTES)} of JSON`);
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputFileError(`not JSON (${error.message})`);
  }
}

const output = new Output();
// The loaded module, so that its worker threads can be ended with the command.
let loaded = null;
const load = async (build) => {
  loaded = await loadAttnLabNode({ build });
  return loaded;
};

/**
 * A lab's own command (a lab file's `command`, or one of its `commands`: {name, module, about,
 * properties, options}; the module, relative to web/labs/, exports `command`, or `commands` by name,
 * = {output(values (given: the names set by a flag), module) -> lines, or write(values, module,
 * write(text)) for a command that writes as it computes, InputError}): its flags, their checks and its
 * --help come from the declaration (args.mjs); a bad flag or input exits 2 with one line.
 */
async function runLabCommand(lab, declared, rest) {
  if (rest.includes('-h') || rest.includes('--help')) {
    await output.out(`${commandUsage(lab, declared)}\n`);
    return 0;
  }
  let values, given;
  try {
    ({ values, given } = parseCommandArgs(lab, declared, rest));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await output.err(`attnlab: ${error.message}\n`);
    return 2;
  }
  const loadedModule = await import(new URL(declared.module, new URL('../labs/registry.js', import.meta.url)).href);
  const command = loadedModule.commands?.[declared.name] ?? loadedModule.command;
  const module = await load('auto');
  try {
    if (command.write) await command.write({ ...values, given }, module, (text) => output.out(text));
    else for (const line of await command.output({ ...values, given }, module)) await output.out(`${line}\n`);
  } catch (error) {
    // A tokenizer.json's pattern past its deadline on a text (web/tokenizers/regex_guard.js) is the
    // file's problem, as the other input problems: one line, exit 2, from any command that tokenizes.
    if (!(error instanceof command.InputError) && !(error instanceof UsageError) && !(error instanceof PatternError)) throw error;
    await output.err(`attnlab: ${error.message}\n`);
    return 2;
  }
  return 0;
}

/**
 * A command of no one lab (args.mjs's TOOL_COMMANDS: `attnlab check`, web/cli/check_command.mjs): its own
 * flags and exit code (check: 0 all match, 1 one does not); 2 with one line for a bad flag or input.
 */
async function runToolCommand(command, rest) {
  try {
    const { lines, code } = await command.run(rest, () => load('auto'));
    for (const line of lines) await output.out(`${line}\n`);
    return code;
  } catch (error) {
    if (!(error instanceof command.InputError) && !(error instanceof PatternError)) throw error;
    await output.err(`attnlab: ${error.message}\n`);
    return 2;
  }
}

async function main(argv) {
  // No command at all: what there is to run (not an error).
  if (argv.length === 0) {
    await output.out(`${USAGE}\n`);
    return 0;
  }
  const tool = TOOL_COMMANDS.find((command) => command.name === argv[0]);
  if (tool) return runToolCommand(tool, argv.slice(1));
  const found = LAB_COMMANDS.find(({ command }) => command.name === argv[0]);
  if (found) return runLabCommand(found.lab, found.command, argv.slice(1));
  let args;
  try {
    args = parseArgs(argv);
    if (!args.help && !args.labs && !args.version) checkFiles(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // One line, as docs/cli.md promises (attnlab --help has the usage).
    await output.err(`attnlab: ${error.message}\n`);
    return 2;
  }
  if (args.help) {
    await output.out(`${USAGE}\n`);
    return 0;
  }
  if (args.labs) {
    const records = [];
    for (const lab of LABS) {
      const commands = labCommands(lab).map((c) => `attnlab ${c.name} --help`);
      const how = lab.trainer ? '' : ` [no training: ${commands.length ? commands.join(', ') : 'on the page only'}]`;
      // What the commands of no one lab do for this lab (check: its builds, by name).
      const notes = TOOL_COMMANDS.map((command) => command.inLab?.(lab)).filter(Boolean);
      const course = courseLine(lab);
      records.push({ id: lab.id, title: lab.title, course, summary: lab.summary, trains: !!lab.trainer,
        commands: [...(lab.trainer ? ['train', 'evaluate'] : []), ...labCommands(lab).map((c) => c.name)], also: notes });
      if (!args.json) {
        await output.out(`${lab.id.padEnd(10)} ${lab.title} (${course[0].toLowerCase()}${course.slice(1)}): `
          + `${lab.summary}${how}${notes.map((text) => ` [${text}]`).join('')}\n`);
      }
    }
    if (args.json) await output.out(`${JSON.stringify({ labs: records })}\n`);
    return 0;
  }
  const module = await load(args.build ?? 'auto');
  if (args.version) {
    await output.out(`${module.version}\n`);
    return 0;
  }
  const { lab, values } = args;
  const say = (record, text) => output.out(args.json ? `${JSON.stringify(record)}\n` : `${text}\n`);
  const gpu = await probeGpu(args.backend);
  let session;
  try {
    const assets = await new AssetCache(module, readAsset).forLab(lab);
    session = TrainingSession.create({
      module, lab, config: lab.configureRequest(values).config, assets, request: { requested: args.backend, gpu },
    });
  } catch (error) {
    if (error.name !== 'AttnLabError') throw error;
    await output.err(`attnlab: ${error.message}\n`);
    return 2;
  }
  if (args.load) {
    const file = shown(args.load, { tail: true });
    try {
      const { tensors, metadata } = readWeightsFile(module, await readFile(args.load), path.basename(args.load));
      const refusal = weightsRefusal(metadata, lab, { ...values, ...session.config });
      if (refusal) {
        await output.err(`attnlab: ${file} holds ${refusal}\n`);
        session.dispose();
        return 2;
      }
      loadStateDict(session.trainer, tensors);
    } catch (error) {
      // The state_dict's list of problems, on one line.
      await output.err(`attnlab: cannot load ${file}: `
        + `${error.message.replace(/:\n- /, ': ').replace(/\n- /g, '; ').replace(/\s*\n\s*/g, ' ')}\n`);
      session.dispose();
      return 2;
    }
  }
  // The lab's own inputs before any step (the Induction lab's --data): a file it refuses is one line, exit 2.
  if (lab.cli.prepare) {
    try {
      await lab.cli.prepare({ session, options: args.options, readJson: (file) => readJsonFile(file) });
    } catch (error) {
      if (error.name !== 'AttnLabError' && !(error instanceof InputFileError)) throw error;
      const flag = Object.keys(args.options).find((name) => args.options[name] !== undefined && lab.cli.options.find((o) => o.name === name)?.type === 'path');
      await output.err(`attnlab: ${flag ? `--${flag} ${shown(args.options[flag], { tail: true })}: ` : ''}${error.message}\n`);
      session.dispose();
      return 2;
    }
  }
  const steps = args.steps ?? session.defaultSteps;
  const c = session.config;
  if (!args.evaluate) await say({ type: 'start', lab: lab.id, ...lab.cli.startRecord(c), steps, seed: args.seed,
    backend: session.backend, reason: session.reason, build: module.build, version: module.version },
  `Attention Lab ${module.version}: ${lab.cli.startText(c, steps, args.seed)}; backend ${session.backendLabel} `
    + `(${session.reason})`);

  const t0 = performance.now();
  while (session.step < steps) {
    const n = Math.min(args.every, steps - session.step);
    const { losses, accuracies } = await session.runSteps(n);
    const m = { step: session.step, loss: losses[losses.length - 1], accuracy: accuracies[accuracies.length - 1] };
    const { record, text } = lab.cli.progress(m, session.trainer);
    await say({ type: 'progress', ...record }, text);
  }
  const seconds = (performance.now() - t0) / 1000;
  const fallback = session.fallback;
  // A forced backend that did not run is never silent, in text or JSON mode: one line on stderr.
  if (fallback) await output.err(`attnlab: warning: --backend ${args.backend} fell back at step `
    + `${fallback.fellBackAt}: ${fallback.reason}\n`);
  const evaluation = session.evaluate(lab.cli.evaluationOptions?.(args.options) ?? {});
  const snapshot = session.takeSnapshot();
  const { record, lines } = lab.cli.final({ config: c, values, evaluation, snapshot, sample: session.fixedSample(),
    trainer: session.trainer });
  if (args.evaluate) {
    // The figures of the given weights, as train's final record gives them, with the file they came from.
    await say({ type: 'evaluation', lab: lab.id, weights: args.load, ...record.head, seed: args.seed,
      backend: session.backend, reason: session.reason, build: module.build, ...record.body },
    [`${lab.title} lab, weights ${path.basename(args.load)} (evaluated on fresh data of seed ${args.seed}):`, ...lines].join('\n'));
  } else {
    await say({
      type: 'final', lab: lab.id, ...record.head, steps: session.step, seed: args.seed,
      backend: session.backend, reason: session.reason, build: module.build, stepsPerSecond: session.step / seconds,
      ...(fallback ? { requestedBackend: fallback.requested, fellBackAt: fallback.fellBackAt } : {}),
      ...record.body,
    }, [...lines, `${(session.step / seconds).toFixed(1)} steps/s on ${session.backendLabel}`].join('\n'));
  }
  if (args.png || args.svg) {
    try {
      const figureLines = await writeFigures({ lab: lab.id, config: c, sample: session.fixedSample(),
        inspection: snapshot, step: session.step, png: args.png, svg: args.svg });
      for (const line of figureLines) {
        if (line.startsWith('warning')) await output.err(`${line}\n`);
        else if (!args.json) await output.out(`${line}\n`);
      }
    } catch (error) {
      await output.err(`attnlab: ${error.message}\n`);
      return 1;
    }
  }
  if (args.save) {
    await writeFile(args.save, saveStateDict(session.trainer, lab.weights.metadata(c, session.step)));
    if (!args.json) await say(null, `saved the weights to ${args.save}`);
  }
  session.dispose();
  return 0;
}

/**
 * The end of every command: wait until stdout and stderr have drained, end the module's worker
 * threads, and let the process end with its code. A reader that left early is not an error.
 */
async function finish(code) {
  await output.drain();
  loaded?.endThreads?.();
  process.exitCode = code;
  // Dawn (the npm 'webgpu' package, probed for --backend auto or webgpu) keeps a handle open after its
  // last use; everything has been written by now, so nothing is lost if it has to be ended.
  setTimeout(() => process.exit(code), 1000).unref();
}

main(process.argv.slice(2)).then(finish, async (error) => {
  if (error instanceof OutputClosed || output.closed) return finish(0);
  // Not the user's doing (or not foreseen): one line, exit 1; ATTNLAB_DEBUG=1 adds the stack.
  const message = String(error?.message ?? error).replace(/\s*\n\s*/g, ' ');
  await output.err(`attnlab: ${message}\n`).catch(() => {});
  if (process.env.ATTNLAB_DEBUG === '1' && error?.stack) await output.err(`${error.stack}\n`).catch(() => {});
  return finish(1);
});
