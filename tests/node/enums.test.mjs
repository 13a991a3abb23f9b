// The Backend enum lives in core/backend.h; JS lists the names in web/backends.js. They must agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';
import { BACKENDS } from '../../web/backends.js';

test('web/backends.js matches the C++ enum Backend, name by name and value by value', async () => {
  const m = await lab('simd');
  const cpp = m._module._Backend;
  const names = Object.keys(cpp).filter((k) => typeof cpp[k] === 'object' && 'value' in cpp[k]);
  assert.deepEqual(names.sort((a, b) => cpp[a].value - cpp[b].value), BACKENDS);
  BACKENDS.forEach((name, i) => assert.equal(cpp[name].value, i));
});

test('the SIMD build reports simd128, the scalar build does not', async () => {
  assert.deepEqual((await lab('simd')).cpuBackends, ['scalar', 'simd128']);
  assert.deepEqual((await lab('scalar')).cpuBackends, ['scalar']);
  assert.equal((await lab('simd')).version, '0.1.0');
});
