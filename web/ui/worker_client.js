// The page's side of the worker protocol (web/protocol.md): send requests, route answers by type.

export class WorkerClient {
  constructor(worker) {
    this.worker = worker;
    // The protocol from the browser console (and the tests): attnlabWorker.send('evaluate'), or
    // attnlabWorker.send('loseDevice') to see the fallback a GPU driver reset would cause.
    if (typeof window !== 'undefined') window.attnlabWorker = this;
    this.handlers = new Map();
    worker.addEventListener('message', ({ data }) => {
      for (const handler of this.handlers.get(data?.type) ?? []) handler(data);
    });
    worker.addEventListener('error', (event) => {
      const message = event.message || 'the training worker failed to start';
      for (const handler of this.handlers.get('error') ?? []) handler({ type: 'error', message, request: 'worker' });
    });
  }

  send(type, fields = {}) {
    this.worker.postMessage({ type, ...fields });
  }

  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(handler);
  }
}
