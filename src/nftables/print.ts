/**
 * The listing printer: an nft rule set → exactly what `nft list ruleset` (nftables 1.0.6)
 * prints. Its sources of truth are nft's `rule.c` (tables, chains, sets), `expression.c`
 * (sets, element line breaks), `netlink_delinearize.c` (protocol dependencies dropped from the
 * listing, bitwise forms) and `datatype.c` (values).
 *
 * @module
 */
import { BITMASK_TYPES, UNQUALIFIED_META, allOnes, printValue, selectorType } from './datatypes.js';
import { priorityNameFits } from './evaluate.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftElement, NftPrefix, NftRange, NftRight, NftRule, NftRuleset, NftSelector, NftSet,
  NftStatement, NftTable, NftType, NftValue, NftVerdict,
} from './model.js';

/**
 * Prints a rule set as `nft list ruleset` does.
 *
 * @example
 * ```ts
 * printNftRuleset(parseNftRulesetOrThrow('add table inet t\nadd chain inet t c { type filter hook input priority 0 ; }\n'));
 * // "table inet t {\n\tchain c {\n\t\ttype filter hook input priority filter; policy accept;\n\t}\n}\n"
 * ```
 */
export function printNftRuleset(ruleset: NftRuleset): string {
  return ruleset.tables.map(printNftTable).join('');
}

/** One table, as `nft list table FAMILY NAME` prints it. */
export function printNftTable(t: NftTable): string {
  const blocks: string[] = [];
  for (const s of t.sets) blocks.push(printSet(s, t));
  for (const c of t.chains) blocks.push(printChain(c, t));
  return `table ${t.family} ${t.name} {\n${blocks.join('\n')}}\n`;
}

const STD_PRIORITIES: readonly (readonly [string, number])[] = [
  ['raw', -300], ['mangle', -150], ['dstnat', -100], ['filter', 0], ['security', 50], ['srcnat', 100],
];

/** A base chain priority as nft prints it: a standard name, a name ± up to 10, or a number. */
export function printPriority(b: NftBaseChain): string {
  for (const [name, value] of STD_PRIORITIES) {
    if (!priorityNameFits(name, b.hook)) continue;
    const off = b.priority - value;
    if (off === 0) return name;
    if (Math.abs(off) <= 10) return `${name} ${off > 0 ? '+' : '-'} ${Math.abs(off)}`;
  }
  return String(b.priority);
}

function printChain(c: NftChain, t: NftTable): string {
  let out = `\tchain ${c.name} {\n`;
  if (c.comment !== undefined) out += `\t\tcomment "${c.comment}"\n`;
  if (c.base) out += `\t\ttype ${c.base.type} hook ${c.base.hook} priority ${printPriority(c.base)}; policy ${c.base.policy};\n`;
  for (const r of c.rules) out += `\t\t${printNftRule(r, t)}\n`;
  return out + '\t}\n';
}

function typeName(t: NftType): string {
  return t;
}

function printSet(s: NftSet, t: NftTable): string {
  void t;
  let out = `\t${s.data !== undefined ? 'map' : 'set'} ${s.name} {\n`;
  out += `\t\ttype ${s.key.map(typeName).join(' . ')}${s.data !== undefined ? ` : ${typeName(s.data)}` : ''}\n`;
  if (s.flags.length > 0) {
    const order = ['constant', 'interval', 'timeout', 'dynamic'] as const;
    out += `\t\tflags ${order.filter((f) => s.flags.includes(f)).join(',')}\n`;
  }
  if (s.size !== undefined) out += `\t\tsize ${s.size}\n`;
  if (s.comment !== undefined) out += `\t\tcomment "${s.comment}"\n`;
  if (s.elements.length > 0) {
    const elements = normalizeElements(s.elements, s.flags.includes('interval'), false);
    out += `\t\telements = ${printSetElements(elements, s.key, s.data !== undefined, false)}\n`;
  }
  return out + '\t}\n';
}

// ---------------------------------------------------------------------------------------------
// Elements

type KeyPart = NftValue | NftRange | NftPrefix;

function low(k: KeyPart): bigint {
  return k.kind === 'value' ? k.value : k.kind === 'range' ? k.low.value : k.value.value;
}
function high(k: KeyPart): bigint {
  if (k.kind === 'value') return k.value;
  if (k.kind === 'range') return k.high.value;
  return k.value.value | allOnes(k.value.bits - k.length);
}
function valueOf(k: KeyPart): NftValue {
  return k.kind === 'value' ? k : k.kind === 'range' ? k.low : k.value;
}

