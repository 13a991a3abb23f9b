// The one quoting of text from a file or a server in a message (web/shared/quote_text.js): controls (C0,
// DEL, C1) escaped so that no escape sequence reaches a terminal, a long text cut with its length said.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quoteText } from '../../web/shared/quote_text.js';
import { characterCount, parseProperty } from '../../web/shared/properties.js';

test('quoteText escapes C0, DEL and C1 controls and cuts a long text, counting characters, not UTF-16 units', () => {
  assert.equal(quoteText('main'), '"main"');
  assert.equal(quoteText('\u001b[2J\u0007tab\there\u007f\u009b'), '"\\x1b[2J\\x07tab\\x09here\\x7f\\x9b"');
  assert.equal(quoteText('x'.repeat(1000000), 10), `"${'x'.repeat(10)}…" (1,000,000 characters)`);
  assert.equal(quoteText('😀'.repeat(2000), 3), '"😀😀😀…" (2,000 characters)');
  assert.equal(quoteText('é'.repeat(5), 5), '"ééééé"');
});

test('a text setting counts characters, not UTF-16 units: 2,000 emoji fit a 2,000-character field, 2,001 do not', () => {
  assert.equal(characterCount('😀'.repeat(2000)), 2000);
  assert.equal(characterCount('a\ud800b'), 3, 'a lone surrogate is one');
  const prop = { name: 'text', type: 'text', label: 'Prompt', default: '', maxLength: 2000 };
  assert.equal(parseProperty(prop, '😀'.repeat(2000)).value.length, 4000);
  assert.equal(parseProperty(prop, '😀'.repeat(2001)).error, 'Prompt is 2,001 characters long: at most 2,000');
});
