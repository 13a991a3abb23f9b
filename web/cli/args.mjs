// Command-line flags for `attnlab`: a small declarative parser that names the bad flag.
import { LABS } from '../labs/registry.js';
import { checkCommand } from './check_command.mjs';
import { defaultValues } from '../shared/properties.js';
import { cut, flagLine, flagOf, flagsFrom, parseFlags, shown, specOf, UsageError, wrap } from './flags.mjs';
import { checkFiles, FileError } from './file_flags.mjs';

export { checkFiles, cut, FileError, flagOf, shown, UsageError, wrap };

// The labs that train (a lab without a trainer, such as Scaled dot-product, has no `train` run).
const TRAINABLE = LABS.filter((lab) => lab.trainer);

// ---- flags: the generic ones here, each lab's from its property table (web/labs/*.js) ----

/** The properties a lab takes on the command line (not the page's own: speed, colours, sections' views). */
export const cliProperties = (lab) => lab.properties.filter((p) => !p.page);

// `attnlab train`'s own options, declared as properties (web/cli/flags.mjs makes their flags).
const GENERIC_OPTIONS = [
  { name: 'lab', type: 'choice', default: LABS[0].id, choices: TRAINABLE.map((l) => ({ value: l.id })),
    help: 'Which lab.' },
  { name: 'build', type: 'choice', default: 'auto',
    choices: ['auto', 'simd-threads', 'simd', 'scalar'].map((value) => ({ value })),
    help: 'Which WASM module to load (auto: simd-threads, the Node build that runs a step\'s two '
      + 'shards on two cores).' },
  { name: 'every', type: 'int', default: 25, min: 1, max: 100000, help: 'Progress every N steps.' },
  { name: 'json', type: 'bool', default: false, help: 'JSON lines instead of text (docs/cli.md has their fields).' },
  { name: 'save', type: 'path', help: 'Save the trained weights as safetensors (PyTorch\'s state_dict names).' },
  { name: 'load', type: 'path',
    help: 'Start from saved weights (the lab\'s or the course notebook\'s, see docs/weights.md); a file whose metadata '
      + 'names another lab, task or head count is refused, not followed.' },
];
const GENERIC = flagsFrom(GENERIC_OPTIONS);
// Only for labs whose key figure is a heatmap (lab.cli.heatmapFigure).
const FIGURE_FLAGS = flagsFrom([
  { name: 'png', type: 'path', help: 'Write the head-mean attention heatmap of the fixed sample as PNG (2x, as the '
    + 'page exports it; drawn in headless Chromium, else the bare cells and colour bar).' },
  { name: 'svg', type: 'path', help: 'The same figure as SVG (needs Chromium).' },
]);

/**
 * flag -> spec for one lab: its properties' flags, then the generic ones, then the lab's own options
 * (lab.cli.options: the Induction lab's --data).
 */
export function flagsOf(lab) {
  const flags = flagsFrom(cliProperties(lab));
  Object.assign(flags, GENERIC);
  if (lab.cli?.heatmapFigure) Object.assign(flags, FIGURE_FLAGS);
  Object.assign(flags, flagsFrom(lab.cli?.options ?? []));
  return flags;
}

// ---- the labs' own commands (a lab's `command` block: pretrained, translate, attention; or its
// `commands`: the Writing lab's generate and heads) ----

/** A lab's headless commands: its `commands`, or its one `command`, or none. */
export const labCommands = (lab) => lab.commands ?? (lab.command ? [lab.command] : []);

/** Every lab's commands, in course order: [{lab, command}]. */
export const LAB_COMMANDS = LABS.flatMap((lab) => labCommands(lab).map((command) => ({ lab, command })));

// The commands that belong to no one lab, each declared once in its own file ({name, about, run(argv,
// load) -> {lines, code}, InputError, inLab?(lab) -> its words on the lab's `attnlab labs` line}):
// `attnlab check` judges the builds of every lab.
export const TOOL_COMMANDS = [checkCommand];

/** A lab command's properties: the lab's settings it names (the page's own), then its own options. */
export function commandProperties(lab, command) {
  const { properties = [], options = [] } = command;
  const own = properties.map((name) => {
    const prop = lab.properties.find((p) => p.name === name);
    if (!prop) throw new Error(`lab ${lab.id}: its command names a property '${name}' it does not have`);
    return prop;
  });
  return [...own, ...options];
}

/** The command's one-line synopsis: its required flags, then the others in brackets. */
export function synopsisOf(lab, command) {
  const props = commandProperties(lab, command);
  const words = [...props.filter((p) => p.required), ...props.filter((p) => !p.required)].map((prop) => {
    const spec = specOf(prop);
    const word = spec.type === 'bool' ? flagOf(prop) : `${flagOf(prop)} `
      + `${spec.type === 'choice' ? spec.choices.join('|') : spec.meta}`;
    return prop.required ? word : `[${word}]`;
  });
  return wrap(`attnlab ${command.name} ${words.join(' ')}`, 100, 8 + command.name.length);
}

