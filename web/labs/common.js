// What most labs declare the same way: the Run group's properties (backend, speed, colour scale) and
// the defaults of a declaration (defineLab), so a lab file holds only what is its own.

export const backendProperty = (help = 'Where the attention kernel runs. A backend that is not available falls back, '
  + 'and the badge says why.') => ({
  name: 'backend', type: 'choice', default: 'auto', effect: 'reset', group: 'Run', label: 'Backend', help,
  choices: [{ value: 'auto', label: 'auto (best available)' }, { value: 'webgpu', label: 'WebGPU' },
    { value: 'simd', label: 'SIMD128 (WASM)' }, { value: 'scalar', label: 'scalar (WASM)' }],
});

/**
 * The training pace. Its default is a lab's own (issue 29): slow enough that a first run lets the
 * pattern form before the student's eyes (about 10 s for the default step count), while 'max' (as
 * fast as this computer goes) stays one click away. choices: the speeds offered, 'max' last.
 */
export const speedProperty = ({ choices, initial, help = 'Steps per second; slow speeds let you watch the pattern '
  + 'form, max trains as fast as this computer goes.' }) => ({
  name: 'speed', type: 'choice', default: initial, effect: 'live', group: 'Run', label: 'Speed (steps/s)', page: true,
  help, choices: choices.map((s) => ({ value: s, label: s })),
});

export const paletteProperty = (palettes = ['viridis', 'cividis', 'magma', 'greys'], help = 'Perceptually uniform '
  + 'colour scales for the heatmaps, 0 (dark) to 1 (bright).') => ({
  name: 'palette', type: 'choice', default: 'viridis', effect: 'view', group: 'Run', label: 'Colour scale', page: true,
  help, choices: palettes.map((p) => ({ value: p, label: p === 'greys' ? 'greys (print)' : p })),
});

/**
 * Where an attention heatmap's colours start (issue 45, item 2): at 0, so dark means no attention and a
 * weight reads the same in every map; or at the smallest weight shown, as seaborn's heatmap and
 * matplotlib's imshow do by default (the notebooks' figures). A drawing setting: a change redraws the
 * figures without computing them again (web/ui/panels/section.js).
 */
export const colourRangeProperty = () => ({
  name: 'colourRange', type: 'choice', default: 'zero', effect: 'view', group: 'Run', label: 'Colour range',
  page: true, choices: [{ value: 'zero', label: '0 to the largest' }, { value: 'data', label: 'smallest to largest (seaborn)' }],
  help: 'Where the colours of the attention maps start. "0 to the largest": dark is no attention at all, the '
    + 'brightest cell is the largest weight shown. "Smallest to largest": the colours stretch between the smallest '
    + 'and the largest weight, as the notebooks\' seaborn heatmaps and imshow do: small differences stand out, but '
    + 'dark is then the smallest weight, not zero.',
});

/** A heatmap's colour range for its values and the colourRange setting: [0, largest] or [smallest, largest]. */
export function heatmapRange(values, mode = 'zero') {
  let least = Infinity, most = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    least = Math.min(least, v);
    most = Math.max(most, v);
  }
  if (!(most > -Infinity)) return [0, 1];
  if (mode === 'data') return most > least ? [least, most] : [least, least + 1e-6];
  return [0, Math.max(1e-6, most)];
}

/** The speed property's value -> steps per second for the worker (0: as fast as it goes). */
export const speedOf = (v) => (v.speed === 'max' ? 0 : Number(v.speed));

/**
 * Where a lab stands in the course, in words: the notebook it follows (lab.notebook), or, for a lab past
 * the notebooks (notebook null), what it adds (lab.beyond). The home page's cards say it.
 */
export const courseLine = (lab) => (lab.notebook ? `Follows course notebook ${lab.notebook}` : `Beyond the course notebooks: ${lab.beyond}`);

/** A lab declaration with the usual defaults filled in: no cross checks, a change implies nothing. */
export const defineLab = (lab) => ({ checks: [], afterChange: (name, values) => values, speedOf, ...lab });

/**
 * The Training group most labs have: batch, learning rate (live), steps (live), seed. Each takes the
 * lab's default and help text: {batch: {default, max, help}, lr: {default, help}, steps: {default, help}, seed: {default?, help}}.
 */
export const trainingProperties = ({ batch, lr, steps, seed }) => [
  { name: 'batch', type: 'int', default: batch.default, min: 1, max: batch.max, effect: 'reset', group: 'Training',
    label: 'Batch', help: batch.help },
  { name: 'lr', type: 'number', default: lr.default, min: 0, minExclusive: true, max: 1, step: lr.step ?? lr.default,
    effect: 'live', group: 'Training', label: 'Learning rate', help: `${lr.help}; can change while training runs.` },
  { name: 'steps', type: 'int', default: steps.default, min: 1, max: 100000, effect: 'live', group: 'Training',
    label: 'Steps', help: steps.help },
  { name: 'seed', type: 'int', default: seed.default ?? 0, min: 0, max: 4294967295, effect: 'reset', group: 'Training',
    label: 'Seed', help: seed.help },
];

/**
 * A headless command's own options (not settings of the page), declared as properties so that
 * web/cli/flags.mjs makes their flags, checks and --help as it does the lab's: the checkpoint folder,
 * JSON output, and the figure files.
 */
export const commandOptions = {
  model: (what) => ({ name: 'model', type: 'path', meta: 'DIR|ID', required: true,
    help: `The checkpoint's folder (${what}), or its Hugging Face Hub id (ORG/NAME, @REVISION optional): kept in the `
      + 'Hugging Face cache, so it opens with no network afterwards and a model Python downloaded opens too '
      + '(HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE; docs/cli.md).' }),
  json: (what = 'One JSON record on stdout instead of text (docs/cli.md has its fields).') => ({ name: 'json',
    type: 'bool', default: false, help: what }),
  png: (what) => ({ name: 'png', type: 'path', help: `Write ${what} as PNG at 2x, as the page's export (drawn in `
    + 'headless Chromium; without one, the bare cells and colour bar).' }),
  svg: (what) => ({ name: 'svg', type: 'path', help: `Write ${what} as SVG (needs Chromium).` }),
};
