/**
 * Every TypeScript example type-checks under the package's own settings (tsconfig.json: strict,
 * nodenext, …; only the unused-name lint is off): the ```ts blocks of the TSDoc comments in src/,
 * and the ```ts and ```js blocks of README.md and docs/*.md.
 *
 * A TSDoc example is a module of its own, as a reader would paste it after the imports; the blocks
 * of one Markdown document are one module, in order (a guide builds its code up block by block; a
 * block that shows a repository file, first line `// PATH`, is shown without its imports). Then:
 * - `netfilter-sim` and `netfilter-sim/arbitraries` resolve to src/ (what the package exports);
 * - a name the example uses but does not import or declare, and that the package (or, for a
 *   TSDoc example, the module it documents) exports, is imported for it; `fc` is fast-check and
 *   `expect` vitest's;
 * - the few values the examples take as given (`ns`, a Netns; `trace`, a trace; …) are declared
 *   with their type in GIVEN below, and only where the example uses them.
 * Each failure names the example's file and line.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const VIRTUAL = join(ROOT, '.code-examples');

/** Values the examples take as given, declared only where an example uses the name. */
const GIVEN: Readonly<Record<string, string>> = {
  ns: 'Netns',
  spec: 'ConnectSpec',
  probe: 'ConnectionProbe',
  probes: 'readonly ConnectSpec[]',
  trace: 'readonly TraceEvent[]',
  text: 'string',
  saveText: 'string',
  iptablesSaveText: 'string',
  yaml: 'string',
  podYaml: 'string',
  nsYaml: 'string',
  confText: 'string',
  ruleset: 'Ruleset',
  snapshot: 'Snapshot',
  rules: 'Ruleset',
  rs: 'Ruleset',
  natTable: 'Ruleset',
  args: 'readonly string[]',
  argv: 'readonly string[]',
  pod: 'Pod',
  podWithLinkerdInit: 'Pod',
  d: 'Diagnostic',
  io: 'CliIO',
  setup: 'CaptureSetup',
  cx: 'Counterexample',
  hop: 'MeshHop',
  options: 'MeshScenarioOptions',
  builder: 'IptablesRuleBuilder',
  myTool: '{ accepts(text: string): boolean; load(text: string): void }',
  myTranslator: '{ translate(argv: readonly string[]): unknown }',
};

/** Modules whose exports the TSDoc examples of a folder may use without importing them (the CLI's I/O, the extension registry). */
const IN_SCOPE: Readonly<Record<string, string>> = {
  'src/cli/': 'src/cli/io.ts',
  'src/iptables/extensions/': 'src/iptables/extensions/registry.ts',
};

/** Per file, what its examples take as given where it differs from GIVEN. */
const GIVEN_IN: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'src/iptables/check/check.ts': { natTable: 'Table' },
  'src/iptables/extensions/placement.ts': { opts: 'unknown' },
  'src/compile/linkerd/cni.ts': { conf: 'unknown' },
  'src/compile/linkerd/comments.ts': { rule: 'Rule' },
  'src/compile/linkerd/iptables-model.ts': { existing: 'string' },
  'src/mesh/simulate.ts': { client: 'Pod', server: 'Pod' },
  'src/mesh/types.ts': { client: 'Pod', server: 'Pod', pod: 'MeshPod' },
  'src/iptables/print/save.ts': { rule: 'Rule' },
  'src/laws/mesh.ts': { config: 'Parameters<typeof linkerdRerunIsIdempotent>[0]', myGenerator: '(config: Parameters<typeof linkerdRerunIsIdempotent>[0]) => string[][]' },
  'src/compile/linkerd/proxy-init.ts': { config: 'FirewallConfiguration' },
  'src/compile/linkerd/version.ts': { config: 'FirewallConfiguration' },
  'src/compile/linkerd/output.ts': { result: 'ReturnType<typeof compileProxyInit>' },
  'src/mesh/render.ts': { result: 'MeshResult' },
  'src/trace/render.ts': { result: 'ConnectResult' },
  'src/cluster/cluster.ts': { yamlText: 'string' },
  'src/cluster/snapshot.ts': { yamlText: 'string' },
  'src/cluster/render.ts': { cluster: 'Cluster' },
  'docs/testing-rule-generators.md': { config: 'CaptureConfig', myCommands: '(config: CaptureConfig) => string[][]', translate: '(text: string) => string' },
};

