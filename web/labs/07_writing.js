// Lab 07, "Writing" (issue 26): a decoder the user opens (GPT-2, Llama, Qwen 2: gpt2, SmolLM2, Qwen2.5, a
// fine-tune saved with save_pretrained) writes after a prompt, token by token, and the page shows the next-token
// distribution, the attention of every layer and head over the text so far, what each head does (head
// roles) and what each layer would predict (logit lens). Nothing trains; nothing is uploaded. This file
// only declares; the sections are in 07_writing_sections.js. No DOM here.
import { backendProperty, colourRangeProperty, commandOptions, defineLab, paletteProperty } from './common.js';
import { SECTIONS } from './07_writing_sections.js';
import { labFiles, labReads, openCheckpoint } from '../models/registry.js';
import { ablateProperty } from './head_list.js';
import { writingPrediction } from './07_writing_predict.js';
import { rotaryOf } from './07_writing_rotary.js';
import { circuitsProperties } from './circuits.js';

const INTRO = 'A language model writing: GPT-2, or a Llama or Qwen 2 (SmolLM2, TinyLlama, Qwen2.5), reads your prompt '
  + 'and adds one token at a time. Each time it gives every possible next token a probability (the bars) and one is '
  + 'drawn; watch which earlier words each layer and head looked at, find the heads with a job (looking at the '
  + 'previous word, or repeating a pattern), and see the guess form layer by layer. Open it by its Hub id (gpt2 is '
  + 'filled in), downloaded once and then kept in this browser, or open the folder of a checkpoint you have: '
  + `${labReads('writing')}. Nothing you type or open is uploaded.`;

// What a decoder's folder holds: the registry's rows of this lab's kinds (web/models/registry.js).
const DECODER_FOLDER = labReads('writing');
// An Induction export's words in the summary: what it is and how its text is written.
const exportedAs = (opened) => (!opened.exportName ? '' : ' (the Induction lab\'s model, as TransformerLens lays it out; '
  + `its text is ${opened.tokenizer.answerSeparator === '' ? 'the characters it learned' : 'token ids separated by spaces'})`);
const view = (extra) => ({ effect: 'view', page: true, ...extra });
const cacheOption = { name: 'cache', type: 'path', help: 'Write the (clean) run\'s activations under TransformerLens\'s '
  + 'hook names: FILE.safetensors (float32, the masked scores -inf) or FILE.json (-inf as null); docs/circuits.md has '
  + 'the Python that reads it.' };

