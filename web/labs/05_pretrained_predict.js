// The Pretrained lab's "predict, then run" question (issue 39, item 3), asked under the model view
// (before a checkpoint is open, under the Open panel): whether BERT's queries see the words after them.
// True of every BERT: its encoder masks nothing but padding, so every softmax weight of a sentence's
// query over its keys is above 0 (tests/node/predictions.test.mjs checks it on the tiny BERT fixture).

export function pretrainedPrediction() {
  return {
    number: 'predict-pretrained',
    // Asked before and after a model is open (issue 45: "Before you open it" stood there after opening).
    text: 'Predict before you look at the model view: can BERT\'s query at a word put weight on the words after it?',
    ask: {
      kind: 'choice', prompt: 'Where a BERT query can look',
      choices: [
        { label: 'no: only on itself and the words before it', why: 'That is a causal mask, which a model that writes '
          + 'left to right needs (the Writing lab\'s heatmaps are triangles). BERT reads the whole sentence at once: '
          + 'nothing is masked but padding.' },
        { label: 'yes: on every token, before and after it', right: true, why: 'BERT\'s encoder has no causal mask: '
          + 'every query is scored against every key, and the softmax gives each a weight above 0. That is what lets '
          + 'it fill in [MASK] from the words on both sides.' },
        { label: 'only on itself', why: 'A head may put most of its weight on its own token, but the softmax runs over '
          + 'every key of the sentence: none gets exactly 0.' },
      ],
    },
    answer: 'BERT is an encoder: it reads the sentence in both directions at once. Open a checkpoint and look at the '
      + 'model view: each thumbnail is a full square, with weight above the diagonal (later words) as well as below. '
      + 'Then put [MASK] in the middle of the sentence and change a word after it: the guesses change too.',
  };
}
