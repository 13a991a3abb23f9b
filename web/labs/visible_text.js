// A token's text as a figure shows it (the Writing lab, issue 38): every byte accounted for. A byte-level
// BPE token may hold part of a UTF-8 character (GPT-2 writes "—" as three tokens, E2 80 94): decoded
// alone it is U+FFFD, "�", which says nothing about which bytes it has, so such bytes are written as
// SentencePiece writes its byte pieces, <0xE2>. Control characters draw nothing (a NUL is a blank on a
// canvas), so they are written as their byte too, <0x00>; a space, a newline and a tab keep their
// usual signs (␣ ↵ ⇥). No DOM here: the labs' figures and the tests call these.

const decoder = new TextDecoder();

/** A byte as the figures write it: <0xE2>. */
const byteText = (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

/**
 * The length of the well-formed UTF-8 character at bytes[i], or 0 where none starts there (a lone
 * continuation byte, a lead byte without its continuation, an overlong form, a surrogate, past U+10FFFF):
 * the table of well-formed byte sequences, Unicode 15, chapter 3, table 3-7.
 */
export function utf8Length(bytes, i) {
  const b0 = bytes[i];
  const cont = (k, lo = 0x80, hi = 0xbf) => i + k < bytes.length && bytes[i + k] >= lo && bytes[i + k] <= hi;
  if (b0 <= 0x7f) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const [lo, hi] = b0 === 0xe0 ? [0xa0, 0xbf] : b0 === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const [lo, hi] = b0 === 0xf0 ? [0x90, 0xbf] : b0 === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// C0 controls and DEL, and the C1 controls (U+0080..U+009F, two bytes each in UTF-8), but not the
// newline and the tab, which a text shows as what they are.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/gu;
const controlText = (ch) => [...new TextEncoder().encode(ch)].map(byteText).join('');

/**
 * bytes -> text: each well-formed UTF-8 character as itself, each byte that is not part of one as
 * <0xE2>, each control character (but the newline and the tab) as its bytes, <0x00>.
 */
export function bytesAsText(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const n = utf8Length(bytes, i);
    if (n) {
      out += decoder.decode(bytes.subarray(i, i + n)).replace(CONTROL, controlText);
      i += n;
    } else {
      out += byteText(bytes[i]);
      i += 1;
    }
  }
  return out;
}

/**
 * The text of token ids as read together (bytes run into each other: a character split over two
 * tokens is whole): tokenizer.tokenBytes(id) (null for a special token, whose own text is used), else
 * tokenizer.tokenText(id) for a tokenizer that has no bytes to give.
 */
export function idsAsText(tokenizer, ids) {
  let out = '', run = [];
  const flush = () => {
    if (run.length) out += bytesAsText(Uint8Array.from(run));
    run = [];
  };
  for (const id of ids) {
    const bytes = tokenizer.tokenBytes?.(id);
    if (bytes) run.push(...bytes);
    else {
      flush();
      out += tokenizer.tokenText(id);
    }
  }
  flush();
  return out;
}

/** One token's text, every byte accounted for (see idsAsText). */
export const tokenAsText = (tokenizer, id) => idsAsText(tokenizer, [id]);

/**
 * A token's text for a figure's label: tokenAsText's, with a space as ␣, a newline as ↵, a tab as ⇥
 * (a token's own space is part of it), an empty token as ∅, and any control character left as its bytes.
 */
export const visibleToken = (text) => (text === '' ? '∅'
  : text.replace(CONTROL, controlText).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥'));
