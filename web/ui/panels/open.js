// The open panel ('open', for a lab with lab.open): the user's own files (a pretrained checkpoint)
// go to the worker, which reads them; the panel shows the reading, what was opened, or why not.
import { OpenPanel } from '../open_panel.js';

export function openPanel(page) {
  const { lab } = page;
  const view = new OpenPanel(lab, {
    onOpen: (files, name) => {
      view.reading(0, 0, '');
      page.client.send('open', { lab: lab.id, files, name });
    },
  });
  return {
    node: view.node,
    handles(m) {
      if (m.type === 'open-progress' && m.lab === lab.id) view.reading(m.bytes, m.total, m.tensor);
      else if (m.type === 'opened' && m.lab === lab.id) view.opened(m.summary);
      else if (m.type === 'error' && m.request === 'open') view.failed(m.message, !!page.opened);
      else return false;
      return true;
    },
    render() {},
  };
}
