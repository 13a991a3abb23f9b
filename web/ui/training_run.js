// The model the worker trains, as the page knows it from the worker's messages: its config and fixed
// sample, the step, whether it runs, the backend that runs it, and its history (snapshots of the
// attention, the loss and accuracy curves, the evaluations), kept within HISTORY_BUDGET however long
// it trains. The panels read it; only the page (lab_page.js) writes it.
import { StepSeries, ThinningList, typedArrayBytes } from '../training/bounded_history.js';

// What a run keeps, however long it trains (docs/reliability.md): the timeline's snapshots thin to
// every second one when either bound is reached; the curves halve their resolution.
export const HISTORY_BUDGET = { snapshots: 512, snapshotBytes: 64 * 1024 * 1024, seriesPoints: 8192, evaluations: 512 };

export class TrainingRun {
  /** A new model: the worker's 'configured' message. */
  constructor(m) {
    this.config = m.config;
    this.choice = m.choice;
    this.sample = m.fixedSample;
    this.step = 0;
    this.targetSteps = m.steps;
    this.running = false;
    this.stepsPerSecond = 0;
    this.snapshots = new ThinningList({ maxCount: HISTORY_BUDGET.snapshots, maxBytes: HISTORY_BUDGET.snapshotBytes,
      sizeOf: typedArrayBytes });
    this.losses = new StepSeries({ maxPoints: HISTORY_BUDGET.seriesPoints });
    this.accuracies = new StepSeries({ maxPoints: HISTORY_BUDGET.seriesPoints });
    this.evaluations = new ThinningList({ maxCount: HISTORY_BUDGET.evaluations });
    this.snapshots.push(m.snapshot);
    // The lowest training-batch loss and its step, exact (the curve thins; this does not): notebook 02
    // prints it as its "Minimum MSE loss".
    this.lowestLoss = null;
  }

  /** A 'progress' message: the curves, snapshots and evaluation since the last one, and where training is. */
  progress(m) {
    const first = m.step - m.losses.length + 1; // the step of the message's first loss
    m.losses.forEach((loss, i) => {
      if (Number.isFinite(loss) && (this.lowestLoss === null || loss < this.lowestLoss.value)) this.lowestLoss = { value: loss, step: first + i };
    });
    this.losses.push(...m.losses);
    this.accuracies.push(...m.accuracies);
    this.snapshots.push(...m.snapshots);
    if (m.evaluation) this.evaluations.push(m.evaluation);
    this.step = m.step;
    this.running = m.running;
    this.targetSteps = m.targetSteps ?? this.targetSteps;
    this.stepsPerSecond = m.stepsPerSecond;
  }

  /** A 'state' message (play, pause, the last step reached) -> whether it stopped training that ran. */
  state(m) {
    const stopped = this.running && !m.running;
    this.running = m.running;
    this.step = m.step;
    return stopped;
  }
}
