// Which query heads share each key/value head under grouped-query attention: the model grid draws the
// groups and the Writing lab's text names them, on the page and in the CLI's section text alike.

/**
 * The query heads that share each key/value head: [{kv, heads: [h, ...]}], or [] when each head has its
 * own (kvHeads absent or H). H must be a multiple of kvHeads (the decoder's config reader checks it).
 * Query head h reads key/value head floor(h / (H / kvHeads)), as PyTorch's repeat_kv lays them out.
 */
export function kvGroups(heads, kvHeads) {
  if (!Number.isInteger(kvHeads) || kvHeads < 1 || kvHeads >= heads) return [];
  if (heads % kvHeads) throw new Error(`model grid: ${heads} query heads cannot share ${kvHeads} `
    + 'key/value heads evenly');
  const g = heads / kvHeads;
  return Array.from({ length: kvHeads }, (_, kv) => ({ kv, heads: Array.from({ length: g }, (_, i) => kv * g + i) }));
}
