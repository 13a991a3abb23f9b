// What watching a tokenizer.json's own patterns costs (web/tokenizers/regex_guard.js): opening Llama 3's
// tokenizer fixture with and without the watcher's probes, and one encode of a short sentence with and
// without the round trip to the watcher. Medians of 5 runs, printed; docs/reliability.md has the numbers.
//   node benchmarks/tokenizer_watch.mjs
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HfTokenizer } from '../web/tokenizers/hf_tokenizer.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const text = readFileSync(path.join(here, '..', 'tests', 'fixtures', 'tokenizers', 'llama3', 'tokenizer.json'), 'utf8');
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const timed = async (f) => { const t = performance.now(); await f(); return performance.now() - t; };

const watchedOpen = [], plainOpen = [];
for (let i = 0; i < 5; i++) {
  watchedOpen.push(await timed(() => HfTokenizer.fromFiles({ tokenizerJson: text }).watchPatterns()));
  plainOpen.push(await timed(() => HfTokenizer.fromFiles({ tokenizerJson: text })));
}
const watched = await HfTokenizer.fromFiles({ tokenizerJson: text }).watchPatterns();
const plain = HfTokenizer.fromFiles({ tokenizerJson: text });
const perEncode = (t) => median(Array.from({ length: 5 }, () => {
  const start = performance.now();
  for (let i = 0; i < 1000; i++) t.encode(`The quick brown fox jumps over the lazy dog ${i}`);
  return (performance.now() - start) / 1000;
}));
const [w, p] = [perEncode(watched), perEncode(plain)];
console.log(`open: ${median(watchedOpen).toFixed(1)} ms watched (probes included), ${median(plainOpen).toFixed(1)} ms plain`);
console.log(`encode: ${(w * 1000).toFixed(0)} us watched, ${(p * 1000).toFixed(0)} us plain (+${((w - p) * 1000).toFixed(0)} us a text)`);
