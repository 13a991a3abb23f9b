// The publishing workflow (.github/workflows/pages.yml) against GitHub's workflow schema, with
// @action-validator/cli from npm (a devDependency: npm ci installs it). It must also reject a broken
// workflow, or a pass would prove nothing. ACTION_VALIDATOR may name another install's cli.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';

const CLI = process.env.ACTION_VALIDATOR ?? path.join(REPO_ROOT, 'node_modules', '@action-validator', 'cli', 'cli.mjs');
const WORKFLOW = path.join(REPO_ROOT, '.github', 'workflows', 'pages.yml');
const skip = existsSync(CLI) ? false : `${CLI} is not installed: npm ci (scripts/install_deps.sh) installs it from package-lock.json`;
const validate = (file) => spawnSync(process.execPath, [CLI, file], { encoding: 'utf8', timeout: 60_000 });

test('pages.yml is a valid GitHub Actions workflow (action-validator)', { skip }, () => {
  const r = validate(WORKFLOW);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('action-validator rejects a workflow with an unknown job key', { skip }, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlab-workflow-'));
  try {
    const broken = path.join(dir, 'broken.yml');
    writeFileSync(broken, readFileSync(WORKFLOW, 'utf8').replace('runs-on: ubuntu-latest\n    container', 'runs-onn: ubuntu-latest\n    container'));
    const r = validate(broken);
    assert.notEqual(r.status, 0);
    assert.match(r.stdout + r.stderr, /runs-onn/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pages.yml builds and tests with the README\'s command and deploys public/', () => {
  const text = readFileSync(WORKFLOW, 'utf8');
  assert.match(text, /run: bash scripts\/test\.sh\n/, 'the README\'s test command, whose exit status fails the job');
  assert.match(text, /upload-pages-artifact@v\d+\n\s+with:\n\s+path: public\n/);
  assert.match(text, /uses: actions\/deploy-pages@v\d+/);
});
