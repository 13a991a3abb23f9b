// The Alignment lab's "predict, then run" question (issue 39, item 3), asked under Play (the lab names no
// predictIn, so the transport panel asks it, under its buttons and progress: web/ui/panels/transport.js):
// which picture the attention will make once trained, for the task (and the positional switch) the
// settings choose.
// Judged by web/ui/answer_check.js; the reasons are the lab's own (INTRO, the presets, the C++ tests:
// copy without positional embeddings stays below 30% accuracy, tests/core/test_alignment_trainer.cpp).

const PICTURE = 'which picture will the attention make once trained?';
const pictures = (right, whys) => ({
  kind: 'choice', prompt: 'The heatmap after training',
  choices: [
    { label: 'a diagonal', why: whys.diagonal },
    { label: 'an anti-diagonal', why: whys.anti },
    { label: 'a uniform grey', why: 'Grey means every output position takes the same average of all the inputs, and an '
      + 'average cannot say which single token to write. That is the picture at step 0, before any training.' },
  ].map((c, i) => ({ ...c, right: i === right })),
});

/** The question for these settings, or null. */
export function alignmentPrediction(values) {
  if (values.task === 'pointer') {
    return {
      number: 'predict-pointer',
      text: 'Where will the query look once trained?',
      ask: {
        kind: 'choice', prompt: 'The query\'s attention after training',
        choices: [
          { label: 'every pair equally', why: 'An equal mix of every pair\'s value is the same whatever the query '
            + 'asks, so it cannot name the one value asked for: the loss pushes the weight away from it.' },
          { label: 'the pair with the query\'s key', right: true, why: 'The score q·k is highest where the pair\'s '
            + 'key equals the query key, and softmax turns that into one sharp peak; where the key occurs twice '
            + '(unique keys off) the weight splits between them.' },
          { label: 'the first pair', why: 'The pairs are drawn in random order, so the matching pair can be anywhere; '
            + 'the first pair is right only when it happens to hold the key.' },
        ],
      },
      answer: 'Attention here is a lookup: compare the query with every key, put the weight where they match, and read '
        + 'the value there. Press Play and watch one bright cell form on the matching pair.',
    };
  }
  if (!values.positional) {
    return {
      number: `predict-${values.task}-no-positions`, // its first choice names the task's picture
      text: `Without positional embeddings, ${PICTURE}`,
      ask: {
        kind: 'choice', prompt: 'The heatmap after training',
        choices: [
          { label: `${values.task === 'reverse' ? 'an anti-diagonal' : 'a diagonal'}, as with them`,
            why: 'To find input position t, '
            + 'a key must say where it stands; without positional embeddings two equal tokens have equal keys '
            + 'wherever they are.' },
          { label: 'no diagonal', right: true, why: 'The keys hold only the tokens, so the '
            + 'attention can prefer some tokens to others but cannot find a position: the task fails (under 30% '
            + 'accuracy in the tests).' },
        ],
      },
      answer: 'Attention compares queries with keys and nothing else: whatever the keys do not carry, it cannot use. '
        + 'Press Play: the loss stays high; then turn Positional embeddings back on.',
    };
  }
  const reverse = values.task === 'reverse';
  return {
    number: `predict-${values.task}`,
    text: `${reverse ? 'Reverse' : 'Copy'}: ${PICTURE}`,
    ask: pictures(reverse ? 1 : 0, reverse ? {
      diagonal: 'A diagonal is copy\'s picture: output t reading input t. Reverse writes input token L-1-t at output '
        + 't, so it reads the mirrored position.',
      anti: 'Reverse writes input token L-1-t at output position t, so each row reads the mirrored position: the first '
        + 'row the last column, the last row the first.',
    } : {
      diagonal: 'Copy writes input token t at output position t, so each output\'s query learns to match the key of '
        + 'its own input position: one bright cell per row, on the diagonal.',
      anti: 'An anti-diagonal reads input L-1-t: that is the reverse task. Copy reads the same position it writes.',
    }),
    answer: 'Each row of the heatmap is one output position\'s weights over the input positions. The positional '
      + 'embeddings let a query and a key agree on a position, and the task decides which: the same one (copy) or the '
      + 'mirrored one (reverse). Press Play and watch the pattern appear from the grey.',
  };
}
