// Which Alignment trainer config fits a state_dict of the notebook's CrossAttnSeqClassifier: the shapes
// give the vocabulary, width and lengths; the metadata (written by the lab, or by the notebook snippet
// in docs/weights.md) gives the task and the number of heads, which shapes cannot tell.
export function alignmentConfigFromWeights({ tensors, metadata }) {
  const shape = (name) => tensors[name]?.shape;
  const tok = shape('tok_emb.weight'), inPos = shape('in_pos_emb.weight'), outPos = shape('out_pos_emb.weight');
  if (!tok || !inPos || !outPos) {
    const missing = ['tok_emb.weight', 'in_pos_emb.weight', 'out_pos_emb.weight'].filter((n) => !tensors[n]);
    throw new Error(`not the notebook's CrossAttnSeqClassifier: missing ${missing.join(', ')}`);
  }
  const [vocab, dModel] = tok;
  const heads = Number(metadata.heads ?? 4);
  const pointer = outPos[0] === 1;
  const task = metadata.task ?? (pointer ? 'pointer' : 'copy');
  if (!['copy', 'reverse', 'pointer'].includes(task)) throw new Error(`unknown task '${task}' in the file's metadata`);
  if (task === 'pointer') {
    const range = (vocab - 1) / 2;
    if (!Number.isInteger(range)) throw new Error(`a pointer model needs vocab = 1 + K + K, got ${vocab}`);
    return { task, dModel, heads, pairs: inPos[0], keyRange: range, valueRange: range,
      uniqueKeys: metadata.uniqueKeys === 'true' };
  }
  return { task, dModel, heads, vocab, length: inPos[0] };
}
