/**
 * The README and the guides show real commands with their real output. This suite runs them and
 * compares, so the documentation cannot drift from the product:
 *
 * - every ```console block: each `$ command` (a trailing `\` continues it on the next line) runs in
 *   bash, with `netfilter-sim` on the PATH, and its standard output and error must be the lines
 *   that follow it; a line holding only `…` stands for any number of lines;
 * - `<!-- output of: COMMAND -->` before a fenced block: that block is COMMAND's output (used for
 *   the Mermaid diagrams, which GitHub renders);
 * - `<!-- file: PATH -->` before a fenced block: the block is the file PATH, without its leading
 *   `//` comment lines (the library code of the README is the example that runs).
 *
 * Commands run from a scratch directory that links to the repository's `examples/`, `test/` and
 * `dist/`, so `> linkerd.rules` does not write into the repository, and `../shared` resolves when the
 * project's shared corpus is next to it (commands that need it follow test/shared-data.ts otherwise:
 * skipped with a warning, failing under CI).
 * Needs the built `dist/` (`npm test` builds first).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_ROOT, sharedMissing, sharedRequired } from '../shared-data.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHARED = SHARED_ROOT;
const DOCS = ['README.md', 'docs/cli.md', 'docs/reading-a-trace.md', 'docs/debugging-a-meshed-pod.md', 'docs/checking-a-node-dump.md', 'docs/nftables.md', 'docs/explore.md', 'docs/network-policy.md', 'docs/playground.md', 'docs/tracing-a-cluster.md'];

interface Step {
  readonly command: string;
  readonly expected: readonly string[];
  readonly line: number;
}

type Check =
  | { readonly kind: 'console'; readonly steps: readonly Step[] }
  | { readonly kind: 'output'; readonly command: string; readonly expected: readonly string[]; readonly line: number }
  | { readonly kind: 'file'; readonly path: string; readonly body: string; readonly line: number };

/** The checks of one Markdown file, in document order. */
function checksOf(markdown: string): Check[] {
  const lines = markdown.split('\n');
  const checks: Check[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    const marker = lines[start - 1] ?? '';
    const output = /^<!-- output of: (.+) -->$/.exec(marker);
    const file = /^<!-- file: (.+) -->$/.exec(marker);
    if (output) checks.push({ kind: 'output', command: output[1]!, expected: body, line: start + 1 });
    else if (file) checks.push({ kind: 'file', path: file[1]!, body: body.join('\n'), line: start + 1 });
    else if (fence[1] === 'console') checks.push({ kind: 'console', steps: stepsOf(body, start + 2) });
  }
  return checks;
}

function stepsOf(body: readonly string[], firstLine: number): Step[] {
  const steps: { command: string; expected: string[]; line: number }[] = [];
  for (let j = 0; j < body.length; j++) {
    const l = body[j]!;
    if (l.startsWith('$ ')) {
      let command = l.slice(2);
      const line = firstLine + j;
      while (command.endsWith('\\') && j + 1 < body.length) command = `${command.slice(0, -1)} ${body[++j]!.trim()}`;
      steps.push({ command, expected: [], line });
    } else if (steps.length > 0) steps[steps.length - 1]!.expected.push(l);
  }
  return steps;
}

/** Whether `actual` lines fit `expected`, where a `…` line matches any run of lines. */
function fits(actual: readonly string[], expected: readonly string[]): boolean {
  const segments: string[][] = [[]];
  for (const l of expected) {
    if (l.trim() === '…') segments.push([]);
    else segments[segments.length - 1]!.push(l);
  }
  if (segments.length === 1) return actual.join('\n') === expected.join('\n');
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  if (actual.length < first.length + last.length) return false;
  if (actual.slice(0, first.length).join('\n') !== first.join('\n')) return false;
  if (actual.slice(actual.length - last.length).join('\n') !== last.join('\n')) return false;
  let pos = first.length;
  const end = actual.length - last.length;
  for (const seg of segments.slice(1, -1)) {
    let found = -1;
    for (let k = pos; k + seg.length <= end; k++) {
      if (actual.slice(k, k + seg.length).join('\n') === seg.join('\n')) {
        found = k;
        break;
      }
    }
    if (found < 0) return false;
    pos = found + seg.length;
  }
  return true;
}

const trimLines = (text: string): string[] => {
  const lines = text.replace(/\s+$/, '').split('\n').map((l) => l.replace(/\s+$/, ''));
  return lines.length === 1 && lines[0] === '' ? [] : lines;
};

const scratch = mkdtempSync(join(tmpdir(), 'nfsim-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A working directory for one document, with the repository's inputs linked into it. */
function workdir(name: string): { cwd: string; env: NodeJS.ProcessEnv } {
  const base = join(scratch, name.replace(/[^A-Za-z0-9]/g, '_'));
  const cwd = join(base, 'main');
  const bin = join(base, 'bin');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(bin, { recursive: true });
  for (const entry of ['examples', 'test', 'dist', 'package.json', 'node_modules']) symlinkSync(join(ROOT, entry), join(cwd, entry));
  if (existsSync(SHARED)) symlinkSync(SHARED, join(base, 'shared'));
  writeFileSync(join(bin, 'netfilter-sim'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist/cli/main.js')}" "$@"\n`);
  chmodSync(join(bin, 'netfilter-sim'), 0o755);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, NO_COLOR: '1', COLUMNS: '100' };
  delete env['FORCE_COLOR'];
  return { cwd, env };
}

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync('bash', ['-c', `{ ${command}\n} 2>&1`], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return r.stdout;
}

/** Whether a command reads ../shared where it is absent and may be skipped (warned once per document). */
function skipForShared(doc: string, command: string): boolean {
  const missing = /\.\.\/shared\//.test(command) ? sharedMissing(['.']) : null;
  if (missing === null || sharedRequired()) return false;
  if (!warned.has(doc)) console.warn(`[shared] skipping the commands of ${doc} that read ../shared: ${missing}`);
  warned.add(doc);
  return true;
}
const warned = new Set<string>();

describe.skipIf(!existsSync(join(ROOT, 'dist/cli/main.js')))('the documentation shows what the commands print', () => {
  for (const doc of DOCS) {
    const path = join(ROOT, doc);
    if (!existsSync(path)) {
      it.todo(`${doc} (not written yet)`);
      continue;
    }
    describe(doc, () => {
      const { cwd, env } = workdir(doc);
      for (const check of checksOf(readFileSync(path, 'utf8'))) {
        if (check.kind === 'file') {
          it(`line ${check.line}: the block is ${check.path}`, () => {
            const file = readFileSync(join(ROOT, check.path), 'utf8').split('\n');
            while (file[0]?.startsWith('//')) file.shift();
            expect(check.body.trim()).toBe(file.join('\n').trim());
          });
        } else if (check.kind === 'output') {
          it(`line ${check.line}: ${check.command}`, () => {
            expect(trimLines(sh(check.command, cwd, env))).toEqual(check.expected.map((l) => l.replace(/\s+$/, '')));
          });
        } else {
          for (const step of check.steps) {
            it.skipIf(skipForShared(doc, step.command))(`line ${step.line}: ${step.command}`, () => {
              const actual = trimLines(sh(step.command, cwd, env));
              const expected = step.expected.map((l) => l.replace(/\s+$/, ''));
              while (expected.length > 0 && expected[expected.length - 1] === '') expected.pop();
              if (!fits(actual, expected)) expect(actual.join('\n')).toBe(expected.join('\n'));
            });
          }
        }
      }
    });
  }
});
