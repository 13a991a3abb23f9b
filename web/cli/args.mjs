// Command-line flags for `attnlab`: a small declarative parser that names the bad flag.
export class UsageError extends Error {}

export const USAGE = `usage: attnlab train --task copy|reverse|pointer [options]
       attnlab train --lab lookup [--steps N] [--seed S] [--heads H] [--batch N] [--lr X] [--backend B] [--json]
       attnlab labs

Trains a lab's model with the same C++ trainer as the page: the Alignment lab (course notebook 01,
the default; --task picks copy, reverse or pointer) or the Lookup lab (notebook 02: attention over a
database of 100 real MNIST digits; defaults: 9370 steps, heads 1, batch 64, lr 0.0001).

options:
  --lab L           alignment | lookup (default alignment)
  --task T          alignment: copy | reverse | pointer           (required for alignment)
  --unique-keys     pointer: draw keys as a permutation (no duplicates)
  --steps N         training steps (default: copy 200, reverse 250, pointer 350)
  --seed S          seed, 0..4294967295 (default 0); a seed reproduces a run bit for bit
  --backend B       auto | webgpu | simd | scalar (default auto)
  --build B         auto | simd-threads | simd | scalar: which WASM module to load (default auto:
                    simd-threads, the Node build that runs a step's two shards on two cores)
  --lr X            Adam learning rate (default 0.003)
  --heads H         attention heads (default 4)
  --d-model E       model width (default 32)
  --batch N         batch size (default 128)
  --no-positional   ablation: drop the input-position embeddings
  --every N         progress every N steps (default 25)
  --json            JSON lines instead of text
  --png FILE        write the head-mean attention heatmap of the fixed sample as PNG (2x, as the page
                    exports it; drawn in headless Chromium, else the bare cells and colour bar)
  --svg FILE        the same figure as SVG (needs Chromium)
  --save FILE       save the trained weights as safetensors (PyTorch's state_dict names)
  --load FILE       start from saved weights (the lab's or the course notebook's, see docs/weights.md)
  -h, --help        this text
  --version         the module version`;

// Each lab and the flags it takes (the rest are the Alignment lab's own).
export const LABS = {
  alignment: { notebook: '01_attention_principle', title: 'Alignment: copy, reverse, pointer' },
  lookup: { notebook: '02_attention_basics_mnist_lookup', title: 'Lookup: attention as a database query over real MNIST digits',
    flags: ['--lab', '--steps', '--seed', '--heads', '--batch', '--lr', '--backend', '--build', '--every', '--json', '--save'] },
};

const FLAGS = {
  '--lab': { key: 'lab', type: 'choice', choices: Object.keys(LABS) },
  '--task': { key: 'task', type: 'choice', choices: ['copy', 'reverse', 'pointer'] },
  '--unique-keys': { key: 'uniqueKeys', type: 'bool' },
  '--steps': { key: 'steps', type: 'int', min: 1, max: 100000 },
  '--seed': { key: 'seed', type: 'int', min: 0, max: 4294967295 },
  '--backend': { key: 'backend', type: 'choice', choices: ['auto', 'webgpu', 'simd', 'scalar'] },
  '--build': { key: 'build', type: 'choice', choices: ['auto', 'simd-threads', 'simd', 'scalar'] },
  '--lr': { key: 'lr', type: 'number', min: 1e-6, max: 1 },
  '--heads': { key: 'heads', type: 'int', min: 1, max: 16 },
  '--d-model': { key: 'dModel', type: 'int', min: 1, max: 256 },
  '--batch': { key: 'batch', type: 'int', min: 1, max: 1024 },
  '--no-positional': { key: 'noPositional', type: 'bool' },
  '--every': { key: 'every', type: 'int', min: 1, max: 100000 },
  '--json': { key: 'json', type: 'bool' },
  '--png': { key: 'png', type: 'string' },
  '--svg': { key: 'svg', type: 'string' },
  '--save': { key: 'save', type: 'string' },
  '--load': { key: 'load', type: 'string' },
};

export function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) return { help: true };
  if (argv.includes('--version')) return { version: true };
  const [command, ...rest] = argv;
  if (command === 'labs' && rest.length === 0) return { labs: true };
  if (command !== 'train') throw new UsageError(command ? `unknown command '${command}'` : 'missing command');
  const out = { backend: 'auto', build: 'auto', seed: 0, every: 25, json: false };
  for (let i = 0; i < rest.length; i++) {
    const [name, inline] = rest[i].split(/=(.*)/s, 2);
    const spec = FLAGS[name];
    if (!spec) throw new UsageError(`unknown flag '${name}'`);
    if (spec.type === 'bool') {
      out[spec.key] = true;
      continue;
    }
    const raw = inline ?? rest[++i];
    if (raw === undefined || raw.startsWith('--')) throw new UsageError(`${name} needs a value`);
    if (spec.type === 'choice') {
      if (!spec.choices.includes(raw)) throw new UsageError(`${name} must be one of ${spec.choices.join(', ')}, got '${raw}'`);
      out[spec.key] = raw;
    } else if (spec.type === 'string') {
      out[spec.key] = raw;
    } else {
      const value = Number(raw);
      const ok = raw.trim() !== '' && Number.isFinite(value) && (spec.type !== 'int' || Number.isInteger(value));
      if (!ok || value < spec.min || value > spec.max) {
        const kind = spec.type === 'int' ? 'an integer' : 'a number';
        throw new UsageError(`${name} must be ${kind} in [${spec.min}, ${spec.max}], got '${raw}'`);
      }
      out[spec.key] = value;
    }
  }
  out.lab ??= 'alignment';
  const allowed = LABS[out.lab].flags;
  if (allowed) {
    const given = rest.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]);
    const foreign = given.find((flag) => !allowed.includes(flag));
    if (foreign) throw new UsageError(`${foreign} does not apply to --lab ${out.lab} (it takes ${allowed.join(' ')})`);
    return out;
  }
  if (!out.task) throw new UsageError('--task is required');
  if (out.uniqueKeys && out.task !== 'pointer') throw new UsageError('--unique-keys applies to --task pointer only');
  return out;
}
