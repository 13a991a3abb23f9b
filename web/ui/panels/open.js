// The open panel ('open', for a lab with lab.open): the user's own files (a pretrained checkpoint), or a
// Hub id, go to the worker, which reads (or downloads) them; the panel shows the progress, what was
// opened or why not, and the models kept in this browser.
import { OpenPanel } from '../open_panel.js';
import { DEFAULT_ENDPOINT, parseEndpoint, parseModelId } from '../../models/hub_ids.js';

/** What a link calls the files chosen: the folder's name, else the one file's, else the weights' and a count. */
function filesName(files, folder) {
  if (folder) return folder.slice(0, 200);
  const names = files.map((f) => f.name);
  const weights = names.find((n) => /\.(safetensors|bin|pt|pth)$/.test(n)) ?? names[0] ?? 'files';
  return (names.length > 1 ? `${weights} and ${names.length - 1} more file${names.length > 2 ? 's' : ''}` : weights).slice(0, 200);
}

export function openPanel(page) {
  const { lab } = page;
  const view = new OpenPanel(lab, {
    onOpen: (files, name) => {
      view.reading(0, 0, '');
      chosen = filesName(files, name);
      page.client.send('open', { lab: lab.id, files, name: name || 'checkpoint' });
    },
    onHub: (fields) => {
      view.reading(0, 0, '', 'config.json');
      page.client.send('openHub', { lab: lab.id, ...fields });
      // The link carries the model (and a Hub other than the default), so a shared link opens the same one.
      const model = `${fields.model}${fields.revision === 'main' ? '' : `@${fields.revision}`}`;
      page.setPageValues({ model, hub: fields.endpoint === DEFAULT_ENDPOINT ? '' : fields.endpoint, opened: '' });
    },
    onCancel: () => page.client.send('cancelOpen'),
    onRemove: (fields) => page.client.send('hubRemove', fields),
  });
  let chosen = ''; // the name of the files last chosen (what the link will name once they open)
  page.client.send('hubStored');
  // A link copied while a model from files was open: the page says which files to open.
  if (page.draft.opened && !page.draft.model) view.asked(page.draft.opened);
  // A link's model: filled in; opened at once (no network) when this browser keeps it.
  const linked = page.draft.model ? { ...parseModelId(page.draft.model),
    endpoint: parseEndpoint(page.draft.hub || DEFAULT_ENDPOINT) } : null;
  if (linked) view.fill(page.draft.model, linked.endpoint);
  let linkChecked = false;
  const openLinkedIfKept = (models) => {
    if (linkChecked || !linked?.id || !linked.endpoint) return;
    linkChecked = true;
    if (models.some((m) => m.id === linked.id && m.revision === linked.revision && m.endpoint === linked.endpoint)) view.submitHub();
  };
  return {
    node: view.node,
    handles(m) {
      if (m.type === 'open-progress' && m.lab === lab.id) view.reading(m.bytes, m.total, m.tensor,
        m.downloading, m.planned);
      else if (m.type === 'opened' && m.lab === lab.id) {
        // From files: the link can only name them (the Hub id it carried, if any, is no longer what is open).
        const fromFiles = !m.summary.hub && chosen;
        if (fromFiles) page.setPageValues({ model: '', hub: '', opened: chosen });
        view.opened(m.summary, fromFiles ? chosen : '');
      }
      else if (m.type === 'hub-stored') {
        view.storedModels(m.models);
        openLinkedIfKept(m.models);
      }
      else if (m.type === 'error' && (m.request === 'open' || m.request === 'openHub')) view.failed(m.message,
        !!page.opened, m.openIn ?? null);
      else if (m.type === 'error' && (m.request === 'hubStored' || m.request === 'hubRemove')) view.storedModels([]);
      else return false;
      return true;
    },
    render() {},
  };
}
