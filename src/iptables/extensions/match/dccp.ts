/**
 * `-m dccp` (`libxt_dccp.c`, kernel `xt_dccp.c`): DCCP ports (`--sport`, `--dport`, ranges as
 * written, service names of any protocol), packet types (`--dccp-types REQUEST,…`) and an option
 * number (`--dccp-option`). Needs `-p dccp`. The engine makes no DCCP packets, so only the
 * protocol test is reached on its packets.
 *
 * @module
 */
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, parsePort, parseUint32, unknownOption } from '../values.js';

const TYPES = ['REQUEST', 'RESPONSE', 'DATA', 'ACK', 'DATAACK', 'CLOSEREQ', 'CLOSE', 'RESET', 'SYNC', 'SYNCACK', 'INVALID'] as const;
/** `DCCP_PKT_INVALID` and the bits `INVALID_OTHER_TYPE_MASK` adds with it. */
const INVALID = 10;
const INVALID_OTHER = 0xf800;

interface Range {
  readonly negated: boolean;
  readonly min: number;
  readonly max: number;
}

/** Options of `-m dccp`. */
export interface DccpOptions {
  readonly sport?: Range;
  readonly dport?: Range;
  readonly types?: { readonly negated: boolean; readonly mask: number };
  readonly option?: { readonly negated: boolean; readonly value: number };
}

/** `xtopt_parse_mport`: `a`, `a:b`, `:b`, `a:`; names of any protocol; order as written. */
function portRange(o: OptionOccurrence): Range {
  const parts = argOf(o).split(':');
  if (parts.length > 2) badValue(o, `dccp: too many components for option "${o.written}" (max: 2)`);
  const v = parts.map((p, i) => {
    if (p === '') return i === 0 ? 0 : 0xffff;
    const n = parsePort(p, null);
    if (n === null) badValue(o, `dccp: port "${p}" does not resolve to anything`);
    return n;
  });
  return { negated: o.negated, min: v[0]!, max: v[1] ?? v[0]! };
}

/** `-m dccp`. */
export const dccp: MatchExtension<DccpOptions> = {
  kind: 'match',
  name: 'dccp',
  family: 'both',
  options: [
    { name: 'sport', aliases: ['source-port'], arg: true, negatable: true },
    { name: 'dport', aliases: ['destination-port'], arg: true, negatable: true },
    { name: 'dccp-types', arg: true, negatable: true },
    { name: 'dccp-option', arg: true, negatable: true },
  ],
  placement: { protocols: ['dccp'] },
  parse(occurrences) {
    const r: { -readonly [K in keyof DccpOptions]: DccpOptions[K] } = {};
    for (const o of occurrences) {
      switch (o.name) {
        case 'sport': r.sport = portRange(o); break;
        case 'dport': r.dport = portRange(o); break;
        case 'dccp-types': {
          let mask = 0;
          for (const item of argOf(o).split(',').filter((x) => x !== '')) {
            const i = TYPES.findIndex((t) => t.toLowerCase() === item.toLowerCase());
            if (i < 0) badValue(o, `dccp: unknown DCCP type "${item}"`);
            mask |= 1 << i;
          }
          if ((mask & (1 << INVALID)) !== 0) mask |= INVALID_OTHER;
          r.types = { negated: o.negated, mask };
          break;
        }
        case 'dccp-option': r.option = { negated: o.negated, value: parseUint32(o, 'dccp', 1, 255) }; break;
        default: unknownOption('dccp', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    const range = (name: string, x: Range): string => `${x.negated ? '! ' : ''}--${name} ${x.min !== x.max ? `${x.min}:${x.max}` : x.min}`;
    if (o.sport) out.push(range('sport', o.sport));
    if (o.dport) out.push(range('dport', o.dport));
    if (o.types) {
      const names: string[] = [];
      let t = o.types.mask;
      while (t) {
        let i = 0;
        while (!(t & (1 << i))) i++;
        names.push(TYPES[i] ?? String(i));
        if (i === INVALID) break;
        t &= ~(1 << i);
      }
      out.push(`${o.types.negated ? '! ' : ''}--dccp-types ${names.join(',')}`);
    }
    if (o.option) out.push(`${o.option.negated ? '! ' : ''}--dccp-option ${o.option.value}`);
    return out.join(' ');
  },
  lower(o) {
    const inRange = (r: Range | undefined, port: number): boolean => r === undefined || ((port >= r.min && port <= r.max) !== r.negated);
    // The engine's DCCP packets (none today) would carry no type or option information.
    return (p) => p.proto === 33 && !p.fragment && inRange(o.sport, p.sport) && inRange(o.dport, p.dport) && o.types === undefined && o.option === undefined;
  },
};
