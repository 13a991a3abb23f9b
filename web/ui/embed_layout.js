// Embed mode (?embed=1): the lab alone in an iframe of any size from 480 px wide, 4:3 to 16:9. The
// stylesheet arranges it (transport on top, the main heatmap and the loss curve side by side, the rest
// below); this sizes the two figures to the iframe: the heatmap fits between its top and the bottom of
// the viewport and inside its column, text included; the loss chart takes the same height.
// It measures boxes only: the figures draw themselves (HeatmapView.setFit, LineChart.height).

const MIN_HEIGHT = 120; // below this a heatmap is unreadable at any scale: the page scrolls instead
const CHART_HEIGHT = { min: 140, max: 360 };

export class EmbedLayout {
  /** heatmap: the main HeatmapView; charts: LineCharts that follow its height (the loss curve). */
  constructor({ heatmap, charts, onResize }) {
    this.heatmap = heatmap;
    this.charts = charts;
    this.onResize = onResize;
    this.box = null;
    for (const chart of charts) chart.minWidth = 160; // a narrow column must not overflow sideways
    const observer = new ResizeObserver(() => this.fit());
    observer.observe(document.documentElement);
    addEventListener('resize', () => this.fit());
  }

  /** Measures the room the heatmap has and hands it on; redraws only when it changed. */
  fit() {
    const figure = this.heatmap.figure;
    const panel = figure.closest('.panel') ?? figure.parentElement;
    const style = getComputedStyle(panel);
    const width = panel.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const top = figure.getBoundingClientRect().top + scrollY;
    const height = Math.max(MIN_HEIGHT, innerHeight - top - 10);
    if (this.box && Math.abs(this.box.width - width) < 1 && Math.abs(this.box.height - height) < 1) return;
    this.box = { width, height };
    this.heatmap.setFit(this.box);
    const chartHeight = Math.round(Math.max(CHART_HEIGHT.min, Math.min(CHART_HEIGHT.max, height)));
    for (const chart of this.charts) chart.height = chartHeight;
    this.onResize();
  }
}
