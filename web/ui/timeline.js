// The training timeline: a slider over the attention snapshots (one every few steps), "live" to follow
// the newest, and a replay. It only says which snapshot to show; the lab page draws it.
import { prefersReducedMotion } from './theme.js';

export class Timeline {
  /** onShow(index) whenever the shown snapshot changes. stepOf(index) -> the training step. */
  constructor(container, { onShow, stepOf }) {
    this.onShow = onShow;
    this.stepOf = stepOf;
    this.count = 0;
    this.index = 0;
    this.live = true;
    const row = document.createElement('div');
    row.className = 'timeline';
    const label = Object.assign(document.createElement('label'),
      { htmlFor: 'timeline-slider', textContent: 'Training timeline' });
    this.slider = Object.assign(document.createElement('input'),
      { type: 'range', id: 'timeline-slider', min: '0', max: '0', step: '1', value: '0' });
    this.slider.title = 'Scrub through the attention snapshots taken during training';
    this.output = Object.assign(document.createElement('output'), { id: 'timeline-step', htmlFor: 'timeline-slider' });
    const liveLabel = Object.assign(document.createElement('label'),
      { className: 'inline-check', title: 'Always show the newest snapshot' });
    this.liveBox = Object.assign(document.createElement('input'),
      { type: 'checkbox', id: 'timeline-live', checked: true });
    liveLabel.append(this.liveBox, document.createTextNode(' live'));
    this.replayButton = Object.assign(document.createElement('button'),
      { type: 'button', textContent: 'Replay', id: 'timeline-replay' });
    this.replayButton.title = 'Play the snapshots from the first step (the diagonal appearing)';
    row.append(label, this.slider, this.output, liveLabel, this.replayButton);
    container.append(row);
    this.slider.addEventListener('input', () => {
      this.setLive(Number(this.slider.value) === this.count - 1);
      this.select(Number(this.slider.value));
    });
    this.liveBox.addEventListener('change', () => {
      this.setLive(this.liveBox.checked);
      if (this.live) this.select(this.count - 1);
    });
    this.replayButton.addEventListener('click', () => this.replay());
  }

  setLive(live) {
    this.live = live;
    this.liveBox.checked = live;
  }

  /** The number of snapshots changed (new ones arrived, or a reset). */
  setCount(count) {
    this.count = count;
    this.slider.max = String(Math.max(0, count - 1));
    if (this.live || this.index >= count) this.select(Math.max(0, count - 1));
    else this.render();
  }

  select(index) {
    this.index = Math.max(0, Math.min(this.count - 1, index));
    this.render();
    this.onShow(this.index);
  }

  render() {
    this.slider.value = String(this.index);
    this.output.textContent = this.count ? `step ${this.stepOf(this.index)} (${this.index + 1} of `
      + `${this.count} snapshots)` : 'no snapshots yet';
  }

  /** Steps through the snapshots at about 10 per second (at once under reduced motion). */
  replay() {
    clearInterval(this.timer);
    this.setLive(false);
    if (prefersReducedMotion()) {
      this.select(this.count - 1);
      return;
    }
    let i = 0;
    this.select(0);
    this.timer = setInterval(() => {
      i += 1;
      if (i >= this.count) {
        clearInterval(this.timer);
        return;
      }
      this.select(i);
    }, 100);
  }
}
