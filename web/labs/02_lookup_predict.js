// The Lookup lab's "predict, then run" question (issue 39, item 3), asked under the figures of the
// "Watch it learn" section, the held-out queries and their retrievals (02_lookup.js: predictIn
// 'section:pairs'; web/ui/section_panel.js places it), not under Play: what a trained attention layer
// retrieves for a held-out query. The numbers are docs/lookup.md's measurements (2,000 held-out
// queries: top-1 label 0.13 at the start, 0.66 after 9,372 steps; MSE 0.273 -> 0.149).

export function lookupPrediction() {
  return {
    number: 'predict-lookup',
    text: 'Once trained, what will a new digit\'s query retrieve from the database?',
    ask: {
      kind: 'choice', prompt: 'The retrieval after training',
      choices: [
        { label: 'the query itself', why: 'The query is a held-out digit, not in the database, and the retrieval is a '
          + 'weighted average of the 100 database images: the layer can only mix the digits it holds.' },
        { label: 'a blur of all digits', why: 'That is the untrained layer: its weights spread over many images. '
          + 'Training moves them onto a few images that look like the query (the MSE falls from 0.27 to about 0.15).' },
        { label: 'a digit like the query', right: true, why: 'Training teaches the embedding '
          + 'to score similar images high, so the weight gathers on a few look-alikes and their mix looks like the '
          + 'query; the highest weight has the query\'s label about 2 times in 3 (13% before training).' },
      ],
    },
    answer: 'softmax(QKᵀ) decides how much of each database image comes back, and QKᵀ is only as good as the '
      + 'embedding that makes Q and K. Trained, it puts the weight on look-alikes; a soft average of a few of them is '
      + 'even closer to the query (in MSE) than copying the single nearest image. Press Play and watch the '
      + 'retrievals sharpen.',
  };
}
