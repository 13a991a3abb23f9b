// Every build Node can load x every backend it offers: `attnlab train --task copy --steps 4 --seed 5
// --backend B --build X` runs on the backend it was asked for (no silent fallback) and ends at the
// scalar backend's loss to 1e-5 relative. WebGPU runs on whatever adapter Node finds (SwiftShader on
// a machine without a GPU); the threads build keeps its heap in a SharedArrayBuffer, which is the case
// that once fell back at step 1 ("no overload matched for writeBuffer").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const RELATIVE_TOLERANCE = 1e-5;

// build -> the backends it offers (the scalar build has no SIMD128 kernel).
const BUILDS = { 'simd-threads': ['scalar', 'simd', 'webgpu'], simd: ['scalar', 'simd', 'webgpu'], scalar: ['scalar', 'webgpu'] };
const ENGINE_NAME = { scalar: 'scalar', simd: 'simd128', webgpu: 'webgpu' };

function train(build, backend) {
  // 4 steps, not 40: on SwiftShader a WebGPU step of the default copy model costs about two seconds
  // (three builds x 10 steps were 70 s of the suite); 4 steps, two of them after an update, compare the
  // same staged path: forward, backward and Adam through the kernel, then the evaluation.
  const r = spawnSync(process.execPath, [CLI, 'train', '--task', 'copy', '--steps', '4', '--seed', '5', '--every', '2',
    '--backend', backend, '--build', build, '--json'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  return { final: lines.at(-1), progress: lines.filter((l) => l.type === 'progress'), stderr: r.stderr };
}

const closeTo = (a, b) => Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));

let reference; // the scalar backend's run in the first build
for (const [build, backends] of Object.entries(BUILDS)) {
  for (const backend of backends) {
    test(`attnlab train copy[steps=4,seed=5] build=${build} backend=${backend}: runs on ${backend}, loss = scalar's to 1e-5`, () => {
      const { final, progress, stderr } = train(build, backend);
      assert.equal(final.type, 'final');
      assert.equal(final.build, build);
      assert.equal(final.backend, ENGINE_NAME[backend], `ran on ${final.backend}: ${final.reason}`);
      assert.equal(final.fellBackAt, undefined, `fell back: ${final.reason}`);
      assert.doesNotMatch(stderr, /warning/);
      reference ??= final;
      assert.ok(closeTo(final.loss, reference.loss), `evaluation loss ${final.loss} vs scalar's ${reference.loss}`);
      assert.equal(progress.length, 2);
      assert.ok(closeTo(progress.at(-1).loss, reference.lastTrainingLoss ?? progress.at(-1).loss));
      reference.lastTrainingLoss ??= progress.at(-1).loss;
    });
  }
}

// The Lookup lab through the same staged step: its loss is on the attention weights themselves, so the
// WebGPU kernel must hand back the weights and take their gradient (dWeights), not only out / dOut.
let lookupReference;
for (const [build, backends] of Object.entries(BUILDS)) {
  for (const backend of backends) {
    test(`attnlab train --lab lookup[steps=20,seed=3,heads=2] build=${build} backend=${backend}: runs on ${backend}, held-out MSE = scalar's to 1e-5`, () => {
      const r = spawnSync(process.execPath, [CLI, 'train', '--lab', 'lookup', '--steps', '20', '--seed', '3', '--heads', '2', '--every', '10',
        '--backend', backend, '--build', build, '--json'], { encoding: 'utf8', timeout: 300_000 });
      assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
      const final = JSON.parse(r.stdout.trim().split('\n').at(-1));
      assert.equal(final.backend, ENGINE_NAME[backend], `ran on ${final.backend}: ${final.reason}`);
      assert.equal(final.fellBackAt, undefined, `fell back: ${final.reason}`);
      lookupReference ??= final;
      assert.ok(closeTo(final.mse, lookupReference.mse), `held-out MSE ${final.mse} vs scalar's ${lookupReference.mse}`);
      assert.ok(Math.abs(final.top1 - lookupReference.top1) <= 0.001, `top-1 ${final.top1} vs scalar's ${lookupReference.top1}`);
    });
  }
}

test('a forced backend that cannot run says so: one warning line on stderr, and fellBackAt + reason in the final record', () => {
  // No Vulkan driver: WebGPU has no adapter, so --backend webgpu runs on SIMD128 from step 1.
  const r = spawnSync(process.execPath, [CLI, 'train', '--task', 'copy', '--steps', '3', '--backend', 'webgpu', '--json'],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent/no_icd.json' } });
  assert.equal(r.status, 0, r.stderr);
  const final = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.equal(final.backend, 'simd128');
  assert.equal(final.requestedBackend, 'webgpu');
  assert.equal(final.fellBackAt, 1);
  assert.match(final.reason, /^forced: WebGPU: .+ -> SIMD128$/);
  const warnings = r.stderr.trim().split('\n').filter((l) => l.includes('warning'));
  assert.deepEqual(warnings, [`attnlab: warning: --backend webgpu fell back at step 1: ${final.reason}`]);
  // The text output says it too.
  const text = spawnSync(process.execPath, [CLI, 'train', '--task', 'copy', '--steps', '3', '--backend', 'webgpu'],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent/no_icd.json' } });
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stderr, /^attnlab: warning: --backend webgpu fell back at step 1: forced: WebGPU: .+ -> SIMD128$/m);
});