interface Example {
  /** Where the block starts, `FILE:LINE` (1-based, the line after the opening fence). */
  readonly where: string;
  readonly code: string;
  /** The source line (1-based) of each line of `code`. */
  readonly lines: readonly number[];
  /** For a TSDoc example, the source file it documents: its exports are in scope too. */
  readonly module?: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** The ```ts blocks inside the `/** … *\/` comments of a source file. */
function tsdocExamples(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: Example[] = [];
  let inComment = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^\s*\/\*\*/.test(l)) inComment = true;
    if (inComment && /^\s*\*\s?```(ts|typescript)\s*$/.test(l)) {
      const start = i + 1;
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*\*\s?```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.replace(/^\s*\*\s?/, ''));
      out.push({ where: `${relative(ROOT, file)}:${start + 1}`, code: body.join('\n'), lines: body.map((_, k) => start + 2 + k), module: file });
      continue;
    }
    if (l.includes('*/')) inComment = false;
  }
  return out;
}

/** The ```ts and ```js blocks of a Markdown file, as one module (none when it has no block). */
function markdownExamples(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const code: string[] = [];
  const at: number[] = [];
  let first = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript|js|javascript)\s*$/.test(lines[i]!)) continue;
    first ||= i + 2;
    const shownFile = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(lines[i + 1] ?? '');
    for (i++; i < lines.length && lines[i] !== '```'; i++) {
      // A repository file shown in a guide keeps its relative imports; the guide's own imports stand for them.
      if (shownFile && /^import /.test(lines[i]!)) continue;
      code.push(lines[i]!);
      at.push(i + 1);
    }
  }
  return code.length === 0 ? [] : [{ where: `${relative(ROOT, file)}:${first}`, code: code.join('\n'), lines: at }];
}

const examples: Example[] = [
  ...walk(join(ROOT, 'src'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .flatMap(tsdocExamples),
  ...['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)].flatMap((f) => markdownExamples(join(ROOT, f))),
];

const ENTRIES = { 'netfilter-sim': join(ROOT, 'src/index.ts'), 'netfilter-sim/arbitraries': join(ROOT, 'src/arbitraries/index.ts') } as const;

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return {
    ...parsed.options,
    // An example may show a value without using it (`const r = parse(text);`): the strict type
    // checks stay, the unused-name lint does not apply.
    noUnusedLocals: false,
    noUnusedParameters: false,
    noEmit: true,
    baseUrl: ROOT,
    paths: Object.fromEntries(Object.entries(ENTRIES).map(([k, v]) => [k, [relative(ROOT, v).replace(/\.ts$/, '.js')]])),
  };
}

/** Names a piece of code imports or declares at its top level (roughly: enough to not shadow). */
function ownNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
      if (name) names.add(name);
    }
  }
  for (const m of code.matchAll(/import\s+(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)\s+from/g)) names.add(m[1]!);
  for (const m of code.matchAll(/(?:const|let|var|function\*?|class|type|interface)\s+([A-Za-z_$][\w$]*)/g)) names.add(m[1]!);
  for (const m of code.matchAll(/(?:const|let|var)\s+[{[]([^=]*)[}\]]\s*=/g)) {
    for (const part of m[1]!.split(',')) {
      const name = part.split(':').pop()!.trim().replace(/^\.\.\./, '').split('=')[0]!.trim();
      if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
    }
  }
  return names;
}

/** The code without comments and without the text of its string literals. */
const bare = (code: string): string => code.replace(/\/\/.*$/gm, '').replace(/\.\.\./g, ' ').replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g, "''");
const uses = (code: string, name: string): boolean => new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(bare(code));

/** The module an example compiles as: the imports and declarations it takes as given, then the example. */
function moduleOf(example: Example, exports: ReadonlyMap<string, readonly Exported[]>): { text: string; preludeLines: number } {
  const { code } = example;
  const own = ownNames(code);
  const prelude: string[] = [];
  // The givens the example uses, declared first so that their types are imported like any name.
  const given = { ...GIVEN, ...GIVEN_IN[example.where.replace(/:\d+$/, '')] };
  const declared = Object.entries(given)
    .filter(([n]) => !own.has(n) && uses(code, n))
    .map(([n, t]) => `declare const ${n}: ${t};`);
  for (const line of declared) own.add(/declare const (\w+)/.exec(line)![1]!);
  const scope = `${declared.join('\n')}\n${code}`;
  const sources: [string, readonly Exported[]][] = Object.keys(ENTRIES).map((entry) => [entry, exports.get(entry) ?? []]);
  if (example.module !== undefined) {
    // The module's own exports, then what the module imports: the example is written inside it.
    sources.unshift([specifierFor(example.module), exports.get(example.module) ?? []]);
    for (const [from, names] of importsOf(example.module)) sources.splice(1, 0, [from, names]);
    for (const [folder, file] of Object.entries(IN_SCOPE)) {
      if (relative(ROOT, example.module).startsWith(folder)) sources.push([specifierFor(join(ROOT, file)), exports.get(join(ROOT, file)) ?? []]);
    }
  }
  for (const [entry, names] of sources) {
    const needed = names.filter((n) => !own.has(n.name) && uses(scope, n.name));
    for (const n of needed) own.add(n.name);
    if (needed.length > 0) prelude.push(`import { ${needed.map((n) => (n.value ? n.name : `type ${n.name}`)).join(', ')} } from '${entry}';`);
  }
  if (!own.has('fc') && uses(code, 'fc')) prelude.push(`import * as fc from 'fast-check';`);
  if (!own.has('expect') && uses(code, 'expect')) prelude.push(`import { expect } from 'vitest';`);
  const fs = ['readFileSync', 'writeFileSync'].filter((n) => !own.has(n) && uses(code, n));
  if (fs.length > 0) prelude.push(`import { ${fs.join(', ')} } from 'node:fs';`);
  prelude.push(...declared, 'export {};');
  return { text: `${prelude.join('\n')}\n${code}\n`, preludeLines: prelude.length };
}

