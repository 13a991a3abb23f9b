// The page's Writing lab and `attnlab generate` write the same tokens (issue 36): both go through the
// one writer (core/models/writer.h). The page's Play is run as the worker runs it: the write section's
// compute at the shown count the lab's Play action gives, step after step, from the lab's defaults; the
// CLI is given only --model and --text, so the lab's defaults (its properties) apply there too. Then a
// moved setting on the page: the shown tokens stay and the next are the CLI's run with that setting
// only where it draws the same (greedy: temperature 0 from the start gives the same continuation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab, FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { writingLab } from '../../web/labs/07_writing.js';
import { defaultValues } from '../../web/shared/properties.js';

const FOLDER = path.join(FIXTURES, 'gpt2_tiny', 'hub');
const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const PROMPT = 'The quick brown fox';
const write = writingLab.sections.find((s) => s.id === 'write');
const play = write.actions.find((a) => a.id === 'play').play;

async function openPage() {
  const module = await lab('simd');
  const { state } = await writingLab.open.load(module, await folderSources(FOLDER), { name: 'hub' });
  return { module, state };
}

/** Play from the start, as the page's worker steps it: -> the write section's last result. */
function playToTheEnd(ctx, values) {
  let v = play.start(values, null), r = write.compute(ctx, v);
  for (let steps = 0; steps < 1000; steps++) {
    const next = play.next(v, r);
    if (!next) return r;
    v = next;
    r = write.compute(ctx, v);
  }
  throw new Error('Play did not stop');
}

test('the Writing lab\'s Play and `attnlab generate` with only the model and the prompt write the same tokens', async () => {
  const { module, state } = await openPage();
  try {
    const values = { ...defaultValues(writingLab.properties), text: PROMPT };
    assert.ok(values.temperature > 0, 'the lab\'s default samples: the seed, not greedy choice, makes them agree');
    const r = playToTheEnd({ opened: state, module, backend: values.backend }, values);
    const cli = spawnSync(process.execPath, [CLI, 'generate', '--model', FOLDER, '--text', PROMPT, '--json'], { encoding: 'utf8', cwd: REPO_ROOT });
    assert.equal(cli.status, 0, cli.stderr);
    const record = JSON.parse(cli.stdout);
    assert.equal(r.written.length, values.maxNewTokens);
    assert.deepEqual(r.written.map((t) => t.id), record.generated.ids);
    r.written.forEach((t, i) => assert.ok(Math.abs(t.probability - record.steps[i].probability) <= 1e-6, `token ${i}'s probability`));
    assert.equal(r.stop, record.generated.stopReason);
  } finally {
    state.model.delete();
  }
});

test('the Writing lab: a moved setting keeps the tokens shown, and the next are drawn at the new setting', async () => {
  const { module, state } = await openPage();
  try {
    const ctx = { opened: state, module, backend: 'simd' };
    const values = { ...defaultValues(writingLab.properties), text: PROMPT, maxNewTokens: 12 };
    const sampled = write.compute(ctx, { ...values, shown: 12 });
    assert.equal(sampled.written.length, 12);
    // Temperature 0 with 5 shown: those 5 stay, the 7 written past them are forgotten.
    const five = write.compute(ctx, { ...values, temperature: 0, shown: 5 });
    assert.deepEqual(five.written.map((t) => t.id), sampled.written.slice(0, 5).map((t) => t.id));
    assert.equal(five.total, 5);
    // Writing on: the greedy continuation of the prompt and those 5.
    const on = write.compute(ctx, { ...values, temperature: 0, shown: 12 });
    assert.deepEqual(on.written.slice(0, 5).map((t) => t.id), five.written.map((t) => t.id));
    assert.ok(on.bars.top[0].probability === 1 && on.bars.drawn.id === on.written[11].id, 'greedy: all on the drawn token');
    // The same from a writer of its own (begun last: the model has one writer, which this replaces).
    const text = [...on.promptIds, ...on.written.slice(0, 5).map((t) => t.id)];
    const continued = state.model.generate(text, { temperature: 0, maxNewTokens: 7 }, { backend: 'simd128' });
    assert.deepEqual(on.written.slice(5).map((t) => t.id), continued.ids);
  } finally {
    state.model.delete();
  }
});
