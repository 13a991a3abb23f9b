// The data files a lab's trainer needs (a lab declares them: trainer.assets = {name: {file, load}}),
// read by the host (the worker fetches them, or the single file hands them over inline; the CLI
// reads them from public/) and loaded once into the module: every session of the lab shares them.
//   const assets = new AssetCache(module, readBytes);   readBytes(file) -> Promise<Uint8Array>
//   const { digits } = await assets.forLab(lab);

export class AssetCache {
  constructor(module, readBytes) {
    this.module = module;
    this.readBytes = readBytes;
    this.loaded = new Map(); // file -> Promise of the loaded object
  }

  /** -> {name: loaded object} for every asset the lab's trainer names. A missing or bad file throws, naming it. */
  async forLab(lab) {
    const out = {};
    for (const [name, { file, load }] of Object.entries(lab.trainer.assets ?? {})) {
      if (!this.loaded.has(file)) {
        const loading = (async () => {
          let bytes;
          try {
            bytes = await this.readBytes(file);
          } catch (error) {
            throw new Error(`${file} could not be read: ${error.message}`);
          }
          try {
            return await load(this.module, bytes);
          } catch (error) {
            throw new Error(`${file}: ${error.message}`);
          }
        })();
        loading.catch(() => this.loaded.delete(file)); // a failed read may be retried
        this.loaded.set(file, loading);
      }
      out[name] = await this.loaded.get(file);
    }
    return out;
  }
}
