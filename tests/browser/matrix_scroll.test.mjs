// The Scaled lab's Q, K and V tables at a large d_k (issue 45, item 3: from d_k 16, 6 on a phone, they
// made the whole page scroll sideways, 15,776 px at d_k 256): each table scrolls inside its own box, the
// page never does, at 1280x800 and 390x844; the last column is reached by scrolling the box.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const viewport of SCREENS) {
  test(`d_k 256 at ${viewport.width}x${viewport.height}: the tables scroll in their boxes, the page not sideways`, async () => {
    const { page, problems } = await openPage(lab, '?lab=scaled&dk=256', { viewport });
    try {
      await page.waitForSelector('table.matrix td', { timeout: 30000 });
      await page.waitForFunction(() => document.querySelector('table.matrix thead')?.textContent.includes('d255'), null, { timeout: 30000 });
      const m = await page.evaluate(() => {
        const box = document.querySelector('.matrix-box');
        return { sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          box: box.clientWidth, inner: box.scrollWidth, right: box.getBoundingClientRect().right,
          page: document.documentElement.clientWidth };
      });
      assert.ok(m.sideways <= 0, `the page scrolls sideways by ${m.sideways}px`);
      assert.ok(m.right <= m.page, 'the box stays inside the page');
      assert.ok(m.inner > 10 * m.box, `the table is wider than its box (${m.inner} in ${m.box}): it scrolls there`);
      // The last column, reached by scrolling the box.
      const last = await page.evaluate(() => {
        const box = document.querySelector('.matrix-box');
        box.scrollLeft = box.scrollWidth;
        const cells = box.querySelectorAll('tbody tr:first-child td');
        const r = cells[cells.length - 1].getBoundingClientRect(), b = box.getBoundingClientRect();
        return r.left >= b.left - 1 && r.right <= b.right + 1;
      });
      assert.ok(last, 'the last column is in view once the box is scrolled');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}
