// The weights panel (in the sidebar, for a lab with lab.weights): a weights file imported (a .safetensors,
// or a .pt that torch.save wrote in the course notebook: its model derived from the file, checked, then
// loaded by the worker) or the model exported as a .safetensors.
import { WeightsPanel } from '../weights_panel.js';
import { download } from '../export.js';
import { parseSafetensors } from '../../io/safetensors.js';
import { stateDictBytes } from '../../io/state_dict.js';
import { crossCheck, defaultValues } from '../../shared/properties.js';
import { isTorchFile } from '../../io/weights_file.js';
import { LABS } from '../../labs/registry.js';

export function weightsPanel(page) {
  const { lab, notices } = page;
  let importName = ''; // the file being loaded, for the messages that follow
  let importPreset = false; // it is a preset's hand-built model, not a file
  const view = new WeightsPanel({
    onFile: (bytes, name) => load(bytes, name),
    onCompare: lab.panels?.includes('compare') ? (bytes, name) => load(bytes, name, { compare: true }) : null,
    onExport: () => { if (page.run) page.client.send('export'); },
    help: lab.weights?.help,
  });

  // A refusal is said under the button that asked (issue 38: it went to the top of the page, 1,149 px
  // above the Import and Compare buttons, while the line beside them stayed empty). A preset is chosen
  // in the settings, away from these buttons: its refusal also gets a notice.
  const refuse = (text) => {
    view.say(text, 'error');
    if (importPreset) notices.show(text, { kind: 'error', key: 'weights' });
  };

  /**
   * A file that holds weights, but not this lab's, in plain words (issue 45: "not the notebook's
   * CrossAttnSeqClassifier: missing tok_emb.weight, ..." alone): what this lab loads, what the file lacks,
   * and the lab whose model it is, where another lab reads it.
   */
  function notThisLab(name, outcome, file, error) {
    let there = '';
    for (const other of LABS) {
      if (other === lab || !other.weights?.valuesFromFile) continue;
      let theirs;
      try {
        theirs = other.weights.valuesFromFile(file);
      } catch {
        continue; // not that lab's model either
      }
      there = ` It is ${other.weights.describe({ ...defaultValues(other.properties), ...theirs })}: open the ${other.title} `
        + 'lab and load it there.';
      break;
    }
    return `${name} ${outcome}. This lab loads ${lab.weights.describe(page.applied)}, and this file is another model's `
      + `(${error.message}).${there}`;
  }

  /**
   * A weights file from the picker or a drop (a .safetensors, or a .pt torch.save wrote), or a preset
   * that is a model (preset true): derive the model it fits, then load it there.
   */
  async function load(bytes, name, { preset = false, compare = false } = {}) {
    importName = name;
    importPreset = preset;
    notices.dismiss('weights');
    const [not, kept] = compare ? ['was not compared', 'this run is unchanged'] : ['was not loaded',
      'the current model is kept'];
    let patch, file;
    try {
      file = isTorchFile(bytes) ? await peek(bytes, name) : parseSafetensors(bytes);
      patch = lab.weights.valuesFromFile(file);
    } catch (error) {
      refuse(file ? notThisLab(name, `${not}; ${kept}`, file, error) : `${name} ${not}; ${kept}. ${error.message}`);
      return;
    }
    // What a change implies (a task brings its step count), then the file's values win.
    let values = { ...page.applied, ...patch };
    for (const key of Object.keys(patch)) values = lab.afterChange(key, values);
    values = { ...values, ...patch };
    const problems = crossCheck(lab, values);
    if (problems.length) {
      refuse(`${name} ${not}: ${problems.map((p) => p.message).join('; ')}; ${kept}.`);
      return;
    }
    if (compare) {
      // Beside the run, not instead of it: the worker builds this model once and answers 'compared'.
      if (!page.run) {
        refuse(`${name} cannot be compared yet: wait for this lab's model to be built.`);
        return;
      }
      view.say(`Comparing ${name}…`);
      page.client.send('compare', { lab: lab.id, ...lab.configureRequest(values), bytes, name });
      return;
    }
    page.expectModel(values);
    view.say(`Loading ${name}…`);
    page.client.send('import', { lab: lab.id, ...lab.configureRequest(values), bytes, name });
  }

  // A torch.save file's names, shapes and metadata, read by the worker's module (weights_file.js).
  let peeks = 0;
  const waiting = new Map();
  function peek(bytes, name) {
    const request = `peek-${++peeks}`;
    return new Promise((resolve, reject) => {
      waiting.set(request, (m) => (m.error ? reject(new Error(m.error)) : resolve({ tensors: m.tensors,
        metadata: m.metadata })));
      page.client.send('peekWeights', { bytes, name, request });
    });
  }

  function save({ tensors, config, step }) {
    const bytes = stateDictBytes(tensors, lab.weights.metadata(config, step));
    const name = lab.weights.fileName(config, step);
    download(new Blob([bytes], { type: 'application/octet-stream' }), name);
    view.say(`Saved ${name} (step ${step}).`);
  }

  return {
    node: view.node,
    load,
    handles(m) {
      if (m.type === 'weights-peeked') {
        waiting.get(m.request)?.(m);
        waiting.delete(m.request);
        return;
      }
      if (m.type === 'configured' && m.imported) {
        // How good the loaded model is, at once (the evaluation the curves panel shows).
        page.client.send('evaluate');
        // A sentence: "Loaded the weights of count-step5000.safetensors, a One query model." or, for a
        // preset, "Loaded “Solve it by hand”: a One query model built by hand, not trained." (issue 29).
        const what = lab.weights.describe(m.config);
        const loaded = importPreset ? `Loaded “${importName}”: ${what} built by hand, not trained.` : `Loaded the weights of ${importName}, ${what}.`;
        const text = `${loaded} Its attention is shown below; Play trains on from these weights.`;
        view.say(text);
        notices.show(text, { kind: 'info', key: 'weights' });
      } else if (m.type === 'compared') {
        view.say(`${importName} is shown beside this run (Your model beside this run); this run is unchanged.`);
        page.compare?.show({ ...m, name: importName, what: lab.weights.describe(m.config) });
        page.client.send('evaluate'); // the run's evaluation now, for the column beside it
      } else if (m.type === 'error' && m.request === 'compare') {
        refuse(`${importName} was not compared; this run is unchanged. ${m.message}`);
      } else if (m.type === 'weights') {
        save(m);
      } else if (m.type === 'error' && m.request === 'import') {
        page.expectModel(null);
        refuse(`${importName} was not loaded; the current model is kept. ${m.message}`);
      } else {
        return false;
      }
      return true;
    },
    render() {},
  };
}
