// The One query lab's "Check your build" section (issue 28, item 2; issue 39): notebook 05 is
// build-it-yourself (make_batch, the embedding, keys and values, attention, the attention-weighted
// values, forward). The build is declared in builds/attention_model.js and judged by builds/judge.js, as
// every lab's build; what is this lab's own is where the numbers come from: its model as it trains, so
// a student who loads their notebook's model.pt (Weights, Import weights…) compares with their weights.
import { buildCheckSection } from './builds/build_section.js';
import { attentionModelBuild, attentionModelBuildOf, attentionModelOneHotBuild, FIXED_INPUT } from './builds/attention_model.js';

export { FIXED_INPUT };
export const STEPS = attentionModelBuild.steps;

export const buildSection = buildCheckSection(attentionModelBuild, {
  id: 'build',
  property: 'checkStep',
  title: 'Check your build, step by step (notebook 05)',
  text: 'Notebook 05 has you write the model yourself. Give your notebook this x, then compare each step with the '
    + 'lab\'s: paste what print() showed, or save the tensor with torch.save(t, "step.pt") and open the file. To '
    + 'compare numbers, load your notebook\'s model first (Weights, Import weights…: your model.pt), so that both '
    + 'use the same weights; make_batch is random, so it is checked against its rule instead.',
  // The lab's model at its current step (the notebook's state_dict names: "query", "embed.weight", ...).
  params: (ctx) => ctx.session.trainer.parameters(),
  // Either embedding of the notebook: the model's weights say which (a one-hot Linear has 'embed.bias'; it
  // was read as the Embedding's [10, 5] table, so a right one-hot build was wrong from its embedding step),
  // and the setting says which code the paste box asks for.
  // Its steps' shapes are the model's sizes (embedDim, attDim), from the weights or else the settings.
  buildOf: ({ params, values }) => (params ? attentionModelBuildOf(params)
    : (values?.embedding === 'one-hot' ? attentionModelOneHotBuild : attentionModelBuild)
      .withSizes({ E: values?.embedDim, A: values?.attDim })),
  // Its numbers come from the lab's own model, not a fixed state_dict: a student's ID changes nothing here
  // (headless, `attnlab check --student` draws that student's state_dict).
  studentField: false,
  modelLine: (r) => `The lab's numbers come from its model at step ${r.step}.`,
  hint: 'Did your notebook load the same weights (your model.pt in this lab\'s Weights panel) and use this x?',
  needsModel: true,
  refreshWhileTraining: true,
  // Notebook 05's one question, in its "Embedding the Integers" step (it has no numbers: the step's name).
  questions: [{ number: 'Embedding', text: 'Take a random vector of integers of shape (N,M) and evaluate them through '
    + 'an embedding module. Does the output dimension make sense?',
    ask: { kind: 'shape', prompt: 'First, the shape of torch.nn.Embedding(10, 5)(x) for this x of shape (4, 10)',
      expected: [4, 10, 5], right: 'Each of the 4 × 10 integers becomes its row of the table, a vector of 5: one axis more.',
      wrong: 'The embedding replaces each integer of x by a vector of embed_dim = 5 numbers, and keeps x\'s own axes.',
      near: [{ shape: [10, 5], why: 'That is the table itself (embed.weight): one row per digit. The output has a '
        + 'vector for every integer of x.' },
        { shape: [4, 10], why: 'That is x: the embedding adds an axis, a vector of 5 in place of each integer.' },
        { shape: [4, 50], why: 'The vectors are not concatenated: each integer keeps its place and gets '
          + 'its own axis of 5.' }] },
    answer: 'Yes: torch.nn.Embedding(10, embed_dim) is a table of 10 rows, one vector of embed_dim numbers per digit, '
      + 'and it replaces each integer by its row. Every one of the N × M integers becomes a vector, so (N, M) becomes '
      + '(N, M, embed_dim): here x (4, 10) gives (4, 10, 5), as step 2 above shows. The same digit always gets the '
      + 'same vector (look at the rows of the 2s).' }],
});
