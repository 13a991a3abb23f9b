// Build `attention-test`: notebook 02_attention_basics_mnist_lookup's AttentionTest (one-layer MLP
// embedding, nn.MultiheadAttention with one head, retrieval by the weights over the database), with the
// weights of its state_dict below, on a fixed batch: 2 query images and a database of 5 images, 784
// pixels each in [0, 1) as MNIST's, the database repeated for each query as the notebook's
// image_database_batches. embed_dim 4 instead of the notebook's 32 keeps the weights short to write.
//   query      img_mlp(img): X_q                                  (2, 1, 4)
//   keys       img_mlp(image_database): X_k = X_v                 (2, 5, 4)
//   weights    the weights over the database (attn_output_weights) (2, 1, 5)
//   retrieval  torch.bmm(weights, image_database)                 (2, 1, 784)
import { pattern } from './exact_tensors.js';
import { linear, matmul, meanOverHeads, multiheadAttention } from './plain_math.js';

const B = 2, N = 5, P = 784, E = 4, H = 1;
const images = (count, mul) => pattern([count, P], { mul, mod: 256, scale: 256 });

export const attentionTestBuild = {
  name: 'attention-test',
  lab: 'lookup',
  notebook: '02_attention_basics_mnist_lookup',
  module: 'AttentionTest',
  title: 'AttentionTest (notebook 02)',
  input: {
    img: { ...images(B, 37), shape: [B, 1, P], python: `((torch.arange(${B * P}) * 37 % 256) / `
      + `256).reshape(${B}, 1, ${P})` },
    image_database: (() => {
      const one = images(N, 29);
      const data = new Float64Array(B * N * P);
      for (let b = 0; b < B; b++) data.set(one.data, b * N * P);
      return { shape: [B, N, P], data, python: `((torch.arange(${N * P}) * 29 % 256) / 256).reshape(${N}, `
        + `${P}).unsqueeze(0).expand(${B}, ${N}, ${P})` };
    })(),
  },
  stateDict: {
    'img_mlp.0.weight': pattern([E, P], { mul: 11, mod: 31, shift: 15, scale: 32 }),
    'img_mlp.0.bias': pattern([E], { mul: 3, mod: 7, shift: 3, scale: 8 }),
    'mha.in_proj_weight': pattern([3 * E, E], { mul: 5, mod: 11, shift: 5, scale: 2 }),
    'mha.in_proj_bias': pattern([3 * E], { mul: 7, mod: 9, shift: 4, scale: 16 }),
    'mha.out_proj.weight': pattern([E, E], { mul: 3, mod: 7, shift: 3, scale: 4 }),
    'mha.out_proj.bias': pattern([E], { mul: 2, mod: 5, shift: 2, scale: 8 }),
  },
  model: [`mha_model = AttentionTest(num_of_examples=${N}, embed_dim=${E}, num_heads=${H})`,
    'mha_model.load_state_dict(state_dict)',
    'mha_model.eval()',
    'output, attn_output_weights = mha_model(img, image_database)'],
  notes: ['The retrieval has 1,568 numbers: print() abbreviates it ("..."), so save it with torch.save(output, '
    + '"retrieval.pt") or print after torch.set_printoptions(profile="full").'],
  hint: 'Did your model load this state_dict and get this img and image_database?',
  steps: [
    { name: 'query', code: 'self.img_mlp(img)', shape: [B, 1, E] },
    { name: 'keys', code: 'self.img_mlp(image_database)', shape: [B, N, E] },
    { name: 'weights', code: 'self.mha(X_q, X_k, X_v)[1]', shape: [B, 1, N] },
    { name: 'retrieval', code: 'torch.bmm(attn_output_weights, image_database)', shape: [B, 1, P] },
  ],
  compute(x, p) {
    const query = linear(x.img.data, B, P, p['img_mlp.0.weight'], p['img_mlp.0.bias'], E);
    const keys = linear(x.image_database.data, B * N, P, p['img_mlp.0.weight'], p['img_mlp.0.bias'], E);
    const mha = multiheadAttention(p, 'mha.', query, keys, keys, B, 1, N, E, H);
    const weights = meanOverHeads(mha.weights, B, H, 1, N);
    return { query, keys, weights, retrieval: matmul(weights, x.image_database.data, B, 1, N, P) };
  },
};