/** `attnlab NAME --help`: the synopsis, what the command does, and every flag with its range and default. */
export function commandUsage(lab, command) {
  const lines = [`usage: ${synopsisOf(lab, command)}`, '', wrap(`${lab.title} lab: ${command.about}`, 100, 0), ''];
  const own = new Set(command.properties ?? []);
  const props = commandProperties(lab, command);
  lines.push(`the lab's settings (as on the page, web/labs/):`);
  for (const prop of props.filter((p) => own.has(p.name))) lines.push(flagLine(flagOf(prop), specOf(prop)));
  lines.push('', 'the command\'s own:');
  for (const prop of props.filter((p) => !own.has(p.name))) lines.push(flagLine(flagOf(prop), specOf(prop)));
  lines.push(flagLine('-h, --help', { type: 'bool', help: 'This text.' }));
  lines.push('', 'Exit codes: 0 done, 2 bad flags or input (one line on stderr says which), 1 anything '
    + 'else (docs/cli.md).');
  return lines.join('\n');
}

/** argv after the command's name -> {values: the flags over the defaults, given}; throws UsageError. */
export function parseCommandArgs(lab, command, argv) {
  const props = commandProperties(lab, command);
  const flags = flagsFrom(props);
  const { values, given } = parseFlags(argv, flags, {
    defaults: defaultValues(props),
    unknown: (name) => `unknown flag ${shown(name)} for attnlab ${command.name} (it takes `
      + `${Object.keys(flags).join(' ')})`,
  });
  for (const prop of props) {
    if (prop.required && !given.has(prop.name)) throw new UsageError(`${flagOf(prop)} ${specOf(prop).meta} is required`);
    // A flag that only some settings use (translate's --layer is for --cross-view one) is refused elsewhere.
    if (given.has(prop.name) && prop.when && !prop.when(values)) throw new UsageError(`${flagOf(prop)} `
      + `${prop.whenText ?? 'does not apply to these settings'}`);
  }
  return { values, given };
}

/** The help text, from the registry: one section per lab, with its flags. */
function usage() {
  const lines = ['usage: attnlab train [--lab LAB] [options]',
    '       attnlab evaluate --lab LAB --weights FILE [--json]   (a trained model\'s figures: .safetensors or '
      + 'a torch.save .pt)',
    '       attnlab labs [--json]',
    ...[...TOOL_COMMANDS, ...LAB_COMMANDS.map(({ command }) => command)].map((command) => `       attnlab ${command.name} ...`), '',
    ...TOOL_COMMANDS.map((command) => wrap(`attnlab ${command.name} (every lab): ${command.about}`, 100, 0,
      `(attnlab ${command.name} --help)`)),
    ...LAB_COMMANDS.map(({ lab, command }) => wrap(`attnlab ${command.name} (${lab.title} lab): ${command.about}`, 100,
      0, `(attnlab ${command.name} --help)`)), '',
    'Trains a lab\'s model with the same C++ trainer as the page. Every lab\'s options come from its',
    'settings on the page (web/labs/); a flag of another lab is refused.', ''];
  for (const lab of TRAINABLE) {
    const first = lab === LABS[0] ? ' (the default)' : '';
    lines.push(`--lab ${lab.id}${first}: ${lab.title}, `
      + `${lab.notebook ? `course notebook ${lab.notebook}` : `beyond the course notebooks: ${lab.beyond}`}`);
    lines.push(`  ${wrap(lab.summary, 96, 2)}`);
    for (const prop of cliProperties(lab)) lines.push(flagLine(flagOf(prop), specOf(prop)));
    if (lab.cli?.heatmapFigure) for (const [flag, spec] of Object.entries(FIGURE_FLAGS)) lines.push(flagLine(flag, spec));
    for (const prop of lab.cli?.options ?? []) lines.push(flagLine(flagOf(prop), specOf(prop)));
    lines.push('');
  }
  lines.push('every lab:');
  for (const [flag, spec] of Object.entries(GENERIC)) lines.push(flagLine(flag, spec));
  lines.push('  (--png, --svg and --save are checked before training: the folder must exist)');
  lines.push(flagLine('-h, --help', { type: 'bool', help: 'This text.' }));
  lines.push(flagLine('--version', { type: 'bool', help: 'The module version.' }));
  lines.push('', 'Exit codes: 0 done, 2 bad flags, settings or files (one line on stderr says which), '
    + '1 anything else.');
  return lines.join('\n');
}

export const USAGE = usage();

