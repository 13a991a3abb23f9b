// Chat (issue 37, item 4): a question to an instruct model, as the model was trained to read it. Where
// tokenizer_config.json has a chat_template, it is rendered by @huggingface/jinja (Hugging Face's Jinja
// for chat templates, the one transformers.js uses) with what transformers' apply_chat_template passes:
// the messages, add_generation_prompt, and the tokenizer's special tokens as strings (bos_token,
// eos_token, unk_token, pad_token, ...; raise_exception and strftime_now are the library's globals). The
// text is then tokenized without adding BOS/EOS again (apply_chat_template(tokenize=True) passes
// add_special_tokens=False: the template writes its own), so the template's tokens (<|im_start|>,
// <|start_header_id|>, ...) are the prompt's first tokens, and show in the attention views like any other.
// No DOM, no Node API: the Writing lab and `attnlab generate --chat` share it.
import { Environment, Interpreter, Template } from '../../node_modules/@huggingface/jinja/dist/index.js';

export class ChatError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ChatError';
  }
}

// transformers' SpecialTokensMixin.SPECIAL_TOKENS_ATTRIBUTES: what special_tokens_map holds.
const SPECIAL_TOKEN_NAMES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token',
  'cls_token', 'mask_token'];
const content = (value) => (typeof value === 'string' ? value : typeof value?.content === 'string' ? value.content : null);

/** tokenizer_config.json's special tokens as a template sees them: {bos_token: "<s>", ...} (those it names). */
export function specialTokensOf(tokenizerConfig) {
  const out = {};
  for (const name of SPECIAL_TOKEN_NAMES) {
    const text = content(tokenizerConfig?.[name]);
    if (text !== null) out[name] = text;
  }
  const extra = tokenizerConfig?.additional_special_tokens;
  if (Array.isArray(extra)) out.additional_special_tokens = extra.map(content).filter((t) => t !== null);
  return out;
}

// ---- The budget a template renders under (issue 48: `{% for i in range(100000000) %}` ran V8 out of
// memory after 40 s at 4.7 GB; nested loops hung; a loop writing 10 MB took 14 s and 2.2 GB). A real
// template renders in a few thousand steps and writes a few kilobytes; these bounds are far above that
// and far below harm. The library has no hooks for a budget, so while one render runs (synchronously:
// nothing else runs in between) its interpreter's evaluate() and evaluateBlock() (a loop's every turn)
// count each step, and the characters of every string and the items of every list a step returns (a list
// grown by `a + [x]` in a loop is copied each turn), and its range() refuses a long list before making it;
// all are put back after.
export const CHAT_BUDGET = { steps: 300_000, characters: 8_000_000, items: 4_000_000, rangeItems: 100_000 };

class ChatBudgetError extends Error {}

function budgeted(render) {
  const { evaluate, evaluateBlock } = Interpreter.prototype, set = Environment.prototype.set;
  let steps = 0, characters = 0, items = 0;
  const step = () => {
    if (++steps > CHAT_BUDGET.steps) throw new ChatBudgetError('it took more than '
      + `${CHAT_BUDGET.steps.toLocaleString('en')} steps`);
  };
  Interpreter.prototype.evaluate = function budgetedEvaluate(statement, environment) {
    step();
    const value = evaluate.call(this, statement, environment);
    if (typeof value?.value === 'string' && (characters += value.value.length) > CHAT_BUDGET.characters) {
      throw new ChatBudgetError(`it wrote more than ${CHAT_BUDGET.characters.toLocaleString('en')} characters`);
    }
    if (Array.isArray(value?.value) && (items += value.value.length) > CHAT_BUDGET.items) {
      throw new ChatBudgetError(`it made lists of more than ${CHAT_BUDGET.items.toLocaleString('en')} items`);
    }
    return value;
  };
  Interpreter.prototype.evaluateBlock = function budgetedBlock(statements, environment) {
    step();
    return evaluateBlock.call(this, statements, environment);
  };
  Environment.prototype.set = function budgetedSet(name, value) {
    return set.call(this, name, name === 'range' && typeof value === 'function' ? boundedRange(value) : value);
  };
  try {
    return render();
  } finally {
    Object.assign(Interpreter.prototype, { evaluate, evaluateBlock });
    Environment.prototype.set = set;
  }
}

/** The library's range(), refusing more than CHAT_BUDGET.rangeItems items before it makes them. */
const boundedRange = (range) => (start, stop, step = 1) => {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  const count = step === 0 ? 0 : Math.ceil((to - from) / step);
  if (count > CHAT_BUDGET.rangeItems) {
    throw new ChatBudgetError(`range() of ${Number.isFinite(count) ? count.toLocaleString('en') : count} items, more `
      + `than ${CHAT_BUDGET.rangeItems.toLocaleString('en')}`);
  }
  return range(start, stop, step);
};

/**
 * The template's text for `messages` ([{role, content}]), as apply_chat_template(tokenize=False) gives
 * it. A template that fails (a syntax error, raise_exception, or past its budget) is a ChatError naming
 * the template; nothing else changes.
 */
export function renderChat(template, messages, { addGenerationPrompt = true, specialTokens = {} } = {}) {
  let parsed;
  try {
    parsed = new Template(template);
  } catch (error) {
    throw new ChatError(`tokenizer_config.json's chat_template cannot be read: ${error.message}`);
  }
  try {
    return budgeted(() => parsed.render({ messages, add_generation_prompt: addGenerationPrompt, tools: null,
      documents: null, ...specialTokens }));
  } catch (error) {
    if (error instanceof ChatBudgetError) throw new ChatError(`tokenizer_config.json's chat_template was stopped: `
      + `${error.message}, far past what a chat needs`);
    throw new ChatError(`tokenizer_config.json's chat_template refused the chat: ${error.message}`);
  }
}

/**
 * A question to the opened model's tokenizer (HfTokenizer) as its chat template writes it, one user
 * turn and the assistant's turn begun -> {text, tokens, ids, texts}. A tokenizer without a template is
 * a ChatError saying so.
 */
export function chatPrompt(tokenizer, question) {
  if (!tokenizer?.chatTemplate) {
    throw new ChatError('this model has no chat template (tokenizer_config.json\'s chat_template): write '
      + 'a prompt instead');
  }
  const text = renderChat(tokenizer.chatTemplate, [{ role: 'user', content: String(question) }],
    { addGenerationPrompt: true, specialTokens: specialTokensOf(tokenizer.config) });
  return { text, ...tokenizer.encode(text, { addSpecialTokens: false }) };
}
