// A student's first minute in every lab (issue 29), at a laptop's 1280x800 and a phone's 390x844:
// the lab's main figure and main action (lab.firstScreen) lie inside the first screen, nothing scrolls
// sideways, no text is clipped by its box, nothing sticks out of its panel, no text on the page or in a figure is under 11 px, the
// main action is within 6 Tab presses of a fresh page, and the main figure is painted.
// (scripts/screens.mjs writes the same screens as PNGs to docs/screens/ for review.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LABS } from '../../web/labs/registry.js';
import { openPage, startLab, waitDrawn } from './support.mjs';
import { SCREENS, coloursShown, inFirstScreen, layoutReport, recordCanvasText, tabsTo } from './first_screen_support.mjs';

const MAX_TABS = 6;

let lab;
before(async () => {
  lab = await startLab();
  await lab.context.addInitScript(recordCanvasText);
});
after(async () => { await lab?.close(); });

/** Waits until the main figure is on the page and whatever the lab deferred is drawn. */
async function settled(page, first) {
  await page.waitForSelector(first.figure, { state: 'visible', timeout: 30000 });
  if (await page.$('[data-drawn]')) await waitDrawn(page);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

for (const labDeclaration of LABS) {
  for (const size of SCREENS) {
    test(`${labDeclaration.id} at ${size.width}x${size.height}: figure and action on the first screen, readable, nothing sideways`, async () => {
      const first = labDeclaration.firstScreen;
      assert.ok(first?.figure && first?.action, `${labDeclaration.id} declares its firstScreen {figure, action}`);
      const { page, problems } = await openPage(lab, `?lab=${labDeclaration.id}`, { viewport: size });
      await settled(page, first);
      await page.evaluate(() => window.scrollTo(0, 0));
      const report = await layoutReport(page, first);
      // Every finding at once, so that one run shows all that a screen gets wrong.
      const failures = [];
      if (report.scrollWidth > report.innerWidth) failures.push(`the page scrolls sideways: ${report.scrollWidth} px wide in ${report.innerWidth}`);
      if (!inFirstScreen(report.figure, report)) failures.push(`main figure ${first.figure} not in the first screen: ${JSON.stringify(report.figure)}`);
      if (!inFirstScreen(report.action, report)) failures.push(`main action ${first.action} not in the first screen: ${JSON.stringify(report.action)}`);
      failures.push(...report.clipped.map((t) => `clipped by its box: ${t}`));
      failures.push(...report.overflows.map((t) => `out of its panel: ${t}`));
      failures.push(...report.smallText.map((t) => `text under 11 px: ${t}`));
      failures.push(...report.smallCanvasText.map((t) => `figure text under 11 px on screen: ${t}`));
      if (report.figure && await coloursShown(page, first.figure) <= 2) failures.push('the main figure is blank');
      const tabs = await tabsTo(page, first.action, MAX_TABS);
      if (tabs === null) failures.push(`the main action ${first.action} is not within ${MAX_TABS} Tab presses`);
      assert.deepEqual(failures, []);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}
