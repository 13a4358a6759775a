/**
 * What the rule arbitraries know about each match and target: where it is legal (table, hooks,
 * protocol) and how to write its options as iptables arguments. Placement is intersected with
 * the placement the extension module declares in the registry, so a generated rule is legal for
 * `check` as well as for the kernel.
 *
 * Options are generated as argument vectors, the way users' generators write them; the parser
 * turns them into model values. Spellings vary where iptables accepts several
 * (`--to-port`/`--to-ports`, implicit `-p tcp --dport`), so tools reading the arguments meet them.
 *
 * @module
 * @internal
 */
import * as fc from 'fast-check';
import { MATCHES, TARGETS } from '../iptables/extensions/registry.js';
import type { Placement } from '../iptables/extensions/types.js';
import { BUILTIN_CHAINS, type Family, type HookName, type TableName } from '../model/types.js';
import { formatAddress } from '../model/address.js';
import { addressText, addressWords } from './address.js';
import { formatPortRange, multiportList, port, portRange, type PortRange } from './ports.js';

/** What an option generator may know about the rule it is part of. @internal */
export interface GenContext {
  readonly family: Family;
  readonly table: TableName;
  /** The rule's `-p`, canonical (`tcp`, `udp`, `icmp`, `ipv6-icmp`), when given and not negated. */
  readonly protocol: string | undefined;
  /** Longest comment text. */
  readonly maxCommentLength: number;
}

/** A match the generators know. @internal */
export interface MatchGen {
  readonly name: string;
  readonly family: 'both' | Family;
  /** The rule's `-p` must be one of these (not negated). */
  readonly protocols?: readonly string[];
  /** The chain must be reachable only from these hooks. */
  readonly hooks?: readonly HookName[];
  readonly tables?: readonly TableName[];
  /** Whether `-p PROTO --opt` may load it without `-m NAME` (tcp, udp, icmp, icmp6). */
  readonly implicit?: boolean;
  /** The arguments after `-m NAME` (never empty when `implicit` is used). */
  options(ctx: GenContext): fc.Arbitrary<string[]>;
}

/** A target the generators know. @internal */
export interface TargetGen {
  readonly name: string;
  readonly family: 'both' | Family;
  readonly protocols?: readonly string[];
  readonly hooks?: readonly HookName[];
  readonly tables?: readonly TableName[];
  /** The arguments after `-j NAME`. */
  options(ctx: GenContext): fc.Arbitrary<string[]>;
}

const TCP_UDP = ['tcp', 'udp'] as const;

// ---------------------------------------------------------------------------------------------
// Small value generators

/** `[value]` or `['!', value...]`: the option with an optional `!` in front. */
function negatable(argv: fc.Arbitrary<string[]>, weight = 4): fc.Arbitrary<string[]> {
  return fc.tuple(fc.oneof({ arbitrary: fc.constant(false), weight }, { arbitrary: fc.constant(true), weight: 1 }), argv)
    .map(([neg, a]) => (neg ? ['!', ...a] : a));
}

/** Optional pieces joined in order (possibly none). */
function someOf(parts: readonly fc.Arbitrary<string[]>[]): fc.Arbitrary<string[]> {
  return fc
    .tuple(...parts.map((p) => fc.option(p, { nil: undefined, freq: 2 })))
    .map((picked) => picked.filter((p): p is string[] => p !== undefined).flat());
}

/** Like {@link someOf}, but never empty: when nothing was picked, `fallback` is used. */
function atLeastOne(parts: readonly fc.Arbitrary<string[]>[], fallback: fc.Arbitrary<string[]>): fc.Arbitrary<string[]> {
  return fc.tuple(someOf(parts), fallback).map(([a, f]) => (a.length > 0 ? a : f));
}

const UIDS = [0, 1000, 1337, 2102, 65534, 33, 101];

function idValue(): fc.Arbitrary<string> {
  const one = fc.oneof(fc.constantFrom(...UIDS), fc.integer({ min: 0, max: 65535 }));
  return fc.oneof(
    { arbitrary: one.map(String), weight: 4 },
    { arbitrary: fc.tuple(one, fc.integer({ min: 0, max: 1000 })).map(([a, w]) => `${a}-${a + w}`), weight: 1 },
  );
}