const properties = [
  view({ name: 'text', type: 'text', default: 'The quick brown fox', maxLength: 2000, label: 'Prompt', section: 'write',
    help: 'Split into tokens by the checkpoint\'s own tokenizer (tokenizer.json, or GPT-2\'s vocab.json and '
      + 'merges.txt); GPT-2\'s BPE joins a space to the word after it.' }),
  // Chat (issue 37, item 4): one question, written into the model's chat template (web/tokenizers/chat_template.js).
  view({ name: 'chat', type: 'text', default: '', maxLength: 2000, label: 'Chat question', section: 'write',
    help: 'For an instruct model whose tokenizer_config.json has a chat_template (SmolLM2-Instruct, Qwen2.5-Instruct): '
      + 'the question is put in the template as transformers does (@huggingface/jinja) and the model answers; the '
      + 'template\'s own tokens (<|im_start|>, …) begin the prompt and show in every attention view. Empty: the '
      + 'prompt is written as it is.',
    // A model without a template (a base model) has nothing to put the question in: the box is off, saying so.
    unavailable: (summary) => (summary.chat ? '' : 'No chat template in this model (its tokenizer_config.json has '
      + 'no chat_template): the prompt above is written as it is.') }),
  view({ name: 'maxNewTokens', type: 'int', default: 20, min: 1, max: 200, label: 'Max new tokens', section: 'write',
    help: 'Tokens to write at most; writing stops earlier at <|endoftext|> or at the model\'s last '
      + 'position (n_positions).' }),
  view({ name: 'temperature', type: 'number', default: 0.8, min: 0, max: 2, step: 0.05, slider: true,
    label: 'Temperature', section: 'write',
    help: 'The logits are divided by it before the softmax: below 1 sharper, above 1 flatter; 0 is greedy (always the '
      + 'likeliest). The bars follow it at once; the tokens already shown stay.' }),
  view({ name: 'topK', type: 'int', default: 50, min: 0, max: 1000000, label: 'Top-k', section: 'write',
    help: 'Draw among the k likeliest tokens only (0: all). 50 is what Hugging Face\'s generate() uses '
      + 'when it samples.' }),
  view({ name: 'topP', type: 'number', default: 1, min: 0.01, max: 1, step: 0.01, label: 'Top-p', section: 'write',
    help: 'Nucleus: draw within the smallest set of likeliest tokens whose probabilities add up to p (1: all).' }),
  view({ name: 'seed', type: 'int', default: 0, min: 0, max: 4294967295, label: 'Seed', section: 'write',
    help: 'The draws\' random numbers: the same prompt, settings and seed write the same text (as '
      + 'attnlab generate does).' }),
  view({ name: 'shown', type: 'int', default: 0, min: 0, max: 200, stepper: true, label: 'Tokens written',
    section: 'write', help: 'How many tokens are written after the prompt: Next token adds one, Play adds one every 0.6 s, From the '
      + 'start goes back to 0.' }),
  view({ name: 'layer', type: 'int', default: 0, min: 0, max: 63, stepper: true, maxOf: (opened) => opened.layers - 1,
    label: 'Layer', section: 'attention',
    help: 'Which layer the head view and the heatmap show (0 = the first).',
    pageHelp: 'Click a thumbnail of the model view to choose.' }),
  view({ name: 'head', type: 'int', default: 0, min: 0, max: 63, stepper: true, maxOf: (opened) => opened.heads - 1,
    label: 'Head', section: 'attention', help: 'Which head of the layer (0 = the first).' }),
  // Rotary positions (07_writing_rotary.js; a model with rope_theta only): one pair of a head at the
  // query's position m = n + distance and the key's n.
  view({ name: 'ropeDistance', type: 'int', default: 3, min: 0, max: 255, slider: true, label: 'Distance m − n',
    section: 'rotary', help: 'How many tokens the query comes after the key. The pair\'s score follows it at once; it is the only '
      + 'position the score sees.' }),
  view({ name: 'ropeKey', type: 'int', default: 2, min: 0, max: 1000000, stepper: true, label: 'Key position n',
    section: 'rotary', help: 'Where the key\'s token stands (from 0); the query is at n + the distance. Moving it turns both arrows and '
      + 'leaves the score as it is.' }),
  view({ name: 'ropePair', type: 'int', default: 0, min: 0, max: 511, stepper: true,
    maxOf: (opened) => (opened.rotary ? opened.rotary.D / 2 - 1 : 0), label: 'Pair', section: 'rotary',
    help: 'Which pair of a head\'s dimensions (i and i + D/2, as Hugging Face\'s Llama pairs them): pair 0 turns '
      + 'fastest (1 radian a token), the last slowest.' }),
  view({ name: 'role', type: 'choice', default: 'induction', label: 'Score', section: 'roles',
    help: 'Which score the grid shows: previous-token, first-token (the "attention sink"), induction, or '
      + 'duplicate-token (attention to the same token\'s earlier occurrence).',
    choices: [{ value: 'induction', label: 'induction' }, { value: 'previous', label: 'previous token' },
      { value: 'first', label: 'first token (sink)' }, { value: 'duplicate', label: 'duplicate token' }] }),
  view({ name: 'roleTokens', type: 'int', default: 0, min: 0, max: 1000, label: 'Random tokens', section: 'roles',
    help: 'Tokens in each copy of the random sequence (0: min(50, (n_positions − 1) / 2), as attnlab heads).' }),
  view({ name: 'roleSeed', type: 'int', default: 0, min: 0, max: 4294967295, label: 'Sequence seed', section: 'roles',
    help: 'The random tokens\' seed (the core\'s PCG32: attnlab heads --role-seed gives the same sequence).' }),
  view({ name: 'roleLayer', type: 'int', default: 0, min: 0, max: 63, stepper: true,
    maxOf: (opened) => opened.layers - 1, label: 'Layer', section: 'roles',
    help: 'The head opened on the repeated sequence: its layer. Click a cell of the grid to choose.' }),
  view({ name: 'roleHead', type: 'int', default: 0, min: 0, max: 63, stepper: true, maxOf: (opened) => opened.heads - 1,
    label: 'Head', section: 'roles', help: 'The head opened on the repeated sequence.' }),
  ablateProperty('the decoder\'s self-attention heads.', { section: 'ablate' }),
  // Circuits (issue 44, web/labs/circuits.js): the indirect-object template of Wang et al. (2022), the pair
  // ARENA and TransformerLens's demos start from; the corrupted twin names the other person second.
  // Opt-in: patching is a pass per cell (gpt2: about 12 s for the default grids), so the section runs when asked.
  view({ name: 'circuits', type: 'bool', default: false, label: 'Find the circuit', section: 'circuits',
    help: 'Run the attribution and the patching grids on the pair below (on gpt2 about 12 s for resid_pre and z, '
      + 'one thread); they run again when the pair, the answers or the grids change.' }),
  ...circuitsProperties({
    clean: { default: 'When Mary and John went to the store, John gave a drink to',
      help: 'The prompt whose answer you want to explain: the attribution splits its logit difference into the parts '
        + 'that wrote it, and patching copies its activations into the corrupted run.' },
    corrupt: { default: 'When Mary and John went to the store, Mary gave a drink to',
      help: 'The same prompt with the clue changed (here: who gave the drink), split into as many tokens as the '
        + 'clean one, so that each activation has the same place in both runs.' },
    answer: { default: 'Mary', help: 'The word the clean prompt should continue with: one token after a space (" Mary"). '
      + 'The metric is logit(answer) − logit(wrong) at the last position.' },
    wrong: { default: 'John', help: 'The word it should not: one token after a space.' },
    whatHelp: 'Each cell is one run of the corrupted prompt (from the patched layer and position on): on gpt2, '
      + 'resid_pre and z take seconds.',
  }),
  { ...backendProperty('The CPU kernel that runs the model (a decoder writes one token at a time through its key/value '
    + 'cache, on SIMD128 or scalar; WebGPU falls back to SIMD128).'), effect: 'view', page: true },
  paletteProperty(['viridis', 'cividis', 'magma', 'greys'], 'Colour scale of the attention maps and the head-role '
    + 'grid, dark to bright (where the attention maps\' dark starts: Colour range).'),
  colourRangeProperty(),
];

