// The Writing lab's "predict, then run" question (issue 39, item 3), asked in Head roles above its
// figures (the grid and the opened head would show the answer): which earlier token an induction head
// attends to on the repeated random sequence. The right answer is the lab's definition of the score
// (core/models/decoder_probes.h: induction = mean over t in the second copy of a[t, t-n+1]);
// tests/node/predictions.test.mjs checks the section's score against the head's attention at t-n+1.

export function writingPrediction() {
  return {
    number: 'predict-writing',
    text: 'Head roles runs the model on <|endoftext|>, n random tokens, then the same n again. Take a token of the '
      + 'second copy, at position p: which earlier position will an induction head look at?',
    ask: {
      kind: 'choice', prompt: 'Where an induction head looks from position p of the second copy',
      choices: [
        { label: 'p − 1, the token just before', why: 'That is a previous-token head (Score: previous token). An '
          + 'induction head builds on one, a layer below, but looks elsewhere.' },
        { label: 'p − n, the same token in the first copy', why: 'Close: p − n holds the same token. But to '
          + 'predict what comes next the head wants what came after it last time, one position to the right.' },
        { label: 'p − n + 1, the token after its first occurrence', right: true, why: 'The token at p first appeared '
          + 'at p − n, and what followed it there, at p − n + 1, is the next token of the pattern: the head copies '
          + 'it into the prediction. On the head\'s heatmap it is a diagonal stripe n − 1 columns left of the main '
          + 'one, in the second copy\'s rows.' },
        { label: '0, the first token', why: 'That is the sink (Score: first token): a head with nothing to do rests '
          + 'on <|endoftext|>.' },
      ],
    },
    answer: 'The induction score is the mean weight from each token of the second copy to p − n + 1. Choose Score: '
      + 'induction and click the brightest cell of the grid to open that head on the repeated sequence: in a trained '
      + 'model such as gpt2 the stripe stands out, and the line above the grid gives a loss on the second copy well '
      + 'below the first\'s. The induction experiment switches the top heads off: see how much of that gain goes with '
      + 'them. (A tiny random model has no such head: its stripe is not there.)',
  };
}
