// A weights file the user gives a training lab, whichever way it was saved: safetensors
// (safetensors.torch.save_file, the lab's own export) or torch.save(model.state_dict(), 'model.pt'), the
// course notebooks' way (a ZIP archive; read by the module's C++ reader, core/io/torch_checkpoint.h,
// whose restricted unpickler runs no code from the file). -> {tensors: {name: {dtype, shape, data}},
// metadata}, as parseSafetensors gives them; a torch file has no metadata. Errors name the file.
import { parseSafetensors } from './safetensors.js';

const ZIP = [0x50, 0x4b, 0x03, 0x04]; // "PK\3\4": a ZIP archive's first local header

/** Whether the bytes are torch.save's archive (else they are read as safetensors). */
export const isTorchFile = (bytes) => ZIP.every((b, i) => bytes[i] === b);

/** bytes: Uint8Array of the file; name: its name for messages; module: the loaded WASM module. */
export function readWeightsFile(module, bytes, name = 'the weights file') {
  if (!isTorchFile(bytes)) return parseSafetensors(bytes);
  return { tensors: module.readTorchStateDict(bytes, name), metadata: {} };
}
