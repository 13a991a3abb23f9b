#!/usr/bin/env node
// A manual check (not part of the suite: Firefox is not one of the project's dependencies) that the
// offline single file trains in Firefox too. Playwright cannot drive Debian's firefox-esr, so this
// speaks Firefox's own remote protocol, Marionette (length-prefixed JSON over TCP on 127.0.0.1).
//   apt-get install firefox-esr && node scripts/build_single_file.mjs && node scripts/check_firefox_offline.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILE = path.join(REPO, 'dist', 'attention-lab.html');
const FIREFOX = process.env.FIREFOX ?? '/usr/bin/firefox-esr';
const PORT = 2828 + Math.floor(Math.random() * 1000);

function marionette(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buffer = '';
    const waiting = new Map();
    let nextId = 1;
    let greeted = false;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        const colon = buffer.indexOf(':');
        if (colon < 0) return;
        const length = Number(buffer.slice(0, colon));
        if (buffer.length < colon + 1 + length) return;
        const message = JSON.parse(buffer.slice(colon + 1, colon + 1 + length));
        buffer = buffer.slice(colon + 1 + length);
        if (!greeted) {
          greeted = true;
          resolve({
            send(name, params = {}) {
              const id = nextId++;
              const text = JSON.stringify([0, id, name, params]);
              socket.write(`${Buffer.byteLength(text)}:${text}`);
              return new Promise((ok, fail) => waiting.set(id, { ok, fail }));
            },
            close: () => socket.end(),
          });
        } else {
          const [, id, error, result] = message;
          const w = waiting.get(id);
          waiting.delete(id);
          if (error) w.fail(new Error(`${error.error}: ${error.message}`));
          else w.ok(result);
        }
      }
    });
    socket.on('error', reject);
  });
}

async function connect(port, seconds) {
  for (let i = 0; i < seconds * 4; i++) {
    try {
      return await marionette(port);
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Firefox did not open Marionette on port ${port}`);
}

const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlab-firefox-'));
// No network at all: any http(s) request fails, so a pass proves the file is self-contained.
writeFileSync(path.join(profile, 'user.js'), [
  `user_pref("marionette.port", ${PORT});`,
  'user_pref("network.proxy.type", 1);',
  'user_pref("network.proxy.http", "127.0.0.1");',
  'user_pref("network.proxy.http_port", 9);',
  'user_pref("network.proxy.ssl", "127.0.0.1");',
  'user_pref("network.proxy.ssl_port", 9);',
  'user_pref("browser.shell.checkDefaultBrowser", false);',
].join('\n'));
const firefox = spawn(FIREFOX, ['--headless', '--marionette', '--no-remote', '--profile', profile], { stdio: 'ignore' });
let client;
try {
  client = await connect(PORT, 30);
  await client.send('WebDriver:NewSession', { capabilities: {} });
  const url = `${pathToFileURL(FILE).href}?lab=alignment&task=copy&seed=0&steps=200`;
  await client.send('WebDriver:Navigate', { url });
  const run = (script) => client.send('WebDriver:ExecuteScript', { script, args: [] }).then((r) => r.value);
  const started = Date.now();
  while (!(await run("return document.getElementById('progress-text')?.dataset.step !== undefined"))) {
    if (Date.now() - started > 60000) throw new Error('the lab did not start in 60 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  await run("document.getElementById('play').click(); return true;");
  while ((await run("return document.getElementById('progress-text').dataset.state")) !== 'done') {
    if (Date.now() - started > 180000) throw new Error('training did not finish in 180 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  const result = await run(`return {
    version: navigator.userAgent,
    accuracy: Number(document.querySelector('#evaluation [data-metric="accuracy"]')?.dataset.value),
    backend: document.getElementById('badge-backend').textContent,
    reason: document.getElementById('badge-reason').textContent,
    errors: [...document.querySelectorAll('[role=alert]')].map((n) => n.textContent).filter(Boolean),
  }`);
  console.log(JSON.stringify(result, null, 2));
  if (!(result.accuracy >= 0.99) || result.errors.length) throw new Error('Firefox check failed');
  console.log(`Firefox trained copy to ${(100 * result.accuracy).toFixed(1)}% from ${FILE} (file://, no network)`);
} finally {
  client?.close();
  firefox.kill();
  rmSync(profile, { recursive: true, force: true });
}
