// Appended to the Node threads build (--post-js): its pthread workers would keep Node's event loop
// alive after the last line of a script, so the loader unrefs them; they still run while the main
// thread waits for them inside a training step.
Module['unrefThreads'] = function () {
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function (worker) {
    if (worker.unref) worker.unref();
  });
};

// Ends the pthread workers (each one's Node worker thread), for a command that is done: the process
// then ends on its own once its output has drained, rather than by process.exit().
//
// Not PThread.terminateAllThreads(): it frees each live thread's stack and zeroes its pthread struct
// before it terminates the thread, and an idle pthread wakes every 100 ms (a cancellation point waits
// in slices: musl's __timedwait in Emscripten) and reads both. On a busy machine a wake-up fell between
// the free and the termination about once in a hundred commands: the thread ran on freed memory
// ("worker.js onmessage() captured an uncaught exception: RuntimeError: memory access out of bounds"),
// and its 'error' event, rethrown on the main thread by Emscripten's handler, crashed the command
// (issue 35, item 8). The process is ending: nothing needs freeing, so each worker is terminated with
// its memory left as it is, and an error it reports while it stops is no longer the command's.
Module['endThreads'] = function () {
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function (worker) {
    worker.removeAllListeners('message');
    worker.removeAllListeners('error');
    worker.on('error', function () {});
    worker.terminate();
  });
  PThread.unusedWorkers = [];
  PThread.runningWorkers = [];
};
