// When the page's panels draw: at most once per animation frame, the parts marked since the last
// frame, most urgent first, within a frame's budget (the rest waits for the next frame, so the page
// never blocks for long: the first draw of everything is the costly one). While a lab trains, only
// the panels on screen are redrawn; the others are marked and drawn when they scroll into view or
// when training stops (a slow laptop should not paint what nobody sees).
//
// A panel (lab_page.js) names its parts and the words that make each due besides its own name
// ({heatmaps: ['snapshot', 'palette']}); 'all' makes every part due.

// Script time per animation frame: with style, layout and paint after it, a frame stays near 16 ms.
const FRAME_BUDGET_MS = 8;

/**
 * How long each part took to draw, the last 512 draws (bounded: a lab may train for hours). Read by
 * benchmarks/page_frames.mjs through the page's root element (`root.drawTimes.summary()`).
 */
class DrawTimes {
  static SIZE = 512;
  constructor() {
    this.parts = [];
    this.ms = new Float64Array(DrawTimes.SIZE);
    this.count = 0;
  }

  record(part, ms) {
    this.parts[this.count % DrawTimes.SIZE] = part;
    this.ms[this.count % DrawTimes.SIZE] = ms;
    this.count++;
  }

  /** -> {part: [ms, ...]} over the draws kept. */
  summary() {
    const out = {};
    for (let i = 0; i < Math.min(this.count, DrawTimes.SIZE); i++) (out[this.parts[i]] ??= []).push(this.ms[i]);
    return out;
  }
}

export class DrawScheduler {
  /**
   * root: the page's element (data-drawn says 'all' once every part owed is drawn: tests and
   * scripted figures wait for it); panels: in drawing order; ready(): whether there is anything to
   * draw yet; training(): whether a lab trains now (parts off screen wait).
   */
  constructor({ root, panels, ready, training }) {
    this.root = root;
    this.ready = ready;
    this.training = training;
    this.parts = panels.flatMap((panel) => Object.entries(panel.parts ?? {}).map(([name, words]) => ({ name, words, panel })));
    this.dirty = new Set();
    this.frame = 0;
    this.deferred = new Set(); // parts waiting for their panel to come on screen
    this.drawTimes = new DrawTimes();
    root.drawTimes = this.drawTimes;
    this.watch([...new Set(this.parts.filter((p) => !p.panel.alwaysDrawn).map((p) => p.panel.node))]);
  }

  /** The nodes of the panels whose parts wait while off screen. */
  watch(nodes) {
    this.onScreen = new Set(nodes); // until the observer says otherwise
    if (typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) this.onScreen.add(e.target);
        else this.onScreen.delete(e.target);
      }
      const due = [...this.deferred].filter((name) => this.onScreen.has(this.parts.find((p) => p.name === name).panel.node));
      if (due.length) this.schedule(...due);
    }, { rootMargin: '100px' });
    for (const node of nodes) observer.observe(node);
  }

  /** Marks parts (or words that make parts due) to draw on the next animation frame. */
  schedule(...words) {
    for (const w of words) this.dirty.add(w);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const dirty = this.dirty;
      this.dirty = new Set();
      this.render(dirty);
    });
  }

  /** Training stopped: the parts that waited off screen are drawn. */
  scheduleDeferred() {
    this.schedule(...this.deferred);
  }

  render(dirty) {
    if (!this.ready()) return;
    const all = dirty.has('all');
    const start = performance.now();
    const parts = this.parts.filter((p) => all || dirty.has(p.name) || p.words.some((w) => dirty.has(w)));
    while (parts.length) {
      const part = parts.shift();
      if (this.training() && !part.panel.alwaysDrawn && !this.onScreen.has(part.panel.node)) {
        this.deferred.add(part.name);
      } else {
        this.deferred.delete(part.name);
        const t0 = performance.now();
        part.panel.render(new Set([part.name]));
        this.drawTimes.record(part.name, performance.now() - t0);
      }
      if (parts.length && performance.now() - start > FRAME_BUDGET_MS) {
        this.schedule(...parts.map((p) => p.name));
        break;
      }
    }
    this.root.dataset.drawn = this.frame || this.deferred.size ? 'pending' : 'all';
  }
}
