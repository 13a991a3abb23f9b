// Chat (issue 37, item 4): a question to an instruct model, as the model was trained to read it. Where
// tokenizer_config.json has a chat_template, it is rendered by @huggingface/jinja (Hugging Face's Jinja
// for chat templates, the one transformers.js uses) with what transformers' apply_chat_template passes:
// the messages, add_generation_prompt, and the tokenizer's special tokens as strings (bos_token,
// eos_token, unk_token, pad_token, ...; raise_exception and strftime_now are the library's globals). The
// text is then tokenized without adding BOS/EOS again (apply_chat_template(tokenize=True) passes
// add_special_tokens=False: the template writes its own), so the template's tokens (<|im_start|>,
// <|start_header_id|>, ...) are the prompt's first tokens, and show in the attention views like any other.
// No DOM, no Node API: the Writing lab and `attnlab generate --chat` share it.
import { Template } from '../../node_modules/@huggingface/jinja/dist/index.js';

export class ChatError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ChatError';
  }
}

// transformers' SpecialTokensMixin.SPECIAL_TOKENS_ATTRIBUTES: what special_tokens_map holds.
const SPECIAL_TOKEN_NAMES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];
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

/**
 * The template's text for `messages` ([{role, content}]), as apply_chat_template(tokenize=False) gives
 * it. A template that fails (a syntax error, raise_exception) is a ChatError naming the template.
 */
export function renderChat(template, messages, { addGenerationPrompt = true, specialTokens = {} } = {}) {
  let parsed;
  try {
    parsed = new Template(template);
  } catch (error) {
    throw new ChatError(`tokenizer_config.json's chat_template cannot be read: ${error.message}`);
  }
  try {
    return parsed.render({ messages, add_generation_prompt: addGenerationPrompt, tools: null, documents: null, ...specialTokens });
  } catch (error) {
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
    throw new ChatError('this model has no chat template (tokenizer_config.json\'s chat_template): write a prompt instead');
  }
  const text = renderChat(tokenizer.chatTemplate, [{ role: 'user', content: String(question) }],
    { addGenerationPrompt: true, specialTokens: specialTokensOf(tokenizer.config) });
  return { text, ...tokenizer.encode(text, { addSpecialTokens: false }) };
}
