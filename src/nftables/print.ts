/**
 * The listing printer: an nft rule set → exactly what `nft list ruleset` (nftables 1.0.6)
 * prints. Its sources of truth are nft's `rule.c` (tables, objects, sets, flowtables, chains),
 * `statement.c` (statements), `expression.c` (sets, element line breaks),
 * `netlink_delinearize.c` (protocol dependencies dropped from the listing, bitwise forms) and
 * `datatype.c` (values).
 *
 * @module
 */
import { BITMASK_TYPES, L4_PROTOCOLS, UNQUALIFIED_META, allOnes, payloadFields, printTime, printValue, selectorType, typeName } from './datatypes.js';
import { addLinkDependencies, completeRawPayloads, unwrapSingletons } from './delinearize.js';
import { priorityNameFits, standardPriorities } from './typecheck.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftConcatValue, NftElement, NftFamily, NftFlowtable, NftMapLookup, NftObject, NftPrefix, NftRange, NftRight,
  NftRule, NftRuleset, NftSelector, NftSet, NftSetRef, NftStatement, NftTable, NftType, NftValue, NftVerdict,
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
  for (const o of t.objects ?? []) blocks.push(printObject(o));
  for (const s of t.sets) if (!s.meter) blocks.push(printSet(s, t));
  for (const f of t.flowtables ?? []) blocks.push(printFlowtable(f));
  for (const c of t.chains) if (!c.binding) blocks.push(printChain(c, t));
  const flags = t.dormant ? '\tflags dormant\n' : '';
  const comment = t.comment !== undefined ? `\tcomment "${t.comment}"\n` : '';
  // table_print_flags: after the flags, the first block is set apart by an empty line too.
  const lead = t.dormant && blocks.length > 0 ? '\n' : '';
  return `table ${t.family} ${t.name} {\n${flags}${comment}${lead}${blocks.join('\n')}}\n`;
}

/** A base chain priority as nft prints it (`prio2str`): a standard name, a name ± up to 10, or a number. */
export function printPriority(b: Pick<NftBaseChain, 'priority' | 'hook'>, family: NftFamily = 'inet'): string {
  for (const [name, value] of standardPriorities(family)) {
    const off = b.priority - value;
    if (Math.abs(off) > 10) continue;
    if (!priorityNameFits(name, b.hook, family)) break;
    if (off === 0) return name;
    return `${name} ${off > 0 ? '+' : '-'} ${Math.abs(off)}`;
  }
  return String(b.priority);
}

function printChain(c: NftChain, t: NftTable): string {
  let out = `\tchain ${c.name} {\n`;
  if (c.comment !== undefined) out += `\t\tcomment "${c.comment}"\n`;
  if (c.base) {
    let dev = '';
    const devs = c.base.devices ?? [];
    if (devs.length === 1) dev = ` device "${devs[0]}"`;
    else if (devs.length > 1) dev = ` devices = { ${devs.join(', ')} }`;
    out += `\t\ttype ${c.base.type} hook ${c.base.hook}${dev} priority ${printPriority(c.base, t.family)}; policy ${c.base.policy};${c.base.offload ? ' flags offload;' : ''}\n`;
  }
  for (const r of c.rules) out += `\t\t${printNftRule(r, t)}\n`;
  return out + '\t}\n';
}

/**
 * A verdict to an anonymous chain of the table, listed as nft lists it: its rules inside the
 * rule that binds it, one level deeper (`indent` is the binding rule's own).
 */
function printBoundChain(v: NftVerdict, t: Pick<NftTable, 'family'> & Partial<Pick<NftTable, 'chains'>>, indent: string): string | undefined {
  const bound = v.chain !== undefined ? t.chains?.find((c) => c.binding && c.name === v.chain) : undefined;
  if (bound === undefined) return undefined;
  const inner = indent + '\t';
  return [`${v.verdict} {`, ...bound.rules.map((r) => `${inner}${printNftRule(r, t, inner)}`), `${indent}}`].join('\n');
}

function printFlowtable(f: NftFlowtable): string {
  let out = `\tflowtable ${f.name} {\n`;
  out += `\t\thook ingress priority ${printPriority({ priority: f.priority, hook: 'ingress' }, 'netdev')}\n`;
  if (f.devices.length > 0) out += `\t\tdevices = { ${f.devices.join(', ')} }\n`;
  if (f.offload) out += '\t\tflags offload\n';
  if (f.counter) out += '\t\tcounter\n';
  return out + '\t}\n';
}

/** Byte counts as nft prints them (`get_rate`): the largest of bytes, kbytes, mbytes that divides. */
function byteUnit(v: bigint): string {
  const units = ['bytes', 'kbytes', 'mbytes'];
  if (v === 0n) return '0 bytes';
  let i = 0;
  let n = v;
  while (i < units.length - 1 && n % 1024n === 0n) {
    n /= 1024n;
    i++;
  }
  return `${n} ${units[i]}`;
}

/** Default conntrack timeouts (`ct.c`), left out of a ct timeout's listed policy. */
const TIMEOUT_DEFAULTS: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  tcp: [['syn_sent', 120], ['syn_recv', 60], ['established', 432000], ['fin_wait', 120], ['close_wait', 60], ['last_ack', 30],
    ['time_wait', 120], ['close', 10], ['syn_sent2', 120], ['retrans', 300], ['unacknowledged', 300]],
  udp: [['unreplied', 30], ['replied', 180]],
};

