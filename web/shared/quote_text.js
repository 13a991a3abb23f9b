// Text from a user's file or a server, as a message quotes it: control characters (C0, DEL and C1, so no
// escape sequence reaches a terminal) written as \xNN, and a long text cut with its length said. Pure.

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** text with its control characters (C0, DEL, C1; a tab too unless keepTab) written as \xNN. */
export function escapeControls(text, { keepTab = false } = {}) {
  return String(text).replace(CONTROLS,
    (c) => (keepTab && c === '\t' ? c : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

/** text -> "quoted", at most `max` characters of it, controls escaped: '"a\\x1b[31m…" (5,000 characters)'. */
export function quoteText(text, max = 80) {
  const chars = [...String(text)];
  const shown = escapeControls(chars.slice(0, max).join(''));
  return chars.length > max ? `"${shown}…" (${chars.length.toLocaleString('en')} characters)` : `"${shown}"`;
}