/** A closed interval back in the shape nft lists it: a value, a prefix (addresses) or a range. */
function intervalPart(template: NftValue, lo: bigint, hi: bigint): KeyPart {
  const v = (x: bigint): NftValue => ({ ...template, value: x });
  if (lo === hi) return v(lo);
  if (template.type === 'ipv4_addr' || template.type === 'ipv6_addr') {
    const size = hi - lo + 1n;
    if ((size & (size - 1n)) === 0n && (lo & (size - 1n)) === 0n) {
      let bits = 0;
      while (1n << BigInt(bits) < size) bits++;
      return { kind: 'prefix', value: v(lo), length: template.bits - bits };
    }
  }
  return { kind: 'range', low: v(lo), high: v(hi) };
}

/**
 * Elements in listing order: sorted by key; for anonymous interval sets, overlapping and
 * adjacent intervals merged (nft's automerge of anonymous sets).
 */
function normalizeElements(elements: readonly NftElement[], interval: boolean, merge: boolean): NftElement[] {
  const sorted = [...elements].sort((a, b) => {
    for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) {
      const x = low(a.key[i]!);
      const y = low(b.key[i]!);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
  if (!interval || sorted.some((e) => e.key.length !== 1)) return sorted.map((e) => (interval ? { ...e, key: e.key.map((k) => intervalPart(valueOf(k), low(k), high(k))) } : e));
  const out: { lo: bigint; hi: bigint; e: NftElement }[] = [];
  for (const e of sorted) {
    const k = e.key[0]!;
    const lo = low(k);
    const hi = high(k);
    const last = out[out.length - 1];
    if (merge && last && !e.data && lo <= last.hi + 1n) {
      if (hi > last.hi) last.hi = hi;
      continue;
    }
    out.push({ lo, hi, e });
  }
  return out.map(({ lo, hi, e }) => ({ ...e, key: [intervalPart(valueOf(e.key[0]!), lo, hi)] }));
}

function printKeyPart(k: KeyPart): string {
  if (k.kind === 'value') return printValue(k);
  if (k.kind === 'range') return `${printValue(k.low)}-${printValue(k.high)}`;
  return `${printValue(k.value)}/${k.length}`;
}

function printElement(e: NftElement): string {
  const key = e.key.map(printKeyPart).join(' . ');
  if (!e.data) return key;
  return `${key} : ${e.data.kind === 'verdict' ? printVerdict(e.data) : printValue(e.data)}`;
}

/** nft's `calculate_delim`: named sets break lines every few elements, by key type. */
function printSetElements(elements: readonly NftElement[], key: readonly NftType[], isMap: boolean, anonymous: boolean): string {
  void isMap;
  const perLine = anonymous ? Infinity : key.length > 1 ? 1 : lineWidth(key[0]!);
  let out = '{ ';
  let count = 0;
  elements.forEach((e, i) => {
    if (i > 0) {
      if (count < perLine) out += ', ';
      else {
        out += ',\n\t\t\t     ';
        count = 0;
      }
    }
    out += printElement(e);
    count++;
  });
  return out + ' }';
}

function lineWidth(t: NftType): number {
  switch (t) {
    case 'nf_proto': case 'integer': case 'inet_proto': case 'inet_service': case 'tcp_flag': case 'mark': case 'iface_index':
    case 'uid': case 'gid': case 'ct_dir':
      return 5;
    case 'ipv4_addr': case 'ipv6_addr': case 'ct_state': case 'ct_status': case 'pkt_type':
      return t === 'ipv6_addr' ? 1 : 2;
    default:
      return 1;
  }
}

function printAnonSet(s: NftAnonSet): string {
  const elements = normalizeElements(s.elements, s.interval, true);
  return printSetElements(elements, s.key, false, true);
}

// ---------------------------------------------------------------------------------------------
// Rules

function printVerdict(v: NftVerdict): string {
  return v.chain !== undefined ? `${v.verdict} ${v.chain}` : v.verdict;
}

/** nft's protocol dependency: the statements nft leaves out of the listing. */
function hiddenDependencies(stmts: readonly NftStatement[], family: NftTable['family']): Set<number> {
  const hidden = new Set<number>();
  let l3dep: { index: number; proto: 'ip' | 'ip6' } | undefined;
  let l4dep: { index: number; proto: number } | undefined;
  const l4Numbers: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132, icmp: 1, icmpv6: 58 };
  stmts.forEach((s, i) => {
    if (s.kind !== 'match') return;
    const single = s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==');
    const left = s.left;
    if (single && left.kind === 'meta' && left.key === 'nfproto' && family === 'inet') {
      const v = (s.right as NftValue).value;
      l3dep = { index: i, proto: v === 2n ? 'ip' : 'ip6' };
      return;
    }
    const isL4Dep = single && ((left.kind === 'meta' && left.key === 'l4proto')
      || (left.kind === 'payload' && family === 'ip' && left.protocol === 'ip' && left.field === 'protocol')
      || (left.kind === 'payload' && family === 'ip6' && left.protocol === 'ip6' && left.field === 'nexthdr'));
    if (isL4Dep) {
      l4dep = { index: i, proto: Number((s.right as NftValue).value) };
      return;
    }
    for (const p of payloads(left)) {
      if ((p.protocol === 'ip' || p.protocol === 'ip6') && l3dep && l3dep.proto === p.protocol) {
        hidden.add(l3dep.index);
        l3dep = undefined;
      }
      const n = p.protocol === 'th' ? l4dep?.proto : l4Numbers[p.protocol];
      if (n !== undefined && l4dep && l4dep.proto === n) {
        hidden.add(l4dep.index);
        l4dep = undefined;
      }
    }
  });
  return hidden;
}

function payloads(sel: NftSelector): Extract<NftSelector, { kind: 'payload' }>[] {
  if (sel.kind === 'payload') return [sel];
  if (sel.kind === 'bitwise') return payloads(sel.operand);
  if (sel.kind === 'concat') return sel.items.flatMap(payloads);
  return [];
}

/** The l4 protocol a rule establishes before statement `index` (for `th` → `tcp` in listings). */
function l4Before(stmts: readonly NftStatement[], index: number, family: NftTable['family']): number | undefined {
  let l4: number | undefined;
  const names: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132, icmp: 1, icmpv6: 58 };
  for (let i = 0; i < index; i++) {
    const s = stmts[i]!;
    if (s.kind !== 'match') continue;
    if (s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==')) {
      const l = s.left;
      if ((l.kind === 'meta' && l.key === 'l4proto') || (l.kind === 'payload' && ((l.protocol === 'ip' && l.field === 'protocol' && family !== 'inet') || (l.protocol === 'ip6' && l.field === 'nexthdr' && family !== 'inet')))) {
        l4 = Number(s.right.value);
      }
    }
    for (const p of payloads(s.left)) if (names[p.protocol] !== undefined) l4 = names[p.protocol];
  }
  return l4;
}

