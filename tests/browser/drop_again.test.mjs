// "Drop again" in the Scaled lab (issue 45, item 4): off in eval mode, where there is no dropout to draw
// again, its title saying so; on in train mode, where a press draws another pattern. At both sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const size of SCREENS) {
  test(`Drop again at ${size.width}x${size.height}: off in eval mode, on in train mode`, async () => {
    const { page, problems } = await openPage(lab, '?lab=scaled', { viewport: size });
    await page.waitForFunction(() => document.getElementById('section-sentence')?.dataset.state === 'shown', null, { timeout: 30000 });
    const button = () => page.$eval('#action-redrop', (b) => ({ disabled: b.disabled, title: b.title }));
    assert.deepEqual(await button(), { disabled: true, title: 'Another random dropout pattern (train mode) (train mode only: eval has no dropout)' });
    await setField(page, 'mode', 'train');
    await page.waitForFunction(() => !document.getElementById('action-redrop').disabled);
    assert.equal((await button()).title, 'Another random dropout pattern (train mode)');
    const before = await page.$eval('#prop-dropDraw', (i) => i.value);
    await page.click('#action-redrop');
    await page.waitForFunction((was) => document.getElementById('prop-dropDraw').value !== was, before);
    await setField(page, 'mode', 'eval');
    await page.waitForFunction(() => document.getElementById('action-redrop').disabled);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
