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
Module['endThreads'] = function () {
  PThread.terminateAllThreads();
};
