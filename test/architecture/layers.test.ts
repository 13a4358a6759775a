/**
 * The shape of the source tree, enforced: every folder of `src/` that is a layer has a README.md
 * whose "May import:" line lists the layers it may depend on; a module that imports from a layer
 * not on its folder's list fails here, and so does any import circle between modules (type-only
 * imports included). docs/architecture.md describes the same layers in prose.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Every relative module a file names: static and dynamic imports, re-exports, worker URLs. */
export function importsOf(text: string): string[] {
  const specs: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)(['"])(\.\.?\/[^'"]+)\1/g;
  for (const m of text.matchAll(re)) specs.push(m[2]!);
  return specs;
}

function resolveSpec(from: string, spec: string): string {
  const abs = resolve(dirname(from), spec);
  return abs.endsWith('.js') ? abs.slice(0, -3) + '.ts' : abs;
}

interface Layer { folder: string; mayImport: string[] }

/** The layers: each folder under src/ holding a README.md with a "May import:" line. */
function readLayers(): Layer[] {
  const layers: Layer[] = [];
  const visit = (dir: string): void => {
    const readme = join(dir, 'README.md');
    if (existsSync(readme)) {
      const line = readFileSync(readme, 'utf8').split('\n').find((l) => l.startsWith('May import:'));
      if (line === undefined) throw new Error(`${relative(ROOT, readme)} has no "May import:" line`);
      const list = line.slice('May import:'.length).replace(/\.$/, '').split(',').map((s) => s.trim().replace(/`/g, '')).filter((s) => s !== '' && s !== 'nothing');
      layers.push({ folder: relative(SRC, dir), mayImport: list });
    }
    for (const name of readdirSync(dir)) if (statSync(join(dir, name)).isDirectory()) visit(join(dir, name));
  };
  visit(SRC);
  return layers;
}

const layers = readLayers();
const files = walk(SRC);

/** The layer a file belongs to: the deepest folder with a README; '' (the root) for src/*.ts. */
function layerOf(file: string): string {
  const rel = relative(SRC, file);
  let best = '';
  for (const l of layers) if (l.folder !== '' && (rel.startsWith(l.folder + '/')) && l.folder.length > best.length) best = l.folder;
  return best;
}

/** Whether `folder` may name `target`: its own layer, one it lists, or a sub-layer of one it lists. */
function allowed(folder: string, target: string): boolean {
  if (folder === '' || folder === target) return true;
  const layer = layers.find((l) => l.folder === folder)!;
  return layer.mayImport.some((m) => target === m || target.startsWith(m + '/'));
}

describe('the source tree', () => {
  it('has a README with a "May import:" line in every folder of src/', () => {
    const dirs = new Set(files.map((f) => relative(SRC, dirname(f))).filter((d) => d !== ''));
    const missing = [...dirs].filter((d) => layerOf(join(SRC, d, 'x.ts')) === '' );
    expect(missing).toEqual([]);
    for (const l of layers) for (const m of l.mayImport) expect(layers.map((x) => x.folder), `${l.folder}/README.md names ${m}`).toContain(m);
  });

  it('imports only down the layers each README allows', () => {
    const bad: string[] = [];
    for (const f of files) {
      const from = layerOf(f);
      for (const spec of importsOf(readFileSync(f, 'utf8'))) {
        const target = resolveSpec(f, spec);
        if (!existsSync(target)) { bad.push(`${relative(SRC, f)} → ${spec}: no such module`); continue; }
        const to = layerOf(target);
        if (to === '' && from !== '') bad.push(`${relative(SRC, f)} → ${relative(SRC, target)}: the package root is the top`);
        else if (!allowed(from, to)) bad.push(`${relative(SRC, f)} (${from}) → ${relative(SRC, target)} (${to})`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('has no import circle', () => {
    const graph = new Map<string, string[]>();
    for (const f of files) graph.set(f, importsOf(readFileSync(f, 'utf8')).map((s) => resolveSpec(f, s)).filter((t) => graph.has(t) || files.includes(t)));
    // Tarjan's strongly connected components: any component of two or more modules is a circle.
    let index = 0;
    const idx = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], on = new Set<string>();
    const circles: string[][] = [];
    const strong = (v: string): void => {
      idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
        else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string;
        do { w = stack.pop()!; on.delete(w); comp.push(relative(SRC, w)); } while (w !== v);
        if (comp.length > 1) circles.push(comp.sort());
      }
    };
    for (const f of files) if (!idx.has(f)) strong(f);
    expect(circles).toEqual([]);
  });

  it('names only files that exist in docs/architecture.md, and every layer', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const named = [...doc.matchAll(/`([a-z][\w/-]*\.ts)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(20);
    const missing = named.filter((n) => !existsSync(join(SRC, n)) && !files.some((f) => relative(SRC, f).endsWith('/' + n)));
    expect(missing).toEqual([]);
    for (const l of layers) if (l.folder !== '') expect(doc, `docs/architecture.md mentions ${l.folder}/`).toContain(l.folder.split('/').pop() + '/');
  });

  it('finds the imports it checks (the checker itself)', () => {
    expect(importsOf(`import { a } from './a.js';\nexport * from "../b.js";\nimport type { C } from './c.js';\nconst w = new URL('./w.js', import.meta.url);\nawait import('./d.js');\nimport './e.js';`))
      .toEqual(['./a.js', '../b.js', './c.js', './w.js', './d.js', './e.js']);
    expect(allowed('engine/rules', 'engine/state')).toBe(layers.find((l) => l.folder === 'engine/rules')!.mayImport.includes('engine/state'));
  });
});
