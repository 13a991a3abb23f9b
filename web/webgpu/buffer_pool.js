// GPU buffers pooled by (size rounded up to 16 bytes, usage), after onnxruntime-web's
// gpu-data-manager.ts. A buffer given back with release(buffer, afterSubmit) returns to the free list
// only once that submit has completed on the GPU, so a later acquire can never hand out a buffer that
// queued work still reads or writes.

export const roundUp16 = (bytes) => Math.max(16, Math.ceil(bytes / 16) * 16);

export class BufferPool {
  constructor(device) {
    this.device = device;
    this.free = new Map(); // "size:usage" -> [GPUBuffer]
    this.live = new Set();
    this.created = 0; // for tests and the benchmark: buffers made, not reused
  }

  acquire(bytes, usage, label) {
    const size = roundUp16(bytes);
    const key = `${size}:${usage}`;
    const list = this.free.get(key);
    let buffer = list?.pop();
    if (!buffer) {
      buffer = this.device.createBuffer({ label, size, usage });
      this.created++;
    } else {
      buffer.label = label;
    }
    this.live.add(buffer);
    return buffer;
  }

  // afterSubmit: a promise that settles when the last submit that used the buffer has completed
  // (queue.onSubmittedWorkDone() taken after that submit). Without one, the buffer is free at once.
  release(buffer, afterSubmit) {
    if (!buffer || !this.live.has(buffer)) return;
    this.live.delete(buffer);
    const give = () => {
      if (this.destroyed) return buffer.destroy();
      const key = `${buffer.size}:${buffer.usage}`;
      if (!this.free.has(key)) this.free.set(key, []);
      this.free.get(key).push(buffer);
    };
    if (afterSubmit) afterSubmit.then(give, give);
    else give();
  }

  destroy() {
    this.destroyed = true;
    for (const list of this.free.values()) for (const buffer of list) buffer.destroy();
    for (const buffer of this.live) buffer.destroy();
    this.free.clear();
    this.live.clear();
  }
}