/** A 32-bit mark, in decimal or hex, with an optional mask. */
function markValue(withMask = true): fc.Arbitrary<string> {
  const v = fc.oneof(fc.constantFrom(0x1, 1337, 0x4000, 0x539, 0x1000000), fc.integer({ min: 0, max: 0xffffffff }));
  const text = fc.tuple(v, fc.boolean()).map(([n, hex]) => (hex ? `0x${n.toString(16)}` : `${n}`));
  if (!withMask) return text;
  return fc.tuple(text, fc.option(v, { nil: undefined })).map(([t, m]) => (m === undefined ? t : `${t}/0x${m.toString(16)}`));
}

const PRINTABLE: readonly string[] = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
const PLAIN: readonly string[] = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/.:,= '];

/** Comment text: mostly words, sometimes any printable ASCII (quotes and backslashes included). */
function commentText(maxLength: number): fc.Arbitrary<string> {
  const plain = fc.string({ unit: fc.constantFrom(...PLAIN), minLength: 1, maxLength: Math.min(maxLength, 40) });
  const any = fc.string({ unit: fc.constantFrom(...PRINTABLE), minLength: 1, maxLength });
  const tag = fc.tuple(fc.constantFrom('proxy-init/', 'kube-', 'istio ', ''), plain).map(([p, s]) => (p + s).slice(0, maxLength));
  return fc.oneof({ arbitrary: tag, weight: 3 }, { arbitrary: any, weight: 1 });
}

function portArg(r: fc.Arbitrary<PortRange>): fc.Arbitrary<string> {
  return r.map((x) => formatPortRange(x));
}

/** `addr`, `addr:port` or `addr:lo-hi` (IPv6: `[addr]:port`), as `--to-destination` takes. */
function natDestination(ctx: GenContext): fc.Arbitrary<string> {
  const ports = ctx.protocol === 'tcp' || ctx.protocol === 'udp';
  const addr = addressText(ctx.family);
  const withPort = fc.tuple(addr, portRange({ min: 1, maxWidth: 100 }))
    .map(([a, r]) => `${ctx.family === 6 ? `[${a}]` : a}:${formatPortRange(r, '-')}`);
  return ports ? fc.oneof(addr, withPort) : addr;
}

/** Two addresses in order, as `a-b`. */
function addressRange(family: Family): fc.Arbitrary<string> {
  return fc.tuple(addressWords(family), addressWords(family)).map(([a, b]) => {
    const lt = compareWords(a, b) <= 0;
    const [lo, hi] = lt ? [a, b] : [b, a];
    return `${formatAddress(lo, family)}-${formatAddress(hi, family)}`;
  });
}

