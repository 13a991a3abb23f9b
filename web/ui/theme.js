// The page's colours as the stylesheet defines them (light or dark theme), for drawing on canvases.
// The theme itself: html[data-theme], from the user's toggle or else prefers-color-scheme.

export function themeColors(element = document.documentElement) {
  const style = getComputedStyle(element);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    background: read('--panel', '#ffffff'),
    text: read('--fg', '#1b1b1f'),
    muted: read('--muted', '#5a5a66'),
    grid: read('--grid', '#d8d8e0'),
    series: [read('--series-1', '#1f5fbf'), read('--series-2', '#c2410c'), read('--series-3', '#3f7f3f')],
    focus: read('--focus', '#d0006f'),
    font: read('--canvas-font', 'system-ui, sans-serif'),
  };
}

const STORAGE_KEY = 'attnlab-theme';

/**
 * Applies the stored or the system theme (or `forced`, 'light' | 'dark', from the link's theme=);
 * returns a function that toggles it. onChange redraws.
 */
export function setUpTheme(onChange, { forced = 'auto' } = {}) {
  const media = matchMedia('(prefers-color-scheme: dark)');
  let stored = null;
  try { stored = localStorage.getItem(STORAGE_KEY); } catch { /* storage blocked: follow the system */ }
  if (forced === 'light' || forced === 'dark') stored = forced; // the link wins, and is not remembered
  const apply = (theme) => {
    document.documentElement.dataset.theme = theme;
    onChange(theme);
  };
  apply(stored ?? (media.matches ? 'dark' : 'light'));
  media.addEventListener('change', (e) => {
    if (!stored) apply(e.matches ? 'dark' : 'light');
  });
  return () => {
    stored = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    try { localStorage.setItem(STORAGE_KEY, stored); } catch { /* not kept across visits */ }
    apply(stored);
    return stored;
  };
}

export const prefersReducedMotion = () => matchMedia('(prefers-reduced-motion: reduce)').matches;
