// Hugging Face Hub model ids and the URLs of their files, as huggingface_hub writes them, for the page
// (web/models/hub_store.js) and the CLI (web/cli/hub.mjs) alike. No DOM and no Node API.

const NAME = '[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?';
const MODEL_ID = new RegExp(`^(?:${NAME}/)?${NAME}$`);
const REVISION = /^[A-Za-z0-9._/-]{1,100}$/;

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/** "ORG/NAME@REVISION" (ORG/ and @REVISION optional) -> {id, revision}, or null when it is not one. */
export function parseModelId(text) {
  const value = String(text ?? '').trim();
  const at = value.lastIndexOf('@');
  const id = at > 0 ? value.slice(0, at) : value;
  const revision = at > 0 ? value.slice(at + 1) : 'main';
  if (!MODEL_ID.test(id) || id.includes('--') || id.includes('..')) return null;
  if (!REVISION.test(revision) || revision.includes('..')) return null;
  return { id, revision };
}

/** An endpoint as typed -> its canonical form (no trailing slash), or null when it is not an http(s) URL. */
export function parseEndpoint(text) {
  try {
    const url = new URL(String(text ?? '').trim() || DEFAULT_ENDPOINT);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    return url.href.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

/** {endpoint}/{id}/resolve/{revision}/{file}: where the Hub serves a file (redirecting large ones to its CDN). */
export const hubFileUrl = (endpoint, id, revision, file) => `${endpoint}/${id}/resolve/${encodeURIComponent(revision)}/${file}`;
