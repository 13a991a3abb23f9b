// The browser's Cache Storage (caches.open, match, put, delete, keys) held in memory, for running the
// page's Hub client (web/models/hub_store.js) in Node: put() reads the whole body before the entry exists,
// and a body that fails leaves no entry, as the browser's does; quotaBytes makes a put that would pass it
// fail with a QuotaExceededError, as a full disk does.
const urlOf = (key) => (typeof key === 'string' ? key : key.url);

class MemoryCache {
  constructor(storage) {
    this.storage = storage;
    this.entries = new Map(); // url -> {blob, headers}
  }

  async match(key) {
    const entry = this.entries.get(urlOf(key));
    return entry ? new Response(entry.blob, { headers: entry.headers }) : undefined;
  }

  async put(key, response) {
    const blob = await response.blob(); // the whole body, or its stream's error
    const used = [...this.entries.values()].reduce((n, e) => n + e.blob.size, 0) - (this.entries.get(urlOf(key))?.blob.size ?? 0);
    if (used + blob.size > this.storage.quotaBytes) throw Object.assign(new Error('the quota is exceeded'), { name: 'QuotaExceededError' });
    this.entries.set(urlOf(key), { blob, headers: [...response.headers] });
  }

  async delete(key) {
    return this.entries.delete(urlOf(key));
  }

  async keys() {
    return [...this.entries.keys()].map((url) => ({ url }));
  }
}

export class MemoryCacheStorage {
  constructor({ quotaBytes = Infinity } = {}) {
    this.quotaBytes = quotaBytes;
    this.caches = new Map();
  }

  async open(name) {
    if (!this.caches.has(name)) this.caches.set(name, new MemoryCache(this));
    return this.caches.get(name);
  }
}
