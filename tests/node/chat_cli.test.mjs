// `attnlab generate --chat "..."` (issue 37, item 4), the Writing lab's chat headless: the question goes
// into tokenizer_config.json's chat_template (tests/fixtures/gpt2_tiny/chat: SmolLM2's ChatML template on
// a tiny GPT-2 with <|im_start|> and <|im_end|> added), and the prompt written is the template's text with
// the ids the Python reference of make_tokenizer_fixtures.py gives (chat_cases.json's checkpoint); the
// template's tokens are the prompt's, so the attention over them is there. A model without a template,
// or --chat with a prompt too long for the model, is refused in one line, exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const CHAT = JSON.parse(readFileSync(path.join(FIXTURES, 'chat_cases.json'), 'utf8')).checkpoint;
const folder = path.join(FIXTURES, CHAT.folder);

test('generate --chat --json: the prompt is the chat template\'s text, its ids the reference\'s; attention covers the template\'s tokens', () => {
  const r = run('generate', '--model', folder, '--chat', CHAT.question, '--temperature', '0', '--max-new-tokens', '3', '--json');
  assert.equal(r.status, 0, r.stderr);
  const record = JSON.parse(r.stdout);
  assert.equal(record.prompt.chat, CHAT.question);
  assert.equal(record.prompt.text, CHAT.text);
  assert.deepEqual(record.prompt.ids, CHAT.ids);
  assert.equal(record.prompt.tokens[0], '<|im_start|>', 'the template\'s own token, whole');
  const T = CHAT.ids.length;
  // promptAttention: [layer][head] rows over all T prompt tokens, the template's included.
  assert.equal(record.promptAttention[0][0].length, T);
  assert.equal(record.promptAttention[0][0][T - 1].length, T);
  assert.equal(record.generated.ids.length, 3);
});

test('generate --chat: text mode names the template\'s tokens; a model without a chat template is refused in one line', () => {
  const r = run('generate', '--model', folder, '--chat', CHAT.question, '--temperature', '0', '--max-new-tokens', '2');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^prompt \\(${CHAT.ids.length} tokens\\): "<\\|im_start\\|>" "s" "y"`));
  assert.doesNotMatch(r.stdout.split('\n')[2], /\uFFFD/, 'written tokens: bytes as <0xNN>, never U+FFFD');
  const none = run('generate', '--model', path.join(FIXTURES, 'gpt2_tiny', 'hub'), '--chat', 'Hi');
  assert.equal(none.status, 2);
  assert.equal(none.stderr, 'attnlab: --chat: this model has no chat template (tokenizer_config.json\'s chat_template): write a prompt instead\n');
  const long = run('generate', '--model', folder, '--chat', 'word '.repeat(40));
  assert.equal(long.status, 2);
  assert.match(long.stderr, /^attnlab: --chat \(in its template\) is \d+ tokens: this model reads at most 128 \(n_positions\)\n$/);
});

// Issue 48, item 1: a template that never ends, or writes without bound, is stopped under a budget (steps,
// characters written, list items, range()'s length: web/tokenizers/chat_template.js CHAT_BUDGET) in one
// line naming the template, exit 2, within seconds and a few hundred MB: before, V8 ran out of memory
// after 40 s at 4.7 GB (exit 134). The real template still renders, the same text as before.
test('generate --chat: a chat template past its budget is stopped in one line naming it, exit 2', async () => {
  const { mkdtempSync, cpSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const hostile = {
    '{% for i in range(100000000) %}{% endfor %}': 'range() of 100,000,000 items, more than 100,000',
    '{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}': 'it took more than 300,000 steps',
    "{% set s = 'x' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s }}": 'it wrote more than 8,000,000 characters',
    "{% for i in range(100000) %}{{ '0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789' }}{% endfor %}": 'it wrote more than 8,000,000 characters',
    "{% set s = 'ab\\ncd' %}{% for i in range(30) %}{% set s = (s ~ '\\n' ~ s) | indent(4) %}{% endfor %}{{ s }}": 'it wrote more than 8,000,000 characters',
    "{% set ns = namespace(a=[]) %}{% for i in range(90000) %}{% set ns.a = ns.a + ['y'] %}{% endfor %}{{ ns.a | join(',') }}": 'it made lists of more than 4,000,000 items',
  };
  for (const [template, why] of Object.entries(hostile)) {
    const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-chat-'));
    cpSync(folder, dir, { recursive: true });
    const config = JSON.parse(readFileSync(path.join(folder, 'tokenizer_config.json'), 'utf8'));
    writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ ...config, chat_template: template }));
    const r = run('generate', '--model', dir, '--chat', 'Hi', '--max-new-tokens', '1');
    assert.equal(r.status, 2, `${template}: ${r.stderr.slice(0, 300)}`);
    assert.equal(r.stderr.split('\n').length, 2, 'one line');
    assert.equal(r.stderr, `attnlab: --chat: tokenizer_config.json's chat_template was stopped: ${why}, far past what a chat needs\n`);
  }
});

// Issue 48, item 6: text from a file reaches the terminal escaped, and a line past 2,000 characters cut.
test('generate --chat: a template\'s raise_exception with an escape sequence, and one of 100,000 characters, reach stderr escaped and cut', async () => {
  const { mkdtempSync, cpSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const config = JSON.parse(readFileSync(path.join(folder, 'tokenizer_config.json'), 'utf8'));
  for (const [said, shown] of [['\u001b[2J\u001b]0;owned\u0007gone', '\\x1b[2J\\x1b]0;owned\\x07gone'], ['w'.repeat(100000), null]]) {
    const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-chat-'));
    cpSync(folder, dir, { recursive: true });
    writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ ...config, chat_template: `{{ raise_exception(${JSON.stringify(said)}) }}` }));
    const r = run('generate', '--model', dir, '--chat', 'Hi', '--max-new-tokens', '1');
    assert.equal(r.status, 2, r.stderr.slice(0, 300));
    assert.doesNotMatch(r.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, 'no control character reaches the terminal');
    assert.equal(r.stderr.split('\n').length, 2, 'one line');
    if (shown) assert.equal(r.stderr, `attnlab: --chat: tokenizer_config.json's chat_template refused the chat: ${shown}\n`);
    else assert.match(r.stderr, /w… \(a line of 100,\d{3} characters, cut\)\n$/);
    if (!shown) assert.ok(r.stderr.length < 2200, `${r.stderr.length} characters`);
  }
});
