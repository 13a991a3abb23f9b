// The Writing lab's words and labels (issue 38, item 3), at a laptop's 1280x800 and a phone's 390x844,
// on the tiny GPT-2 of tests/fixtures/gpt2_tiny (openPage opens it):
// - a token drawn at temperature 0.8 keeps, in the caption, the settings it was drawn with and its
//   probability then, after the slider moves to 0; the bars say they are the same step at the new setting;
// - tokens that hold part of a UTF-8 character show their bytes (<0xE2>), a NUL shows as <0x00>: in the
//   token list, the running text, the attention heatmap's tick labels and the logit lens's columns;
// - the head-role grid outlines the head it opens below in the colour the model view outlines its
//   selected head with, and the outline follows a click.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, setField, startLab, waitDrawn } from './support.mjs';
import { SCREENS } from './first_screen_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const text = (page, id) => page.textContent(`[data-figure="${id}"]`).then((t) => t.trim());
const writtenCount = (page) => text(page, 'written-ids').then((t) => t.split('written:')[1].trim().split(' ').filter(Boolean).length);

/** The element's box against the screen, after scrolling it into view as a student would: {left, right, width}. */
const onScreen = (page, selector) => page.locator(selector).evaluate((e) => {
  e.scrollIntoView({ block: 'nearest' });
  const r = e.getBoundingClientRect();
  return { left: r.left, right: r.right, innerWidth, visible: r.width > 0 && r.height > 0 };
});

