// A token's text as the Writing lab's figures show it (web/labs/visible_text.js, issue 38): a byte that
// is not part of a whole UTF-8 character is written <0xE2>, a control character as its bytes (<0x00>),
// never a bare U+FFFD or a blank. Checked against the platform's own UTF-8 decoder (TextDecoder with
// fatal: true) on every 1- and 2-byte sequence and 20,000 random ones, and on the tiny GPT-2 tokenizer
// of tests/fixtures/gpt2_tiny.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bytesAsText, idsAsText, tokenAsText, utf8Length, visibleToken } from '../../web/labs/visible_text.js';
import { HfTokenizer } from '../../web/tokenizers/hf_tokenizer.js';
import { FIXTURES } from './support.mjs';

const strict = new TextDecoder('utf-8', { fatal: true });
const wellFormed = (bytes) => { try { strict.decode(bytes); return true; } catch { return false; } };

/** The bytes a text of bytesAsText stands for: <0xNN> as its byte, every other character as its UTF-8. */
const bytesOf = (text) => {
  const out = [];
  for (const part of text.split(/(<0x[0-9A-F]{2}>)/)) {
    if (/^<0x[0-9A-F]{2}>$/.test(part)) out.push(parseInt(part.slice(3, 5), 16));
    else out.push(...new TextEncoder().encode(part));
  }
  return Uint8Array.from(out);
};

test('utf8Length is the decoder\'s idea of a whole character: every lead byte with every second byte, and 4-byte forms at their edges', () => {
  const differ = [];
  for (let a = 0; a < 256; a++) {
    for (let b = 0; b < 256; b++) {
      // A lead byte with this second byte, completed by continuation bytes where it needs them.
      const need = a >= 0xf0 ? 4 : a >= 0xe0 ? 3 : a >= 0xc0 ? 2 : 1;
      const bytes = Uint8Array.from([a, b, 0x80, 0x80].slice(0, Math.max(need, 2)));
      const ours = utf8Length(bytes, 0) === need && need > 1;
      const theirs = need > 1 && wellFormed(bytes.subarray(0, need));
      if (ours !== theirs) differ.push(`${a.toString(16)} ${b.toString(16)}: ours ${ours}, TextDecoder ${theirs}`);
    }
    if (a < 0x80) assert.equal(utf8Length(Uint8Array.of(a), 0), 1);
  }
  assert.deepEqual(differ.slice(0, 5), [], `${differ.length} pairs differ`);
  assert.equal(utf8Length(Uint8Array.of(0xf4, 0x8f, 0xbf, 0xbf), 0), 4); // U+10FFFF
  assert.equal(utf8Length(Uint8Array.of(0xf4, 0x90, 0x80, 0x80), 0), 0); // past it
  assert.equal(utf8Length(Uint8Array.of(0xe2, 0x80), 0), 0); // cut short
});

test('bytesAsText: pieces of characters as <0xE2>, controls as their bytes, the rest as text; the bytes can be read back', () => {
  assert.equal(bytesAsText(new TextEncoder().encode('a—b')), 'a—b');
  assert.equal(bytesAsText(Uint8Array.of(0xe2, 0x80)), '<0xE2><0x80>');
  assert.equal(bytesAsText(Uint8Array.of(0x20, 0xe2, 0x80, 0x94, 0xf0, 0x9f)), ' —<0xF0><0x9F>');
  assert.equal(bytesAsText(Uint8Array.of(0x00)), '<0x00>');
  assert.equal(bytesAsText(new TextEncoder().encode('x\ry\u007f\u0085\n\t')), 'x<0x0D>y<0x7F><0xC2><0x85>\n\t');
  // Random bytes (biased towards UTF-8's lead and continuation bytes): never U+FFFD, never a control
  // (but a newline or a tab), and every byte accounted for.
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pool = [0x00, 0x0a, 0x1f, 0x41, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
  for (let i = 0; i < 20000; i++) {
    const bytes = Uint8Array.from({ length: 1 + Math.floor(random() * 8) }, () => (random() < 0.7 ? pool[Math.floor(random() * pool.length)] : Math.floor(random() * 256)));
    const text = bytesAsText(bytes);
    assert.ok(!text.includes('\ufffd'), `${[...bytes]}: ${text}`);
    assert.ok(!/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u.test(text), `${[...bytes]}: a control left in ${JSON.stringify(text)}`);
    assert.deepEqual([...bytesOf(text)], [...bytes], `${[...bytes]} -> ${text}`);
  }
});

test('visibleToken: a space, a newline and a tab as signs; an empty token as ∅; a control as its byte', () => {
  assert.equal(visibleToken(' the\n\t'), '␣the↵⇥');
  assert.equal(visibleToken(''), '∅');
  assert.equal(visibleToken('a\u0000'), 'a<0x00>');
});

test('the tiny GPT-2 tokenizer: each token\'s bytes, a character split over tokens shown as bytes, whole when read together', () => {
  const folder = path.join(FIXTURES, 'gpt2_tiny', 'hub');
  const tok = HfTokenizer.fromGpt2Files(readFileSync(path.join(folder, 'vocab.json'), 'utf8'), readFileSync(path.join(folder, 'merges.txt'), 'utf8'));
  const text = 'a—b😀\u0000!';
  const { ids } = tok.encode(text);
  const shown = ids.map((id) => tokenAsText(tok, id));
  // "—" is E2 80 94, three byte tokens; "😀" is F0 9F 98 80, whose first two bytes are one token of this vocabulary.
  assert.deepEqual(shown, ['a', '<0xE2>', '<0x80>', '<0x94>', 'b', '<0xF0><0x9F>', '<0x98>', '<0x80>', '<0x00>', '!']);
  assert.equal(tok.tokenText(ids[1]), '\ufffd', 'tokenText alone says only "�"');
  // Read together, the characters are whole again; the NUL stays visible.
  assert.equal(idsAsText(tok, ids), 'a—b😀<0x00>!');
  // A special token has no bytes of its own: its name.
  assert.equal(tok.tokenBytes(tok.eosId), null);
  assert.equal(idsAsText(tok, [...ids.slice(0, 2), tok.eosId]), 'a<0xE2><|endoftext|>');
});
