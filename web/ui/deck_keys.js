// Keyboard manners for a lab embedded in a slide deck: the deck owns the arrow keys, space and
// Page Up / Down, unless the lab has focus. A key pressed while the iframe has focus but no lab
// control does (e.g. after a click on the lab's background) is passed to the parent page as a
// message, {type: 'attnlab:key', key, code, shiftKey}, for the deck to act on (docs/embedding.md).
// The lab never calls preventDefault / stopPropagation on these keys outside its own controls.

const DECK_KEYS = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', ' ', 'PageUp', 'PageDown', 'Home', 'End'];

/** Whether focus is inside one of the lab's controls or canvases (they use the keys themselves). */
function labHasFocus(doc = document) {
  const active = doc.activeElement;
  if (!active || active === doc.body || active === doc.documentElement) return false;
  return active.matches('input, select, textarea, button, canvas, a[href], [tabindex]:not([tabindex="-1"]), label');
}

/** In an iframe: forwards the deck's keys to the parent while the lab has no focus. */
export function forwardDeckKeys(win = window) {
  if (win.parent === win) return;
  win.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || !DECK_KEYS.includes(event.key) || labHasFocus(win.document)) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    // Only a key name goes out, so any parent origin may have it.
    win.parent.postMessage({ type: 'attnlab:key', key: event.key, code: event.code, shiftKey: event.shiftKey }, '*');
  });
}
