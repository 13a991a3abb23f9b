// The one interface every checkpoint model's tokenizer has (WordPiece for BERT: wordpiece.js;
// SentencePiece unigram for Marian: sentencepiece.js; byte-level BPE for GPT-2: gpt2_bpe.js), so a lab,
// the CLI and the registry treat them alike:
//
//   size                       the vocabulary's size (ids run 0..size-1)
//   encode(text, options?)  -> {tokens, ids, ...}: the model's input for `text`, special tokens
//                              included ([CLS] ... [SEP]; ... </s>), each token's text and its id; a kind
//                              may add more (BERT: typeIds; Marian: pieces, the same as tokens)
//   decode(ids, options?)   -> text, as the Hugging Face tokenizer's decode(ids, skip_special_tokens=True)
//   tokenToId(token)        -> id (an unknown token: the unknown token's id)
//   idToToken(id)           -> the token's text as the vocabulary writes it ("##ing", "▁chat")
//
// checkTokenizer is what the model registry (web/models/registry.js) asks of every opener's tokenizer.
export const TOKENIZER_INTERFACE = Object.freeze(['encode', 'decode', 'tokenToId', 'idToToken']);

/** The tokenizer, or a TypeError naming what it lacks of the interface above. */
export function checkTokenizer(tokenizer, kind = 'this model') {
  const missing = TOKENIZER_INTERFACE.filter((m) => typeof tokenizer?.[m] !== 'function');
  if (!Number.isInteger(tokenizer?.size)) missing.push('size');
  if (missing.length) throw new TypeError(`the tokenizer of ${kind} lacks ${missing.join(', ')} `
    + '(web/tokenizers/tokenizer.js)');
  return tokenizer;
}

/**
 * The writer's end-of-text setting from a decoder's tokenizer: {eosIds} where it names its ends
 * (hf_tokenizer.js: generation_config.json's eos_token_id, a number or a list such as Llama 3's three,
 * else config.json's, and tokenizer_config.json's eos_token), else {} (the writer takes config.json's).
 */
export const writingEnds = (tokenizer) => (tokenizer?.eosIds?.length ? { eosIds: tokenizer.eosIds.slice() } : {});
