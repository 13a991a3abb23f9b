/** An element in one expression: el('p', {className: 'muted'}, 'text', child). */
export const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};
