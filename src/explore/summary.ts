/**
 * The summary of an exploration: per outcome, how much of the (narrowed) space gives it — exact
 * probe counts and shares — and the rules that produce it.
 *
 * @module
 */
import { expectFields, expectObjects } from '../model/guard.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import type { Family } from '../model/types.js';
import type { ExploreBox, ExploreClass, ExploreOutcome, ExploreResult } from './explore.js';
import { wordsToBig } from './instrument.js';
import { narrowedText, outcomeLine } from './render.js';

/** One outcome of an exploration and the part of its family's space that gets it. */
export interface ExploreSummaryOutcome {
  readonly family: Family;
  /** As a class says it: `random` when `statistic`/`numgen` draws decide (then `alternatives`). */
  readonly outcome: ExploreClass['outcome'];
  readonly address: string | null;
  readonly port: number | 'dport' | null;
  readonly originalDestination: string | null;
  /** With random draws: every branch with its probability. */
  readonly alternatives?: readonly ExploreOutcome[];
  /** How many probes of the family's space get this outcome: a decimal integer, exact. */
  readonly probes: string;
  /** `probes` as a percentage of the family's space (a float; `probes` is exact). */
  readonly share: number;
  /** How many of the exploration's classes give this outcome. */
  readonly classes: number;
  /** The rules of those classes, each once, in the order they are first met. */
  readonly rules: readonly string[];
}

/** What {@link summarizeExplore} returns (and `explore --summary --json` prints). */
export interface ExploreSummary {
  readonly from: ExploreResult['from'];
  readonly fields: readonly string[];
  readonly proto: ExploreResult['proto'];
  readonly sport: number;
  /** The space per family, as the exploration has it. */
  readonly spaces: ExploreResult['spaces'];
  readonly narrowed?: ExploreResult['narrowed'];
  /** Per family, the outcomes by how many probes get them, most first. */
  readonly outcomes: readonly ExploreSummaryOutcome[];
}

function addressValue(text: string, family: Family): bigint {
  const a = parseAnyAddress(text);
  if (!a || a.family !== family) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `summarizeExplore: "${text}" in a box is not an IPv${family} address`));
  return wordsToBig(a.addr);
}

/** How many probes a box holds: the product of its ranges' sizes (an interface counts once). */
export function boxProbes(box: ExploreBox, fields: readonly string[], family: Family): bigint {
  let n = 1n;
  for (const f of fields) {
    if (f === 'iface') continue;
    const r = (box as Record<string, readonly [number | string, number | string] | undefined>)[f];
    if (r === undefined) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `summarizeExplore: a box has no ${f} range`));
    const lo = f === 'src' || f === 'dst' ? addressValue(String(r[0]), family) : BigInt(r[0]);
    const hi = f === 'src' || f === 'dst' ? addressValue(String(r[1]), family) : BigInt(r[1]);
    n *= hi - lo + 1n;
  }
  return n;
}

/** `part / whole` as a percentage (a float: `probes` is the exact figure). */
function percent(part: bigint, whole: bigint): number {
  if (whole === 0n) return 0;
  return (Number(part) / Number(whole)) * 100;
}

/** A share as text: two decimals, four significant digits below 0.01 %, `>99.99%` just below the whole. */
function shareText(share: number): string {
  if (share === 100 || share === 0) return `${share}%`;
  // Never 100.00 or 0.00 for a part that is not the whole or nothing.
  if (share > 99.99) return '>99.99%';
  if (share >= 0.01) return `${share.toFixed(2)}%`;
  return `${share.toPrecision(4)}%`;
}

/**
 * The exploration by outcome: each distinct outcome (with its alternatives where draws decide)
 * with the exact number of probes that get it, its share of its family's space, and the rules
 * of the classes that give it. The shares of a family add up to its whole space (`probes` exactly).
 *
 * @example
 * ```ts
 * const s = summarizeExplore(explore({ rules, from: 'local', family: 4, dst: '10.96.0.0/12' }));
 * for (const o of s.outcomes) console.log(o.outcome, o.address, o.probes, `${o.share}%`);
 * ```
 */
export function summarizeExplore(result: ExploreResult): ExploreSummary {
  expectFields(result, { classes: 'array', fields: 'array', spaces: 'array' }, 'result');
  expectObjects(result.classes, 'result.classes');
  const groups = new Map<string, { out: Omit<ExploreSummaryOutcome, 'probes' | 'share' | 'classes' | 'rules'>; probes: bigint; classes: number; rules: Set<string> }>();
  for (const c of result.classes) {
    const key = JSON.stringify([c.family, c.outcome, c.address, c.port, c.originalDestination, c.alternatives ?? null]);
    let g = groups.get(key);
    if (!g) {
      const out: { -readonly [K in keyof ExploreSummaryOutcome]?: ExploreSummaryOutcome[K] } = { family: c.family, outcome: c.outcome, address: c.address, port: c.port, originalDestination: c.originalDestination };
      if (c.alternatives) out.alternatives = c.alternatives;
      groups.set(key, (g = { out: out as ExploreSummaryOutcome, probes: 0n, classes: 0, rules: new Set() }));
    }
    for (const b of c.boxes) g.probes += boxProbes(b, result.fields, c.family);
    g.classes++;
    for (const r of c.rules) g.rules.add(r);
  }
  const whole = new Map<Family, bigint>(result.spaces.map((s) => [s.family, BigInt(s.probes)]));
  const outcomes = [...groups.values()]
    .sort((a, b) => (a.out.family !== b.out.family ? a.out.family - b.out.family : a.probes > b.probes ? -1 : a.probes < b.probes ? 1 : 0))
    .map((g) => ({ ...g.out, probes: g.probes.toString(), share: percent(g.probes, whole.get(g.out.family) ?? 0n), classes: g.classes, rules: [...g.rules] }));
  return { from: result.from, fields: result.fields, proto: result.proto, sport: result.sport, spaces: result.spaces, ...(result.narrowed ? { narrowed: result.narrowed } : {}), outcomes };
}

/** A probe count with thousands separators. */
function grouped(n: string): string {
  return n.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * Renders a summary as text: per family its space, then each outcome with its probe count,
 * share and rules.
 *
 * @example
 * ```ts
 * process.stdout.write(renderExploreSummary(summarizeExplore(explore({ rules, from: 'local' }))));
 * ```
 */
export function renderExploreSummary(s: ExploreSummary): string {
  expectFields(s, { outcomes: 'array', spaces: 'array' }, 'summary');
  const space = s.from === 'local' ? 'uid × gid × destination × port' : 'source × destination × port × interface';
  const lines: string[] = [];
  lines.push(`${s.outcomes.length} outcomes of every ${s.proto} connection from ${s.from === 'local' ? 'a local process' : 'a remote client'} (${space}; source port ${s.sport}${narrowedText(s)})`);
  for (const sp of s.spaces) {
    lines.push('');
    lines.push(`IPv${sp.family}: ${grouped(sp.probes)} probes`);
    for (const o of s.outcomes) {
      if (o.family !== sp.family) continue;
      lines.push(`  ${shareText(o.share).padStart(10)}  ${outcomeLine(o, o.family)}  (${grouped(o.probes)} probes, ${o.classes} ${o.classes === 1 ? 'class' : 'classes'})`);
      for (const a of o.alternatives ?? []) lines.push(`               p=${a.probability.toFixed(4)}  ${outcomeLine(a, o.family)}`);
      for (const r of o.rules) lines.push(`               by ${r}`);
    }
  }
  return lines.join('\n') + '\n';
}
