// What a first-time student sees in a lab's first screen, measured from the layout (first_screen.test.mjs
// and scripts/screens.mjs): where the lab's main figure and main action are, whether the page scrolls
// sideways, which text is clipped by its box or smaller than 11 px (HTML text by its computed size,
// canvas text by the size it is drawn at on screen), how many Tab presses reach the main action, and
// whether the main figure has been painted.

/** The two screens every lab is checked at: a laptop's and a phone's (CSS px). */
export const SCREENS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];

/** The smallest text a student is asked to read (CSS px), on the page and in its figures. */
export const MIN_TEXT_PX = 11;

/**
 * Records every text drawn on a 2D canvas with the size it has in canvas pixels (the font's px times
 * the transform's scale), so that its size on screen is known once the canvas has its CSS size.
 * Install before the page loads (context.addInitScript runs it in every new page).
 */
export function recordCanvasText() {
  const proto = CanvasRenderingContext2D.prototype;
  for (const name of ['fillText', 'strokeText']) {
    const draw = proto[name];
    proto[name] = function recorded(text, ...rest) {
      const px = Number(/(\d+(?:\.\d+)?)px/.exec(this.font)?.[1] ?? 10);
      const m = this.getTransform();
      const scale = Math.hypot(m.a, m.b);
      const texts = (this.canvas.__texts ??= new Map());
      // One entry per text: the last size it was drawn at (a canvas is redrawn many times).
      if (String(text).trim()) texts.set(String(text), px * scale);
      return draw.call(this, text, ...rest);
    };
  }
  // A canvas cleared by a new size forgets its texts (they are drawn again).
  const widthSetter = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, 'width').set;
  Object.defineProperty(HTMLCanvasElement.prototype, 'width', {
    set(v) { this.__texts?.clear(); widthSetter.call(this, v); },
    get: Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, 'width').get,
  });
}

/**
 * The layout of the page as it is now -> {scrollWidth, innerWidth, innerHeight, figure, action
 * (rects or null), clipped: [text], smallText: ['size: text'], smallCanvasText: ['figure: size: text']}.
 * first: {figure, action} CSS selectors (the lab's declaration: lab.firstScreen).
 */
export async function layoutReport(page, first, minPx = MIN_TEXT_PX) {
  return page.evaluate(({ first, minPx }) => {
    const visible = (e) => {
      if (!e.getClientRects().length) return false;
      const s = getComputedStyle(e);
      if (s.visibility === 'hidden') return false;
      // Text kept for screen readers only (1 px boxes) is not read by the eye.
      const r = e.getBoundingClientRect();
      return r.width > 2 && r.height > 2;
    };
    const rect = (sel) => {
      const e = document.querySelector(sel);
      if (!e || !visible(e)) return null;
      const r = e.getBoundingClientRect();
      return { top: r.top, left: r.left, bottom: r.bottom, right: r.right };
    };
    const ownText = (e) => [...e.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('').trim();
    const scrolls = (e) => {
      for (let a = e; a; a = a.parentElement) if (/(auto|scroll)/.test(getComputedStyle(a).overflowX) && a !== document.documentElement && a !== document.body) return true;
      return false;
    };
    const clipped = [], smallText = [];
    const measure = document.createElement('canvas').getContext('2d');
    for (const e of document.body.querySelectorAll('*')) {
      if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'OPTION', 'CANVAS'].includes(e.tagName) || !visible(e)) continue;
      const s = getComputedStyle(e);
      const text = e.tagName === 'SELECT' ? e.selectedOptions[0]?.textContent.trim() ?? '' : ownText(e);
      if (!text) continue;
      const size = parseFloat(s.fontSize);
      if (size < minPx - 0.01) smallText.push(`${size.toFixed(1)} px: ${text.slice(0, 60)}`);
      if (scrolls(e)) continue; // a scrolling box (a wide table) shows the rest on scroll
      if (e.tagName === 'SELECT') {
        // A select shows its chosen option's text beside the arrow: it must fit its box.
        measure.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
        const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - 16;
        if (measure.measureText(text).width > room + 1) clipped.push(`select: ${text}`);
      } else if (s.display !== 'inline' && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
        clipped.push(`${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}: ${text.slice(0, 60)}`);
      }
    }
    // Nothing sticks out of its panel (a menu as wide as its longest choice ran past the settings' column
    // into the figures beside it), unless a scrolling box holds it.
    const overflows = [];
    for (const panel of document.querySelectorAll('.panel')) {
      if (!visible(panel)) continue;
      const box = panel.getBoundingClientRect();
      for (const e of panel.querySelectorAll('*')) {
        if (['OPTION', 'SCRIPT', 'STYLE'].includes(e.tagName) || !visible(e) || scrolls(e)) continue;
        const r = e.getBoundingClientRect();
        if (r.right > box.right + 1 || r.left < box.left - 1) {
          overflows.push(`${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(' ')[0]}` : ''}`
            + ` (${Math.round(r.left)}..${Math.round(r.right)}) out of ${panel.id || panel.className.split(' ').slice(0, 2).join('.')} (${Math.round(box.left)}..${Math.round(box.right)})`);
        }
      }
    }
    // A figure's text at the size its drawing code gives it (CSS px of the figure's own width); the
    // main figure's at the size it has on screen, where the page may shrink it to fit.
    const smallCanvasText = [];
    const mainFigure = document.querySelector(first.figure);
    for (const c of document.querySelectorAll('canvas')) {
      if (!c.__texts?.size || !visible(c) || !c.width) continue;
      const main = mainFigure === c || mainFigure?.contains(c);
      const cssWidth = main ? c.getBoundingClientRect().width : parseFloat(c.style.width) || c.getBoundingClientRect().width;
      const perPx = cssWidth / c.width; // CSS px per canvas px
      for (const [text, px] of c.__texts) {
        if (px * perPx < minPx - 0.05) smallCanvasText.push(`${c.dataset.figure || c.id || 'canvas'}${main ? ' (main, on screen)' : ''}: ${(px * perPx).toFixed(1)} px: ${text.slice(0, 40)}`);
      }
    }
    return {
      scrollWidth: document.documentElement.scrollWidth, innerWidth, innerHeight,
      figure: rect(first.figure), action: rect(first.action), clipped, smallText, smallCanvasText, overflows,
    };
  }, { first, minPx });
}

/**
 * Whether a rect is on the first screen (the page scrolled to its top): wholly inside it, or, for a
 * figure taller than what is left of a phone's screen, filling at least half of the screen's height
 * from inside its width (the figure is what the student sees first; its foot is one swipe away).
 */
export const inFirstScreen = (r, { innerWidth, innerHeight }) => {
  if (!r || r.top < 0 || r.left < 0 || r.right > innerWidth + 0.5) return false;
  return r.bottom <= innerHeight + 0.5 || innerHeight - r.top >= innerHeight / 2;
};

/** Tab presses from a freshly loaded page until `selector` has focus -> the count, or null past max. */
export async function tabsTo(page, selector, max = 12) {
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => document.activeElement === document.querySelector(sel), selector)) return presses;
  }
  return null;
}

/** How many different colours an element shows on screen (1: blank). */
export async function coloursShown(page, selector) {
  const png = await page.locator(selector).first().screenshot();
  return page.evaluate(async (b64) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const ctx = new OffscreenCanvas(bitmap.width, bitmap.height).getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const d = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  }, png.toString('base64'));
}
