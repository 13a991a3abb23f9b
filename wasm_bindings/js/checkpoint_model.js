// What every model read from a checkpoint has (bert_model.js, marian_model.js, decoder_model.js): the
// raw object it owns, and its summary and config as the C++ loader reported them. Heads switched off are
// an argument of each pass (`heads`: [{layer, head}]), never state on the model, so no pass (and no lab
// section) inherits another's (core/models/checkpoint_model.h).
import { AttnLabError } from './checks.js';
import { Owned } from './owned.js';

/** A pass's heads switched off, [{layer, head}] -> [layer, head, ...] for the binding (undefined: none). */
export function pairsOf(heads) {
  if (heads === undefined || heads === null) return null;
  if (!Array.isArray(heads)) throw new AttnLabError('heads must be an array of {layer, head}');
  return heads.flatMap((h) => [h?.layer, h?.head]);
}

export class CheckpointModel extends Owned {
  /** raw: a loaded raw model (checkpoint_loader.js); name: what an error calls it ('BERT', 'Marian', GPT-2's title). */
  constructor(raw, name) {
    super(raw, `${name} model`);
    this.summary = JSON.parse(raw._summary());
    this.config = this.summary.config;
  }

  /**
   * The heads a pass can switch off, {layers, heads} numbered from 0, as the core declares them
   * (CheckpointModel::ablation_layers/heads): a decoder's and BERT's self-attention, Marian's decoder
   * cross-attention.
   */
  get headGrid() { return this.raw._head_grid(); }
}
