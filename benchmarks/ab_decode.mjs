#!/usr/bin/env node
// Two builds of Attention Lab side by side on the decoders' hot loops (issue 36: the decoder built from a
// spec, the one writer, Marian's steps through the staged protocol and the shared key/value cache): each
// round runs A then B, or B then A (alternating, one fresh Node process each, SIMD128 build, 1 thread),
//   gpt2      a GPT-2 in gpt2-small's shape (benchmarks/gpt2_torch.py's files in --gpt2-dir): the
//             prompt (--prompt tokens), then --new greedy tokens through beginWriting + nextToken; per
//             round the median of the steps' times (ms a token),
//   llama     a Llama-family decoder (benchmarks/llama_torch.py's files in --llama-dir: SmolLM2-135M's
//             shape, BF16), the same steps as gpt2, the kind from its config.json
//   marian    Helsinki-NLP/opus-mt-en-fr's shape (benchmarks/marian_torch.py's files in --marian-dir):
//             encode + generate with --beams beams to --max-length; per round the median of --repeats,
// and prints each side's median over the rounds, and whether both wrote the same ids (they must).
// A and B are repository roots, each with its public/build: e.g. a `git archive` of the old commit
// with its own build, against this checkout.
// Usage: node benchmarks/ab_decode.mjs --a ROOT_A --b ROOT_B [--rounds 5] [--which gpt2,marian,llama]
//          [--gpt2-dir /tmp/attnlab-gpt2] [--prompt 32] [--new 32] [--marian-dir /tmp/attnlab-opus-mt]
//          [--beams 4] [--max-length 16] [--repeats 3] [--llama-dir /tmp/attnlab-smollm2-135m]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCRIPT = fileURLToPath(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const LLAMA_DIR = arg('--llama-dir', '/tmp/attnlab-smollm2-135m');
const GPT2_DIR = arg('--gpt2-dir', '/tmp/attnlab-gpt2'), MARIAN_DIR = arg('--marian-dir', '/tmp/attnlab-opus-mt');
const PROMPT = Number(arg('--prompt', 32)), NEW = Number(arg('--new', 32));
const BEAMS = Number(arg('--beams', 4)), MAX_LENGTH = Number(arg('--max-length', 16)), REPEATS = Number(arg('--repeats', 3));

async function child(root, which) {
  const { loadAttnLabNode } = await import(pathToFileURL(path.join(root, 'web', 'node_loader.mjs')).href);
  const { diskSource } = await import(pathToFileURL(path.join(root, 'web', 'cli', 'file_source.mjs')).href);
  const module = await loadAttnLabNode({ build: 'simd' });
  if (which === 'gpt2' || which === 'llama') {
    const dir = which === 'gpt2' ? GPT2_DIR : LLAMA_DIR;
    const config = readFileSync(path.join(dir, 'config.json'), 'utf8');
    const weights = await diskSource(path.join(dir, 'model.safetensors'));
    const gpt2 = await module.loadCheckpoint(JSON.parse(config).model_type, { config, size: weights.size, read: weights.read });
    const ids = JSON.parse(readFileSync(path.join(dir, 'ids.json'), 'utf8')).prompts[PROMPT];
    gpt2.beginWriting(ids, { temperature: 0, maxNewTokens: NEW, stopAtEos: false }, { backend: 'simd128' });
    const times = [], out = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < NEW; i++) {
      const s = performance.now();
      out.push(gpt2.nextToken().id);
      times.push(performance.now() - s);
    }
    const cpu = process.cpuUsage(cpu0);  // the process's CPU time a token: what a busy machine's waiting leaves out
    gpt2.delete();
    return { ms: median(times), cpu_ms: (cpu.user + cpu.system) / 1000 / NEW, ids: out };
  }
  const weights = await diskSource(path.join(MARIAN_DIR, 'model.safetensors'));
  const marian = await module.loadMarian({ config: readFileSync(path.join(MARIAN_DIR, 'config.json'), 'utf8'), size: weights.size, read: weights.read });
  const ids = Int32Array.from(JSON.parse(readFileSync(path.join(MARIAN_DIR, 'ids.json'), 'utf8')).input_ids);
  const times = [];
  let out;
  for (let i = 0; i < REPEATS + 1; i++) {
    const s = performance.now();
    marian.encode(ids, { backend: 'simd128' });
    out = marian.generate({ beams: BEAMS, maxLength: MAX_LENGTH, backend: 'simd128' });
    if (i > 0) times.push(performance.now() - s);  // the first warms up
  }
  marian.delete();
  return { ms: median(times), ids: Array.from(out.ids) };
}

if (process.argv.includes('--child')) {
  const result = await child(arg('--root'), arg('--child'));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const sides = { A: path.resolve(arg('--a')), B: path.resolve(arg('--b')) };
const rounds = Number(arg('--rounds', 5));
const pass = process.argv.slice(2);  // the sizes and folders, for the children (their --child and --root come first)
for (const which of arg('--which', 'gpt2,marian').split(',')) {
  const ms = { A: [], B: [] }, cpu = { A: [], B: [] }, ids = {};
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 ? ['B', 'A'] : ['A', 'B']) {
      const run = spawnSync(process.execPath, [SCRIPT, '--child', which, '--root', sides[side], ...pass], { encoding: 'utf8', maxBuffer: 1 << 26 });
      if (run.status !== 0) throw new Error(`${which} ${side}: ${run.stderr.slice(-1500)}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop());
      ms[side].push(out.ms);
      if (out.cpu_ms !== undefined) cpu[side].push(out.cpu_ms);
      ids[side] = out.ids;
    }
  }
  const what = which !== 'marian' ? `${which === 'gpt2' ? 'GPT-2 small' : path.basename(LLAMA_DIR)} shape, greedy decode, ${PROMPT}-token prompt, ${NEW} tokens: ms a token` : `Marian opus-mt-en-fr shape, ${BEAMS} beams to max_length ${MAX_LENGTH}: ms a translation`;
  console.log(`${what} (median of ${rounds} alternating rounds)`);
  for (const side of ['A', 'B']) {
    console.log(`  ${side} ${sides[side]}: ${median(ms[side]).toFixed(2)}  rounds: ${ms[side].map((x) => x.toFixed(2)).join(' ')}`);
    if (cpu[side].length) console.log(`    CPU ms a token: ${median(cpu[side]).toFixed(2)}  rounds: ${cpu[side].map((x) => x.toFixed(2)).join(' ')}`);
  }
  console.log(`  same ids: ${JSON.stringify(ids.A) === JSON.stringify(ids.B)}`);
}