function printObject(o: NftObject): string {
  const comment = o.comment !== undefined ? `\n\t\tcomment "${o.comment}"` : '';
  let body: string;
  switch (o.type) {
    case 'counter':
      body = `\tcounter ${o.name} {${comment}\n\t\tpackets ${o.packets} bytes ${o.bytes}\n`;
      break;
    case 'quota':
      body = `\tquota ${o.name} {${comment}\n\t\t${o.over ? 'over ' : ''}${byteUnit(o.bytes)}${o.used !== 0n ? ` used ${byteUnit(o.used)}` : ''}\n`;
      break;
    case 'secmark':
      body = `\tsecmark ${o.name} {${comment}\n\t\t"${o.context}"\n`;
      break;
    case 'ct helper':
      body = `\tct helper ${o.name} {${comment}\n\t\ttype "${o.helper}" protocol ${o.protocol}\n\t\tl3proto ${o.l3proto}\n`;
      break;
    case 'ct timeout': {
      const defaults = TIMEOUT_DEFAULTS[o.protocol] ?? [];
      const values = new Map(o.policy);
      const shown = defaults.filter(([n, d]) => values.has(n) && values.get(n) !== d).map(([n]) => `${n} : ${values.get(n)}`);
      body = `\tct timeout ${o.name} {${comment}\n\t\tprotocol ${o.protocol}\n\t\tl3proto ${o.l3proto}\n\t\tpolicy = { ${shown.join(', ')} }\n`;
      break;
    }
    case 'ct expectation':
      body = `\tct expectation ${o.name} {${comment}\n\t\tprotocol ${o.protocol}\n\t\tdport ${o.dport}\n\t\ttimeout ${printTime(o.timeout)}\n\t\tsize ${o.size}\n\t\tl3proto ${o.l3proto}\n`;
      break;
    case 'limit': {
      let rate: string;
      if (o.bytes) {
        rate = `rate ${o.over ? 'over ' : ''}${byteUnit(BigInt(o.rate))}/${o.unit}${o.burst > 0 ? ` burst ${byteUnit(BigInt(o.burst))}` : ''}`;
      } else rate = `rate ${o.over ? 'over ' : ''}${o.rate}/${o.unit}${o.burst > 0 && o.burst !== 5 ? ` burst ${o.burst} packets` : ''}`;
      body = `\tlimit ${o.name} {${comment}\n\t\t${rate}\n`;
      break;
    }
    case 'synproxy': {
      let s = `\tsynproxy ${o.name} {${comment}`;
      s += `\n\t\tmss ${o.mss}\n\t\twscale ${o.wscale}`;
      if (o.flags.length > 0) s += `\n\t\t${o.flags.includes('timestamp') ? 'timestamp' : ''} ${o.flags.includes('sack-perm') ? 'sack-perm' : ''}`;
      body = s + '\n';
      break;
    }
  }
  return body + '\t}\n';
}

