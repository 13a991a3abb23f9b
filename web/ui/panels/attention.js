// The attention panel ('attention'): the training timeline over the attention snapshots of the fixed
// sample, and the heatmaps of the snapshot it shows (the large one, one per head, the exports). The
// snapshot it shows is the page's (page.shownSnapshot): the token rows follow it.
import { HeatmapPanel } from '../heatmap_panel.js';
import { Timeline } from '../timeline.js';
import { el } from '../el.js';

export function attentionPanel(page) {
  const { lab } = page;
  const texts = lab.attentionPanel ?? {};
  const help = el('p', { className: 'muted attention-help',
    textContent: `${texts.help ?? 'Rows are the queries, columns the keys. Bright = much weight.'} Hover or tap a cell, or focus the map and use the arrow keys.` });
  const node = el('section', { className: 'panel attention' },
    el('h2', { textContent: texts.title ?? 'Attention on a fixed sample' }));
  const timeline = new Timeline(node, {
    onShow: () => page.schedule('snapshot'),
    stepOf: (i) => page.run?.snapshots.at(i)?.step ?? 0,
  });
  const timelineNode = node.querySelector('.timeline');
  timelineNode.classList.add('full-only');
  const heatmapBox = el('div', { className: 'heatmap-area' });
  // The heatmap right under the title; under it the timeline that replays it, then how to read it.
  node.append(heatmapBox, timelineNode, help);
  const modelsFor = (snapshot) => lab.views.heatmaps(page.run.config, page.run.sample, snapshot,
    ` — step ${snapshot.step}`);
  const heatmaps = new HeatmapPanel(heatmapBox, {
    modelsAt: (i) => modelsFor(page.run.snapshots.at(i)),
    snapshotCount: () => page.run?.snapshots.length ?? 0,
    nameOf: () => `attention-${page.run ? lab.figureStem(page.run.config) : lab.id}-step${page.shownSnapshot()?.step ?? 0}`,
    notices: page.notices,
  });
  let thinnings = 0; // of the run's snapshots, when this panel last looked

  return {
    node,
    heatmaps,
    /** Plays the run again from its first snapshot, the heatmap brought into view if it is not. */
    replay() {
      heatmapBox.scrollIntoView({ block: 'nearest' });
      timeline.replay();
    },
    /** Where the timeline stands: an index into the run's snapshots. */
    get shownIndex() { return timeline.index; },
    parts: { heatmaps: ['snapshot', 'palette'], heads: ['snapshot', 'palette'] },
    handles(m) {
      if (m.type === 'configured') {
        thinnings = page.run.snapshots.thinnings;
        timeline.setLive(true);
        timeline.setCount(1);
        return true;
      }
      if (m.type === 'progress') {
        const run = page.run;
        // A scrubbed-to snapshot keeps (about) its place when the timeline thins.
        if (run.snapshots.thinnings > thinnings && !timeline.live) timeline.index >>= run.snapshots.thinnings - thinnings;
        thinnings = run.snapshots.thinnings;
        if (m.snapshots.length) timeline.setCount(run.snapshots.length);
        return true;
      }
      return false;
    },
    render(dirty) {
      if (dirty.has('heatmaps')) {
        const snapshot = page.shownSnapshot();
        if (snapshot) heatmaps.show(modelsFor(snapshot), { palette: page.applied.palette });
      }
      if (dirty.has('heads')) heatmaps.showHeads();
    },
  };
}
