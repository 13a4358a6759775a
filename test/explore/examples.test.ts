// The explore examples of docs/explore.md run with plain node against the built package.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function runExample(name: string): string {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['FORCE_COLOR'];
  const r = spawnSync(process.execPath, [join(ROOT, 'examples', name)], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

describe.skipIf(!existsSync(join(ROOT, 'dist/index.js')))('explore examples', () => {
  it('explore.mjs: the Linkerd pod in 8 classes', () => {
    expect(runExample('explore.mjs')).toMatch(/^8 classes cover every tcp connection from a local process/);
  });
  it('explore-laws.mjs: every capture law holds for proxy-init', () => {
    expect(runExample('explore-laws.mjs')).toMatch(/^inbound connections reach the inbound proxy unless skipped: holds \(\d+ cells\)\n$/);
  });
});