for (const size of SCREENS) {
  const at = `${size.width}x${size.height}`;

  test(`writing at ${at}: a drawn token keeps the settings it was drawn with; the bars say they are at the new setting`, async () => {
    const { page, problems } = await openPage(lab, '?lab=writing&text=The%20quick%20brown%20fox&maxNewTokens=6', { viewport: size });
    await waitDrawn(page);
    for (let n = 1; n <= 2; n++) {
      await page.click('#action-step');
      await page.waitForFunction((n) => document.querySelector('[data-figure="written-ids"]').textContent.trim().split('written:')[1].trim().split(' ').filter(Boolean).length === n, n);
    }
    await waitDrawn(page);
    const drawnAt = /^Token 2 was drawn from these \(temperature 0\.8, top-k 50\): “(.+?)” (\d+\.\d+%) \(marked\)\. /.exec(await text(page, 'next-top'));
    assert.ok(drawnAt, await text(page, 'next-top'));
    const [, token, probability] = drawnAt;
    // The token list says the same probability: the one it was drawn with.
    const listed = (await text(page, 'written-tokens')).split('written (2): ')[1].split(' | ');
    assert.equal(listed[1], `${token} ${probability}`);
    assert.match(await page.getAttribute('canvas[data-figure="next-bars"]', 'aria-label'), /^Token 2: the ten likeliest/);

    await setField(page, 'temperature', 0);
    await page.waitForFunction(() => document.querySelector('[data-figure="next-top"]').textContent.includes('at the new setting'));
    await waitDrawn(page);
    const caption = await text(page, 'next-top');
    const moved = new RegExp(`^Token 2, “${token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}”, was drawn at temperature 0\\.8, top-k 50, with ${probability.replace('.', '\\.')}\\. `
      + 'These bars are its step at the new setting \\(temperature 0: greedy, all on the likeliest\\), where it has (\\d+\\.\\d+%)( \\(marked\\)| \\(not in the ten\\)); '
      + 'the next token is drawn at the new setting\\. (.+)$').exec(caption);
    assert.ok(moved, caption);
    // Greedy: the likeliest has it all. The drawn token's chance now is the bars' own number for it.
    const bars = moved[3].split(' · ');
    assert.match(bars[0], / 100\.0%$/);
    assert.equal(moved[1], bars[0] === `${token} 100.0%` ? '100.0%' : '0.00%', `${token} at temperature 0: ${bars[0]}`);
    assert.match(await page.getAttribute('canvas[data-figure="next-bars"]', 'aria-label'), /^Token 2 at the new setting: the ten likeliest/);
    assert.equal((await text(page, 'written-tokens')).split('written (2): ')[1].split(' | ')[1], `${token} ${probability}`, 'the list keeps the drawn probability');
    // The caption is where the student reads it: on the screen, not past its edge.
    const box = await onScreen(page, '[data-figure="next-top"]');
    assert.ok(box.visible && box.left >= 0 && box.right <= box.innerWidth, JSON.stringify(box));

    // Back at the setting it was drawn with: "drawn from these" again, with the same probability.
    await setField(page, 'temperature', 0.8);
    await page.waitForFunction((p) => document.querySelector('[data-figure="next-top"]').textContent.includes(`was drawn from these (temperature 0.8, top-k 50)`) , probability);
    assert.ok((await text(page, 'next-top')).includes(`“${token}” ${probability} (marked)`));
    assert.equal(await writtenCount(page), 2);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`writing at ${at}: tokens that hold part of a character show their bytes, a NUL shows as <0x00>, never "�" or a blank`, async () => {
    // "—" is E2 80 94 (three byte tokens in the tiny vocabulary), "😀" F0 9F 98 80 (F0 9F is one token).
    const prompt = 'a—b😀\u0000!';
    const { page, problems } = await openPage(lab, `?lab=writing&text=${encodeURIComponent(prompt)}&maxNewTokens=3`, { viewport: size });
    await waitDrawn(page);
    const tokens = ['a', '<0xE2>', '<0x80>', '<0x94>', 'b', '<0xF0><0x9F>', '<0x98>', '<0x80>', '<0x00>', '!'];
    assert.equal(await page.inputValue('#prop-text'), prompt, 'the prompt keeps its NUL');
    assert.ok((await text(page, 'written-tokens')).startsWith(`Prompt (10 tokens): ${tokens.join(' | ')} · written (0)`), await text(page, 'written-tokens'));
    // The running text: characters whole, the NUL visible.
    assert.equal(await text(page, 'written'), 'a—b😀<0x00>!');
    // The attention heatmap's tick labels as drawn (a repeated token gets its position as a subscript).
    const ticks = JSON.parse(await page.getAttribute('canvas[data-figure="attention-heatmap"]', 'data-label-boxes')).filter((b) => b.axis === 'x').map((b) => b.text);
    assert.deepEqual(ticks, tokens.map((t, i) => (t === '<0x80>' ? `${t}${'₀₁₂₃₄₅₆₇₈₉'[i]}` : t)));
    // The logit lens's column headings.
    const columns = await page.$$eval('[data-figure="lens-table"] thead th', (ths) => ths.slice(1).map((th) => th.textContent));
    assert.deepEqual(columns, tokens);
    // Nowhere on the page a replacement character.
    assert.ok(!(await page.textContent('main, body')).includes('\ufffd'), 'no U+FFFD on the page');
    const box = await onScreen(page, '[data-figure="written-tokens"]');
    assert.ok(box.visible && box.right <= box.innerWidth, JSON.stringify(box));
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`writing at ${at}: the head-role grid outlines the head it opens, in the model view's colour for its selected head`, async () => {
    const { page, problems } = await openPage(lab, '?lab=writing&roleTokens=20&roleLayer=1&roleHead=0&layer=0&head=1', { viewport: size });
    await waitDrawn(page);
    await page.locator('canvas[data-figure="roles-grid"]').scrollIntoViewIfNeeded();
    const read = () => page.evaluate(() => {
      const pixel = (canvas, x, y) => Array.from(canvas.getContext('2d').getImageData(Math.floor(x), Math.floor(y), 1, 1).data.slice(0, 3)).join(',');
      const grid = document.querySelector('canvas[data-figure="roles-grid"]');
      const l = JSON.parse(grid.dataset.layout);
      // Each cell's edge, 1 canvas px in from its left side, at its middle height: the outline's pixels, or the cell's colour.
      const edges = [];
      for (let r = 0; r < l.rows; r++) for (let c = 0; c < l.cols; c++) edges.push(pixel(grid, l.x + c * l.cellW + 1, l.y + (r + 0.5) * l.cellH));
      // The model view's selected head: its outline, 2 CSS px outside the thumbnail's left side.
      const view = document.querySelector('canvas[data-figure="attention-grid"]');
      const k = view.width / view.getBoundingClientRect().width;
      const cells = JSON.parse(view.dataset.cells);
      const chosen = cells.find((c) => c.layer === 0 && c.head === 1);
      return { edges, selected: l.selected, modelView: pixel(view, (chosen.x - 2) * k, (chosen.y + chosen.h / 2) * k), rows: l.rows, cols: l.cols };
    });
    let got = await read();
    assert.deepEqual(got.selected, { row: 1, col: 0 });
    const outline = got.modelView;
    assert.deepEqual(got.edges.map((e) => e === outline), [false, false, true, false], `edges ${got.edges}, the model view's outline ${outline}`);
    // A click on another cell opens that head: the outline moves with it.
    const l = JSON.parse(await page.getAttribute('canvas[data-figure="roles-grid"]', 'data-layout'));
    const k = await page.$eval('canvas[data-figure="roles-grid"]', (c) => c.width / c.getBoundingClientRect().width);
    await page.locator('canvas[data-figure="roles-grid"]').click({ position: { x: (l.x + 1.5 * l.cellW) / k, y: (l.y + 0.5 * l.cellH) / k } });
    await page.waitForFunction(() => /"selected":\{"row":0,"col":1\}/.test(document.querySelector('canvas[data-figure="roles-grid"]').dataset.layout));
    got = await read();
    assert.deepEqual(got.edges.map((e) => e === outline), [false, true, false, false], `edges ${got.edges}`);
    assert.equal(await page.inputValue('#prop-roleLayer'), '0');
    assert.equal(await page.inputValue('#prop-roleHead'), '1');
    assert.deepEqual(problems, []);
    await page.close();
  });
}