function printSet(s: NftSet, t: NftTable): string {
  let out = `\t${s.data !== undefined ? 'map' : 'set'} ${s.name} {\n`;
  const isObjMap = s.data === 'counter' || s.data === 'quota' || s.data === 'limit' || s.data === 'secmark' || s.data === 'synproxy';
  if (s.typeofKey) {
    out += `\t\ttypeof ${s.typeofKey.map((k) => printSelector(k)).join(' . ')}`;
    if (s.data !== undefined) out += ` : ${s.dataInterval ? 'interval ' : ''}${s.typeofData ? printSelector(s.typeofData) : s.data === 'verdict' ? 'verdict' : typeName(s.data)}`;
  } else {
    out += `\t\ttype ${s.key.map(typeName).join(' . ')}`;
    if (s.data !== undefined) out += ` : ${s.dataInterval ? 'interval ' : ''}${isObjMap ? s.data : [s.data, ...(s.dataConcat ?? [])].map(typeName).join(' . ')}`;
  }
  out += '\n';
  if (!s.flags.includes('constant')) {
    if (s.policy === 'memory') out += '\t\tpolicy memory\n';
    if (s.size !== undefined) out += `\t\tsize ${s.size}\n`;
  }
  // set_print_declaration: the timeout flag alone does not print the line when there is a
  // default timeout, but the line, once printed, has every flag.
  if (s.flags.some((f) => !(f === 'timeout' && s.timeout !== undefined))) {
    const order = ['constant', 'dynamic', 'interval', 'timeout'] as const;
    out += `\t\tflags ${order.filter((f) => s.flags.includes(f)).join(',')}\n`;
  }
  if (s.stateful && s.stateful.length > 0) out += `\t\t${s.stateful.map((x) => printStatement(x, undefined, t.family, true)).join(' ')}\n`;
  if (s.autoMerge) out += '\t\tauto-merge\n';
  if (s.timeout !== undefined) out += `\t\ttimeout ${printTime(s.timeout)}\n`;
  if (s.gcInterval !== undefined) out += `\t\tgc-interval ${printTime(s.gcInterval)}\n`;
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
function normalizeElements(all: readonly NftElement[], interval: boolean, merge: boolean): NftElement[] {
  // The kernel keeps the catch-all element apart and lists it last.
  const catchAll = all.filter((e) => e.key.length === 0).slice(0, 1);
  return [...normalizeKeyed(all.filter((e) => e.key.length !== 0), interval, merge), ...catchAll];
}

function normalizeKeyed(elements: readonly NftElement[], interval: boolean, merge: boolean): NftElement[] {
  const flags = !interval && elements.length > 0 && elements.every((e) => e.key.length === 1 && isFlags(valueOf(e.key[0]!).type));
  // Flag values: nft sorts the flags it splits each element into by its lowest flag, so elements
  // with the same lowest flag keep the kernel's order, the reverse of the order they were added
  // in (exact for the one- and two-byte keys the kernel keeps in a bitmap).
  // Concatenations with intervals are kept by the kernel's pipapo set, which lists them in the
  // order they were added; nft does not sort them (`concat_range_aggregate`).
  const added = interval && elements.some((e) => e.key.length > 1);
  const unique = flags ? dedupe(elements).reverse() : added ? dedupe(elements) : elements;
  const keyed = unique.map((e) => ({ e, k: sortKey(e.key, interval), f: flags ? lowestFlag(low(e.key[0]!)) : 0n }));
  if (flags) keyed.sort((a, b) => (a.f < b.f ? -1 : a.f > b.f ? 1 : 0));
  else if (!added) keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  const sorted: NftElement[] = [];
  keyed.forEach((x, i) => {
    if (!flags && !added && i > 0 && x.k === keyed[i - 1]!.k && (interval ? high(x.e.key[0]!) === high(keyed[i - 1]!.e.key[0]!) : true)) return;
    sorted.push(x.e);
  });
  if (!interval || sorted.some((e) => e.key.length !== 1 || valueOf(e.key[0]!).type === 'ifname')) {
    return sorted.map((e) => (interval ? { ...e, key: e.key.map((k) => (valueOf(k).type === 'ifname' ? k : intervalPart(valueOf(k), low(k), high(k)))) } : e));
  }
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

/** Flag types whose values nft lists, in sets and maps, as flags joined by `|`. */
function isFlags(t: NftType): boolean {
  return BITMASK_TYPES.has(t) && t !== 'ct_label';
}

function lowestFlag(v: bigint): bigint {
  return v === 0n ? 0n : v & -v;
}

/** Elements with their first occurrence of each key kept. */
function dedupe(elements: readonly NftElement[]): NftElement[] {
  const seen = new Set<string>();
  return elements.filter((e) => {
    const k = e.key.map((p) => `${low(p)}-${high(p)}`).join('.');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Types nft keeps in network byte order; the others are host (little) endian. */
const BIG_ENDIAN = new Set<NftType>([
  'ipv4_addr', 'ipv6_addr', 'inet_service', 'inet_proto', 'icmp_type', 'icmpv6_type', 'icmp_code', 'icmpv6_code', 'ether_addr', 'ether_type',
  'arp_op', 'dscp', 'ecn', 'igmp_type',
]);

function exportBytes(v: NftValue): number[] {
  const n = Math.ceil(v.bits / 8);
  const out: number[] = [];
  if (v.type === 'ifname' || v.type === 'string') {
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
  // Interval sets of one key come back from the kernel's tree in key order: names by their
  // bytes, in order. (Concatenations with intervals are not sorted, see normalizeKeyed.)
  if (key.length === 1 && (interval || (valueOf(key[0]!).type !== 'ifname' && valueOf(key[0]!).type !== 'string'))) return low(key[0]!);
  const bytes = key.flatMap((k) => exportBytes(k.kind === 'value' ? k : { ...valueOf(k), value: low(k) }));
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!);
  return v;
}

/** A flag value as nft lists it where it splits it into its flags: `syn | ack`. */
function printFlagsJoined(v: NftValue): string {
  const parts: string[] = [];
  for (let rest = v.value; rest !== 0n; rest &= rest - 1n) parts.push(printValue({ ...v, value: lowestFlag(rest) }));
  return parts.length > 1 ? parts.join(' | ') : printValue(v);
}

/** A key part of a set or map element. */
function printElementKeyPart(k: KeyPart): string {
  return k.kind === 'value' && isFlags(k.type) ? printFlagsJoined(k) : printKeyPart(k);
}

function printKeyPart(k: KeyPart): string {
  if (k.kind === 'value') return printValue(k);
  if (k.kind === 'range') return `${printValue(k.low, true)}-${printValue(k.high, true)}`;
  // A wildcard interface name is a prefix of the name's bytes; it lists as written (`"eth*"`).
  if (k.value.type === 'ifname' || k.value.type === 'string') return printValue(k.value);
  return `${printValue(k.value)}/${k.length}`;
}

function printData(d: NonNullable<NftElement['data']>): string {
  if (d.kind === 'verdict') return printVerdict(d);
  if (d.kind === 'concat-value') return d.items.map(printKeyPart).join(' . ');
  if (d.kind === 'value' && d.type === 'string' && d.text !== undefined) return `"${d.text}"`;
  return printKeyPart(d);
}

function printElement(e: NftElement): string {
  let key = e.key.length === 0 ? '*' : e.key.map(printElementKeyPart).join(' . ');
  if (e.timeout !== undefined) key += ` timeout ${printTime(e.timeout)}`;
  if (e.expires !== undefined) key += ` expires ${printTime(e.expires)}`;
  for (const x of e.stateful ?? []) key += ` ${printStatement(x, undefined, 'ip', true)}`;
  if (e.counter) key += ` counter packets ${e.counter.packets} bytes ${e.counter.bytes}`;
  if (e.comment !== undefined) key += ` comment "${e.comment}"`;
  if (!e.data) return key;
  return `${key} : ${printData(e.data)}`;
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

/** expression.c `calculate_delim`: how many elements of a type share a line. */
function lineWidth(t: NftType): number {
  switch (t) {
    case 'nf_proto': case 'integer': case 'xinteger': case 'arp_op': case 'inet_proto': case 'inet_service': case 'tcp_flag': case 'dccp_pkttype':
    case 'mark': case 'iface_index': case 'tc_handle': case 'uid': case 'gid': case 'ct_dir':
      return 5;
    case 'ipv4_addr': case 'ct_state': case 'ct_status': case 'pkt_type':
      return 2;
    default:
      return 1;
  }
}

function printAnonSet(s: NftAnonSet): string {
  const elements = normalizeElements(s.elements, s.interval, true);
  return printSetElements(elements, s.key, false, true);
}

function printMappings(m: NftAnonSet | NftSetRef): string {
  return m.kind === 'setref' ? `@${m.name}` : printAnonSet(m);
}

function printMap(m: NftMapLookup, thAs: string | undefined): string {
  return `${printSelector(m.key, thAs)} map ${printMappings(m.mappings)}`;
}

// ---------------------------------------------------------------------------------------------
// Rules

function printVerdict(v: NftVerdict): string {
  return v.chain !== undefined ? `${v.verdict} ${v.chain}` : v.verdict;
}

const L4_NAME: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(L4_PROTOCOLS).map(([k, v]) => [v, k]));

/** The network protocol a dependency match establishes, or undefined. */
function l3Of(s: Extract<NftStatement, { kind: 'match' }>, family: NftFamily): 'ip' | 'ip6' | 'arp' | undefined {
  if (s.right.kind !== 'value' || (s.op !== 'implicit' && s.op !== '==')) return undefined;
  const l = s.left;
  const v = s.right.value;
  if (l.kind === 'meta' && l.key === 'nfproto' && family === 'inet') return v === 2n ? 'ip' : v === 10n ? 'ip6' : undefined;
  const ether = (l.kind === 'payload' && l.protocol === 'ether' && l.field === 'type' && (family === 'bridge' || family === 'netdev' || family === 'inet'))
    || (l.kind === 'meta' && l.key === 'protocol' && family === 'netdev')
    || (l.kind === 'payload' && l.protocol === 'vlan' && l.field === 'type');
  if (ether) return v === 0x0800n ? 'ip' : v === 0x86ddn ? 'ip6' : v === 0x0806n ? 'arp' : undefined;
  return undefined;
}

/** nft's protocol dependency: the statements nft leaves out of the listing. */
function hiddenDependencies(stmts: readonly NftStatement[], family: NftFamily, added: ReadonlySet<NftStatement> = new Set()): Set<number> {
  const hidden = new Set<number>();
  let l3dep: { index: number; proto: 'ip' | 'ip6' | 'arp' } | undefined;
  let l4dep: { index: number; proto: number } | undefined;
  let icmpdep: { index: number; proto: string; type: bigint } | undefined;
  let lldep: { index: number; kind: 'ether' | 'any' } | undefined;
  // `ether type 8021q`: the dependency nft gives a vlan header match.
  let vlandep: number | undefined;
  const coverL3 = (proto: string): void => {
    if (l3dep && l3dep.proto === proto) {
      hidden.add(l3dep.index);
      l3dep = undefined;
    }
  };
  stmts.forEach((s, i) => {
    if (added.has(s)) {
      // A dependency nft added still makes an `iiftype ether` before it redundant.
      if (lldep?.kind === 'ether' && s.kind === 'match' && payloads(s.left).some((p) => p.protocol === 'ether')) {
        hidden.add(lldep.index);
        lldep = undefined;
      }
      return;
    }
    if (s.kind === 'reject' && family !== 'ip' && family !== 'ip6' && (s.with?.type === 'icmp' || s.with?.type === 'icmpv6') && l3dep) {
      // stmt_reject_postprocess: a network protocol match still in force is the reject's dependency.
      hidden.add(l3dep.index);
      l3dep = undefined;
    }
    const mapKey = s.kind === 'vmap' || s.kind === 'dynset' ? s.key : s.kind === 'nat' && s.addr?.kind === 'map' ? s.addr.key : s.kind === 'mangle' && s.value.kind === 'map' ? s.value.key : undefined;
    if (mapKey) {
      for (const p of payloads(mapKey)) {
        const n = p.protocol === 'th' ? l4dep?.proto : L4_PROTOCOLS[p.protocol];
        if (n !== undefined && l4dep && l4dep.proto === n) hidden.add(l4dep.index);
        if ((p.protocol === 'ip' || p.protocol === 'ip6' || p.protocol === 'arp') && l3dep && l3dep.proto === p.protocol) hidden.add(l3dep.index);
      }
    }
    if (s.kind !== 'match') {
      // rule_maybe_reset_payload_deps: any other statement ends what a dependency covers.
      l3dep = undefined;
      l4dep = undefined;
      icmpdep = undefined;
      vlandep = undefined;
      return;
    }
    const single = s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==');
    const left = s.left;
    if (lldep) {
      const ps = payloads(left);
      if (ps.some((p) => (lldep!.kind === 'ether' ? p.protocol === 'ether' : true))) {
        hidden.add(lldep.index);
        lldep = undefined;
      }
    }
    if (vlandep !== undefined && payloads(left).some((p) => p.protocol === 'vlan' && p.field !== 'type')) {
      hidden.add(vlandep);
      vlandep = undefined;
    }
    if (single && left.kind === 'payload' && left.protocol === 'ether' && left.field === 'type' && (s.right as NftValue).value === 0x8100n) {
      vlandep = i;
      return;
    }
    if (left.kind === 'payload' && (left.protocol === 'icmp' || left.protocol === 'icmpv6')) {
      // payload_may_dependency_kill_icmp: a type match that a field's own type implies.
      const need = ICMP_SIMPLE_DEPS[left.protocol]?.[left.field];
      if (need !== undefined && icmpdep && icmpdep.proto === left.protocol && icmpdep.type === need) {
        hidden.add(icmpdep.index);
        icmpdep = undefined;
      }
      if (left.field === 'type' && single) icmpdep = { index: i, proto: left.protocol, type: (s.right as NftValue).value };
    }
    const l3 = l3Of(s, family);
    if (l3 !== undefined) {
      l3dep = { index: i, proto: l3 };
      return;
    }
    // `meta iiftype ether` before a link-layer match, `meta protocol ip` in an ip table before any
    // header match: dependencies nft drops from the listing.
    if (single && left.kind === 'meta' && left.key === 'iiftype' && (s.right as NftValue).value === 1n) {
      lldep = { index: i, kind: 'ether' };
      return;
    }
    if (single && left.kind === 'meta' && left.key === 'protocol' && ((family === 'ip' && (s.right as NftValue).value === 0x0800n) || (family === 'ip6' && (s.right as NftValue).value === 0x86ddn))) {
      lldep = { index: i, kind: 'any' };
      return;
    }
    const isL4Dep = single && ((left.kind === 'meta' && left.key === 'l4proto')
      || (left.kind === 'payload' && family === 'ip' && left.protocol === 'ip' && left.field === 'protocol')
      || (left.kind === 'payload' && family === 'ip6' && left.protocol === 'ip6' && left.field === 'nexthdr'));
    if (isL4Dep) {
      const n = Number((s.right as NftValue).value);
      if (left.kind === 'meta' && n === 1) coverL3('ip');
      if (left.kind === 'meta' && n === 58) coverL3('ip6');
      l4dep = { index: i, proto: n };
      return;
    }
    // A ct address with its family (`ct original ip saddr`) implies the network protocol too.
    if (left.kind === 'ct' && left.family !== undefined) coverL3(left.family);
    for (const p of payloads(left)) {
      if (p.protocol === 'ip' || p.protocol === 'ip6' || p.protocol === 'arp') coverL3(p.protocol);
      // ICMP implies its network protocol: a match on it is that payload's dependency too.
      if (p.protocol === 'icmp') coverL3('ip');
      if (p.protocol === 'icmpv6') coverL3('ip6');
      const n = p.protocol === 'th' ? l4dep?.proto : L4_PROTOCOLS[p.protocol];
      if (n !== undefined && l4dep && l4dep.proto === n) {
        hidden.add(l4dep.index);
        l4dep = undefined;
      }
    }
  });
  return hidden;
}

/** ICMP fields that need one type, and that type (the dependency nft drops from the listing). */
const ICMP_SIMPLE_DEPS: Readonly<Record<string, Readonly<Record<string, bigint>>>> = {
  icmp: { gateway: 5n, mtu: 3n },
  icmpv6: { mtu: 2n, 'max-delay': 130n, 'parameter-problem': 4n },
};

function payloads(sel: NftSelector): Extract<NftSelector, { kind: 'payload' }>[] {
  if (sel.kind === 'payload') return [sel];
  if (sel.kind === 'bitwise' || sel.kind === 'shift') return payloads(sel.operand);
  if (sel.kind === 'concat') return sel.items.flatMap(payloads);
  return [];
}

/** The l4 protocol a rule establishes before statement `index` (for `th` → `tcp` in listings). */
function l4Before(stmts: readonly NftStatement[], index: number, family: NftFamily): number | undefined {
  let l4: number | undefined;
  for (let i = 0; i < index; i++) {
    const s = stmts[i]!;
    if (s.kind !== 'match') continue;
    if (s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==')) {
      const l = s.left;
      if ((l.kind === 'meta' && l.key === 'l4proto') || (l.kind === 'payload' && ((l.protocol === 'ip' && l.field === 'protocol' && family !== 'inet') || (l.protocol === 'ip6' && l.field === 'nexthdr' && family !== 'inet')))) {
        l4 = Number(s.right.value);
      }
    }
    for (const p of payloads(s.left)) if (L4_PROTOCOLS[p.protocol] !== undefined) l4 = L4_PROTOCOLS[p.protocol];
  }
  return l4;
}

/** Header offsets and widths in bits of the fields nft 1.0.6 merges (byte-aligned ones). */
const MERGEABLE: Readonly<Record<string, ReadonlySet<string>>> = {
  ip: new Set(['length', 'id', 'ttl', 'protocol', 'saddr', 'daddr']),
  ip6: new Set(['length', 'nexthdr', 'hoplimit', 'saddr', 'daddr']),
  tcp: new Set(['sport', 'dport', 'sequence', 'flags', 'window']),
  udp: new Set(['sport', 'dport', 'length']),
  sctp: new Set(['sport', 'dport']),
  th: new Set(['sport', 'dport']),
  icmp: new Set(['type', 'code', 'id', 'sequence']),
  icmpv6: new Set(['type', 'code', 'id', 'sequence']),
  ether: new Set(['daddr', 'saddr', 'type']),
  vlan: new Set(['type']),
  arp: new Set(['htype', 'ptype', 'hlen', 'plen', 'operation', 'saddr ether', 'saddr ip', 'daddr ether', 'daddr ip']),
};

/** Header bases: link layer, network, transport. */
const LINK_LAYER = new Set(['ether', 'vlan']);
const NETWORK_LAYER = new Set(['ip', 'ip6', 'arp']);

/**
 * nft 1.0.6's `stmt_reduce`: equality (and inequality) matches of adjacent fields of one header
 * are merged into one comparison, which lists back in header order at the place of the statement
 * that kept it. Other matches do not interrupt a run; other statements end it only once two
 * candidates were seen (as 1.0.6 does).
 */
function mergePayloads(stmts: readonly NftStatement[]): { statements: NftStatement[]; merged: Map<NftStatement, NftSelector[]> } {
  type Match = Extract<NftStatement, { kind: 'match' }>;
  const out: (NftStatement | undefined)[] = [...stmts];
  const merged = new Map<NftStatement, NftSelector[]>();
  const layout = (i: number): { base: number; off: number; len: number; protocol: boolean } => {
    const left = (stmts[i] as Match).left;
    if (left.kind === 'rawpayload') return { base: ['ll', 'nh', 'th'].indexOf(left.base), off: left.offset, len: left.length, protocol: false };
    const p = left as Extract<NftSelector, { kind: 'payload' }>;
    const fld = payloadFields(p.protocol)![p.field]!;
    const protocol = (p.protocol === 'ip' && p.field === 'protocol') || (p.protocol === 'ip6' && p.field === 'nexthdr') || p.field === 'type' && LINK_LAYER.has(p.protocol);
    // A vlan header follows the Ethernet header (14 bytes) in the link-layer base.
    const off = fld.offset + (p.protocol === 'vlan' ? 112 : 0);
    return { base: LINK_LAYER.has(p.protocol) ? 0 : NETWORK_LAYER.has(p.protocol) ? 1 : 2, off, len: fld.bits, protocol };
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
      // payload_can_merge: up to a register's 128 bits, and past 32 only for the link layer or
      // where one of them already is.
      const fits = total <= 128 && (total <= 32 || last.base === 0 || last.len > 32 || cur.len > 32);
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
      // One load of the whole window, which the listing reads back with the protocols it knows
      // there (completeRawPayloads, told what the merged matches were).
      let value = 0n;
      for (const m of g.members) value = (value << BigInt(layout(m).len)) | ((stmts[m] as Match).right as NftValue).value;
      const first = layout(g.members[0]!);
      const raw: NftStatement = {
        kind: 'match', left: { kind: 'rawpayload', base: (['ll', 'nh', 'th'] as const)[first.base]!, offset: first.off, length: g.len },
        op: g.op === '==' ? 'implicit' : '!=', right: { kind: 'value', type: 'xinteger', bits: g.len, value },
      };
      out[g.keep] = raw;
      merged.set(raw, g.members.map((m) => (stmts[m] as Match).left));
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
    const single = s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==' || s.op === '!=') && !s.flagMask;
    const field = s.left.kind === 'payload' && MERGEABLE[s.left.protocol]?.has(s.left.field) && !(s.right.kind === 'value' && BITMASK_TYPES.has(s.right.type) && s.op === 'implicit');
    const window = s.left.kind === 'rawpayload' && s.left.offset % 8 === 0 && s.left.length % 8 === 0;
    if (single && (field || window)) run.push(i);
  });
  if (run.length >= 2) merge(run);
  return { statements: out.filter((s): s is NftStatement => s !== undefined), merged };
}

/**
 * One rule as nft lists it (without the handle). Given the table's chains, a jump to an
 * anonymous chain lists the chain's rules inside, on lines of their own one level deeper than
 * `indent` (the rule's own indentation, two tabs in a listing).
 */
export function printNftRule(r: NftRule, t: Pick<NftTable, 'family'> & Partial<Pick<NftTable, 'chains'>>, indent = '\t\t'): string {
  expectFields(r, { statements: 'array' }, 'rule');
  expectArgument(t, 'object', 'table');
  // As nft does: dependencies and merges when the rule is loaded, raw loads read back at listing.
  const { statements: withDependencies, added } = addLinkDependencies(unwrapSingletons(r.statements), t.family);
  const reduced = mergePayloads(withDependencies);
  const statements = completeRawPayloads(reduced.statements, t.family, reduced.merged);
  const hidden = hiddenDependencies(statements, t.family, added);
  const parts: string[] = [];
  statements.forEach((s, i) => {
    // The dependencies nft added are listed only where a merge kept them: never, as a dependency.
    if (hidden.has(i) || added.has(s)) return;
    const bound = s.kind === 'verdict' ? printBoundChain(s, t, indent) : undefined;
    if (bound !== undefined) {
      parts.push(bound);
      return;
    }
    // `th` fields are named by the transport protocol only where it has ports.
    const l4 = L4_NAME[l4Before(statements, i, t.family) ?? -1];
    const thAs = l4 !== undefined && payloadFields(l4)?.sport !== undefined ? l4 : undefined;
    parts.push(printStatement(s, thAs, t.family, false));
  });
  if (r.comment !== undefined) parts.push(`comment "${r.comment}"`);
  return parts.join(' ');
}

/** The datatypes nft lists a prefix-masked comparison of as a prefix (its DTYPE_F_PREFIX types). */
const PREFIX_TYPES: ReadonlySet<string> = new Set(['ipv4_addr', 'ipv6_addr', 'mark', 'devgroup', 'realm']);

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
    case 'const': return printValue(sel.value);
    case 'payload': return `${sel.protocol === 'th' && thAs ? thAs : sel.protocol} ${sel.field}`;
    case 'rawpayload': return `@${sel.base},${sel.offset},${sel.length}`;
    case 'exthdr': return sel.field === undefined ? `exthdr ${sel.header}` : `${sel.header} ${sel.field}`;
    case 'sctpchunk': return `sctp chunk ${sel.chunk}${sel.field !== undefined ? ` ${sel.field}` : ''}`;
    case 'ipopt': return `ip option ${sel.option}${sel.field !== undefined ? ` ${sel.field}` : ''}`;
    case 'tcpopt': if (sel.raw) return `tcp option @${sel.option},${sel.raw.offset},${sel.raw.length}`;
      return `tcp option ${sel.option}${sel.field !== undefined ? ` ${sel.field}` : ''}`;
    case 'meta': return UNQUALIFIED_META.has(sel.key) ? sel.key : `meta ${sel.key}`;
    case 'ct': {
      // ct_expr_print: the direction is kept for the tuple and the per-direction counters only.
      const dir = sel.direction && !['protocol', 'l3proto'].includes(sel.key) ? sel.direction + ' ' : '';
      return `ct ${dir}${sel.family && sel.direction ? sel.family + ' ' : ''}${sel.key}`;
    }
    case 'fib': return `fib ${sel.flags.join(' . ')} ${sel.result}`;
    case 'socket': return sel.key === 'cgroupv2' ? `socket cgroupv2 level ${sel.level ?? 0}` : `socket ${sel.key}`;
    case 'numgen': return `numgen ${sel.mode} mod ${sel.modulus}${sel.offset ? ` offset ${sel.offset}` : ''}`;
    case 'hash': return sel.mode === 'symhash'
      ? `symhash mod ${sel.modulus}${sel.offset ? ` offset ${sel.offset}` : ''}`
      : `jhash ${sel.expr ? printSelector(sel.expr, thAs) : ''} mod ${sel.modulus}${sel.seed !== undefined ? ` seed 0x${sel.seed.toString(16)}` : ''}${sel.offset ? ` offset ${sel.offset}` : ''}`;
    case 'rt': return `rt ${sel.family && sel.key === 'nexthop' ? sel.family + ' ' : sel.key === 'nexthop' ? 'ip ' : ''}${sel.key}`;
    case 'osf': return `osf${sel.ttl ? ` ttl ${sel.ttl}` : ''} ${sel.key}`;
    case 'ipsec': return `ipsec ${sel.dir}${sel.spnum ? ` spnum ${sel.spnum}` : ''} ${sel.family ? sel.family + ' ' : ''}${sel.key}`;
    case 'concat': return sel.items.map((i) => printSelector(i, thAs)).join(' . ');
    case 'shift': return sel.operand.kind === 'bitwise' ? `(${printSelector(sel.operand, thAs)}) ${sel.op} ${sel.by}` : `${printSelector(sel.operand, thAs)} ${sel.op} ${sel.by}`;
    case 'bitwise': {
      const ones = allOnes(sel.bits);
      const v = (x: bigint): string => printValue({ kind: 'value', type: sel.type, bits: sel.bits, value: x });
      let out = printSelector(sel.operand, thAs);
      // A flag mask is split into its flags, a binary operation nft parenthesises: `& (syn | ack)`.
      if (sel.xor === 0n && isFlags(sel.type) && (sel.mask & (sel.mask - 1n)) !== 0n && sel.mask !== ones) {
        return `${out} & (${printFlagsJoined({ kind: 'value', type: sel.type, bits: sel.bits, value: sel.mask })})`;
      }
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

const LOG_FLAG_ORDER = ['tcp sequence', 'tcp options', 'ip options', 'skuid', 'ether'];

function printLogFlags(flags: readonly string[]): string {
  const set = new Set(flags.includes('all') ? LOG_FLAG_ORDER : flags);
  if (LOG_FLAG_ORDER.every((f) => set.has(f))) return ' flags all';
  let out = '';
  const tcp = ['sequence', 'options'].filter((f) => set.has(`tcp ${f}`));
  if (tcp.length > 0) out += ` flags tcp ${tcp.join(',')}`;
  if (set.has('ip options')) out += ' flags ip options';
  if (set.has('skuid')) out += ' flags skuid';
  if (set.has('ether')) out += ' flags ether';
  return out;
}

function printNatFlags(flags: readonly string[]): string {
  const order = ['random', 'fully-random', 'persistent'];
  const shown = order.filter((f) => flags.includes(f));
  return shown.length > 0 ? ` ${shown.join(',')}` : '';
}

function printOperand(v: NftValue | NftRange | NftPrefix | NftSelector | NftMapLookup | NftConcatValue, thAs: string | undefined): string {
  switch (v.kind) {
    case 'value': case 'range': case 'prefix': return printKeyPart(v);
    case 'map': return printMap(v, thAs);
    case 'concat-value': return v.items.map(printKeyPart).join(' . ');
    default: return printSelector(v, thAs);
  }
}

function printStatement(s: NftStatement, thAs: string | undefined, family: NftFamily, stateless: boolean): string {
  switch (s.kind) {
    case 'match': {
      const left = printSelector(s.left, thAs);
      if (s.flagMask) return `${left} ${printRight(s.right)} / ${printValue(s.flagMask)}`;
      if (s.left.kind === 'bitwise' && s.left.xor === 0n && BITMASK_TYPES.has(s.left.type) && s.right.kind === 'value' && (s.op === '==' || s.op === '!=' || s.op === 'implicit')) {
        // relational_binop_postprocess: flags & F == 0 is `! F`, != 0 is `F`; flags & F == V a
        // value / mask (flags & F == F stays as it is when F is one flag).
        const operand = printSelector(s.left.operand, thAs);
        const mask: NftValue = { kind: 'value', type: s.left.type, bits: s.left.bits, value: s.left.mask };
        const neq = s.op === '!=';
        if (s.right.value === 0n) return `${operand} ${neq ? '' : '! '}${printValue(mask)}`;
        const single = (s.left.mask & (s.left.mask - 1n)) === 0n;
        if (s.right.value === s.left.mask && single) return `${operand} & ${printValue(mask)} ${neq ? '!=' : '=='} ${printValue(s.right)}`;
        return `${operand} ${neq ? '!= ' : ''}${printValue(s.right)} / ${printValue(mask)}`;
      }
      const rt = s.right.kind === 'value' ? s.right.type : undefined;
      // `x & prefixmask == v` lists as a prefix (`meta mark 0x00010000/16`, `ip saddr 10.0.0.0/24`)
      // for the types nft marks DTYPE_F_PREFIX; others list their mask (`tcp dport & 65280 == 7936`,
      // `@ll,0,8 & 0x80 == 0x80`).
      if (s.left.kind === 'bitwise' && PREFIX_TYPES.has(s.left.type) && s.left.xor === 0n && s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==' || s.op === '!=')) {
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
    case 'vmap': return `${printSelector(s.key, thAs)} vmap ${printMappings(s.mappings)}`;
    case 'counter': return stateless ? 'counter' : `counter packets ${s.packets} bytes ${s.bytes}`;
    case 'log': {
      let out = 'log';
      if (s.prefix !== undefined) out += ` prefix "${s.prefix}"`;
      if (s.group !== undefined) out += ` group ${s.group}`;
      if (s.snaplen !== undefined) out += ` snaplen ${s.snaplen}`;
      if (s.queueThreshold !== undefined) out += ` queue-threshold ${s.queueThreshold}`;
      if (s.level !== undefined && s.level !== 'warn') out += ` level ${s.level}`;
      if (s.flags && s.flags.length > 0) out += printLogFlags(s.flags);
      return out;
    }
    case 'limit':
      if (s.bytes) return `limit rate ${s.over ? 'over ' : ''}${byteUnit(BigInt(s.rate))}/${s.unit}${s.burst !== 0 ? ` burst ${byteUnit(BigInt(s.burst))}` : ''}`;
      return `limit rate ${s.over ? 'over ' : ''}${s.rate}/${s.unit}${s.burst !== 5 && s.burst !== 0 ? ` burst ${s.burst} packets` : ''}`;
    case 'reject': {
      if (!s.with) return 'reject';
      if (s.with.type === 'tcp-reset') return 'reject with tcp reset';
      // reject_stmt_print: the default code is left out, except that inet tables list icmp/icmpv6 in full.
      if (s.with.code === 'port-unreachable' && (s.with.type === 'icmpx' || family === 'ip' || family === 'ip6')) return 'reject';
      return `reject with ${s.with.type} ${s.with.code}`;
    }
    case 'nat': {
      let out = s.type;
      if (s.addr || s.port) {
        const fam = s.family ?? (s.concat || ((s.interval || s.prefix || s.intervalData) && s.addr?.kind === 'map') ? (s.addr && s.addr.kind === 'map' && s.addr.dataType === 'ipv6_addr' ? 'ip6' : 'ip') : undefined);
        if (fam) out += ` ${fam}`;
        if (s.prefix) out += ' prefix';
        out += ' to';
      }
      if (s.addr) {
        out += ' ';
        if (s.addr.kind === 'map') out += printMap(s.addr, thAs);
        else if (s.port && s.addr.kind === 'value' && s.addr.type === 'ipv6_addr') out += `[${printValue(s.addr)}]`;
        else {
          // A range that is exactly a prefix lists as the prefix.
          const a = s.addr.kind === 'range' ? intervalPart(s.addr.low, s.addr.low.value, s.addr.high.value) : s.addr;
          if (s.port && a.kind === 'range' && a.low.type === 'ipv6_addr') out += `[${printValue(a.low)}]-[${printValue(a.high)}]`;
          else out += printKeyPart(a);
        }
      }
      if (s.port) {
        if (!s.addr) out += ' ';
        out += `:${s.port.kind === 'map' ? printMap(s.port, thAs) : printKeyPart(s.port)}`;
      }
      return out + printNatFlags(s.flags);
    }
    case 'tproxy': {
      let out = 'tproxy';
      if (s.family && family === 'inet') out += ` ${s.family}`;
      out += ' to';
      if (s.addr) out += ' ' + (s.addr.type === 'ipv6_addr' ? `[${printValue(s.addr)}]` : printValue(s.addr));
      if (s.port) out += `${s.addr ? '' : ' '}:${printValue(s.port)}`;
      return out;
    }
    case 'mangle': {
      const target = printSelector(s.target);
      return `${target} set ${printOperand(s.value, thAs)}`;
    }
    case 'notrack': return 'notrack';
    case 'optstrip': return `reset tcp option ${s.option}`;
    case 'objref': {
      const name = s.map ? printMap(s.map, thAs) : `"${s.name}"`;
      switch (s.objType) {
        case 'ct helper': return `ct helper set ${name}`;
        case 'ct timeout': return `ct timeout set ${name}`;
        case 'ct expectation': return `ct expectation set ${name}`;
        case 'secmark': return `meta secmark set ${name}`;
        default: return `${s.objType} name ${name}`;
      }
    }
    case 'quota': return `quota ${s.over ? 'over ' : ''}${byteUnit(s.bytes)}${!stateless && s.used !== 0n ? ` used ${byteUnit(s.used)}` : ''}`;
    case 'connlimit': return `ct count ${s.over ? 'over ' : ''}${s.count}`;
    case 'queue': {
      let out = 'queue';
      const flags = ['bypass', 'fanout'].filter((f) => s.flags.includes(f as 'bypass'));
      if (flags.length > 0) out += ` flags ${flags.join(',')}`;
      out += ` to ${s.num ? printOperand(s.num, thAs) : '0'}`;
      return out;
    }
    case 'dup':
      return `dup${s.addr ? ` to ${printOperand(s.addr, thAs)}${s.dev ? ` device ${printOperand(s.dev, thAs)}` : ''}` : s.dev ? ` to ${printOperand(s.dev, thAs)}` : ''}`;
    case 'fwd':
      return s.addr ? `fwd ${s.family ?? 'ip'} to ${printValue(s.addr)} device ${printOperand(s.dev, thAs)}` : `fwd to ${printOperand(s.dev, thAs)}`;
    case 'synproxy': {
      const ts = s.flags.includes('timestamp') ? ' timestamp' : '';
      const sack = s.flags.includes('sack-perm') ? ' sack-perm' : '';
      if (s.mss !== undefined && s.wscale !== undefined) return `synproxy mss ${s.mss} wscale ${s.wscale}${ts}${sack}`;
      if (s.mss !== undefined) return `synproxy mss ${s.mss}${ts}${sack}`;
      if (s.wscale !== undefined) return `synproxy wscale ${s.wscale}${ts}${sack}`;
      return `synproxy${ts}${sack}`;
    }
    case 'dynset': {
      let out = s.meter ? `meter ${s.set} size ${s.meter.size} { ${printSelector(s.key, thAs)}` : `${s.op} @${s.set} { ${printSelector(s.key, thAs)}`;
      if (s.timeout !== undefined) out += ` timeout ${printTime(s.timeout)}`;
      for (const x of s.stateful) out += ` ${printStatement(x, thAs, family, true)}`;
      if (s.data) out += ` : ${printOperand(s.data, thAs)}`;
      return out + ' }';
    }
    case 'flow': return `flow add @${s.flowtable}`;
  }
}

/** The type of a selector, re-exported for the engine and checks. */
export { selectorType };
