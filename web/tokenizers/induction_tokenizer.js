// The Induction lab's tokens (core/trainers/induction_task.h), as the one tokenizer interface
// (tokenizer.js), so that its trained model opens in the Writing lab like any decoder: id 0 is the start
// token, always put first; the repeat task's tokens are the ids 1 .. V-1, written as numbers separated by
// spaces ("5 12 7"); the text task's are its text's distinct characters in code-point order (id i + 1 is
// the i-th), one a token. No DOM and no Node API. A text it cannot read is the user's input to fix: an
// AttnLabError, which the page shows beside the prompt and the CLI exits 2 with.
import { AttnLabError } from '../../wasm_bindings/js/checks.js';

const START = '<start>';

export class InductionTokenizer {
  /** vocabSize: V; alphabet: the text task's characters in id order (a string), or null for the repeat task. */
  constructor({ vocabSize, alphabet = null }) {
    this.chars = alphabet === null ? null : [...alphabet];
    if (this.chars && this.chars.length + 1 !== vocabSize) {
      throw new Error(`the text's ${this.chars.length} characters and the start token are not the model's `
        + `${vocabSize} tokens`);
    }
    this.size = vocabSize;
    this.bosId = 0;
    this.eosIds = [];
    this.chatTemplate = null;
    // What circuits.js puts between a prompt and an answer: a space between ids, nothing between characters.
    this.answerSeparator = this.chars ? '' : ' ';
    this.byChar = new Map((this.chars ?? []).map((c, i) => [c, i + 1]));
  }

  /** text -> {tokens, ids, texts}, the start token first (addSpecialTokens), or an Error naming what is not a token. */
  encode(text, { addSpecialTokens = true } = {}) {
    const ids = addSpecialTokens ? [0] : [];
    if (this.chars) {
      for (const c of String(text)) {
        const id = this.byChar.get(c);
        if (id === undefined) {
          throw new AttnLabError(`${JSON.stringify(c)} is not one of the ${this.chars.length} characters this model `
            + 'was trained on (its text\'s)');
        }
        ids.push(id);
      }
    } else {
      for (const word of String(text).split(/\s+/).filter(Boolean)) {
        if (word === START && ids.length === (addSpecialTokens ? 1 : 0)) continue;
        const id = /^\d{1,7}$/.test(word) ? Number(word) : NaN;
        if (!(id >= 1 && id < this.size)) {
          throw new AttnLabError(`${JSON.stringify(word.slice(0, 20))} is not a token of this model: it reads `
            + `token ids 1 to ${this.size - 1} separated by spaces (the start token 0 is put first for you)`);
        }
        ids.push(id);
      }
    }
    return { tokens: ids.map((id) => this.idToToken(id)), ids, texts: ids.map((id) => this.tokenText(id)) };
  }

  /** ids -> text (the start token left out unless skipSpecialTokens is false). */
  decode(ids, { skipSpecialTokens = true } = {}) {
    const tokens = ids.map((id) => this.idToToken(id))  // every id checked, the start token's too
      .filter((token, i) => !(skipSpecialTokens && ids[i] === 0));
    return tokens.join(this.chars ? '' : ' ');
  }

  tokenToId(token) {
    if (token === START) return 0;
    if (this.chars) return this.byChar.get(token) ?? 0;
    const id = Number(token);
    return Number.isInteger(id) && id >= 1 && id < this.size ? id : 0;
  }

  idToToken(id) {
    if (!Number.isInteger(id) || id < 0 || id >= this.size) {
      throw new RangeError(`token id ${id} is outside the vocabulary [0, ${this.size})`);
    }
    if (id === 0) return START;
    return this.chars ? this.chars[id - 1] : String(id);
  }

  isSpecial(id) { return this.idToToken(id) === START; }

  /** A token's text as written after others: " 12" (a space before each id), a character as itself. */
  tokenText(id) {
    const token = this.idToToken(id);
    return id === 0 || this.chars ? token : ` ${token}`;
  }
}
