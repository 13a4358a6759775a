/**
 * The listing printer: an nft rule set → exactly what `nft list ruleset` (nftables 1.0.6)
 * prints. Its sources of truth are nft's `rule.c` (tables, chains, sets), `expression.c`
 * (sets, element line breaks), `netlink_delinearize.c` (protocol dependencies dropped from the
 * listing, bitwise forms) and `datatype.c` (values).
 *
 * @module
 */
import { BITMASK_TYPES, UNQUALIFIED_META, allOnes, printValue, selectorType } from './datatypes.js';
import { priorityNameFits } from './typecheck.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftElement, NftPrefix, NftRange, NftRight, NftRule, NftRuleset, NftSelector, NftSet,
  NftStatement, NftTable, NftType, NftValue, NftVerdict,
} from './model.js';
import { expectArgument, expectFields } from '../model/guard.js';

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
  expectFields(ruleset, { tables: 'array' }, 'ruleset');
  return ruleset.tables.map(printNftTable).join('');
}

/** One table, as `nft list table FAMILY NAME` prints it. */
export function printNftTable(t: NftTable): string {
  expectFields(t, { sets: 'array', chains: 'array' }, 'table');
  const blocks: string[] = [];
  for (const s of t.sets) blocks.push(printSet(s, t));
  for (const c of t.chains) blocks.push(printChain(c, t));
  const comment = t.comment !== undefined ? `\tcomment "${t.comment}"\n` : '';
  return `table ${t.family} ${t.name} {\n${comment}${blocks.join('\n')}}\n`;
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
  const keyed = elements.map((e) => ({ e, k: sortKey(e.key, interval) }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  const sorted: NftElement[] = [];
  keyed.forEach((x, i) => {
    if (i > 0 && x.k === keyed[i - 1]!.k && (interval ? high(x.e.key[0]!) === high(keyed[i - 1]!.e.key[0]!) : true)) return;
    sorted.push(x.e);
  });
  if (!interval || sorted.some((e) => e.key.length !== 1 || valueOf(e.key[0]!).type === 'ifname')) return sorted.map((e) => (interval ? { ...e, key: e.key.map((k) => (valueOf(k).type === 'ifname' ? k : intervalPart(valueOf(k), low(k), high(k)))) } : e));
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

/** Types nft keeps in network byte order; the others are host (little) endian. */
const BIG_ENDIAN = new Set<NftType>(['ipv4_addr', 'ipv6_addr', 'inet_service', 'inet_proto', 'icmp_type', 'icmpv6_type', 'icmp_code', 'icmpv6_code']);

function exportBytes(v: NftValue): number[] {
  const n = Math.ceil(v.bits / 8);
  const out: number[] = [];
  if (v.type === 'ifname') {
    const t = v.text ?? '';
    for (let i = 0; i < n; i++) out.push(i < t.length ? t.charCodeAt(i) & 0xff : 0);
    return out;
  }
  for (let i = 0; i < n; i++) out.push(Number((v.value >> BigInt(8 * i)) & 0xffn));
  return BIG_ENDIAN.has(v.type) ? out.reverse() : out;
}

/**
 * The order nft lists set elements in (`mergesort.c`): by value; a concatenation (and a string)
 * by its bytes read as one little-endian number.
 */
function sortKey(key: readonly KeyPart[], interval: boolean): bigint {
  // Interval sets come back from the kernel's tree in key order: names by their bytes, in order.
  if (key.length === 1 && (interval || valueOf(key[0]!).type !== 'ifname')) return low(key[0]!);
  const bytes = key.flatMap((k) => exportBytes(k.kind === 'value' ? k : { ...valueOf(k), value: low(k) }));
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!);
  return v;
}

function printKeyPart(k: KeyPart): string {
  if (k.kind === 'value') return printValue(k);
  if (k.kind === 'range') return `${printValue(k.low)}-${printValue(k.high)}`;
  // A wildcard interface name is a prefix of the name's bytes; it lists as written (`"eth*"`).
  if (k.value.type === 'ifname') return printValue(k.value);
  return `${printValue(k.value)}/${k.length}`;
}

function printElement(e: NftElement): string {
  const key = e.key.map(printKeyPart).join(' . ') + (e.counter ? ` counter packets ${e.counter.packets} bytes ${e.counter.bytes}` : '')
    + (e.comment !== undefined ? ` comment "${e.comment}"` : '');
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
    if (s.kind === 'reject' && family === 'inet' && (s.with?.type === 'icmp' || s.with?.type === 'icmpv6') && l3dep) {
      // stmt_reject_postprocess: a network protocol match still in force is the reject's dependency.
      hidden.add(l3dep.index);
      l3dep = undefined;
    }
    const mapKey = s.kind === 'vmap' ? s.key : s.kind === 'nat' && s.addr?.kind === 'map' ? s.addr.key : s.kind === 'mangle' && s.value.kind === 'map' ? s.value.key : undefined;
    if (mapKey) {
      for (const p of payloads(mapKey)) {
        const n = p.protocol === 'th' ? l4dep?.proto : l4Numbers[p.protocol];
        if (n !== undefined && l4dep && l4dep.proto === n) hidden.add(l4dep.index);
        if ((p.protocol === 'ip' || p.protocol === 'ip6') && l3dep && l3dep.proto === p.protocol) hidden.add(l3dep.index);
      }
    }
    if (s.kind !== 'match') {
      // rule_maybe_reset_payload_deps: any other statement ends what a dependency covers.
      l3dep = undefined;
      l4dep = undefined;
      return;
    }
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

const L4_NAME: Readonly<Record<number, string>> = { 6: 'tcp', 17: 'udp', 132: 'sctp', 1: 'icmp', 58: 'icmpv6' };

/** Header offsets and widths in bits (`proto.c`), for nft's merge of adjacent payload matches. */
const PAYLOAD_LAYOUT: Readonly<Record<string, Readonly<Record<string, readonly [number, number]>>>> = {
  ip: { length: [16, 16], id: [32, 16], ttl: [64, 8], protocol: [72, 8], saddr: [96, 32], daddr: [128, 32] },
  ip6: { length: [32, 16], nexthdr: [48, 8], hoplimit: [56, 8], saddr: [64, 128], daddr: [192, 128] },
  tcp: { sport: [0, 16], dport: [16, 16], sequence: [32, 32], flags: [104, 8], window: [112, 16] },
  udp: { sport: [0, 16], dport: [16, 16], length: [32, 16] },
  sctp: { sport: [0, 16], dport: [16, 16] },
  th: { sport: [0, 16], dport: [16, 16] },
  icmp: { type: [0, 8], code: [8, 8], id: [32, 16], sequence: [48, 16] },
  icmpv6: { type: [0, 8], code: [8, 8], id: [32, 16], sequence: [48, 16] },
};

/**
 * nft 1.0.6's `stmt_reduce`: equality (and inequality) matches of adjacent fields of one header
 * are merged into one comparison, which lists back in header order at the place of the statement
 * that kept it. Other matches do not interrupt a run; other statements end it only once two
 * candidates were seen (as 1.0.6 does).
 */
function mergePayloads(stmts: readonly NftStatement[]): NftStatement[] {
  type Match = Extract<NftStatement, { kind: 'match' }>;
  const out: (NftStatement | NftStatement[] | undefined)[] = [...stmts];
  const layout = (i: number): { base: number; off: number; len: number; protocol: boolean } => {
    const p = (stmts[i] as Match).left as Extract<NftSelector, { kind: 'payload' }>;
    const [off, len] = PAYLOAD_LAYOUT[p.protocol]![p.field]!;
    const protocol = (p.protocol === 'ip' && p.field === 'protocol') || (p.protocol === 'ip6' && p.field === 'nexthdr');
    return { base: p.protocol === 'ip' || p.protocol === 'ip6' ? 1 : 2, off, len, protocol };
  };
  const eqOp = (i: number): string => ((stmts[i] as Match).op === '!=' ? '!=' : '==');
  const merge = (run: readonly number[]): void => {
    const sa = [...run].sort((a, b) => layout(a).base - layout(b).base || layout(a).off - layout(b).off);
    let last = { ...layout(sa[0]!), members: [sa[0]!], keep: sa[0]!, op: eqOp(sa[0]!) };
    const groups: (typeof last)[] = [];
    for (let i = 1; i < sa.length; i++) {
      const cur = layout(sa[i]!);
      const total = last.len + cur.len;
      const adjacent = last.base === cur.base && last.off + last.len === cur.off;
      const fits = total <= 128 && (total <= 32 || last.len > 32 || cur.len > 32);
      if (!adjacent || !fits || eqOp(sa[i]!) !== last.op) {
        groups.push(last);
        last = { ...cur, members: [sa[i]!], keep: sa[i]!, op: eqOp(sa[i]!) };
        continue;
      }
      // A protocol field keeps its place, so the dependency stays ahead of what needs it.
      last = { ...last, len: total, members: [...last.members, sa[i]!], keep: cur.protocol ? sa[i]! : last.keep, protocol: last.protocol || cur.protocol };
    }
    groups.push(last);
    for (const g of groups) {
      if (g.members.length < 2) continue;
      for (const m of g.members) out[m] = undefined;
      out[g.keep] = g.members.map((m) => (g.op === '==' ? { ...(stmts[m] as Match), op: 'implicit' } : stmts[m]!) as NftStatement);
    }
  };
  let run: number[] = [];
  stmts.forEach((s, i) => {
    if (s.kind !== 'match') {
      if (run.length >= 2) {
        merge(run);
        run = [];
      }
      return;
    }
    if (s.left.kind === 'payload' && s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==' || s.op === '!=') && !s.flagMask
      && !(BITMASK_TYPES.has(s.right.type) && s.op === 'implicit')) run.push(i);
  });
  if (run.length >= 2) merge(run);
  return out.flatMap((s) => (s === undefined ? [] : Array.isArray(s) ? s : [s]));
}

/** One rule as nft lists it (without the handle). */
export function printNftRule(r: NftRule, t: Pick<NftTable, 'family'>): string {
  expectFields(r, { statements: 'array' }, 'rule');
  expectArgument(t, 'object', 'table');
  const statements = mergePayloads(r.statements);
  const hidden = hiddenDependencies(statements, t.family);
  const parts: string[] = [];
  statements.forEach((s, i) => {
    if (hidden.has(i)) return;
    const thAs = L4_NAME[l4Before(statements, i, t.family) ?? -1];
    parts.push(printStatement(s, thAs, t.family));
  });
  if (r.comment !== undefined) parts.push(`comment "${r.comment}"`);
  return parts.join(' ');
}

function prefixLength(mask: bigint, bits: number): number | undefined {
  const ones = allOnes(bits);
  for (let len = 0; len < bits; len++) if (mask === (ones ^ allOnes(bits - len))) return len;
  return undefined;
}

/** A flag value compared with `==`/`!=`: a symbol when it is exactly one, else hex. */
function printFlagsExact(v: NftValue): string {
  const single = printValue(v);
  if (!single.includes(',') && !single.startsWith('0x')) return single;
  return '0x' + v.value.toString(16).padStart(Math.ceil(v.bits / 4), '0');
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
    case 'set': {
      // nft turns a one-element anonymous set into a plain comparison.
      const elements = normalizeElements(r.elements, r.interval, true);
      if (r.elements.length === 1 && r.key.length === 1) return printKeyPart(elements[0]!.key[0]!);
      return printSetElements(elements, r.key, false, true);
    }
    case 'setref': return `@${r.name}`;
    case 'concat-value': return r.items.map(printKeyPart).join(' . ');
  }
}

function printStatement(s: NftStatement, thAs: string | undefined, family: NftTable['family']): string {
  switch (s.kind) {
    case 'match': {
      const left = printSelector(s.left, thAs);
      if (s.flagMask) return `${left} ${printRight(s.right)} / ${printValue(s.flagMask)}`;
      const rt = s.right.kind === 'value' ? s.right.type : undefined;
      // `x & prefixmask == v` lists as a prefix: `meta mark 0x00000539/0`.
      if (s.left.kind === 'bitwise' && s.left.xor === 0n && s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==' || s.op === '!=')) {
        const len = prefixLength(s.left.mask, s.left.bits);
        if (len !== undefined) return `${printSelector(s.left.operand, thAs)} ${s.op === '!=' ? '!= ' : ''}${printValue(s.right)}/${len}`;
      }
      if (rt !== undefined && BITMASK_TYPES.has(rt) && (s.op === '==' || s.op === '!=') && s.right.kind === 'value') {
        return `${left} ${s.op} ${printFlagsExact(s.right)}`;
      }
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
      // reject_stmt_print: the default code is left out, except that inet tables list icmp/icmpv6 in full.
      if (s.with.code === 'port-unreachable' && (s.with.type === 'icmpx' || family !== 'inet')) return 'reject';
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
