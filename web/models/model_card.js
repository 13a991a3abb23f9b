// A checkpoint folder's model card (README.md, as on the Hugging Face Hub): what its YAML front matter's
// `tags` say. Only one thing is read: the tag "random-weights", which the tiny checkpoints of tests/fixtures
// carry (tests/fixtures/make_model_cards.py), so the page can say beside the open model that it is random test
// weights and its output noise (issue 45: they looked like broken real models). No DOM, no Node API.
//
// The card is a user's file: only its first MAX_CARD_CHARACTERS are looked at, the front matter must start
// on the first line ("---") and end within them, and the tags are read from `tags: [a, b]` or from the
// `- a` lines under `tags:`; anything else (no front matter, another layout, binary) is simply no tag.

export const MAX_CARD_CHARACTERS = 65536;
export const RANDOM_WEIGHTS_TAG = 'random-weights';

/** README.md's text -> its front matter's tags (strings, at most 100), or [] when it has none it can read. */
export function cardTags(text) {
  if (typeof text !== 'string') return [];
  const head = text.slice(0, MAX_CARD_CHARACTERS).replace(/^\uFEFF/, '');
  const lines = head.split(/\r?\n/);
  if (lines[0].trim() !== '---') return [];
  const end = lines.findIndex((line, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (end < 0) return [];
  const tags = [];
  const unquote = (s) => s.trim().replace(/^(["'])(.*)\1$/, '$2');
  for (let i = 1; i < end && tags.length < 100; i++) {
    const inline = /^tags:\s*\[(.*)\]\s*$/.exec(lines[i]);
    if (inline) {
      tags.push(...inline[1].split(',').map(unquote).filter(Boolean));
      continue;
    }
    if (!/^tags:\s*$/.test(lines[i])) continue;
    for (let j = i + 1; j < end && tags.length < 100; j++) {
      const item = /^\s*-\s+(.+)$/.exec(lines[j]);
      if (!item) break;
      tags.push(unquote(item[1]));
    }
  }
  return tags.slice(0, 100);
}

/** Whether a model card marks its checkpoint as random test weights. */
export const isRandomWeightsCard = (text) => cardTags(text).includes(RANDOM_WEIGHTS_TAG);