/** A specifier for `file` (a path in the repository) from the virtual examples folder. */
function specifierFor(file: string): string {
  const specifier = relative(VIRTUAL, file).replace(/\.ts$/, '.js');
  return specifier.startsWith('.') ? specifier : `./${specifier}`;
}

/** The named imports of a source file, by specifier (relative ones rewritten for the examples folder). */
function importsOf(file: string): Map<string, Exported[]> {
  const out = new Map<string, Exported[]>();
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const bindings = st.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const spec = st.moduleSpecifier.text;
    const from = spec.startsWith('.') ? specifierFor(resolve(dirname(file), spec.replace(/\.js$/, '.ts'))) : spec;
    const typeOnly = st.importClause.isTypeOnly;
    const names = bindings.elements.filter((e) => e.propertyName === undefined).map((e) => ({ name: e.name.text, value: !typeOnly && !e.isTypeOnly }));
    out.set(from, [...(out.get(from) ?? []), ...names]);
  }
  return out;
}

interface Exported {
  readonly name: string;
  /** False for a type-only export (imported with `type`, as verbatimModuleSyntax wants). */
  readonly value: boolean;
}

/** The names each entry point and each documented source file export, keyed by specifier or path. */
function moduleExports(program: ts.Program, files: readonly string[]): Map<string, Exported[]> {
  const checker = program.getTypeChecker();
  const out = new Map<string, Exported[]>();
  const exportsOf = (file: string): Exported[] => {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) return [];
    return checker.getExportsOfModule(symbol).map((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return { name: s.getName(), value: (target.flags & ts.SymbolFlags.Value) !== 0 };
    });
  };
  for (const [entry, file] of Object.entries(ENTRIES)) out.set(entry, exportsOf(file));
  for (const file of files) out.set(file, exportsOf(file));
  return out;
}

/** Type-checks every example in one program; the diagnostics of each, by example index. */
function typeCheck(): Map<number, string[]> {
  const options = compilerOptions();
  const documented = [...new Set([...examples.flatMap((e) => (e.module === undefined ? [] : [e.module])), ...Object.values(IN_SCOPE).map((f) => join(ROOT, f))])];
  const base = ts.createProgram([...Object.values(ENTRIES), ...documented], options);
  const exports = moduleExports(base, documented);
  const modules = examples.map((e) => moduleOf(e, exports));
  const files = new Map(modules.map((m, i) => [join(VIRTUAL, `example-${i}.ts`), m.text]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (p) => files.has(p) || fileExists.call(host, p);
  host.readFile = (p) => files.get(p) ?? readFile.call(host, p);
  host.getSourceFile = (p, lang, onError, create) => {
    const text = files.get(p);
    return text === undefined ? getSourceFile.call(host, p, lang, onError, create) : ts.createSourceFile(p, text, lang, true);
  };
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host, oldProgram: base });
  const out = new Map<number, string[]>();
  modules.forEach((m, i) => {
    const sf = program.getSourceFile(join(VIRTUAL, `example-${i}.ts`))!;
    const diags = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    out.set(
      i,
      diags.map((d) => {
        const e = examples[i]!;
        const line = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line - m.preludeLines;
        const file = e.where.replace(/:\d+$/, '');
        return `${file}:${e.lines[line] ?? `${e.where} (prelude)`}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
    );
  });
  return out;
}

describe('code examples type-check', () => {
  const results = typeCheck();
  it('finds the examples of the TSDoc comments and the guides', () => {
    expect(examples.filter((e) => e.where.startsWith('src/')).length).toBeGreaterThan(200);
    expect(examples.filter((e) => !e.where.startsWith('src/')).map((e) => e.where.replace(/:\d+$/, ''))).toEqual(expect.arrayContaining(['README.md', 'docs/testing-rule-generators.md']));
  });
  it.each(examples.map((e, i) => [e.where, i] as const))('%s', (_where, i) => {
    expect(results.get(i)).toEqual([]);
  });
});
