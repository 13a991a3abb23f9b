// Whether a lab can be seen: its tab is showing (visibilitychange) and its element is on screen
// (IntersectionObserver; inside an iframe this also sees the iframe scrolled or slid away, or set to
// display: none, because the observer's implicit root is the top-level viewport).
// onChange(visible) is called when the combined answer changes, never twice with the same value.

export function watchVisibility(element, onChange) {
  let tabShown = document.visibilityState !== 'hidden';
  let onScreen = true;
  let last = true;
  const report = () => {
    const visible = tabShown && onScreen;
    if (visible === last) return;
    last = visible;
    onChange(visible);
  };
  document.addEventListener('visibilitychange', () => {
    tabShown = document.visibilityState !== 'hidden';
    report();
  });
  if (typeof IntersectionObserver !== 'undefined') {
    new IntersectionObserver((entries) => {
      onScreen = entries.at(-1).isIntersecting;
      report();
    }).observe(element);
  }
  return () => last;
}
