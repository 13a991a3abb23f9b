// The Induction lab's "predict, then run" question, asked under the timeline (the figure that answers
// it): which layer will hold the induction head, and why one layer cannot. The right answer is what the
// lab measures at its defaults (docs/induction.md: on seeds 0-9 the strongest induction head is in layer
// 1 and the strongest previous-token head in layer 0; a one-layer model's loss on the repeat never falls
// to half the rest's), which tests/node/induction_cli.test.mjs checks on a run.

export function inductionPrediction() {
  return {
    number: 'predict-induction',
    text: 'The model has two layers of attention. Which layer will hold the induction head, the head that looks from a '
      + 'token to the token after its earlier copy?',
    ask: {
      kind: 'choice', prompt: 'Where the induction head forms',
      choices: [
        { label: 'Layer 0, the first', why: 'A head of layer 0 sees only each token and its position. To find "the '
          + 'token after an earlier copy of mine", a key must carry what came before it, and only a head of an earlier '
          + 'layer can write that into the key: there is none before layer 0.' },
        { label: 'Layer 1, the second', right: true, why: 'A head of layer 0 first copies each token\'s predecessor '
          + 'into its position (a previous-token head). A head of layer 1 can then match its own token against that '
          + 'copied predecessor: the key that matches is the token after the earlier copy, and its value is the token '
          + 'to predict. Two heads, one after the other.' },
        { label: 'Either: it depends on the seed', why: 'The seed changes which head of a layer does it, not the '
          + 'layer: the circuit needs a head that reads what an earlier head wrote, so the induction head is always '
          + 'above a previous-token head.' },
      ],
    },
    answer: 'Press Play and watch the timeline: a previous-token score of layer 0 climbs, then, suddenly, an induction '
      + 'score of layer 1, and the loss on the repeat drops at the same time. One layer is not enough: train a '
      + 'one-layer model beside it below and its loss on the repeat falls a little (its tokens are ones seen before) '
      + 'but never to half the rest\'s.',
  };
}
