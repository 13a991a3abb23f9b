// The page's own settings, kept in the same URL state table as a lab's properties: embed mode for
// slides and course pages, autoplay, how many controls show, the theme, and controls to hide.
// Declared like a lab's properties (properties.js), so they parse, check and round-trip the same way.

/** The page's properties for this lab (hide= names the lab's own properties). */
export function pageProperties(lab) {
  return [
    { name: 'embed', type: 'bool', default: false, effect: 'page', label: 'Embed',
      help: 'Show the lab alone, without the page header, sized to its iframe.' },
    { name: 'autoplay', type: 'bool', default: false, effect: 'page', label: 'Autoplay',
      help: 'Start training as soon as the model is built (and the lab is on screen).' },
    { name: 'controls', type: 'choice', default: 'full', effect: 'page', label: 'Controls',
      choices: [{ value: 'full', label: 'all controls' },
        { value: 'min', label: 'play, step, reset, heatmap and loss only' }],
      help: 'min: only play / pause / step / reset, the main heatmap and the loss curve.' },
    { name: 'theme', type: 'choice', default: 'auto', effect: 'page', label: 'Theme',
      choices: [{ value: 'auto', label: 'follow the system' }, { value: 'light', label: 'light' },
        { value: 'dark', label: 'dark' }],
      help: 'Colour theme; auto follows the system setting.' },
    { name: 'hide', type: 'names', default: [], effect: 'page', label: 'Hide',
      names: lab.properties.map((p) => p.name),
      help: 'Controls to hide, by property name, comma separated (classroom mode).' },
    { name: 'answers', type: 'bool', default: true, effect: 'page', label: 'Answers',
      help: 'Check a student\'s answer to each question and then explain it (false: the questions only, for a class '
        + 'working them out).' },
    { name: 'questions', type: 'bool', default: true, effect: 'page', label: 'Questions',
      help: 'Show the notebooks\' questions and the "predict, then run" question before Play (false: '
        + 'none, for a lecture).' },
    { name: 'show', type: 'names', default: [], effect: 'page', label: 'Show',
      names: lab.panels ?? [],
      help: 'Only these parts of the lab, comma separated, e.g. one section for a slide '
        + `(${(lab.panels ?? []).join(', ')}).` },
    // A lab that opens a checkpoint: the model the link shares (opened at once when this browser keeps
    // it; else filled in, for the student to open), and the Hub it comes from when not the default.
    ...(lab.open ? [
      { name: 'model', type: 'text', default: '', maxLength: 200, effect: 'page', label: 'Hub model',
        help: 'The Hub id of the model the lab opens (ORG/NAME, @REVISION optional).' },
      { name: 'hub', type: 'text', default: '', maxLength: 300, effect: 'page', label: 'Hub endpoint',
        help: 'The Hub (or mirror) the model comes from, when not huggingface.co.' },
      // A model opened from the user's files cannot travel in a link (issue 45: Copy link dropped it without
      // a word): the link names them, and the page it opens asks for them.
      { name: 'opened', type: 'text', default: '', maxLength: 200, effect: 'page', label: 'Opened from files',
        help: 'The files or folder the model was opened from, when it was not opened by a Hub id: a link names them '
          + 'but cannot carry them, so the page it opens asks for the same files.' },
    ] : []),
  ];
}

/** Whether a page value differs from its default (links carry only those). */
export function isPageDefault(prop, value) {
  if (prop.type === 'names') return !value?.length;
  return value === prop.default;
}

/** A page value as URL text. */
export function pageText(prop, value) {
  if (prop.type === 'bool') return value ? '1' : '0';
  return prop.type === 'names' ? value.join(',') : String(value);
}
