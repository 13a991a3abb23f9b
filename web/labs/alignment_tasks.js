// The Alignment lab's tasks, by the names core/trainers/alignment_trainer.cpp reads (its kTasks). Their
// step counts are the C++'s (alignment_task.cpp default_steps, the notebook's), generated into
// alignment_steps.generated.js by scripts/gen_alignment_steps.mjs, which reads this list: a file apart
// from 01_alignment.js so that the generator can import it before the generated file exists.
export const ALIGNMENT_TASKS = ['copy', 'reverse', 'pointer'];
