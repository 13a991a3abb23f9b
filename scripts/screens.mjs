#!/usr/bin/env node
// Writes the first screen of every lab, at a laptop's size (1280x800) and a phone's (390x844), to
// docs/screens/<lab>-<width>x<height>.png, so that a change to the page shows in review.
//   node scripts/screens.mjs [--out docs/screens] [--full]   (--full: the whole page, not only the first screen)
// The checkpoint labs open the tests' tiny checkpoints first (tests/fixtures/), as a student opens a folder.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LABS } from '../web/labs/registry.js';
import { startLab, openPage } from '../tests/browser/support.mjs';

export const SCREENS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const out = path.resolve(REPO, arg('--out', 'docs/screens'));
const full = process.argv.includes('--full');

const lab = await startLab();
try {
  for (const { id } of LABS) {
    for (const size of SCREENS) {
      const { page, problems } = await openPage(lab, `?lab=${id}`, { viewport: size });
      const file = path.join(out, `${id}-${size.width}x${size.height}${full ? '-full' : ''}.png`);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: file, fullPage: full });
      console.log(`${path.relative(REPO, file)}${problems.length ? `  (problems: ${problems.join('; ')})` : ''}`);
      await page.close();
    }
  }
} finally {
  await lab.close();
}