export const writingLab = defineLab({
  id: 'writing',
  title: 'Writing',
  subtitle: 'Lab 7 — a GPT-2, Llama or Qwen 2 from the Hub or your disk writes token by token; its heads at work',
  notebook: null, // past the course's notebooks (web/labs/common.js's courseLine says so)
  beyond: 'a decoder-only model (GPT-2, Llama, Qwen 2) writing token by token',
  summary: 'Open a GPT-2, Llama or Qwen 2 (gpt2, SmolLM2, TinyLlama, Qwen2.5, a fine-tune) by its Hub id or from your '
    + 'disk and watch it write: the next-token probabilities, temperature, top-k and top-p, the attention of every '
    + 'head as each token is written, head roles, the logit lens, and which heads carry an answer (direct logit '
    + 'attribution and activation patching).',
  thumbnail: {
    label: 'Causal self-attention while writing: each token looks back, never ahead',
    cells: () => [[1, 0, 0, 0, 0], [0.6, 0.4, 0, 0, 0], [0.3, 0.5, 0.2, 0, 0], [0.4, 0.1, 0.3, 0.2, 0],
      [0.2, 0.1, 0.1, 0.5, 0.1]],
  },
  properties,
  presets: [],
  intro: () => INTRO,
  open: {
    title: 'Open a checkpoint',
    hubExample: 'gpt2', // the Hub id the field starts with
    // The models this lab reads, each with its download (model.safetensors as the Hub serves it; docs/writing.md
    // says how each size was found: parameters x bytes per weight, GPT-2's with its stored attn.bias buffers).
    // In the page's unit (web/shared/megabytes.js: an MB is 2^20 bytes, a GB 2^30), as the download's
    // progress counts them; the Hub's own pages count in 10^6 (gpt2: "548 MB").
    hubSuggestions: [
      { id: 'gpt2', size: '523 MB' },
      { id: 'HuggingFaceTB/SmolLM2-135M-Instruct', size: '257 MB' },
      { id: 'Qwen/Qwen2.5-0.5B-Instruct', size: '942 MB' },
      { id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', size: '2.05 GB' },
      { id: 'distilgpt2', size: '336 MB' },
      { id: 'gpt2-medium', size: '1.42 GB' },
    ],
    text: 'Open a decoder (GPT-2, Llama, Qwen 2) by its Hub id, or choose the folder of one, or drop it (or its files) '
      + 'here; or choose the one .safetensors file the Induction lab exported (its text: token ids separated by spaces). '
      + `Read: ${DECODER_FOLDER} (tokenizer_config.json holds an instruct model's chat template; `
      + 'model.safetensors is read when the folder has both). Only the Hub id is sent anywhere (to the Hub, '
      + 'to download it).',
    // tokenizer_config.json and generation_config.json where there: BOS/EOS and the chat template (the Chat box).
    files: labFiles('writing'),
    async load(module, sources, { onProgress, name } = {}) {
      const { opened } = await openCheckpoint(module, sources, { lab: 'writing', onProgress, name });
      const c = opened.summary.config;
      const label = name || opened.exportName || 'checkpoint';
      // What the page shows of the model's spec (its config, not its kind's name): rotary positions (rope_theta)
      // and key/value heads shared by several query heads (num_key_value_heads < heads).
      const rotary = rotaryOf(c);
      const kvHeads = c.kvHeads ?? c.heads;
      const spec = [kvHeads < c.heads ? `${c.heads} query heads over ${kvHeads} key/value heads` : null,
        rotary ? `rotary positions (rope_theta ${rotary.theta})` : 'learned positions'].filter(Boolean).join(', ');
      const summary = {
        name: label, layers: c.layers, heads: c.heads, kvHeads, rotary, maxPositions: c.maxPositions,
        chat: !!opened.tokenizer.chatTemplate,
        text: `${label}${exportedAs(opened)}: ${c.layers} layers × ${c.heads} heads, d_model ${c.hiddenSize}, `
          + `vocabulary ${c.vocabSize}, `
          + `${c.maxPositions} positions, ${spec}, `
          + `${(opened.summary.parameters / 1e6).toFixed(opened.summary.parameters < 1e6 ? 3 : 1)} M weights read from `
          + `${opened.exportName ?? opened.summary.file}.`,
      };
      return { state: { ...opened, name: label, writing: null, roles: null, lens: null }, summary };
    },
    dispose(state) {
      state?.model?.delete();
    },
  },
  sections: SECTIONS,
  panels: ['open', 'section:write', 'section:attention', 'section:rotary', 'section:roles', 'section:lens',
    'section:ablate', 'section:circuits'],
  // The first screen (issue 29): the main figure (the next-token bars) and the main action (Play) in view
  // at 1280x800 and 390x844 (tests/browser/first_screen.test.mjs). Once a checkpoint is open, the open
  // panel steps down under the stage (lab_page.js).
  firstScreen: { panels: ['open', 'section:write'], figure: '[data-figure="next-bars"]', action: '#action-play' },
  // Predict, then run (issue 39): in Head roles, above its grid and the opened head, which would show the answer.
  predict: writingPrediction,
  predictIn: 'section:roles',
  predictAboveFigures: true,
  figureStem: () => 'writing',
  // Its headless side (web/cli/attnlab.mjs runs a lab's commands from this declaration alone): the
  // settings each takes are the page's own (same names, ranges and defaults: a run is sampled at
  // temperature 0.8 and top-k 50 unless told otherwise, and its seed reproduces it), then its own options.
  commands: [
    {
      name: 'generate', module: '../cli/writing_commands.mjs',
      about: 'a decoder (GPT-2, Llama, Qwen 2), from its folder or by its Hub id, writes after --text token by token '
        + '(the Writing lab headless): the prompt\'s tokens and ids, each written token with its probability and the '
        + 'likeliest alternatives; --json adds every layer\'s and head\'s attention over the prompt and each written '
        + 'token\'s attention row; --png the whole text\'s attention (the last layer, its heads averaged).',
      properties: ['text', 'chat', 'maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'ablate', 'backend'],
      options: [
        commandOptions.model(DECODER_FOLDER),
        commandOptions.json('One JSON record on stdout instead of text, written as it is computed (docs/cli.md '
          + 'has its fields).'),
        commandOptions.png('the attention heatmap of the whole text (the prompt\'s rows, then each written token\'s; '
          + 'the last layer, its heads averaged)'),
      ],
    },
    {
      name: 'attribute', module: '../cli/circuits_commands.mjs',
      about: 'direct logit attribution on a decoder (GPT-2, Llama, Qwen 2): logit(--answer) − logit(--wrong) after '
        + '--text split into what each head, each layer\'s attention bias, each MLP and the embeddings wrote into the '
        + 'residual stream (TransformerLens\'s decompose_resid and apply_ln_to_stack), the parts\' sum beside the '
        + 'model\'s own difference.',
      properties: ['text', 'answer', 'wrong', 'backend'],
      options: [commandOptions.model(DECODER_FOLDER), commandOptions.json(), cacheOption,
        commandOptions.png('the page\'s figures: FILE-heads.png, each head\'s direct share (layers × heads), and '
          + 'FILE-layers.png, each layer\'s attention and MLP beside the embeddings'),
        commandOptions.svg('the same figures (FILE-heads.svg, FILE-layers.svg)')],
    },
    {
      name: 'patch', module: '../cli/circuits_commands.mjs',
      about: 'activation patching on a decoder (GPT-2, Llama, Qwen 2): run --corrupt with one activation of the --clean '
        + 'run put in its place, for every layer and position (or head) of each site in --what; each cell (patched − '
        + 'corrupted) / (clean − corrupted) of logit(--answer) − logit(--wrong) (TransformerLens\'s patching.py).',
      properties: ['clean', 'corrupt', 'answer', 'wrong', 'what', 'backend'],
      options: [commandOptions.model(DECODER_FOLDER), commandOptions.json(), cacheOption,
        commandOptions.png('the page\'s grid of each site in --what (one site: FILE; several: FILE-SITE.png beside it, '
          + 'as FILE-z.png)'),
        commandOptions.svg('the same grids (FILE or FILE-SITE.svg)')],
    },
    {
      name: 'heads', module: '../cli/writing_commands.mjs',
      about: 'score every head of a decoder (GPT-2, Llama, Qwen 2; the Writing lab\'s head roles): previous-token, '
        + 'first-token (sink) and induction on [eos] + r + r, r random tokens, and the loss on each copy; layers and '
        + 'heads numbered from 0.',
      properties: ['roleTokens', 'roleSeed', 'backend'],
      options: [commandOptions.model(DECODER_FOLDER), commandOptions.json()],
    },
  ],
});