const L4_NAME: Readonly<Record<number, string>> = { 6: 'tcp', 17: 'udp', 132: 'sctp' };

/** One rule as nft lists it (without the handle). */
export function printNftRule(r: NftRule, t: Pick<NftTable, 'family'>): string {
  const hidden = hiddenDependencies(r.statements, t.family);
  const parts: string[] = [];
  r.statements.forEach((s, i) => {
    if (hidden.has(i)) return;
    const thAs = L4_NAME[l4Before(r.statements, i, t.family) ?? -1];
    parts.push(printStatement(s, thAs));
  });
  if (r.comment !== undefined) parts.push(`comment "${r.comment}"`);
  return parts.join(' ');
}

/** A selector as nft lists it. */
export function printSelector(sel: NftSelector, thAs?: string): string {
  switch (sel.kind) {
    case 'payload': return `${sel.protocol === 'th' && thAs ? thAs : sel.protocol} ${sel.field}`;
    case 'meta': return UNQUALIFIED_META.has(sel.key) ? sel.key : `meta ${sel.key}`;
    case 'ct': return `ct ${sel.direction ? sel.direction + ' ' : ''}${sel.family ? sel.family + ' ' : ''}${sel.key}`;
    case 'fib': return `fib ${sel.flags.join(' . ')} ${sel.result}`;
    case 'socket': return `socket ${sel.key}`;
    case 'numgen': return `numgen ${sel.mode} mod ${sel.modulus}${sel.offset ? ` offset ${sel.offset}` : ''}`;
    case 'concat': return sel.items.map((i) => printSelector(i, thAs)).join(' . ');
    case 'bitwise': {
      const ones = allOnes(sel.bits);
      const v = (x: bigint): string => printValue({ kind: 'value', type: sel.type, bits: sel.bits, value: x });
      let out = printSelector(sel.operand, thAs);
      if ((sel.mask & sel.xor) === 0n && sel.xor !== 0n) {
        const m = sel.mask | sel.xor;
        if (m !== ones) out += ` & ${v(m)}`;
        out += ` | ${v(sel.xor)}`;
      } else {
        if (sel.mask !== ones) out += ` & ${v(sel.mask)}`;
        if (sel.xor !== 0n) out += ` ^ ${v(sel.xor)}`;
      }
      return out;
    }
  }
}

