/**
 * The text form of an {@link ExploreResult}: one block per class (outcome, deciding rules, a
 * table of its boxes with each range in its shortest form).
 *
 * @module
 */
import { expectArgument, expectFields, expectObjects } from '../model/guard.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import { addressText } from '../model/address.js';
import type { Family } from '../model/types.js';
import type { ExploreBox, ExploreOutcome, ExploreResult } from './explore.js';
import { bigToWords, wordsToBig } from './instrument.js';

/** `lo-hi` as the fewest CIDR prefixes that cover exactly it. */
function prefixes(lo: bigint, hi: bigint, bits: number): [bigint, number][] {
  const out: [bigint, number][] = [];
  let cur = lo;
  while (cur <= hi) {
    let size = 0;
    while (size < bits && (cur & ((1n << BigInt(size + 1)) - 1n)) === 0n && cur + (1n << BigInt(size + 1)) - 1n <= hi) size++;
    out.push([cur, bits - size]);
    cur += 1n << BigInt(size);
  }
  return out;
}

/** An address range in its shortest form: `*`, one address, up to two prefixes, or `first-last`. */
export function addressRangeText(first: string, last: string): string {
  expectArgument(first, 'string', 'first');
  expectArgument(last, 'string', 'last');
  const a = parseAnyAddress(first);
  const b = parseAnyAddress(last);
  if (!a || !b) return `${first}-${last}`;
  const family: Family = a.family;
  const bits = family === 4 ? 32 : 128;
  const lo = wordsToBig(a.addr);
  const hi = wordsToBig(b.addr);
  if (lo === 0n && hi === (1n << BigInt(bits)) - 1n) return '*';
  if (lo === hi) return first;
  const ps = prefixes(lo, hi, bits);
  if (ps.length <= 2) return ps.map(([v, len]) => `${addressText(bigToWords(v, family), family)}/${len}`).join(' ');
  return `${first}-${last}`;
}

function numberRangeText(r: readonly [number, number], full: readonly [number, number]): string {
  if (r[0] === full[0] && r[1] === full[1]) return '*';
  return r[0] === r[1] ? String(r[0]) : `${r[0]}-${r[1]}`;
}

const ID_RANGE = [0, 4294967295] as const;
const PORT_RANGE = [1, 65535] as const;

function boxCells(b: ExploreBox, fields: readonly string[]): string[] {
  return fields.map((f) => {
    switch (f) {
      case 'uid':
      case 'gid':
        return numberRangeText(b[f]!, ID_RANGE);
      case 'dport':
        return numberRangeText(b.dport!, PORT_RANGE);
      case 'iface':
        return b.iface!;
      default: {
        const r = b[f as 'src' | 'dst']!;
        return addressRangeText(r[0], r[1]);
      }
    }
  });
}

type OutcomeFields = Pick<ExploreOutcome, 'address' | 'port' | 'originalDestination'> & { readonly outcome: string };

function where(o: OutcomeFields, family: Family): string {
  if (o.address === null) return '';
  const addr = o.address === 'dst' ? "the probe's destination" : o.address === 'src' ? "the probe's source" : o.address;
  const port = o.port === 'dport' ? "the probe's port" : String(o.port);
  const text = o.address === 'dst' || o.address === 'src' || o.port === 'dport' ? `${addr}, ${port}` : family === 6 ? `[${addr}]:${port}` : `${addr}:${port}`;
  return ` → ${text}`;
}

/** `; narrowed to dst 10.96.0.0/12, dport 80`, or nothing. */
export function narrowedText(r: Pick<ExploreResult, 'narrowed'>): string {
  const n = r.narrowed;
  if (n === undefined) return '';
  const parts = Object.entries(n).map(([k, v]) => `${k} ${(v as readonly string[]).join(',')}`);
  return parts.length > 0 ? `; narrowed to ${parts.join(', ')}` : '';
}

/** One outcome as a line: what it is, where it goes, its SO_ORIGINAL_DST. @internal */
export function outcomeLine(o: OutcomeFields, family: Family): string {
  const orig = o.originalDestination === null ? '' : o.originalDestination === 'dst' ? " (SO_ORIGINAL_DST: the probe's destination)" : ` (SO_ORIGINAL_DST ${o.originalDestination})`;
  return `${o.outcome}${where(o, family)}${orig}`;
}

/**
 * Renders an exploration as text.
 *
 * @example
 * ```ts
 * process.stdout.write(renderExplore(explore({ rules, from: 'local', listen: [4140] })));
 * ```
 */
export function renderExplore(r: ExploreResult): string {
  expectFields(r, { classes: 'array', from: 'string' }, 'result');
  expectObjects(r.classes, 'result.classes');
  const lines: string[] = [];
  const space = r.from === 'local' ? 'uid × gid × destination × port' : 'source × destination × port × interface';
  lines.push(`${r.classes.length} classes cover every ${r.proto} connection from ${r.from === 'local' ? 'a local process' : 'a remote client'} (${space}; source port ${r.sport}${narrowedText(r)})`);
  r.classes.forEach((c, i) => {
    lines.push('');
    lines.push(`class ${i + 1} (IPv${c.family}): ${outcomeLine(c, c.family)}`);
    for (const a of c.alternatives ?? []) lines.push(`  p=${a.probability.toFixed(4)}  ${outcomeLine(a, c.family)}`);
    for (const rule of c.rules) lines.push(`  by    ${rule}`);
    for (const a of c.assumptions ?? []) lines.push(`  assumes ${a}`);
    const cells = c.boxes.map((b) => boxCells(b, r.fields));
    // A class that is one product of ranges reads as one row of unions.
    const distinct = r.fields.map((_, k) => [...new Set(cells.map((row) => row[k]!))]);
    const product = distinct.reduce((n, d) => n * d.length, 1) === new Set(cells.map((row) => row.join('\t'))).size;
    const rows = [r.fields.map((f) => f), ...(product && cells.length > 1 ? [distinct.map((d) => d.join(', '))] : cells)];
    const widths = r.fields.map((_, k) => Math.max(...rows.map((row) => row[k]!.length)));
    for (const row of rows) lines.push(`  ${row.map((cell, k) => cell.padEnd(widths[k]!)).join('  ').trimEnd()}`);
    lines.push(`  e.g.  ${Object.entries(c.example).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  });
  return lines.join('\n') + '\n';
}
