// The One query lab's "predict, then run" question (issue 39, item 3), asked under Play (the lab names no
// predictIn, so the transport panel asks it, under its buttons and progress: web/ui/panels/transport.js):
// which digits the learned query will attend to. The numbers: `attnlab train --lab count --json` at the lab's
// defaults (seed 2, lr 1e-4, 5,001 steps) gives massOn24 0.52 against a uniform level of 0.20, and
// accuracy 1.0; docs/count.md's hand-built solution solves it with uniform attention.

export function countPrediction() {
  return {
    number: 'predict-count',
    text: 'Which digits will the learned query attend to once trained?',
    ask: {
      kind: 'choice', prompt: 'The query\'s attention after training',
      choices: [
        { label: 'the 2s and 4s', right: true, why: 'They are the only digits that change the answer, so the loss '
          + 'rewards scores that lift them: at the lab\'s settings the 2s and 4s end with 0.52 of the weight, against '
          + '0.20 if it were spread evenly.' },
        { label: 'the 2s only', why: 'The answer compares two counts: a 4 matters as much as a 2 (with the opposite '
          + 'sign in its value), so a query that ignored the 4s could not tell 3 twos and 5 fours from 3 '
          + 'twos and 1 four.' },
        { label: 'all digits equally', why: 'Even attention can work (Solve it by hand does it, with values +1 for a 2 '
          + 'and -1 for a 4), but training does not stop there: lifting the 2s and 4s makes their values count more, '
          + 'and the run ends with about half the weight on them.' },
      ],
    },
    answer: 'The query decides where to look, the values decide what each digit is worth. Press Play and watch the '
      + 'outlined 2s and 4s grow brighter, then try "Solve it by hand": attention on the 2s and 4s helps, but the '
      + 'values are what make the answer right. (The run that gets stuck, seed 15, looks at an 8 instead.)',
  };
}
