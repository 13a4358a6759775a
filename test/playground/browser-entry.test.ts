/**
 * The browser entry (src/browser.ts) needs nothing of Node: vite builds it for the browser, every
 * module it reaches is listed, and none is a `node:` module or a Node built-in by its bare name
 * (those are left external, so they would show up as imports of the bundle). The same holds for
 * the page's worker, built from it.
 */
import { builtinModules } from 'node:module';
import { resolve } from 'node:path';
import { build, type Rolldown } from 'vite';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const isNode = (id: string): boolean => id.startsWith('node:') || builtinModules.includes(id) || builtinModules.includes(id.split('/')[0]!);

async function graphOf(entry: string): Promise<{ modules: string[]; imports: string[]; code: string }> {
  const out = (await build({
    configFile: false,
    logLevel: 'silent',
    root: ROOT,
    build: {
      write: false,
      minify: false,
      lib: { entry: resolve(ROOT, entry), formats: ['es'], fileName: 'entry' },
      rollupOptions: { external: (id: string) => isNode(id) },
    },
  })) as Rolldown.RolldownOutput[] | Rolldown.RolldownOutput;
  const outputs = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output);
  const chunks = outputs.filter((o): o is Rolldown.OutputChunk => o.type === 'chunk');
  return {
    modules: chunks.flatMap((c) => c.moduleIds),
    imports: chunks.flatMap((c) => [...c.imports, ...c.dynamicImports]),
    // The code without its comment lines (the TSDoc examples name process.stdout).
    code: chunks.map((c) => c.code).join('\n').split('\n').filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l)).join('\n'),
  };
}

describe('the browser entry', () => {
  it('reaches no Node built-in', async () => {
    const g = await graphOf('src/browser.ts');
    expect(g.modules.length).toBeGreaterThan(100);
    expect(g.modules.some((m) => m.endsWith('src/engine/path/netns.ts'))).toBe(true);
    expect(g.modules.filter(isNode)).toEqual([]);
    expect(g.imports.filter(isNode)).toEqual([]);
    expect(g.modules.filter((m) => m.includes('/engine/batch/') || m.includes('/src/cli/') || m.includes('fast-check'))).toEqual([]);
    // Node's globals are not there either (the browser has no Buffer or process).
    expect(g.code).not.toMatch(/\bBuffer\.(from|byteLength|alloc)\b/);
    expect(g.code).not.toMatch(/\bprocess\.(env|argv|stdout|exit)\b/);
  }, 120_000);

  it('and the check would see one: the package root, with the worker-thread batches, reaches node:worker_threads', async () => {
    const g = await graphOf('src/index.ts');
    expect(g.imports).toContain('node:worker_threads');
  }, 120_000);
});
