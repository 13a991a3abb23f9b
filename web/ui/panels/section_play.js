// A section's play button (action.play): steps the values with action.play.next every everyMs, or
// pauses. One play at a time, on timers (the tab never waits on it). The next step waits until every
// section has shown the last one (a slow model never queues steps); a play ends at next() -> null, on
// the user's own change of the section's inputs, another of its buttons, a new open, an error, or
// when the lab leaves the screen (the page calls stop()).
export class SectionPlay {
  /** sections(): the section panels (panels/section.js); values(): the page's values; change(fn): changes them. */
  constructor({ sections, values, change }) {
    this.sections = sections;
    this.values = values;
    this.change = change;
    this.playing = null; // {panel, action, timer}
  }

  /** The play button of `panel` was pressed: it starts, or pauses the play it started. */
  toggle(panel, action) {
    const playing = this.playing;
    this.stop();
    if (playing?.panel === panel && playing.action === action) return; // it was playing: Pause
    if (!panel.result) return; // nothing computed yet: nothing to play
    this.playing = { panel, action, timer: 0 };
    panel.setPlaying(action, true);
    const start = action.play.start?.(this.values(), panel.result) ?? this.values();
    if (start !== this.values()) this.change(() => start);
    this.tick(action.play.everyMs);
  }

  tick(delay) {
    const p = this.playing;
    if (!p) return;
    p.timer = setTimeout(() => {
      p.timer = 0;
      if (this.playing !== p) return;
      // The last step not computed yet: look again shortly, without stepping.
      if (this.sections().some((s) => s.busy)) {
        this.tick(50);
        return;
      }
      const next = p.panel.result ? p.action.play.next(this.values(), p.panel.result) : null;
      if (!next) {
        this.stop();
        return;
      }
      this.change(() => next);
      this.tick(p.action.play.everyMs);
    }, delay);
  }

  /** A setting was committed: a new input of the section that plays (a new sentence, other beams) ends the play. */
  inputChanged(name) {
    if (this.playing?.panel.dependsOnAny([name])) this.stop();
  }

  stop() {
    const p = this.playing;
    if (!p) return;
    clearTimeout(p.timer);
    this.playing = null;
    p.panel.setPlaying(p.action, false);
  }
}