function compareWords(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

function listOf(values: readonly string[], max = values.length): fc.Arbitrary<string> {
  return fc.subarray([...values], { minLength: 1, maxLength: max }).map((v) => v.join(','));
}

// ---------------------------------------------------------------------------------------------
// Matches

const MATCH_GENS: readonly MatchGen[] = [
  {
    name: 'tcp', family: 'both', protocols: ['tcp'], implicit: true,
    options: () => someOf([
      negatable(portArg(portRange()).map((p) => ['--sport', p])),
      negatable(portArg(portRange()).map((p) => ['--dport', p])),
      fc.oneof(
        negatable(fc.constant(['--syn'])),
        negatable(fc.tuple(listOf(['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG']), fc.option(listOf(['FIN', 'SYN', 'RST', 'ACK']), { nil: undefined }))
          .map(([mask, comp]) => ['--tcp-flags', mask, comp ?? 'NONE'])),
      ),
    ]),
  },
  {
    name: 'udp', family: 'both', protocols: ['udp'], implicit: true,
    options: () => someOf([
      negatable(portArg(portRange()).map((p) => ['--sport', p])),
      negatable(portArg(portRange()).map((p) => ['--dport', p])),
    ]),
  },
  {
    name: 'icmp', family: 4, protocols: ['icmp'], implicit: true,
    options: () => negatable(
      fc.tuple(fc.constantFrom(8, 0, 3, 11, 4, 5, 12, 13, 14), fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }))
        .map(([t, c]) => ['--icmp-type', c === undefined ? `${t}` : `${t}/${c}`]),
    ),
  },
  {
    name: 'icmp6', family: 6, protocols: ['ipv6-icmp'], implicit: true,
    options: () => negatable(
      fc.tuple(fc.constantFrom(128, 129, 1, 2, 3, 4, 133, 134, 135, 136), fc.option(fc.integer({ min: 0, max: 7 }), { nil: undefined }))
        .map(([t, c]) => ['--icmpv6-type', c === undefined ? `${t}` : `${t}/${c}`]),
    ),
  },
  {
    name: 'multiport', family: 'both', protocols: [...TCP_UDP],
    options: () => negatable(
      fc.tuple(fc.constantFrom('--dports', '--sports', '--ports'), multiportList())
        .map(([opt, list]) => [opt, list.map((r) => formatPortRange(r)).join(',')]),
    ),
  },
  {
    name: 'comment', family: 'both',
    options: (ctx) => commentText(ctx.maxCommentLength).map((c) => ['--comment', c]),
  },
  {
    name: 'owner', family: 'both', hooks: ['OUTPUT', 'POSTROUTING'],
    options: () => atLeastOne([
      negatable(idValue().map((v) => ['--uid-owner', v])),
      negatable(idValue().map((v) => ['--gid-owner', v])),
      negatable(fc.constant(['--socket-exists'])),
    ], fc.constantFrom(...UIDS).map((u) => ['--uid-owner', `${u}`])),
  },
  {
    name: 'conntrack', family: 'both',
    options: (ctx) => atLeastOne([
      negatable(listOf(['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED', 'SNAT', 'DNAT']).map((s) => ['--ctstate', s])),
      negatable(listOf(['NONE', 'EXPECTED', 'SEEN_REPLY', 'ASSURED', 'CONFIRMED'], 2).map((s) => ['--ctstatus', s])),
      negatable(addressText(ctx.family).map((a) => ['--ctorigdst', a])),
      fc.constantFrom('ORIGINAL', 'REPLY').map((d) => ['--ctdir', d]),
    ], listOf(['NEW', 'ESTABLISHED', 'RELATED']).map((s) => ['--ctstate', s])),
  },
  { name: 'state', family: 'both', options: () => negatable(listOf(['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED']).map((s) => ['--state', s])) },
  { name: 'mark', family: 'both', options: () => negatable(markValue().map((m) => ['--mark', m])) },
  { name: 'connmark', family: 'both', options: () => negatable(markValue().map((m) => ['--mark', m])) },
  {
    name: 'addrtype', family: 'both',
    options: (ctx) => {
      // xt_addrtype: IPv6 has no BROADCAST, BLACKHOLE or PROHIBIT matching.
      const types = ctx.family === 4
        ? ['UNSPEC', 'UNICAST', 'LOCAL', 'BROADCAST', 'ANYCAST', 'MULTICAST', 'BLACKHOLE', 'UNREACHABLE', 'PROHIBIT']
        : ['UNSPEC', 'UNICAST', 'LOCAL', 'ANYCAST', 'MULTICAST', 'UNREACHABLE'];
      return atLeastOne([
        negatable(listOf(types, 3).map((t) => ['--src-type', t])),
        negatable(listOf(types, 3).map((t) => ['--dst-type', t])),
      ], fc.constant(['--dst-type', 'LOCAL']));
    },
  },
  {
    name: 'iprange', family: 'both',
    options: (ctx) => atLeastOne([
      negatable(addressRange(ctx.family).map((r) => ['--src-range', r])),
      negatable(addressRange(ctx.family).map((r) => ['--dst-range', r])),
    ], addressRange(ctx.family).map((r) => ['--dst-range', r])),
  },
  {
    name: 'limit', family: 'both',
    options: () => fc.tuple(
      fc.integer({ min: 1, max: 10000 }), fc.constantFrom('second', 'minute', 'hour', 'day', 'sec', 'min', 's', 'm'),
      fc.option(fc.integer({ min: 1, max: 10000 }), { nil: undefined }),
    ).map(([n, unit, burst]) => ['--limit', `${n}/${unit}`, ...(burst === undefined ? [] : ['--limit-burst', `${burst}`])]),
  },
  {
    name: 'statistic', family: 'both',
    options: () => fc.oneof(
      fc.integer({ min: 0, max: 10000 }).map((k) => ['--mode', 'random', '--probability', `${k / 10000}`]),
      // libxt_statistic: --every and --packet each need the other (`.also`).
      fc.tuple(fc.integer({ min: 1, max: 100 }), fc.nat(99))
        .map(([every, p]) => ['--mode', 'nth', '--every', `${every}`, '--packet', `${p % every}`]),
    ),
  },
  {
    name: 'sctp', family: 'both', protocols: ['sctp'], implicit: true,
    options: () => someOf([
      negatable(portArg(portRange()).map((p) => ['--sport', p])),
      negatable(portArg(portRange()).map((p) => ['--dport', p])),
    ]),
  },
  {
    name: 'recent', family: 'both',
    options: () => fc.tuple(
      fc.constantFrom('--set', '--rcheck', '--update', '--remove'),
      fc.option(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,15}$/), { nil: undefined }),
      fc.option(fc.constantFrom('--rsource', '--rdest'), { nil: undefined }),
      fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined }),
      // xt_recent refuses a hitcount above ip_pkt_list_tot (20 by default).
      fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
    ).map(([mode, listName, dir, seconds, hits]) => {
      const timed = mode === '--rcheck' || mode === '--update';
      return [
        ...(listName ? ['--name', listName] : []), mode, ...(dir ? [dir] : []),
        ...(timed && seconds !== undefined ? ['--seconds', `${seconds}`] : []),
        ...(timed && hits !== undefined ? ['--hitcount', `${hits}`] : []),
      ];
    }),
  },
  {
    name: 'rpfilter', family: 'both', tables: ['raw', 'mangle'], hooks: ['PREROUTING'],
    options: () => fc.subarray(['--loose', '--validmark', '--accept-local', '--invert']),
  },
  {
    name: 'socket', family: 'both', hooks: ['PREROUTING', 'INPUT'],
    options: () => fc.subarray(['--transparent', '--nowildcard', '--restore-skmark']),
  },
  {
    name: 'mac', family: 'both', hooks: ['PREROUTING', 'INPUT', 'FORWARD'],
    options: () => negatable(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 6, maxLength: 6 })
      .map((b) => ['--mac-source', b.map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(':')])),
  },
];

