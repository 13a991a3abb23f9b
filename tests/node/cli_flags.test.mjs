// One source for every flag (issue 23): each command's flags are its lab's declared properties, so the
// page, the link and the CLI cannot disagree. Walks every lab's properties that a command takes (train's
// for the labs that train; pretrained's, translate's and attention's from their `command` blocks, and
// the Writing lab's generate and heads from its `commands`) and
// checks: the CLI takes the same name; it refuses what the page refuses (a value past either end of the
// range, a choice that is not one, a text that is too long) with the flag's message and exit 2; it
// accepts both ends of the range as the page does; and --help shows the page's default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { LABS } from '../../web/labs/registry.js';
import { cliProperties, commandProperties, flagsOf, LAB_COMMANDS, labCommands } from '../../web/cli/args.mjs';
import { defaultText, flagOf, flagsFrom, parseFlags, parseValue, rangeOf, specOf, UsageError } from '../../web/cli/flags.mjs';
import { parseProperty } from '../../web/shared/properties.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const attnlab = (args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
const oneSpace = (text) => text.replace(/\s+/g, ' ');

/** Each command: its name, the argv before a flag, the lab properties it takes, its --help text. */
const COMMANDS = [
  ...LABS.filter((lab) => lab.trainer).map((lab) => ({
    name: `train --lab ${lab.id}`, lab, argv: ['train', '--lab', lab.id], props: cliProperties(lab), help: ['--help'],
  })),
  ...LAB_COMMANDS.map(({ lab, command }) => ({
    name: command.name, lab, command, argv: [command.name], props: commandProperties(lab, command).filter((p) => lab.properties.includes(p)),
    help: [command.name, '--help'],
  })),
];

/** What the page refuses for a property: [text typed, the CLI's message for it]. */
function refusals(prop) {
  const flag = flagOf(prop);
  const spec = specOf(prop);
  if (prop.type === 'choice') return [['nope', `${flag} must be one of ${spec.choices.join(', ')}, got 'nope'`]];
  if (prop.type === 'text') {
    const long = 'x'.repeat(prop.maxLength + 1);
    return [[long, `${flag} is ${long.length.toLocaleString('en')} characters long: at most ${prop.maxLength.toLocaleString('en')}`]];
  }
  if (prop.type !== 'int' && prop.type !== 'number') return [];
  const kind = prop.type === 'int' ? 'an integer' : 'a number';
  const step = prop.type === 'int' ? 1 : Math.min(1, (prop.max - prop.min) / 10);
  const low = prop.minExclusive ? prop.min : prop.min - step;
  return [String(low), String(prop.max + step)].map((raw) => [raw, `${flag} must be ${kind} in ${rangeOf(spec)}, got '${raw}'`]);
}

/** Values at the ends of the range that the page takes (and so must the CLI). */
function acceptances(prop) {
  if (prop.type === 'choice') return prop.choices.map((c) => String(c.value));
  if (prop.type === 'int' || prop.type === 'number') return [prop.minExclusive ? String(prop.min + (prop.max - prop.min) / 1000) : String(prop.min), String(prop.max)];
  if (prop.type === 'text') return ['x'.repeat(prop.maxLength)];
  return [];
}

test('every command covers the labs: train for each lab that trains, a command for each that does not', () => {
  for (const lab of LABS) assert.ok(lab.trainer || labCommands(lab).length > 0, `${lab.id}: no headless side`);
  // Every command is declared by its lab (the Writing lab's four as well: no flag table of their own).
  assert.deepEqual(COMMANDS.filter((c) => !c.name.startsWith('train')).map((c) => c.name).sort(), ['attention', 'attribute', 'generate', 'heads', 'patch', 'pretrained', 'translate']);
  for (const c of COMMANDS) assert.ok(c.props.length > 0, `${c.name}: takes some of the lab's settings`);
});

for (const command of COMMANDS) {
  test(`attnlab ${command.name}: the flags are the lab's properties, with the page's ranges, refusals and defaults`, () => {
    const flags = command.name.startsWith('train') ? flagsOf(command.lab) : flagsFrom(commandProperties(command.lab, command.command));
    const help = oneSpace(attnlab(command.help).stdout);
    for (const prop of command.props) {
      const flag = flagOf(prop);
      assert.ok(flags[flag], `${flag}: the CLI takes the property ${prop.name} under this name`);
      assert.equal(flags[flag].prop, prop, `${flag}: read from the lab's own declaration`);
      // --help shows the flag and the page's default.
      assert.ok(help.includes(` ${flag}`), `${flag} is in --help`);
      const def = defaultText(specOf(prop));
      if (def) assert.ok(help.includes(`default ${oneSpace(def)})`), `${flag}: --help shows the page's default (default ${def})`);
      if (prop.type === 'int' || prop.type === 'number') {
        assert.ok(help.includes(`range ${rangeOf(specOf(prop))}`), `${flag}: --help shows the range`);
        assert.equal(defaultText(specOf(prop)), prop.cliDefault ?? prop.defaultText ?? String(prop.default));
      }
      // What the page refuses, the CLI refuses, naming the flag.
      for (const [raw, message] of refusals(prop)) {
        assert.ok(parseProperty(prop, raw).error, `${flag} ${raw}: the page refuses it`);
        assert.throws(() => parseValue(flag, flags[flag], raw), (e) => e instanceof UsageError && e.message === message, `${flag} ${raw}`);
      }
      // What the page takes at the ends of its range, the CLI takes, as the same value.
      for (const raw of acceptances(prop)) {
        const page = parseProperty(prop, raw);
        assert.equal(page.error, undefined, `${flag} ${raw.slice(0, 20)}: the page takes it`);
        const { values } = parseFlags([flag, raw], flags);
        assert.equal(values[prop.name], page.value, `${flag} ${raw.slice(0, 20)}: the same value as the page`);
      }
      if (prop.type === 'bool') {
        const { values } = parseFlags([flag], flags);
        assert.equal(values[prop.name], !prop.default, `${flag} turns the setting ${prop.default ? 'off' : 'on'}`);
      }
    }
  });

  test(`attnlab ${command.name}: an out-of-range value of each property exits 2 with its message`, () => {
    for (const prop of command.props) {
      const [raw, message] = refusals(prop).at(-1) ?? [];
      if (raw === undefined) continue;
      const r = attnlab([...command.argv, flagOf(prop), raw]);
      assert.equal(r.status, 2, `${flagOf(prop)} ${raw.slice(0, 20)}: exit 2 (${r.stderr.split('\n')[0]})`);
      assert.equal(r.stdout, '', 'nothing runs');
      assert.equal(r.stderr.split('\n')[0], `attnlab: ${message}`);
    }
  });
}

test('the viewer commands\' backend is the page\'s: auto by default, simd and webgpu by the page\'s names', () => {
  for (const command of COMMANDS.filter((c) => !c.name.startsWith('train'))) {
    const backend = command.props.find((p) => p.name === 'backend');
    assert.equal(backend.default, 'auto', command.name);
    assert.deepEqual(backend.choices.map((c) => c.value), ['auto', 'webgpu', 'simd', 'scalar'], command.name);
  }
});

// Issue 45, item 4: a command's --help says nothing that only the page has (a thumbnail to click, a grid,
// "above"): a property's pageHelp is the page's alone.
test('--help of every lab command has no page-only words', () => {
  for (const command of ['generate', 'pretrained', 'translate', 'attribute', 'patch']) {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), command, '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /[Cc]lick|thumbnail|the prompt above|heads off grid/, command);
  }
});
