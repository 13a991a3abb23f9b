// A lab embedded in a slide deck: the deck keeps its keys unless the lab has focus, the tooltip finds
// the right cell when the deck scales the slide with a CSS transform, and a lab that goes out of
// sight pauses its training and resumes when it is back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLab } from './support.mjs';
import { labFrame, parentPage } from './embed_support.mjs';

let lab;
before(async () => { lab = await startLab(); });
after(async () => { await lab?.close(); });

const DECK = (src, frameStyle = '') => `<!doctype html><title>deck</title>
  <button id="deck-focus">deck</button>
  <div id="slide" style="width:1280px;height:720px;transform-origin:0 0;${frameStyle}">
    <iframe title="lab" style="width:100%;height:100%;border:0" src="${src}"></iframe></div>
  <script>
    window.keys = []; window.messages = [];
    addEventListener('keydown', (e) => keys.push(e.key));
    addEventListener('message', (e) => { if (e.data?.type === 'attnlab:key') messages.push(e.data.key); });
  </script>`;

test('arrow keys reach the deck unless the lab has focus; a lab without focus passes them back', async () => {
  const { page, problems } = await parentPage(lab, DECK('index.html?embed=1'));
  const frame = await labFrame(page);
  await frame.evaluate(() => {
    window.prevented = [];
    addEventListener('keydown', (e) => window.prevented.push(`${e.key}:${e.defaultPrevented}`));
  });
  await page.focus('#deck-focus');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press(' ');
  assert.deepEqual(await page.evaluate(() => window.keys), ['ArrowRight', ' '], 'focus on the deck: the deck gets the keys');

  // Focus in the lab's heatmap: the lab moves its cell cursor, the deck hears nothing.
  await frame.focus('#heatmap-main');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await frame.waitForFunction(() => document.querySelector('#heatmap-main + .tooltip').dataset.col === '1');
  assert.deepEqual(await page.evaluate(() => [window.keys.length, window.messages.length]), [2, 0]);
  assert.deepEqual(await frame.evaluate(() => window.prevented), ['ArrowRight:true', 'ArrowRight:true'], 'the heatmap uses them');

  // Focus in the iframe but on no control: the key is not taken, and goes to the deck as a message.
  await frame.evaluate(() => { window.prevented = []; document.activeElement.blur(); });
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => window.messages.length === 1);
  assert.deepEqual(await page.evaluate(() => window.messages), ['ArrowRight']);
  assert.deepEqual(await frame.evaluate(() => window.prevented), ['ArrowRight:false'], 'not preventDefault-ed');
  assert.deepEqual(problems, []);
  await page.close();
});

test('tooltip gives the cell under the pointer in an iframe on a slide scaled by a CSS transform', async () => {
  const { page, problems } = await parentPage(lab, DECK('index.html?embed=1', 'transform:translate(30px,20px) scale(0.62)'));
  const frame = await labFrame(page);
  const canvas = frame.locator('#heatmap-main');
  await frame.waitForFunction(() => document.getElementById('heatmap-main').dataset.layout);
  const layout = JSON.parse(await canvas.getAttribute('data-layout'));
  const backing = await canvas.evaluate((c) => ({ width: c.width, height: c.height }));
  for (const [row, col] of [[0, 0], [3, 11], [15, 15], [9, 2]]) {
    const box = await canvas.boundingBox(); // in the top page's pixels: after the slide's transform
    const x = box.x + ((layout.x + (col + 0.5) * layout.cellW) / backing.width) * box.width;
    const y = box.y + ((layout.y + (row + 0.5) * layout.cellH) / backing.height) * box.height;
    await page.mouse.move(x, y);
    await frame.waitForFunction(([r, c]) => {
      const t = document.querySelector('#heatmap-main + .tooltip');
      return !t.hidden && t.dataset.row === String(r) && t.dataset.col === String(c);
    }, [row, col], { timeout: 20000 });
    assert.match(await frame.textContent('#heatmap-main + .tooltip'), new RegExp(`^output position ${row} .* input position ${col}, token`));
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('out of sight pauses training (iframe hidden, slid away, tab hidden) and coming back resumes it', async () => {
  const { page, problems } = await parentPage(lab, DECK('index.html?embed=1&autoplay=1&speed=20&steps=100000'));
  const frame = await labFrame(page);
  const running = (value) => frame.waitForFunction((v) => document.getElementById('lab').dataset.running === v, value, { timeout: 30000 });
  await running('true'); // autoplay
  const slide = (style) => page.evaluate((s) => { document.getElementById('slide').style.cssText += s; }, style);

  await slide('display:none');
  await running('false');
  await slide('display:block');
  await running('true');

  await slide('transform:translateX(-3000px)'); // the deck moved to the next slide
  await running('false');
  await slide('transform:none');
  await running('true');

  // The tab is hidden (visibilitychange), then shown again.
  const setTab = (state) => frame.evaluate((s) => {
    Object.defineProperty(document, 'visibilityState', { value: s, configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
  await setTab('hidden');
  await running('false');
  await setTab('visible');
  await running('true');

  // Paused by the user: coming back into sight does not start it.
  await frame.click('#play');
  await running('false');
  await slide('display:none');
  await slide('display:block');
  await frame.waitForTimeout(600);
  assert.equal(await frame.evaluate(() => document.getElementById('lab').dataset.running), 'false');
  assert.deepEqual(problems, []);
  await page.close();
});
