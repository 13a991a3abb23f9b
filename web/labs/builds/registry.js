// Every build a student can check, step by step (issue 39): one declaration per notebook that builds
// something (name, lab, notebook, fixed input with the Python lines that make it, the state_dict when
// the module has weights, steps with shapes, and the reference computation). The page's "Check your
// build" sections (build_section.js) and `attnlab check` (web/cli/check_command.mjs) read this list, and
// judge.js judges any of them.
import { crossAttnClassifierBuild } from './cross_attn_classifier.js';
import { attentionTestBuild } from './attention_test.js';
import { selfAttentionBuild } from './self_attention.js';
import { simpleAttentionBuild } from './simple_attention.js';
import { attentionModelBuild, attentionModelOneHotBuild } from './attention_model.js';
import { nestedList } from './exact_tensors.js';

// In the course's order of the labs (web/labs/registry.js).
export const BUILDS = [crossAttnClassifierBuild, attentionTestBuild, attentionModelBuild, attentionModelOneHotBuild,
  simpleAttentionBuild, selfAttentionBuild];

export const buildByName = (name) => BUILDS.find((b) => b.name === name);

/** The Python lines that make the build's input (the notebook's imports assumed: torch). */
export const inputPython = (build) => Object.entries(build.input).map(([name, t]) => `${name} = ${t.python}`);

/** The lines that make the state_dict, build the module and run it (the notebook's class defined), or []. */
export function modelPython(build) {
  const lines = [];
  if (build.stateDict) {
    lines.push('state_dict = {');
    for (const [name, t] of Object.entries(build.stateDict)) lines.push(`    '${name}': ${t.python},`);
    lines.push('}');
  }
  return [...lines, ...build.model];
}

/** The state_dict's tensors as flat arrays by name (the form compute() takes), or {}. */
export const stateDictData = (build) => Object.fromEntries(Object.entries(build.stateDict ?? {}).map(([name, t]) => [name, t.data]));

/** Every step's reference tensor (flat) for the build's own input and `params` (default: its state_dict). */
export const referenceSteps = (build, params = stateDictData(build)) => build.compute(build.input, params);

/** The record `attnlab check --list --json` prints for one build (docs/cli.md). */
export function listRecord(build) {
  const tensors = (table) => Object.fromEntries(Object.entries(table).map(([name, t]) => [name,
    nestedList(t.data, t.shape)]));
  return {
    lab: build.lab,
    name: build.name,
    notebook: build.notebook,
    module: build.module,
    input: tensors(build.input),
    ...(build.stateDict ? { state_dict: tensors(build.stateDict) } : {}),
    python: inputPython(build).join('\n'),
    model_python: modelPython(build).join('\n'),
    notes: build.notes,
    steps: build.steps.map((s) => ({ name: s.name, shape: s.shape, code: s.code })),
  };
}
