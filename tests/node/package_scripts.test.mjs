// package.json's scripts are commands a newcomer types first (`npm start`, `npm test`): each must run a
// file that is there (issue 45, item 3: `npm start` ran scripts/serve.sh, which did not exist), and
// `npm start` must serve the page on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const { scripts } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));

test('every package.json script runs a file of the repository that is there', () => {
  for (const [name, command] of Object.entries(scripts)) {
    const files = [...command.matchAll(/(?:^|\s)((?:scripts|web|tests)\/\S+)/g)].map((m) => m[1]);
    assert.ok(files.length > 0, `${name}: ${command} names no file of the repository`);
    for (const file of files) assert.ok(existsSync(path.join(REPO_ROOT, file)), `npm ${name}: ${file} does not exist`);
  }
});

test('npm start serves the page on 127.0.0.1', async () => {
  const [program, ...args] = scripts.start.split(' ');
  assert.equal(program, 'node');
  const child = spawn(process.execPath, [...args, '--port', '0'], { cwd: REPO_ROOT });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /served at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
    });
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>[^<]*Attention Lab/);
  } finally {
    child.kill();
  }
});
