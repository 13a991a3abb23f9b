// A file on disk as a checkpoint source (web/models/checkpoint_files.js): each read() is one positioned
// read of a file handle, so a 440 MB model.safetensors is never held whole in Node either.
import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export async function diskSource(file) {
  const { size } = await stat(file);
  return {
    name: path.basename(file),
    size,
    async read(offset, length) {
      const handle = await open(file, 'r');
      try {
        const out = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const { bytesRead } = await handle.read(out, done, length - done, offset + done);
          if (bytesRead === 0) break; // the file shrank: the caller names the short read
          done += bytesRead;
        }
        return done === length ? out : out.subarray(0, done);
      } finally {
        await handle.close();
      }
    },
    text: async () => readFile(file, 'utf8'),
  };
}

/**
 * Every regular file directly in a folder, as sources; a link to a file counts (a Hugging Face cache
 * snapshot is a folder of links into its blobs/).
 */
export async function folderSources(dir) {
  const { readdir } = await import('node:fs/promises');
  const entries = await readdir(dir, { withFileTypes: true });
  const files = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isFile() || (e.isSymbolicLink() && (await stat(full).catch(() => null))?.isFile())) files.push(full);
  }
  return Promise.all(files.map((file) => diskSource(file)));
}
