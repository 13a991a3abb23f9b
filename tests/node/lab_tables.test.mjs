// Each lab's property table (web/labs/*.js, the page's and the CLI's settings) against its C++ trainer
// (core/trainers/registry.cpp): the same defaults, and the same ranges (the table's max is accepted,
// one more refused), so the two copies cannot drift apart. Like tests/node/enums.test.mjs for backends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab as loadModule } from './support.mjs';
import { LABS } from '../../web/labs/registry.js';
import { AssetCache } from '../../web/training/assets.js';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const m = await loadModule('simd');
// Labs without training (Scaled dot-product) have no C++ trainer: tests/node/scaled.test.mjs runs
// their sections at the tables' extremes instead.
const TRAINING_LABS = LABS.filter((lab) => lab.trainer);
const assets = new AssetCache(m, async (file) => readFileSync(path.join(REPO_ROOT, 'public', file)));

test('every lab names a registered C++ trainer, and its data files load', async () => {
  for (const lab of TRAINING_LABS) {
    assert.ok(m.trainerIds().includes(lab.trainer.id), `${lab.id}: trainer '${lab.trainer.id}' is one of ${m.trainerIds()}`);
    await assets.forLab(lab);
  }
});

for (const lab of TRAINING_LABS) {
  test(`${lab.id}: property defaults and ranges agree with the C++ trainer's`, async () => {
    const given = await assets.forLab(lab);
    const defaults = lab.properties.reduce((v, p) => ({ ...v, [p.name]: p.default }), {});
    const config = lab.configureRequest(defaults).config;
    const trainer = m.createTrainer(lab.trainer.id, config, given);
    const cpp = trainer.config;
    trainer.delete();
    for (const [name, value] of Object.entries(config)) {
      if (name in cpp) assert.deepEqual(cpp[name], value, `${lab.id}: ${name} defaults to ${value} on the page, ${cpp[name]} in C++`);
    }
    // The C++ config's own defaults (what a caller that names no setting gets, and the steps after a run
    // ends) are the table's too, for the default task.
    const own = m.Trainer.defaults(lab.trainer.id, config.task ?? '');
    for (const [name, value] of Object.entries(defaults)) {
      if (name in own && name !== 'seed') assert.deepEqual(own[name], value, `${lab.id}: ${name} defaults to ${value} on the page, ${own[name]} in C++'s config`);
    }
    // Settings where `prop` applies: a property that only some tasks use is checked in one of those.
    const where = (prop) => {
      if (!prop.when || prop.when(defaults)) return defaults;
      for (const choice of lab.properties.filter((p) => p.type === 'choice' && p.effect === 'reset')) {
        for (const { value } of choice.choices) if (prop.when({ ...defaults, [choice.name]: value })) return { ...defaults, [choice.name]: value };
      }
      throw new Error(`${lab.id}: no settings where ${prop.name} applies`);
    };
    let base = defaults;
    const create = (patch) => {
      const t = m.createTrainer(lab.trainer.id, lab.configureRequest({ ...base, ...patch }).config, given);
      t.delete();
    };
    for (const prop of lab.properties.filter((p) => p.type === 'int' && p.name in config && p.name !== 'steps')) {
      base = where(prop);
      const patch = { [prop.name]: prop.max }; // the largest value alone, the others at their defaults
      assert.doesNotThrow(() => create(patch), `${lab.id}: ${prop.name} = ${prop.max} (the table's max) is accepted`);
      assert.throws(() => create({ ...patch, [prop.name]: prop.max + 1 }), { name: 'AttnLabError' }, `${lab.id}: ${prop.name} = ${prop.max + 1} is refused`);
      if (prop.min >= 1) assert.throws(() => create({ [prop.name]: prop.min - 1 }), { name: 'AttnLabError' }, `${lab.id}: ${prop.name} = ${prop.min - 1} is refused`);
    }
  });
}