// ---------------------------------------------------------------------------------------------
// Targets

const REJECT_V4 = ['icmp-net-unreachable', 'icmp-host-unreachable', 'icmp-port-unreachable', 'icmp-proto-unreachable',
  'icmp-net-prohibited', 'icmp-host-prohibited', 'icmp-admin-prohibited'];
const REJECT_V6 = ['icmp6-no-route', 'icmp6-adm-prohibited', 'icmp6-addr-unreachable', 'icmp6-port-unreachable'];

const TARGET_GENS: readonly TargetGen[] = [
  {
    name: 'REDIRECT', family: 'both', tables: ['nat'], hooks: ['PREROUTING', 'OUTPUT'],
    options: (ctx) => {
      const random = fc.option(fc.constant<string[]>(['--random']), { nil: undefined });
      if (ctx.protocol !== 'tcp' && ctx.protocol !== 'udp') return random.map((r): string[] => r ?? []);
      return fc.tuple(
        fc.option(fc.tuple(fc.constantFrom('--to-ports', '--to-port'), portRange({ min: 1, maxWidth: 20 })), { nil: undefined, freq: 1 }),
        random,
      ).map(([to, r]) => [...(to ? [to[0], formatPortRange(to[1], '-')] : []), ...(r ?? [])]);
    },
  },
  {
    name: 'DNAT', family: 'both', tables: ['nat'], hooks: ['PREROUTING', 'OUTPUT'],
    options: (ctx) => fc.tuple(natDestination(ctx), fc.option(fc.constant<string[]>(['--random']), { nil: undefined }), fc.option(fc.constant(['--persistent']), { nil: undefined }))
      .map(([d, r, p]) => ['--to-destination', d, ...(r ?? []), ...(p ?? [])]),
  },
  {
    name: 'SNAT', family: 'both', tables: ['nat'], hooks: ['POSTROUTING', 'INPUT'],
    options: (ctx) => fc.tuple(natDestination(ctx), fc.option(fc.constantFrom<string[]>(['--random'], ['--random-fully']), { nil: undefined }))
      .map(([d, r]) => ['--to-source', d, ...(r ?? [])]),
  },
  {
    name: 'MASQUERADE', family: 'both', tables: ['nat'], hooks: ['POSTROUTING'],
    options: (ctx) => {
      const random = fc.option(fc.constantFrom<string[]>(['--random'], ['--random-fully']), { nil: undefined });
      if (ctx.protocol !== 'tcp' && ctx.protocol !== 'udp') return random.map((r): string[] => r ?? []);
      return fc.tuple(fc.option(portRange({ min: 1, maxWidth: 1000 }), { nil: undefined }), random)
        .map(([to, r]) => [...(to ? ['--to-ports', formatPortRange(to, '-')] : []), ...(r ?? [])]);
    },
  },
  {
    name: 'TPROXY', family: 'both', tables: ['mangle'], hooks: ['PREROUTING'], protocols: [...TCP_UDP],
    options: (ctx) => fc.tuple(port(1, 65535), fc.option(addressText(ctx.family), { nil: undefined }), fc.option(markValue(), { nil: undefined }))
      .map(([p, ip, mark]) => ['--on-port', `${p}`, ...(ip ? ['--on-ip', ip] : []), ...(mark ? ['--tproxy-mark', mark] : [])]),
  },
  {
    name: 'MARK', family: 'both', tables: ['mangle'],
    options: () => fc.oneof(
      markValue().map((m) => ['--set-mark', m]),
      markValue().map((m) => ['--set-xmark', m]),
      markValue(false).map((m) => ['--and-mark', m]),
      markValue(false).map((m) => ['--or-mark', m]),
      markValue(false).map((m) => ['--xor-mark', m]),
    ),
  },
  {
    name: 'CONNMARK', family: 'both', tables: ['mangle'],
    options: () => fc.oneof(
      markValue().map((m) => ['--set-mark', m]),
      fc.tuple(fc.constantFrom('--save-mark', '--restore-mark'), fc.option(markValue(false), { nil: undefined }), fc.option(markValue(false), { nil: undefined }))
        .map(([op, nf, ct]) => [op, ...(nf ? ['--nfmask', nf] : []), ...(ct ? ['--ctmask', ct] : [])]),
    ),
  },
  {
    name: 'LOG', family: 'both',
    options: () => fc.tuple(
      fc.option(fc.string({ unit: fc.constantFrom(...PLAIN), minLength: 1, maxLength: 29 }), { nil: undefined }),
      fc.option(fc.oneof(fc.integer({ min: 0, max: 7 }).map(String), fc.constantFrom('emerg', 'alert', 'crit', 'error', 'warning', 'notice', 'info', 'debug')), { nil: undefined }),
      fc.subarray(['--log-tcp-sequence', '--log-tcp-options', '--log-ip-options', '--log-uid']),
    ).map(([prefix, level, flags]) => [...(prefix ? ['--log-prefix', prefix] : []), ...(level ? ['--log-level', level] : []), ...flags]),
  },
  {
    name: 'REJECT', family: 'both', tables: ['filter'], hooks: ['INPUT', 'FORWARD', 'OUTPUT'],
    options: (ctx) => {
      const types = [...(ctx.family === 4 ? REJECT_V4 : REJECT_V6), ...(ctx.protocol === 'tcp' ? ['tcp-reset'] : [])];
      return fc.option(fc.constantFrom(...types), { nil: undefined }).map((t) => (t ? ['--reject-with', t] : []));
    },
  },
  {
    name: 'NFLOG', family: 'both',
    options: () => fc.tuple(
      fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
      fc.option(fc.string({ unit: fc.constantFrom(...PLAIN), minLength: 1, maxLength: 63 }), { nil: undefined }),
      fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
    ).map(([g, prefix, threshold]) => [
      ...(g !== undefined ? ['--nflog-group', `${g}`] : []),
      ...(prefix ? ['--nflog-prefix', prefix] : []),
      ...(threshold !== undefined ? ['--nflog-threshold', `${threshold}`] : []),
    ]),
  },
  { name: 'TRACE', family: 'both', tables: ['raw'], options: () => fc.constant([]) },
  { name: 'NOTRACK', family: 'both', tables: ['raw'], options: () => fc.constant([]) },
  {
    name: 'CT', family: 'both', tables: ['raw'],
    options: () => fc.oneof(fc.constant<string[]>(['--notrack']), fc.integer({ min: 0, max: 65535 }).map((z) => ['--zone', `${z}`])),
  },
];

