// The open panel ('open', for a lab with lab.open): the user's own files (a pretrained checkpoint), or a
// Hub id, go to the worker, which reads (or downloads) them; the panel shows the progress, what was
// opened or why not, and the models kept in this browser.
import { OpenPanel } from '../open_panel.js';

export function openPanel(page) {
  const { lab } = page;
  const view = new OpenPanel(lab, {
    onOpen: (files, name) => {
      view.reading(0, 0, '');
      page.client.send('open', { lab: lab.id, files, name });
    },
    onHub: (fields) => {
      view.reading(0, 0, '', 'config.json');
      page.client.send('openHub', { lab: lab.id, ...fields });
    },
    onCancel: () => page.client.send('cancelOpen'),
    onRemove: (fields) => page.client.send('hubRemove', fields),
  });
  page.client.send('hubStored');
  return {
    node: view.node,
    handles(m) {
      if (m.type === 'open-progress' && m.lab === lab.id) view.reading(m.bytes, m.total, m.tensor, m.downloading);
      else if (m.type === 'opened' && m.lab === lab.id) view.opened(m.summary);
      else if (m.type === 'hub-stored') view.storedModels(m.models);
      else if (m.type === 'error' && (m.request === 'open' || m.request === 'openHub')) view.failed(m.message, !!page.opened);
      else if (m.type === 'error' && (m.request === 'hubStored' || m.request === 'hubRemove')) view.storedModels([]);
      else return false;
      return true;
    },
    render() {},
  };
}