/** What a checkpoint command prints: its record as JSON (--json) or its text lines, then each figure it wrote. */
export function reportLines({ record, lines, figures }, json) {
  return json ? [JSON.stringify(record), ...figures.map((f) => JSON.stringify({ figure: f }))] : [...lines, ...figures];
}

/**
 * argv -> {lab, values (the lab's property values: its defaults and the flags), given (names set by a
 * flag), backend, build, seed, every, json, save, load, png, svg} or {help} / {version} / {labs}.
 */
export function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) return { help: true };
  if (argv.includes('--version')) return { version: true };
  const [command, ...given] = argv;
  if (command === 'labs') {
    if (given.every((arg) => arg === '--json')) return { labs: true, json: given.length > 0 };
    throw new UsageError(`attnlab labs takes --json alone, not ${shown(given.find((arg) => arg !== '--json'))}`);
  }
  if (command !== 'train' && command !== 'evaluate') throw new UsageError(command ? `unknown command ${shown(command)}` : 'missing command');
  // `evaluate --lab LAB --weights FILE` is a run of no steps from that file: the figures a trained
  // model is judged by (an instructor grading a class's notebook models).
  const evaluate = command === 'evaluate';
  const rest = evaluate ? given.map((arg) => (arg === '--weights' ? '--load' : arg.replace(/^--weights=/, '--load='))) : given;
  if (evaluate && !rest.some((arg) => arg === '--load' || arg.startsWith('--load='))) throw new UsageError('evaluate needs --weights FILE (a .safetensors or a .pt saved with torch.save)');
  if (evaluate && rest.some((arg) => /^--(steps|save|every)(=|$)/.test(arg))) throw new UsageError('evaluate trains '
    + 'nothing: --steps, --save and --every belong to train');
  // The lab first: it decides which flags exist.
  let labId = LABS[0].id;
  rest.forEach((arg, i) => {
    const [name, inline] = arg.split(/=(.*)/s, 2);
    if (name === '--lab') labId = inline ?? rest[i + 1];
  });
  if (labId === undefined || labId.startsWith('--')) throw new UsageError('--lab needs a value');
  const lab = TRAINABLE.find((l) => l.id === labId);
  const viewer = LABS.find((l) => l.id === labId && !l.trainer);
  const headless = viewer ? labCommands(viewer).map((c) => `\`attnlab ${c.name}\` (attnlab ${c.name} --help)`) : [];
  if (viewer) throw new UsageError(`--lab ${viewer.id}: the ${viewer.title} lab trains `
    + `nothing${headless.length ? `; its headless side is ${headless.join(' and ')}` : ''}`);
  if (!lab) throw new UsageError(`--lab must be one of ${TRAINABLE.map((l) => l.id).join(', ')}, got ${shown(labId)}`);
  const flags = flagsOf(lab);
  const unknown = (name) => {
    const elsewhere = TRAINABLE.some((other) => other !== lab && flagsOf(other)[name]);
    return elsewhere ? `${name} does not apply to --lab ${lab.id} (it takes ${Object.keys(flags).join(' ')})` : `unknown flag ${shown(name)}`;
  };
  // One parse for the lab's settings and the command's options, each starting at its declared default.
  const labOptions = lab.cli?.options ?? [];
  const parsed = parseFlags(rest, flags,
    { defaults: defaultValues([...lab.properties, ...GENERIC_OPTIONS, ...labOptions]), unknown });
  const own = (name) => lab.properties.some((p) => p.name === name);
  const out = {
    lab, build: parsed.values.build, every: parsed.values.every, json: parsed.values.json,
    save: parsed.values.save, load: parsed.values.load, png: parsed.values.png, svg: parsed.values.svg,
    options: Object.fromEntries(labOptions.map((o) => [o.name, parsed.values[o.name]])),
    values: Object.fromEntries(Object.entries(parsed.values).filter(([name]) => own(name))),
    given: new Set([...parsed.given].filter(own)),
  };
  // What a choice implies (a task brings its step count), unless the flag was given too.
  for (const name of out.given) {
    const implied = lab.afterChange(name, out.values);
    for (const [k, v] of Object.entries(implied)) if (!out.given.has(k)) out.values[k] = v;
  }
  // A flag that only some settings use (--unique-keys is for the pointer task) is refused elsewhere.
  for (const name of out.given) {
    const prop = lab.properties.find((p) => p.name === name);
    if (prop.when && !prop.when(out.values)) throw new UsageError(`${flagOf(prop)} `
      + `${prop.whenText ?? 'does not apply to these settings'}`);
  }
  out.backend = out.values.backend ?? 'auto';
  out.seed = out.values.seed ?? 0;
  out.steps = out.given.has('steps') ? out.values.steps : undefined;
  if (evaluate) Object.assign(out, { evaluate: true, steps: 0 });
  return out;
}
