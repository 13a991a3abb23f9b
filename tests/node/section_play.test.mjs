// A section's Play (web/ui/panels/section_play.js) on a mocked clock, so the pace is checked exactly,
// whatever the machine's load: the Translation lab's "word by word" play (06_translation_sections.js)
// shows one more token every 600 ms, waits while a section is still computing (never queues a step),
// ends at the last token, and Pause stops it. The browser test (translation_page.test.mjs) checks the
// same play on the page in rows, not milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SectionPlay } from '../../web/ui/panels/section_play.js';
import { SECTIONS } from '../../web/labs/06_translation_sections.js';

const translate = SECTIONS.find((s) => s.id === 'translate');
const play = translate.actions.find((a) => a.id === 'play');
const result = { targetPieces: ['▁le', '▁chat', '▁est', '▁assis', '.', '</s>'] };

/**
 * A clock the test moves by hand: setTimeout and clearTimeout replaced for the test's duration (node:test's
 * mock.timers differs between Node versions; the suite runs on Node 18 too). Timers due at the same
 * millisecond run in the order they were set.
 */
function fakeClock(t) {
  const real = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout };
  let now = 0, nextId = 1;
  const timers = new Map(); // id -> {at, fn}
  globalThis.setTimeout = (fn, delay = 0) => {
    timers.set(nextId, { at: now + Math.max(0, delay), fn });
    return nextId++;
  };
  globalThis.clearTimeout = (id) => { timers.delete(id); };
  t.after(() => Object.assign(globalThis, real));
  return {
    now: () => now,
    /** Moves the clock on `ms`, 1 ms at a time, running every timer that falls due. */
    advance(ms) {
      for (const end = now + ms; now < end;) {
        now += 1;
        for (let due; (due = [...timers].find(([, timer]) => timer.at <= now));) {
          timers.delete(due[0]);
          due[1].fn();
        }
      }
    },
  };
}

/** A page with one translate section: its values, the changes made (with the clock's time), and whether it is busy. */
function pageWith(clock, values) {
  const panel = { result, busy: false, playing: [], setPlaying(action, on) { this.playing.push([action.id, on]); }, dependsOnAny: (names) => names.includes('text') };
  const changes = [];
  const sectionPlay = new SectionPlay({
    sections: () => [panel],
    values: () => values,
    change: (fn) => { values = fn(values); changes.push({ shown: values.shown, at: clock.now() }); },
  });
  return { panel, changes, sectionPlay, shown: () => values.shown };
}

test('Play shows one more token every 600 ms, from where it is, and ends by itself after the last one', (t) => {
  const clock = fakeClock(t);
  const { panel, changes, sectionPlay } = pageWith(clock, { shown: 2 });
  assert.equal(play.play.everyMs, 600);
  sectionPlay.toggle(panel, play);
  assert.deepEqual(panel.playing, [['play', true]]);
  clock.advance(599);
  assert.deepEqual(changes, [], 'nothing before 600 ms');
  clock.advance(1);
  assert.deepEqual(changes, [{ shown: 3, at: 600 }]);
  clock.advance(600 * 3);
  assert.deepEqual(changes.map((c) => [c.shown, c.at]), [[3, 600], [4, 1200], [5, 1800], [6, 2400]]);
  clock.advance(600);
  assert.equal(changes.length, 4, 'no token after the last');
  assert.deepEqual(panel.playing.at(-1), ['play', false], 'the play ended by itself');
});

test('a section still computing holds the next token back (looked at every 50 ms), then the pace goes on from the change', (t) => {
  const clock = fakeClock(t);
  const { panel, changes, sectionPlay } = pageWith(clock, { shown: 1 });
  sectionPlay.toggle(panel, play);
  clock.advance(600);
  panel.busy = true; // the step just asked for takes a while
  clock.advance(600 + 50 * 4);
  assert.equal(changes.length, 1, 'no step queued while busy');
  panel.busy = false;
  clock.advance(50);
  assert.deepEqual(changes.map((c) => [c.shown, c.at]), [[2, 600], [3, 1450]]);
  clock.advance(600);
  assert.deepEqual(changes.at(-1), { shown: 4, at: 2050 });
});

test('Pause (a second press) stops it at once; a new sentence stops it; from the whole translation it starts at the first token', (t) => {
  const clock = fakeClock(t);
  const page = pageWith(clock, { shown: 1 });
  page.sectionPlay.toggle(page.panel, play);
  clock.advance(1200);
  page.sectionPlay.toggle(page.panel, play); // Pause
  clock.advance(6000);
  assert.deepEqual(page.changes.map((c) => c.shown), [2, 3]);
  assert.deepEqual(page.panel.playing, [['play', true], ['play', false]]);

  page.sectionPlay.toggle(page.panel, play);
  clock.advance(600);
  page.sectionPlay.inputChanged('text');
  clock.advance(6000);
  assert.deepEqual(page.changes.map((c) => c.shown), [2, 3, 4]);

  const whole = pageWith(clock, { shown: 6 });
  whole.sectionPlay.toggle(whole.panel, play);
  assert.equal(whole.shown(), 1, 'starts again at the first token');
  clock.advance(600);
  assert.equal(whole.shown(), 2);
  whole.sectionPlay.stop();
});
