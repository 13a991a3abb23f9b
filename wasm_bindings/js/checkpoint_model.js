// What every model read from a checkpoint has (bert_model.js, marian_model.js, decoder_model.js): the
// raw object it owns, its summary and config as the C++ loader reported them, and the heads switched off.
import { AttnLabError, check } from './checks.js';
import { Owned } from './owned.js';

export class CheckpointModel extends Owned {
  /** raw: a loaded raw model (checkpoint_loader.js); name: what an error calls it ('BERT', 'Marian', GPT-2's title). */
  constructor(raw, name) {
    super(raw, `${name} model`);
    this.summary = JSON.parse(raw._summary());
    this.config = this.summary.config;
    this.ablated = [];
  }

  /**
   * Heads switched off in every later pass (core/layers/head_ablation.h: their output zeroed before the
   * output projection, as TransformerLens zeroes hook_z): [{layer, head}] numbered from 0, [] for none.
   * The heads are those its lab shows: GPT-2's and BERT's self-attention, Marian's decoder
   * cross-attention. A refused list (out of range, given twice) throws and leaves the one before.
   */
  ablateHeads(heads) {
    if (!Array.isArray(heads)) throw new AttnLabError('ablateHeads() takes an array of {layer, head}');
    check(this.raw._ablate_heads(heads.flatMap((h) => [h?.layer, h?.head])));
    this.ablated = heads.map(({ layer, head }) => ({ layer, head }));
  }
}