function printRight(r: NftRight): string {
  switch (r.kind) {
    case 'value': return printValue(r);
    case 'range': return printKeyPart(r);
    case 'prefix': return printKeyPart(r);
    case 'set': return printAnonSet(r);
    case 'setref': return `@${r.name}`;
    case 'concat-value': return r.items.map(printKeyPart).join(' . ');
  }
}

function printStatement(s: NftStatement, thAs: string | undefined): string {
  switch (s.kind) {
    case 'match': {
      const left = printSelector(s.left, thAs);
      if (s.flagMask) return `${left} ${printRight(s.right)} / ${printValue(s.flagMask)}`;
      const rt = s.right.kind === 'value' ? s.right.type : undefined;
      let op: string;
      if (s.op === 'implicit') op = ' ';
      else if (s.op === '==') op = s.left.kind === 'bitwise' || (rt !== undefined && BITMASK_TYPES.has(rt)) ? ' == ' : ' ';
      else op = ` ${s.op} `;
      return `${left}${op}${printRight(s.right)}`;
    }
    case 'verdict': return printVerdict(s);
    case 'vmap': return `${printSelector(s.key, thAs)} vmap ${s.mappings.kind === 'setref' ? `@${s.mappings.name}` : printAnonSet(s.mappings)}`;
    case 'counter': return `counter packets ${s.packets} bytes ${s.bytes}`;
    case 'log': {
      let out = 'log';
      if (s.prefix !== undefined) out += ` prefix "${s.prefix}"`;
      if (s.group !== undefined) out += ` group ${s.group}`;
      if (s.snaplen !== undefined) out += ` snaplen ${s.snaplen}`;
      if (s.queueThreshold !== undefined) out += ` queue-threshold ${s.queueThreshold}`;
      if (s.level !== undefined && s.level !== 'warn') out += ` level ${s.level}`;
      if (s.flags && s.flags.length > 0) out += ` flags ${s.flags.join(',')}`;
      return out;
    }
    case 'limit':
      return `limit rate ${s.over ? 'over ' : ''}${s.rate}/${s.unit}${s.burst !== 5 ? ` burst ${s.burst} packets` : ''}`;
    case 'reject': {
      if (!s.with) return 'reject';
      if (s.with.type === 'tcp-reset') return 'reject with tcp reset';
      return `reject with ${s.with.type} ${s.with.code}`;
    }
    case 'nat': {
      let out = s.type;
      if (s.family) out += ` ${s.family}`;
      if (s.addr || s.port) {
        out += ' to ';
        if (s.addr) {
          if (s.addr.kind === 'map') out += `${printSelector(s.addr.key, thAs)} map ${s.addr.mappings.kind === 'setref' ? `@${s.addr.mappings.name}` : printAnonSet(s.addr.mappings)}`;
          else {
            const a = printKeyPart(s.addr);
            out += s.port && valueOf(s.addr).type === 'ipv6_addr' ? `[${a}]` : a;
          }
        }
        if (s.port && s.port.kind !== 'map') out += `:${printKeyPart(s.port)}`;
      }
      if (s.flags.length > 0) out += ` ${s.flags.join(',')}`;
      return out;
    }
    case 'tproxy': {
      let out = 'tproxy';
      if (s.family) out += ` ${s.family}`;
      out += ' to ';
      if (s.addr) out += s.port && s.addr.type === 'ipv6_addr' ? `[${printValue(s.addr)}]` : printValue(s.addr);
      if (s.port) out += `:${printValue(s.port)}`;
      return out;
    }
    case 'mangle': {
      const target = printSelector(s.target);
      const v = s.value;
      let value: string;
      if (v.kind === 'value') value = printValue(v);
      else if (v.kind === 'map') value = `${printSelector(v.key, thAs)} map ${v.mappings.kind === 'setref' ? `@${v.mappings.name}` : printAnonSet(v.mappings)}`;
      else value = printSelector(v, thAs);
      return `${target} set ${value}`;
    }
    case 'notrack': return 'notrack';
  }
}

/** The type of a selector, re-exported for the engine and checks. */
export { selectorType };
