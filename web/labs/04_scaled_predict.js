// The Scaled dot-product lab's "predict, then run" question (issue 39, item 3), asked under section 1's
// figures (the first screen has no room above them on a phone): what the softmax does as d_k grows
// without the 1/√d_k scale. The reasons are the lab's own numbers: tests/node/scaled.test.mjs ('the
// sqrt(d_k) demonstration') checks that the unscaled mean entropy falls with d_k at the lab's defaults
// and the scaled one stays; at draw 0, d_k = 256 unscaled, each row's largest weight is 0.89 to 1.00.

export function scaledPrediction() {
  return {
    number: 'predict-scaled',
    text: 'Untick "Divide by √d_k", then slide d_k from 4 up to 256: what will each row of the softmax become?',
    ask: {
      kind: 'choice', prompt: 'The softmax rows without the scale, as d_k grows',
      choices: [
        { label: 'sharper: one key takes almost all the weight', right: true, why: 'Each score q·k adds up d_k '
          + 'products of unit-variance numbers, so its variance is d_k: at 256 the scores are 16 times as spread out '
          + 'as at 1, and a softmax over widely spread scores gives nearly everything to the largest. The entropy '
          + 'curve\'s dashed line falls towards 0 (one-hot).' },
        { label: 'flatter: closer to an even 1/5 for every key', why: 'Flatter would need the scores to shrink towards '
          + 'each other. Without the scale they grow: q·k sums d_k products, so its spread grows like √d_k.' },
        { label: 'the same as at d_k = 4', why: 'That is what the scale buys: divided by √d_k the scores keep '
          + 'variance 1 whatever d_k is, and the solid curve stays flat. Without it nothing holds the scores back.' },
      ],
    },
    answer: 'The softmax only sees how far apart the scores are, and unscaled q·k has variance d_k. Large d_k: the '
      + 'largest score wins almost everything, the softmax saturates, and its gradient (which the other keys would '
      + 'need to learn) all but vanishes. Dividing by √d_k gives the scores variance 1 back. Untick the scale, slide '
      + 'd_k, and watch the softmax stage and the entropy below it.',
  };
}
