// What the checkpoint commands (pretrained, translate) do before they run the model: check the figure
// files' folders, resolve --model (a folder, or a Hub id through the Hugging Face cache: hub.mjs), and
// open it with the lab's own opener (lab.open, as the page does). Every refusal becomes the command's
// input error: exit 2, one line naming the problem.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { diskSource, folderSources } from './file_source.mjs';
import { HubError, resolveModelFolder } from './hub.mjs';

// A checkpoint of another lab's kind (error.lab: web/models/registry.js's wrongKind): the message with the
// command that opens it, where the page gives a link to its lab.
const withCommand = (error) => (error.lab ? error.message.replace(/\.$/, ` (${error.lab.command}).`) : error.message);

/**
 * lab (its declaration), the command's options, the module, its InputError class -> lab.open.load's
 * {state, summary}.
 */
export async function openCommandCheckpoint(lab, options, module, InputError) {
  for (const file of [options.png, options.svg].filter(Boolean)) {
    const dir = await stat(path.dirname(path.resolve(file))).catch(() => null);
    if (!dir?.isDirectory()) throw new InputError(`${file}: its folder does not exist`);
  }
  // One .safetensors file: the Induction lab's export (--save), which the opener turns into its folder
  // (web/models/hooked_transformer.js) or refuses in words.
  if (/\.safetensors$/i.test(options.model ?? '') && (await stat(options.model).catch(() => null))?.isFile()) {
    return openSources(lab, module, InputError, [await diskSource(options.model)], path.basename(options.model));
  }
  let folder;
  try {
    // The module's check of config.json (the memory the model needs) runs before the weights download.
    folder = await resolveModelFolder(options.model,
      { lab: lab.id, checkConfig: (kind, config) => module.checkConfig(kind, config),
      unreadArchitecture: (config) => module.unreadArchitecture(config) });
  } catch (error) {
    if (error instanceof HubError) throw new InputError(withCommand(error));
    throw error;
  }
  // Named as the user gave it: a folder by its own name, a Hub id as the id.
  const name = folder === options.model ? path.basename(path.resolve(folder)) : options.model;
  return openSources(lab, module, InputError, await folderSources(folder), name);
}

async function openSources(lab, module, InputError, sources, name) {
  try {
    return await lab.open.load(module, sources, { name });
  } catch (error) {
    if (error.name === 'CheckpointError' || error.name === 'AttnLabError') throw new InputError(withCommand(error));
    throw error;
  }
}
