// The file flags of every attnlab command, checked before any work (a training, a model read, a folder
// judged): one module, so that args.mjs (train, evaluate, the labs' commands) and check_command.mjs (which
// args.mjs lists, so it cannot import args.mjs back) check a path the same way and say so in the same words.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { flagOf, shown, UsageError } from './flags.mjs';

/** A file flag's path that cannot work: one line, exit 2, no usage text. */
export class FileError extends UsageError {}

/**
 * Checks every file flag before any work: outputs (--save, --png, --svg, check's --gradescope) must name a
 * file, not a folder, in a folder that exists and is writable, no two of them the same; --load a readable file.
 * Throws a FileError naming the flag and the path.
 */
export function checkFiles(args) {
  const fail = (flag, file, why) => { throw new FileError(`${flag} ${shown(file, { tail: true })}: ${why}`); };
  // Missing -> null; any other trouble (a name too long, a loop of links) is the user's to fix too.
  const statOf = (flag, file, target = file) => {
    try {
      return statSync(target);
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      return fail(flag, file, `cannot use ${shown(target, { tail: true })} (${error.code ?? error.message})`);
    }
  };
  const can = (file, mode) => {
    try {
      accessSync(file, mode);
      return true;
    } catch {
      return false;
    }
  };
  const outputs = [['--save', args.save], ['--png', args.png],
    ['--svg', args.svg], ['--gradescope', args.gradescope]].filter(([, file]) => file !== undefined);
  const seen = new Map();
  for (const [flag, file] of outputs) {
    const full = path.resolve(file);
    if (seen.has(full)) fail(flag, file, `${seen.get(full)} writes the same file`);
    seen.set(full, flag);
    const st = statOf(flag, file);
    if (st?.isDirectory()) fail(flag, file, 'is a folder; give a file name');
    if (st) {
      if (!can(file, constants.W_OK)) fail(flag, file, 'exists and cannot be overwritten (no write permission)');
      continue;
    }
    const dir = path.dirname(full);
    const dirSt = statOf(flag, file, dir);
    if (!dirSt) fail(flag, file, `the folder ${shown(dir, { tail: true })} does not exist`);
    if (!dirSt.isDirectory()) fail(flag, file, `${shown(dir, { tail: true })} is not a folder`);
    if (!can(dir, constants.W_OK | constants.X_OK)) fail(flag, file,
      `the folder ${shown(dir, { tail: true })} is not writable`);
  }
  // The lab's own input files (the Induction lab's --data): readable files.
  for (const prop of args.lab?.cli?.options ?? []) {
    const file = args.options?.[prop.name];
    if (prop.type !== 'path' || file === undefined) continue;
    const st = statOf(`--${prop.name}`, file);
    if (!st) fail(flagOf(prop), file, 'no such file');
    if (st.isDirectory()) fail(flagOf(prop), file, 'is a folder, not a file');
    if (!can(file, constants.R_OK)) fail(flagOf(prop), file, 'cannot be read (no read permission)');
  }
  if (args.load !== undefined) {
    const st = statOf('--load', args.load);
    if (!st) fail(args.evaluate ? '--weights' : '--load', args.load, 'no such file');
    if (st.isDirectory()) fail(args.evaluate ? '--weights' : '--load', args.load, 'is a folder, not a weights file');
    if (!can(args.load, constants.R_OK)) fail(args.evaluate ? '--weights' : '--load', args.load,
      'cannot be read (no read permission)');
  }
}
