// Shared by the embed tests: a parent page on the lab's origin (served through a route, so its
// iframes are same-origin and the tests can look inside), and the lab frame once its model is built.

/** A page at `${lab.url}test-parent.html` holding `html`. -> {page, problems} */
export async function parentPage(lab, html) {
  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await page.route(`${lab.url}test-parent.html`, (route) => route.fulfill({ body: html, contentType: 'text/html' }));
  await page.goto(`${lab.url}test-parent.html`);
  return { page, problems };
}

/** The Frame of the iframe at `selector`, once its lab has built a model. */
export async function labFrame(page, selector = 'iframe') {
  const frame = await (await page.waitForSelector(selector)).contentFrame();
  await frame.waitForFunction(() => document.getElementById('progress-text')?.dataset.step !== undefined, null, { timeout: 30000 });
  return frame;
}