/** Every match the generators know, by name. @internal */
export const KNOWN_MATCHES: readonly string[] = MATCH_GENS.map((m) => m.name);
/** Every target extension the generators know, by name. @internal */
export const KNOWN_TARGETS: readonly string[] = TARGET_GENS.map((t) => t.name);

function intersect<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): readonly T[] | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a.filter((x) => b.includes(x));
}

function withPlacement<G extends MatchGen | TargetGen>(gen: G, placement: Placement | undefined): G {
  if (!placement) return gen;
  const out: { -readonly [K in keyof G]: G[K] } = { ...gen };
  const tables = intersect(gen.tables, placement.tables);
  const hooks = intersect(gen.hooks, placement.hooks);
  const protocols = intersect(gen.protocols, placement.protocols);
  if (tables) (out as { tables?: readonly TableName[] }).tables = tables;
  if (hooks) (out as { hooks?: readonly HookName[] }).hooks = hooks;
  if (protocols) (out as { protocols?: readonly string[] }).protocols = protocols;
  return out;
}

/** The matches and targets in use, after the user's choice and the registry. @internal */
export interface Catalog {
  readonly matches: readonly MatchGen[];
  readonly targets: readonly TargetGen[];
}

/**
 * The generators for `family`, limited to `matches`/`targets` when given, else to every known
 * extension the registry has. Throws (through `onError`) for a name that is unknown or missing.
 * @internal
 */
