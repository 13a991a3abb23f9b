// The home page (index.html with no ?lab=): the labs in course order, a card each with a small
// picture of its key figure, one sentence, the notebook it follows and a link; and, on a lab's page,
// the way back to the labs and on to the next one.
import { themeColors } from './theme.js';
import { colorAt, cssColor } from '../shared/palette.js';
import { el } from './el.js';
import { courseLine } from '../labs/common.js';

const linkTo = (lab) => `?lab=${encodeURIComponent(lab.id)}`;

/** root: the element to fill; labs: the registry's list -> {redraw()} */
export function showHome(root, labs) {
  const list = el('ol', { className: 'lab-cards' });
  const pictures = [];
  labs.forEach((lab, i) => {
    const canvas = el('canvas', { className: 'lab-card-picture', width: 160, height: 120 });
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', lab.thumbnail?.label ?? `${lab.title}: key figure`);
    pictures.push([canvas, lab]);
    const card = el('li', { className: 'lab-card' },
      el('a', { href: linkTo(lab), className: 'lab-card-link' },
        canvas,
        el('h2', { textContent: `${i + 1}. ${lab.title}` }),
        el('p', { className: 'lab-card-summary', textContent: lab.summary }),
        el('p', { className: 'lab-card-notebook muted', textContent: courseLine(lab) })));
    card.dataset.lab = lab.id;
    list.append(card);
  });
  const intro = el('section', { className: 'panel home-intro' },
    el('h2', { textContent: 'The labs, in course order' }),
    el('p', { id: 'home-what', textContent: whatTheLabsDo(labs) }),
    el('p', { id: 'home-privacy', textContent: PRIVACY }));
  root.replaceChildren(el('div', { className: 'home' }, intro, list));
  const redraw = () => {
    for (const [canvas, lab] of pictures) drawThumbnail(canvas, lab);
  };
  redraw();
  root.dataset.drawn = 'all';
  return { redraw };
}

const NUMBERS = ['No', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine'];
const counted = (n, one, many) => `${(NUMBERS[n] ?? String(n)).toLowerCase()} ${n === 1 ? one : many}`;

/**
 * What the labs do, counted from their declarations (issue 38: "Each lab trains", when four do not):
 * those with a trainer train, those with `open` read a pretrained checkpoint, the others compute
 * attention on inputs the student edits.
 */
function whatTheLabsDo(labs) {
  const trains = labs.filter((l) => l.trainer).length;
  const opens = labs.filter((l) => !l.trainer && l.open).length;
  const computes = labs.length - trains - opens;
  const parts = [
    trains && `${counted(trains, 'lab trains', 'labs train')} a small attention model in your browser and `
      + `draw${trains === 1 ? 's' : ''} what it learns`,
    computes && `${counted(computes, 'computes', 'compute')} attention step by step on inputs you edit`,
    opens && `${counted(opens, 'opens', 'open')} a pretrained model and show${opens === 1 ? 's' : ''} every layer `
      + 'and head at work',
  ].filter(Boolean);
  const text = `${parts.join('; ')}.`;
  return text[0].toUpperCase() + text.slice(1);
}

// What leaves this machine: only a model the student asks the Hub for (web/models/hub_ids.js's endpoint).
const PRIVACY = 'Everything is computed on this machine, offline included. What you type and the files you open stay '
  + 'here: nothing is uploaded. The one request the page makes is the one you ask for: a model opened by its Hugging '
  + 'Face Hub id is downloaded from huggingface.co, then kept in this browser.';

/** The lab's key figure in miniature, from its declaration (lab.thumbnail: {kind, label}). */
function drawThumbnail(canvas, lab) {
  const ctx = canvas.getContext('2d');
  const colors = themeColors();
  const { width: W, height: H } = canvas;
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, W, H);
  const cells = lab.thumbnail?.cells?.() ?? [];
  const n = cells.length;
  if (!n) return;
  const cols = cells[0].length;
  const size = Math.floor(Math.min((W - 8) / cols, (H - 8) / n));
  const x0 = Math.floor((W - size * cols) / 2), y0 = Math.floor((H - size * n) / 2);
  cells.forEach((row, r) => row.forEach((v, c) => {
    ctx.fillStyle = cssColor(colorAt('viridis', v));
    ctx.fillRect(x0 + c * size, y0 + r * size, size - (size > 6 ? 1 : 0), size - (size > 6 ? 1 : 0));
  }));
}

/**
 * A lab page's links: back to the labs and the lab's name above it (top), and on to the next lab in the
 * course under it (bottom, where the lesson ends; it also keeps Play close to the top of the Tab order).
 */
export function labNavigation(lab, next) {
  // Not full-only: controls=min (a projector's page) keeps the lab's name and the way back; a slide
  // (embed=1) hides it (styles.css).
  const top = el('nav', { className: 'lab-nav' });
  top.setAttribute('aria-label', 'Labs');
  top.append(el('a', { href: '?', textContent: '← All labs', id: 'nav-home' }),
    el('span', { className: 'lab-nav-here' }, el('strong', { textContent: lab.title }),
      el('span', { className: 'lab-nav-subtitle', textContent: ` — ${lab.subtitle}` })));
  const bottom = el('nav', { className: 'lab-nav lab-nav-next full-only' });
  bottom.setAttribute('aria-label', 'Next lab');
  if (next) bottom.append(el('a', { href: linkTo(next), textContent: `Next: ${next.title} →`, id: 'nav-next' }));
  return { top, bottom };
}
