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

/**
 * A refused request as a sentence, from its status and the Hub's X-Error-Code header (what
 * huggingface_hub's errors are built from) -> the message, or null when the Hub simply has no such file
 * (404, EntryNotFound: the caller decides whether that matters). tokenWhere: where a token is given
 * ("HF_TOKEN" in the CLI, "the Token field" on the page).
 */
export function hubRefusal({ id, endpoint, revision, file, status, errorCode, token, tokenWhere }) {
  switch (errorCode) {
    case 'EntryNotFound': return null;
    case 'RepoNotFound':
      return `${id}: no such model on ${endpoint}, or a private one${token ? ' the token given cannot see' : `: give a token with access (${tokenWhere})`}`;
    case 'GatedRepo':
      return `${id} is gated: accept its conditions on its page (${endpoint}/${id}) with your account, then give that account's token (${tokenWhere})`;
    case 'RevisionNotFound': return `${id} has no revision "${revision}" (a branch, tag or commit)`;
    case 'DisabledRepo': return `${id} has been disabled on the Hub: it cannot be downloaded`;
    default: break;
  }
  if (status === 404) return null;
  if (status === 401 || status === 403) {
    return `${id}: the Hub refused ${file} (HTTP ${status}): a gated or private model needs a token with access (${tokenWhere})${token ? '; the one given has none' : ''}`;
  }
  return `${id}: the Hub answered HTTP ${status} for ${file}`;
}

/** The header a token goes in ("Authorization: Bearer"), or none. */
export const authorization = (token) => (token ? { authorization: `Bearer ${token}` } : {});

/**
 * A 206 answer's Content-Range (bytes FIRST-LAST/SIZE) -> {first, size} (size NaN for '*'), or null when
 * there is none (or, on a page, the CDN does not expose it).
 */
export function contentRange(response) {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  return m ? { first: Number(m[1]), size: Number(m[2]) } : null;
}

/** A failed fetch that followed redirects in a loop (fetch gives up after 20) -> true. */
export const isRedirectLoop = (error) => /redirect count exceeded|too many redirects|redirect loop/i.test(`${error?.message} ${error?.cause?.message ?? ''}`);
