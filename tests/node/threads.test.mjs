// The Node threads build (public/build/node/attnlab-simd-threads.*): a training step's two shards run
// on two cores, and a run is the same bits as the single-threaded SIMD128 build's, whose shards run
// one after the other. It must also let Node exit, and survive bad input like the other builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { lab } from './support.mjs';

function run(m, config, steps) {
  const trainer = new m.AlignmentTrainer(config);
  const { losses, accuracies } = trainer.train(steps, { backend: 'simd128' });
  const parameters = trainer.parameters();
  const evaluation = trainer.evaluate(256, { backend: 'simd128' });
  trainer.delete();
  return { losses: [...losses], accuracies: [...accuracies], parameters, accuracy: evaluation.accuracy };
}

for (const config of [{ task: 'copy', seed: 2 }, { task: 'pointer', seed: 9 }, { task: 'reverse', seed: 4, batch: 37 }]) {
  test(`threads build: ${JSON.stringify(config)} trains to the same bits as the SIMD128 build`, async () => {
    const threads = await lab('simd-threads');
    assert.equal(threads.build, 'simd-threads');
    const a = run(threads, config, 25);
    const b = run(await lab('simd'), config, 25);
    assert.deepEqual(a.losses, b.losses);
    assert.deepEqual(a.accuracies, b.accuracies);
    assert.equal(a.accuracy, b.accuracy);
    for (const [name, values] of Object.entries(b.parameters)) {
      assert.deepEqual([...a.parameters[name]], [...values], `parameter ${name}`);
    }
    assert.ok(a.losses[24] < a.losses[0], 'the loss went down');
  });
}

test('threads build: a script that trains with it exits on its own', () => {
  const script = `
    import { loadAttnLabNode } from ${JSON.stringify(path.join(REPO_ROOT, 'web', 'node_loader.mjs'))};
    const lab = await loadAttnLabNode({ build: 'auto' });
    const t = new lab.AlignmentTrainer({ task: 'copy' });
    t.train(3, { backend: 'simd128' });
    console.log(lab.build);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.error, undefined, `did not exit within 30 s: ${r.error}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'simd-threads', 'auto picks the threads build under Node');
});

test('threads build: bad input gets a clear error and the trainer keeps its state', async () => {
  const m = await lab('simd-threads');
  const trainer = new m.AlignmentTrainer({ task: 'copy', seed: 1 });
  trainer.train(2, { backend: 'simd128' });
  assert.throws(() => trainer.train(0), /steps must be/);
  assert.throws(() => new m.AlignmentTrainer({ task: 'copy', heads: 5 }), /heads \(5\)|divisible/);
  assert.equal(trainer.stepsDone, 2);
  const { losses } = trainer.train(1, { backend: 'simd128' });
  assert.ok(Number.isFinite(losses[0]));
  assert.equal(trainer.stepsDone, 3);
  trainer.delete();
});

test('threads build: the worker thread can be turned off (the same bits) and asks for a valid count', async () => {
  const m = await lab('simd-threads');
  const cores = (await import('node:os')).cpus().length;
  // One worker per core beyond the caller's, 1 to 7 (core/shard_runner.h: default_worker_threads).
  const available = Math.min(7, Math.max(1, cores - 1));
  assert.equal(m.workerThreads.available, available);
  assert.equal(m.workerThreads.active, cores > 1 ? available : 0, 'all on by default when there is a second core');
  const config = { task: 'copy', seed: 6 };
  const on = run(m, config, 10);
  m.setWorkerThreads(0);
  try {
    assert.equal(m.workerThreads.active, 0);
    assert.deepEqual(run(m, config, 10).losses, on.losses);
  } finally {
    m.setWorkerThreads(cores > 1 ? available : 0);
  }
  assert.throws(() => m.setWorkerThreads(available + 1), new RegExp(`worker threads must be an integer in \\[0, ${available}\\] in this build, got ${available + 1}`));
  assert.throws(() => m.setWorkerThreads(0.5), /worker threads must be an integer/);
  const simd = await lab('simd');
  assert.deepEqual(simd.workerThreads, { available: 0, active: 0 }, 'the browser builds have no threads');
});

// Issue 35, item 8: about once in a hundred commands on a busy machine, `attnlab` ended with a pthread's
// "RuntimeError: memory access out of bounds" rethrown on the main thread. Emscripten's
// terminateAllThreads() freed each live thread's stack and zeroed its pthread struct before it stopped
// the thread, and an idle pthread wakes every 100 ms and reads both. The teardown now stops the threads
// and frees nothing: checked here on the thread's struct itself, which the old teardown zeroed.
test('threads build: ending the threads leaves the memory a live thread reads as it was, and the script exits on its own', () => {
  const script = `
    import { loadAttnLabNode } from ${JSON.stringify(path.join(REPO_ROOT, 'web', 'node_loader.mjs'))};
    const lab = await loadAttnLabNode({ build: 'simd-threads' });
    const m = lab._module;
    const t = new lab.AlignmentTrainer({ task: 'copy', seed: 1 });
    t.train(3, { backend: 'simd128' });
    const structs = Object.values(m.PThread.pthreads).map((p) => p.threadInfoStruct);
    const bytes = () => structs.map((s) => Array.from(new Uint8Array(m.wasmMemory.buffer, s, 64)));
    const before = bytes();
    lab.endThreads();
    const after = bytes();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the threads' 100 ms wake-ups, had they lived on
    console.log(JSON.stringify({ threads: structs.length, before, after }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.error, undefined, `did not exit within 30 s: ${r.error}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'nothing from a thread on stderr');
  const { threads, before, after } = JSON.parse(r.stdout);
  assert.ok(threads >= 1, 'the training started a pthread');
  assert.ok(before.every((b) => b.some((x) => x !== 0)), 'the structs held data');
  // The old teardown zeroed each struct whole. A live thread may still write its own fields between the
  // two reads on a busy machine (one byte went 0 -> 2 once), so what is compared is what the old teardown
  // wiped and a waking thread reads first: the struct's self pointer (its first word), and that no
  // struct was zeroed.
  const selfPointer = (b) => b.slice(0, 4);
  assert.deepEqual(after.map(selfPointer), before.map(selfPointer), 'the teardown left each thread its self pointer');
  assert.ok(after.every((b) => b.some((x) => x !== 0)), 'the teardown zeroed no thread\'s struct');
});
