// A section panel ('section:<id>', one per lab.sections entry that computes outside training): the
// SectionPanel on screen (section_panel.js), and its requests to the worker. One request is in
// flight at a time; a change meanwhile asks again when it returns, so a dragged slider never queues a
// request per pixel. A section that shows the trained model (needsModel) follows it: at each
// evaluation while training, and when training stops.
import { SectionPanel } from '../section_panel.js';
import { BACKEND_LABELS } from '../../backends.js';

export function sectionPanel(page, section) {
  const { lab } = page;
  const part = `section:${section.id}`;
  let asked = null; // {request, values} of the request in flight
  let again = false; // asked again while one was in flight
  let requests = 0;
  let shown = null; // {result, values} to draw
  const view = new SectionPanel({
    lab, section,
    onInput: (name, parsed, commit) => page.fieldInput(name, parsed, commit),
    onAction: (change) => {
      page.sectionPlay.stop(); // a button the user pressed ends a play
      page.changeValues(change);
    },
    onPlay: (action) => page.sectionPlay.toggle(panel, action),
    onUserInput: () => panel.request(),
    onPick: (change) => page.changeValues(change),
    answers: page.mode.answers !== false,
    questions: page.mode.questions !== false,
    // An embed never asks the "predict, then run" question (docs/embedding.md), wherever the lab asks it.
    predict: page.mode.questions !== false && !page.mode.embed,
  });

  /** Asks the worker for the section with the values applied now, or says what it waits for. */
  function request() {
    if (!lab.trainer && !page.moduleReady) return; // configure() asks once the module is ready
    view.followValues(page.sectionValues());
    if (!section.compute) {
      // Nothing to compute (a section of text and diagrams): its figures come from the values alone.
      shown = { result: null, values: page.sectionValues() };
      page.schedule(part);
      return;
    }
    if (section.appliesTo) {
      const applies = !!page.opened && section.appliesTo(page.opened);
      view.setApplies(applies);
      if (!applies) return;
    }
    if (section.needsOpen && !page.opened) {
      view.waiting(`${lab.open?.title ?? 'Open the files'} above to see this.`, { actionable: false });
      return;
    }
    if (section.needsModel && !page.run) {
      view.waiting('Waiting for the model to be built…');
      return;
    }
    const input = view.input;
    if (input === null) {
      view.waiting(section.inputHint ?? 'Waiting for your input.');
      return;
    }
    if (asked) {
      again = true;
      return;
    }
    const values = page.sectionValues();
    asked = { request: ++requests, values };
    if (!view.result) view.waiting('Computing…');
    page.client.send('section',
      { lab: lab.id, section: section.id, values, input, backend: page.applied.backend, request: asked.request });
  }

  function answered(m) {
    if (!asked || asked.request !== m.request) return;
    shown = { result: m.result, values: asked.values };
    asked = null;
    // A lab without training: its sections' kernel calls are what the badge reports.
    if (!lab.trainer && m.result?.choice) {
      const { backend, reason } = m.result.choice;
      page.onChoice({ backend, reason, label: BACKEND_LABELS[backend] ?? backend });
    }
    page.schedule(part);
    if (again) {
      again = false;
      request();
    }
  }

  const panel = {
    node: view.node,
    section,
    controls: view.controls,
    /** A request is in flight (a section's play waits for it). */
    get busy() { return asked !== null; },
    /** The result to go on from (section_panel.js current): null before one, or while in error. */
    get result() { return view.current; },
    dependsOnAny: (names) => view.dependsOnAny(names),
    setPlaying: (action, playing) => view.setPlaying(action, playing),
    request,
    parts: { [part]: ['palette'] },
    handles(m) {
      const followsModel = section.needsModel && (m.type === 'progress' ? m.evaluation || !m.running : m.type === 'state' && m.stopped);
      if (m.type === 'configured' || m.type === 'opened' || followsModel) {
        request();
      } else if (m.type === 'section' && m.section === section.id) {
        answered(m);
      } else if (m.type === 'error' && m.request === 'section' && m.section === section.id) {
        page.sectionPlay.stop();
        asked = null;
        view.fail(m.message);
      } else {
        return false;
      }
      return true;
    },
    render() {
      // The drawing settings as they are now (the colour scale and its range): no new result is needed.
      if (shown) view.show(shown.result, { ...shown.values, colourRange: page.applied.colourRange }, { palette: page.applied.palette });
    },
    /** errors: {name: message} of the settings: one this section depends on leaves its figures stale. */
    refresh(errors) {
      view.prediction?.follow(page.draft);
      view.actionsFollow(page.draft);
      view.setInputRefused(Object.keys(errors).some((name) => (section.dependsOn ?? []).includes(name)));
    },
  };
  return panel;
}
