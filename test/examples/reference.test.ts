// The reference docs keep up with the product: every command of the CLI (and every mesh of
// `compile`) has its section in docs/cli.md, and every value the package exports (the root entry
// and ./arbitraries) is listed in docs/library.md, which names nothing that is not exported.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as arbitraries from '../../src/arbitraries/index.js';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

const DOCS = resolve(import.meta.dirname, '../../docs');
const cli = readFileSync(resolve(DOCS, 'cli.md'), 'utf8');
const api = readFileSync(resolve(DOCS, 'library.md'), 'utf8');
const headings = new Set([...cli.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim()));

/** The names of the `| \`name\` | … |` rows of a part of docs/library.md. */
function listed(part: string): string[] {
  return [...part.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

/** The commands `netfilter-sim --help` lists. */
async function commands(): Promise<string[]> {
  const io = memoryIO();
  await run(['--help'], io);
  const from = io.out.indexOf('Commands:');
  const to = io.out.indexOf('\n\n', from);
  return [...io.out.slice(from, to).matchAll(/^ {2}([a-z][a-z0-9-]*) {2,}/gm)].map((m) => m[1]!);
}

describe('docs/cli.md has a section for every command', () => {
  it('every command of netfilter-sim --help', async () => {
    const names = await commands();
    expect(names.length).toBeGreaterThan(8);
    for (const name of names) expect(headings.has(name), `docs/cli.md has no "## ${name}" section`).toBe(true);
  });

  it('and for every mesh of compile', async () => {
    const io = memoryIO();
    await run(['compile', '--help'], io);
    const meshes = [...io.out.slice(io.out.indexOf('Meshes:')).matchAll(/^ {2}([a-z][a-z0-9-]*) {2,}/gm)].map((m) => m[1]!);
    expect(meshes.length).toBeGreaterThan(3);
    for (const m of meshes) expect(headings.has(`compile ${m}`), `docs/cli.md has no "### compile ${m}" section`).toBe(true);
  });
});

describe('docs/library.md lists every export, and only exports', () => {
  const split = api.indexOf('## `netfilter-sim/arbitraries`');
  const rootPart = api.slice(0, split);
  const arbPart = api.slice(split);

  it('the root entry', () => {
    const names = listed(rootPart);
    expect(new Set(names).size, 'a name listed twice').toBe(names.length);
    expect(names.slice().sort()).toEqual(Object.keys(root).sort());
  });

  it('netfilter-sim/arbitraries', () => {
    expect(split).toBeGreaterThan(0);
    expect(listed(arbPart).sort()).toEqual(Object.keys(arbitraries).sort());
  });
});