export function catalogFor(
  family: Family,
  matches: readonly string[] | undefined,
  targets: readonly string[] | undefined,
  onError: (field: string, message: string) => never,
): Catalog {
  const pick = <G extends MatchGen | TargetGen>(
    field: string, gens: readonly G[], wanted: readonly string[] | undefined,
    registry: ReadonlyMap<string, { readonly placement?: Placement; readonly family: 'both' | Family }>,
  ): G[] => {
    if (wanted !== undefined) {
      if (!Array.isArray(wanted)) onError(field, 'must be an array of names');
      for (const n of wanted) {
        const gen = gens.find((g) => g.name === n);
        if (!gen) onError(field, `has ${JSON.stringify(n)}, which the generators do not know (known: ${gens.map((g) => g.name).join(', ')})`);
        if (!registry.has(n)) onError(field, `has ${JSON.stringify(n)}, which this build of netfilter-sim cannot parse (no extension module registered)`);
      }
    }
    return gens
      .filter((g) => (wanted === undefined ? registry.has(g.name) : wanted.includes(g.name)))
      .filter((g) => g.family === 'both' || g.family === family)
      .filter((g) => {
        const ext = registry.get(g.name);
        return !ext || ext.family === 'both' || ext.family === family;
      })
      .map((g) => withPlacement(g, registry.get(g.name)?.placement));
  };
  return {
    matches: pick('matches', MATCH_GENS, matches, MATCHES),
    targets: pick('targets', TARGET_GENS, targets, TARGETS),
  };
}

/** Whether an extension with `protocols` may be used in a rule whose `-p` is `protocol`. @internal */
export function protocolFits(protocols: readonly string[] | undefined, protocol: string | undefined): boolean {
  return protocols === undefined || (protocol !== undefined && protocols.includes(protocol));
}

/** Whether an extension may be used in `table`. @internal */
export function tableFits(tables: readonly TableName[] | undefined, table: TableName): boolean {
  return tables === undefined || tables.includes(table);
}

/**
 * Whether an extension restricted to `allowed` hooks may be used in a chain reachable from
 * `hooks`. An unreachable chain (no hooks) takes anything, as the kernel checks only what is
 * reachable.
 * @internal
 */
export function hooksFit(allowed: readonly HookName[] | undefined, hooks: readonly HookName[]): boolean {
  return allowed === undefined || hooks.every((h) => allowed.includes(h));
}

/** The hooks of a table's built-in chains. @internal */
export function tableHooks(table: TableName): readonly HookName[] {
  return BUILTIN_CHAINS[table];
}
