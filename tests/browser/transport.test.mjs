// The transport bar in a student's first minute (issue 29): a first run goes at a pace that lets the
// pattern form (max one click away), the bar keeps its size while training (the page does not jump),
// and a finished run offers its replay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab, waitDrawn } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const id of ['alignment', 'lookup', 'count']) {
  test(`${id}: the default speed is a pace to watch, not max; max is one click away and the link keeps the choice`, async () => {
    const { page, problems } = await openPage(lab, `?lab=${id}`);
    const speed = await page.inputValue('#prop-speed');
    assert.notEqual(speed, 'max');
    assert.ok(Number(speed) > 0, `a pace in steps per second: ${speed}`);
    const options = await page.$$eval('#prop-speed option', (os) => os.map((o) => o.value));
    assert.ok(options.includes('max'), `max is offered: ${options}`);
    assert.equal(await page.isVisible('#prop-speed'), true, 'the speed sits in the transport bar, on screen');
    await page.selectOption('#prop-speed', 'max');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('speed') === 'max');
    // Lookup has no timeline of attention snapshots: nothing to replay.
    assert.equal(await page.$('#replay-run') !== null, id !== 'lookup', 'a replay where there is a timeline');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

/** Records, on every animation frame, the transport's size and where the panel under it starts (how the page would jump). */
async function watchLayout(page) {
  await page.evaluate(() => {
    const seen = { transport: new Set(), below: new Set(), play: new Set(), on: true };
    window.__layout = seen;
    const transport = document.querySelector('.transport');
    const tick = () => {
      if (!seen.on) return;
      const r = transport.getBoundingClientRect();
      seen.transport.add(`${Math.round(r.width)}x${Math.round(r.height)}`);
      seen.below.add(Math.round(document.querySelector('.attention').getBoundingClientRect().top + window.scrollY));
      seen.play.add(Math.round(document.getElementById('play').getBoundingClientRect().width));
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  return () => page.evaluate(() => {
    window.__layout.on = false;
    return Object.fromEntries(['transport', 'below', 'play'].map((k) => [k, [...window.__layout[k]]]));
  });
}

for (const size of SCREENS) {
  test(`alignment at ${size.width}x${size.height}, default speed: the status says the pace, the bar keeps its size, and the finished run offers Replay`, async () => {
    const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&steps=100', { viewport: size });
    assert.equal(await page.inputValue('#prop-speed'), '20');
    assert.equal(await page.isEnabled('#replay-run'), false, 'nothing to replay before a run');
    const stop = await watchLayout(page);
    await page.click('#play');
    // While training, the status says the pace it trains at: the speed chosen, not what the computer could do.
    await page.waitForFunction(() => /training · \d+ steps\/s/.test(document.getElementById('progress-text').textContent), null, { timeout: 30000, polling: 50 });
    const pace = Number(/training · (\d+) steps\/s/.exec(await page.textContent('#progress-text'))?.[1]);
    assert.ok(pace > 0 && pace <= 20, `the status says ${pace} steps/s at speed 20`);
    assert.equal(await page.isEnabled('#replay-run'), false, 'no replay while it trains');
    await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout: 90000, polling: 100 });
    await waitDrawn(page);
    const layout = await stop();
    assert.equal(layout.transport.length, 1, `the transport bar kept one size: ${layout.transport}`);
    assert.equal(layout.below.length, 1, `the heatmap under it did not move: ${layout.below}`);
    assert.equal(layout.play.length, 1, `Play and Pause are as wide: ${layout.play}`);

    // The run ended: Replay is offered beside Play, and plays the timeline from step 0 to the end.
    assert.equal(await page.isVisible('#replay-run'), true);
    assert.equal(await page.isEnabled('#replay-run'), true);
    await page.evaluate(() => {
      window.__steps = [];
      const output = document.getElementById('timeline-step');
      new MutationObserver(() => window.__steps.push(output.textContent)).observe(output, { childList: true, characterData: true, subtree: true });
    });
    await page.click('#replay-run');
    await page.waitForFunction(() => /^step 100 /.test(window.__steps.at(-1) ?? ''), null, { timeout: 60000, polling: 100 });
    const steps = await page.evaluate(() => window.__steps);
    assert.match(steps[0], /^step 0 /, 'the replay starts at step 0');
    assert.ok(steps.length > 3, `it steps through the snapshots: ${steps.length} shown`);
    assert.equal(await page.isChecked('#timeline-live'), false, 'the timeline left "live" to replay');
    assert.match(await page.getAttribute('#heatmap-main', 'data-title'), /step 100/);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
