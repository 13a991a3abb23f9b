// What the Induction lab's export holds beside the weights (docs/induction.md): TransformerLens's
// HookedTransformerConfig of the model, and the metadata a file needs to be opened again (the task, its
// text, the steps and the seed). The Weights panel's Export, `attnlab train --save` and the Circuits
// section (which opens the model it trained as a decoder) all write it from here.

/** The HookedTransformerConfig fields of a config, as the export's metadata holds them (JSON). */
export function hookedTransformerConfig(c) {
  return {
    model_name: 'attention-lab-induction', n_layers: c.layers, d_model: c.dModel, n_ctx: c.context, d_head: c.dHead,
    n_heads: c.heads, d_vocab: c.vocabSize ?? c.vocab, d_mlp: c.mlp ? 4 * c.dModel : null,
    act_fn: c.mlp ? 'gelu' : null, attn_only: !c.mlp, normalization_type: c.layerNorm ? 'LN' : null,
    positional_embedding_type: 'standard', seed: c.seed,
  };
}

/** The export's safetensors metadata (strings): the lab, the task and its text, the steps, the seed, the config. */
export function weightsMetadata(config, step) {
  return { lab: 'induction', task: config.task, steps: step, seed: config.seed,
    hooked_transformer_config: JSON.stringify(hookedTransformerConfig(config)),
    ...(config.task === 'text' ? { text: config.text } : {}) };
}
