// The CLI's figures: the head-mean heatmap, or a section's figures (the circuits' grids and bars), drawn by
// the page's own code (web/cli/figure.html) in headless Chromium, so --png and --svg match the page's
// "Export PNG (2x)" and "SVG" exactly. Without a browser, --png falls back to the bare raster (cells and
// colour bar, no text) and says so.
import { writeFileSync } from 'node:fs';
import { startServer } from './static_server.mjs';
import { writeHeatmapPng } from './png.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function renderInBrowser(args, call = 'renderFigure') {
  const { chromium } = await import('playwright-core');
  const server = await startServer({ port: 0 });
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const page = await browser.newPage();
    await page.goto(`${server.url}build/web/cli/figure.html`);
    await page.waitForFunction(() => window.figureReady === true, null, { timeout: 20000 });
    return await page.evaluate(([name, a]) => window[name](a), [call, args]);
  } finally {
    await browser?.close();
    await server.close();
  }
}

/**
 * What the page would draw (renderFigure's arguments) -> the files png and/or svg; -> lines to report.
 * Without a browser, png gets the bare raster of `cells` ({values, rows, cols}) and a warning line;
 * an SVG cannot be had then, and that throws.
 */
async function writeFigureFiles(args, cells, { png, svg }) {
  let figure;
  try {
    figure = await renderInBrowser(args);
  } catch (error) {
    if (svg) throw new Error(`--svg needs a browser to draw with (${CHROMIUM}): ${error.message.split('\n')[0]}`);
    const size = writeHeatmapPng(png, cells.values, cells.rows, cells.cols);
    return [`warning: no browser to draw the labelled figure (${error.message.split('\n')[0]}); ` +
      `wrote ${png} with the heatmap cells and colour bar only (${size.width}x${size.height})`];
  }
  const lines = [];
  if (png) {
    writeFileSync(png, Buffer.from(figure.png.split(',')[1], 'base64'));
    lines.push(`wrote ${png} (the page's figure at 2x)`);
  }
  if (svg) {
    writeFileSync(svg, figure.svg);
    lines.push(`wrote ${svg}`);
  }
  return lines;
}

/** {lab (its id), config, sample, inspection, step, png?, svg?}: a training lab's head-mean heatmap. */
export function writeFigures({ lab, config, sample, inspection, step, png, svg }) {
  const plain = (x) => (ArrayBuffer.isView(x) ? Array.from(x) : x);
  const args = {
    lab, config, caption: ` — step ${step}`,
    sample: Object.fromEntries(Object.entries(sample).map(([k, v]) => [k, plain(v)])),
    inspection: Object.fromEntries(Object.entries(inspection).map(([k, v]) => [k, plain(v)])),
  };
  return writeFigureFiles(args,
    { values: inspection.weightsMean, rows: inspection.T, cols: inspection.S }, { png, svg });
}

/**
 * A heatmap view model of a section (heatmap.js's model, e.g. the Pretrained lab's head heatmap) ->
 * the page's figure as PNG (2x) and/or SVG; -> lines to report.
 */
export function writeModelFigure({ model, png, svg }) {
  return writeFigureFiles({ model: { ...model, values: Array.from(model.values) } }, model, { png, svg });
}

/** FILE.png, and the name of one of several figures -> FILE-NAME.png (beside it, the same extension). */
export const figureFile = (file, name) => file.replace(/(\.[^./\\]*)?$/, (ext) => `-${name}${ext}`);

/**
 * A section's figures ([{name, figure}]: its heatmaps and bars, as figures() returns them) -> the files
 * of png and/or svg: one figure is FILE itself, several are FILE-NAME beside it; -> lines to report.
 * Without a browser, png gets each heatmap's bare raster (cells and colour bar) with a warning line,
 * and the bars none; an SVG cannot be had then, and that throws.
 */
export async function writeSectionFigures(named, { png, svg }) {
  const plain = named.map(({ figure }) => ({ ...figure, values: Array.from(figure.values) }));
  const fileOf = (file, i) => (named.length === 1 ? file : figureFile(file, named[i].name));
  let drawn;
  try {
    drawn = await renderInBrowser(plain, 'renderFigures');
  } catch (error) {
    const why = error.message.split('\n')[0];
    if (svg) throw new Error(`--svg needs a browser to draw with (${CHROMIUM}): ${why}`);
    const lines = [];
    plain.forEach((f, i) => {
      if (f.kind !== 'heatmap') return;
      const size = writeHeatmapPng(fileOf(png, i), f.values, f.rows, f.cols);
      lines.push(`warning: no browser to draw the labelled figure (${why}); wrote ${fileOf(png, i)} with the heatmap `
        + `cells and colour bar only (${size.width}x${size.height})`);
    });
    return lines;
  }
  const lines = [];
  drawn.forEach((figure, i) => {
    if (png) {
      writeFileSync(fileOf(png, i), Buffer.from(figure.png.split(',')[1], 'base64'));
      lines.push(`wrote ${fileOf(png, i)} (the page's figure at 2x)`);
    }
    if (svg) {
      writeFileSync(fileOf(svg, i), figure.svg);
      lines.push(`wrote ${fileOf(svg, i)}`);
    }
  });
  return lines;
}
