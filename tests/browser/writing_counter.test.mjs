// The Writing lab's "Tokens written" counter follows what is written (issue 45, item 3): while the prompt
// is refused (here: longer than the tiny GPT-2's 48 positions) Next token writes nothing, so the counter and
// the link stay where they were; once a prompt is read again, Next token writes one and the counter says 1.
// At both sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, writtenIds } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const state = (page) => page.$eval('#section-write', (s) => s.dataset.state);
const counter = (page) => page.$eval('#prop-shown', (i) => i.value);

for (const size of SCREENS) {
  test(`Writing at ${size.width}x${size.height}: Next token does not count while the prompt is refused`, async () => {
    const { page, problems } = await openPage(lab, '?lab=writing&temperature=0&maxNewTokens=4', { viewport: size });
    await page.waitForFunction(() => document.getElementById('section-write')?.dataset.state === 'shown', null, { timeout: 30000 });
    assert.equal(await counter(page), '0');
    await setField(page, 'text', Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '));
    await page.waitForFunction(() => document.getElementById('section-write')?.dataset.state === 'error', null, { timeout: 30000 });
    assert.match(await page.textContent('#section-write'), /this model reads at most 48/);
    for (let i = 0; i < 3; i++) {
      await page.click('#action-step');
      assert.equal(await counter(page), '0', `press ${i + 1}: nothing was written`);
    }
    assert.ok([null, '0'].includes(new URL(page.url()).searchParams.get('shown')), 'the link does not count it either');
    assert.equal(await state(page), 'error');

    await setField(page, 'text', 'The dog');
    await page.waitForFunction(() => document.getElementById('section-write')?.dataset.state === 'shown', null, { timeout: 30000 });
    await page.click('#action-step');
    await page.waitForFunction(() => (document.querySelector('[data-figure="written-ids"]')?.textContent.split('written:')[1] ?? '').trim().length > 0,
      null, { timeout: 30000 });
    assert.equal(await counter(page), '1');
    assert.equal((await writtenIds(page)).written.length, 1);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
