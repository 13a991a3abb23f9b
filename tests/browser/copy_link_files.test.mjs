// Copy link in a lab that opens a checkpoint (issue 45, item 3): a model opened from the user's files
// cannot travel in a link, and the link used to drop it without a word. Now the open status says so,
// the copied link names the files (opened=NAME) and its notice says they are not carried, and the page
// the link opens asks for those files; a Hub model's link carries its id instead. At both sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startLab, waitConfigured, TINY_GPT2_FILES } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

for (const size of SCREENS) {
  test(`Writing at ${size.width}x${size.height}: a model from files is named by Copy link, not silently dropped`, async () => {
    const { page, problems } = await openPage(lab, '?lab=writing', { viewport: size, files: TINY_GPT2_FILES });
    await page.waitForFunction(() => document.getElementById('open-status')?.textContent.startsWith('Open'), null, { timeout: 30000 });
    assert.match(await page.textContent('#open-status'),
      /Copy link names “model\.safetensors and 3 more files” but cannot carry files from this computer: whoever opens it is asked for them/);
    await page.click('#copy-link');
    const link = await page.getAttribute('#copy-link', 'data-link');
    assert.equal(new URL(link).searchParams.get('opened'), 'model.safetensors and 3 more files');
    assert.equal(new URL(link).searchParams.get('model'), null);
    await page.waitForFunction(() => /Link copied|Copy this link/.test(document.getElementById('notices')?.textContent ?? ''), null, { timeout: 10000 });
    assert.match(await page.textContent('#notices'), /It names “model\.safetensors and 3 more files” but cannot carry files from this computer/);

    // The page the link opens asks for those files (and opens them when given).
    const other = await lab.context.newPage();
    await other.setViewportSize(size);
    await other.goto(link);
    await other.waitForSelector('#open-status');
    assert.equal((await other.textContent('#open-status')).trim(), 'This link was copied with “model.safetensors and 3 more files” open '
      + 'from its owner\'s files, which a link cannot carry: choose or drop the same files here to see what was shared.');
    await other.setInputFiles('#open-files', TINY_GPT2_FILES);
    await other.waitForFunction(() => document.getElementById('open-status')?.textContent.startsWith('Open'), null, { timeout: 30000 });
    await waitConfigured(other);
    assert.deepEqual(problems, []);
    await other.close();
    await page.close();
  });
}

// Issue 45, item 3: the tiny checkpoints of the tests say they are random test weights, in their folders
// (README.md, a model card tagged random-weights) and on the page once opened with it; a folder without
// such a card is not called so.
for (const size of SCREENS) {
  test(`Pretrained at ${size.width}x${size.height}: a tiny test checkpoint opened with its README.md is called random test weights`, async () => {
    const { TINY_BERT, TINY_BERT_FILES } = await import('./support.mjs');
    const path = await import('node:path');
    const { page, problems } = await openPage(lab, '?lab=pretrained', { viewport: size,
      files: [...TINY_BERT_FILES, path.join(TINY_BERT, 'README.md')] });
    await page.waitForFunction(() => document.getElementById('open-status')?.textContent.startsWith('Open'), null, { timeout: 30000 });
    assert.match(await page.textContent('#open-status'), /These are random test weights \(its README\.md says so\): a tiny model made for the tests, so what it writes or predicts is noise\./);
    await page.setInputFiles('#open-files', TINY_BERT_FILES);
    await page.waitForFunction(() => /^Open: /.test(document.getElementById('open-status')?.textContent ?? '')
      && !/random test weights/.test(document.getElementById('open-status').textContent), null, { timeout: 30000 });
    assert.deepEqual(problems, []);
    await page.close();
  });
}
