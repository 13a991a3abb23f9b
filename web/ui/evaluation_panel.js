// The evaluation summary: accuracy, loss (and, where the lab has one, the Bayes ceiling) on fresh
// samples, each head's pattern mass as a bar, and the lab's explanation when there is one.

/** model: {step, items: [{id, label, value, raw, help}], headline, heads: [{label, mass, best}], explanation} */
export function renderEvaluation(container, model) {
  container.replaceChildren();
  if (!model) {
    container.append(Object.assign(document.createElement('p'),
      { className: 'muted', textContent: 'No evaluation yet: train a few steps.' }));
    return;
  }
  const list = document.createElement('dl');
  list.className = 'metrics';
  for (const item of model.items) {
    const box = document.createElement('div');
    box.className = 'metric';
    box.dataset.metric = item.id;
    box.dataset.value = String(item.raw);
    box.title = item.help;
    box.append(Object.assign(document.createElement('dt'), { textContent: item.label }),
      Object.assign(document.createElement('dd'), { textContent: item.value }));
    list.append(box);
  }
  const headline = Object.assign(document.createElement('p'), { className: 'headline', textContent: model.headline });
  const bars = document.createElement('ul');
  bars.className = 'head-mass';
  bars.setAttribute('aria-label', 'Weight each head puts on the expected keys');
  for (const head of model.heads) {
    const li = document.createElement('li');
    if (head.best) li.className = 'best';
    const meter = Object.assign(document.createElement('meter'), { min: 0, max: 1, value: head.mass });
    meter.setAttribute('aria-label', `${head.label} pattern mass`);
    li.append(Object.assign(document.createElement('span'), { textContent: head.label }), meter,
      Object.assign(document.createElement('span'),
        { textContent: `${head.mass.toFixed(2)}${head.best ? ' ★ best' : ''}` }));
    bars.append(li);
  }
  container.append(list, headline, bars);
  if (model.explanation) {
    container.append(Object.assign(document.createElement('p'),
      { className: 'explanation', textContent: model.explanation }));
  }
}
