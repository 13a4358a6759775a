/**
 * nftables' own test suite (nftables 1.0.6, test/vectors/nftables-upstream) turned into `nft -f`
 * scripts, so that the real `nft` can judge our reading and listing of every line of it.
 *
 * - `tests/py/**\/*.t`: each line is a rule (`RULE;ok[;LISTING]` or `RULE;fail`), tried by
 *   upstream's `nft-test.py` in every table declared so far (`*FAMILY;TABLE;CHAIN,…`) and in each
 *   of that table's chains (`:CHAIN;type … hook … priority …`), after the sets (`!NAME type …`),
 *   elements (`?NAME ELEMENT,…`) and objects (`%NAME type …`) declared above it. One script per
 *   (rule, table, chain): the table, its chains, the sets, elements and objects, then the rule as
 *   the last line. Lines that upstream runs only on request (`- RULE`) are left out, as it does.
 * - `tests/shell/testcases/**\/dumps/*.nft`: listings saved by the shell tests; each is loaded as
 *   it is.
 *
 * The verdict is not the `ok`/`fail` of the file (written for a newer kernel, or the other way
 * round) but what the `nft` binary and the kernel here do with the script.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Where the upstream files are kept (test data only, GPL-2.0: see its README). */
export const UPSTREAM_ROOT = join(import.meta.dirname, '..', 'vectors', 'nftables-upstream');

/** One script built from a line of `tests/py`. */
export interface UpstreamPyCase {
  /** `ip/ip.t:42 ip test-ip4 input` */
  readonly id: string;
  readonly file: string;
  readonly line: number;
  readonly family: string;
  readonly chain: string;
  /** What the `.t` file expects: `ok` or `fail`. */
  readonly expect: 'ok' | 'fail';
  /** The rule as written in the file. */
  readonly rule: string;
  /** The `nft -f` script; the rule is its last line. */
  readonly text: string;
}

/** One listing from `tests/shell`. */
export interface UpstreamDump {
  readonly id: string;
  readonly text: string;
}

function walk(dir: string, keep: (path: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, keep, out);
    else if (keep(path)) out.push(path);
  }
  return out;
}

interface Table {
  readonly family: string;
  readonly name: string;
  readonly chains: readonly string[];
}

/** The scripts of every `tests/py` file. */
export function upstreamPyCases(root = UPSTREAM_ROOT): UpstreamPyCase[] {
  const out: UpstreamPyCase[] = [];
  for (const path of walk(join(root, 'py'), (p) => p.endsWith('.t'))) {
    const file = relative(join(root, 'py'), path);
    const tables: Table[] = [];
    const chains = new Map<string, string>();
    // Declarations after the tables: sets, elements and objects, as commands per table.
    const setup: ((t: Table) => string)[] = [];
    readFileSync(path, 'utf8').split('\n').forEach((raw, i) => {
      const line = raw.replace(/\s+$/, '');
      if (line.trim() === '' || line.startsWith('#') || line.startsWith('-')) return;
      const body = line.slice(1);
      switch (line[0]) {
        case '*': {
          const [family, name, list] = body.split(';');
          tables.push({ family: family!, name: name!, chains: (list ?? '').split(',').filter((c) => c !== '') });
          return;
        }
        case ':': {
          const semi = body.indexOf(';');
          chains.set(body.slice(0, semi), body.slice(semi + 1));
          return;
        }
        case '!': {
          const [decl, result] = body.split(';');
          if (result !== 'ok') return;
          const tokens = decl!.split(' ');
          const name = tokens[0]!;
          let type = tokens[2]!;
          let k = 3;
          while (tokens[k] === '.') {
            type += ` . ${tokens[k + 1]}`;
            k += 2;
          }
          let extra = '';
          if (tokens[k] === 'timeout') {
            extra += ` timeout ${tokens[k + 1]};`;
            k += 2;
          }
          if (tokens[k] === 'flags') extra += ` flags ${tokens[k + 1]};`;
          setup.push((t) => `add set ${t.family} ${t.name} ${name} { type ${type};${extra} }`);
          return;
        }
        case '?': {
          const [decl, result] = body.split(';');
          if (result !== 'ok') return;
          const space = decl!.indexOf(' ');
          const name = decl!.slice(0, space);
          const elements = decl!.slice(space).split(',').join(', ');
          setup.push((t) => `add element ${t.family} ${t.name} ${name} {${elements} }`);
          return;
        }
        case '%': {
          const brace = line.lastIndexOf('}');
          const decl = brace < 0 ? body.split(';')[0]! : line.slice(1, brace + 1);
          const result = brace < 0 ? body.split(';')[1] : line.slice(brace + 2);
          if (result !== 'ok') return;
          const tokens = decl.split(' ');
          const name = tokens[0]!;
          let type = tokens[2]!;
          let rest = tokens.slice(3);
          if (type === 'ct' && ['helper', 'timeout', 'expectation'].includes(rest[0] ?? '')) {
            type = `ct ${rest[0]}`;
            rest = rest.slice(1);
          }
          setup.push((t) => `add ${type} ${t.family} ${t.name} ${name} ${rest.join(' ')}`.trimEnd());
          return;
        }
        default: {
          const parts = line.split(';');
          if (parts.length < 2 || parts.length > 3 || (parts[1] !== 'ok' && parts[1] !== 'fail')) return;
          const rule = parts[0]!;
          for (const t of tables) {
            for (const c of t.chains) {
              const config = chains.get(c);
              const head = [
                `add table ${t.family} ${t.name}`,
                ...t.chains.map((x) => `add chain ${t.family} ${t.name} ${x}${chains.get(x) ? ` { ${chains.get(x)}; }` : ''}`),
                ...setup.map((f) => f(t)),
              ];
              void config;
              out.push({
                id: `${file}:${i + 1} ${t.family} ${t.name} ${c}`, file, line: i + 1, family: t.family, chain: c,
                expect: parts[1] as 'ok' | 'fail', rule, text: `${head.join('\n')}\nadd rule ${t.family} ${t.name} ${c} ${rule}\n`,
              });
            }
          }
        }
      }
    });
  }
  return out;
}

/** Every listing the shell tests saved. */
export function upstreamShellDumps(root = UPSTREAM_ROOT): UpstreamDump[] {
  return walk(join(root, 'shell'), (p) => p.endsWith('.nft')).map((path) => ({
    id: relative(join(root, 'shell'), path),
    text: readFileSync(path, 'utf8'),
  }));
}
