// The Translation lab's "predict, then run" question (issue 39, item 3), asked under the translation's
// text and buttons, above the cross-attention heatmap: which source tokens a generated word's
// cross-attention can look at. True of every Marian: cross-attention masks no source token, so each
// generated token's row has a weight above 0 on every one, </s> included, summing to 1
// (tests/node/predictions.test.mjs checks it on the tiny Marian fixture).

export function translationPrediction() {
  return {
    number: 'predict-translation',
    text: 'When the model writes its first word, which source tokens can that word\'s cross-attention look at?',
    ask: {
      kind: 'choice', prompt: 'Where the first generated word\'s cross-attention can look',
      choices: [
        { label: 'only the first source token', why: 'Nothing ties a generated position to the source position of the '
          + 'same number: word order differs between languages, so the first word may translate the third.' },
        { label: 'every source token, </s> included', right: true, why: 'The encoder has read the whole source before '
          + 'the first word is written, and cross-attention masks none of it: each generated token\'s row has a weight '
          + 'on every source token, summing to 1. Where a row peaks is learned, not built in.' },
        { label: 'only the source tokens it has already translated', why: 'That would be a causal mask. The decoder\'s '
          + 'self-attention over its own words has one; its cross-attention to the source has none.' },
      ],
    },
    answer: 'Cross-attention takes its queries from the decoder (the word being chosen) and its keys and values from '
      + 'the encoder\'s output for the whole source. Press Next word: each new row of the heatmap below spreads over '
      + 'every source column; in a trained model it peaks on the words being translated, which need not come '
      + 'in the same order.',
  };
}
