/**
 * What a namespace is built from: its rule sets read and checked as the restore tools and
 * `nft -f` would, whether they turn conntrack on, its default gateways and its listeners.
 *
 * @module
 */
import type { SocketView } from '../../model/packet.js';
import type { Family, Ruleset } from '../../model/types.js';
import { NetfilterSimError } from '../../model/errors.js';
import type { Diagnostic } from '../../model/errors.js';
import { check } from '../../iptables/check/check.js';
import type { CheckOptions } from '../../iptables/check/check.js';
import { prefixMask } from '../../model/address.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { nftLoadErrors } from '../../nftables/index.js';
import type { NftRuleset } from '../../nftables/model.js';
import { PROTO } from '../state/constants.js';
import { sameAddr } from '../state/conntrack.js';
import { addressText } from '../../model/address.js';
import { SOCKET_FULL } from '../state/packet-state.js';
import type { SocketRecord } from '../state/packet-state.js';
import { parseEndpoint } from './probe.js';
import type { ExtensionRegistry } from '../rules/registry.js';
import { parseAnyAddress, parseIfaceAddress } from '../state/routing.js';
import type { InterfaceSpec } from '../state/routing.js';
import { expectArgument, expectFields } from '../../model/guard.js';
import type { ListenerSpec } from './api.js';
import { bad } from './helpers.js';

/** Matches whose `checkentry` calls `nf_ct_netns_get`. */
const CONNTRACK_MATCHES: ReadonlySet<string> = new Set(['conntrack', 'state', 'connmark', 'connbytes', 'connlimit', 'connlabel', 'helper', 'cluster']);
/** Targets whose `checkentry` calls `nf_ct_netns_get`. */
const CONNTRACK_TARGETS: ReadonlySet<string> = new Set(['CT', 'CONNMARK', 'CONNSECMARK', 'DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP']);

/**
 * Whether loading the rule set turns conntrack on for its family: some match or target whose
 * `checkentry` takes a reference (`nf_ct_netns_get`). The nat table itself does not: without a
 * NAT target in it, packets stay untracked and nat chains are never traversed.
 */
export function needsConntrack(rs: Ruleset): boolean {
  expectArgument(rs, 'object', 'ruleset');
  expectFields(rs, { tables: 'array', family: 'integer' }, 'ruleset');
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        if (r.matches.some((m) => CONNTRACK_MATCHES.has(m.name))) return true;
        const t = r.target;
        // xt_ct_tg_check: `--notrack` (and NOTRACK) take no reference on conntrack.
        if (t?.kind === 'extension' && CONNTRACK_TARGETS.has(t.name) && !(t.name === 'CT' && t.options['notrack'] === true)) return true;
      }
    }
  }
  return false;
}

/** The interfaces of a namespace given none (and `lo`, which every namespace has). */
export const DEFAULT_INTERFACES: readonly InterfaceSpec[] = [{ name: 'eth0', addresses: ['10.0.0.2/24', 'fd00::2/64'] }];

/** The nft rule set of a namespace without one (shared, frozen). */
const NO_NFT: NftRuleset = Object.freeze({ kind: 'nftables', tables: Object.freeze([]) as NftRuleset['tables'] });

/** nft inputs loaded in order, each on top of the last, refused as `nft -f` would refuse them. */
export function loadNft(inputs: readonly (string | NftRuleset)[], interfaces: readonly string[]): NftRuleset {
  if (inputs.length === 0) return NO_NFT;
  let ruleset: NftRuleset = { kind: 'nftables', tables: [] };
  for (const input of inputs) {
    if (typeof input !== 'string') {
      ruleset = { kind: 'nftables', tables: [...ruleset.tables, ...input.tables] };
      continue;
    }
    const r = nftLoadErrors(input, { base: ruleset, interfaces });
    if (r.diagnostics.length > 0) throw new NetfilterSimError(r.diagnostics);
    ruleset = r.ruleset;
  }
  return ruleset;
}

/**
 * Rule sets already checked, with no error, against the extensions of a registry (and no other
 * check option): the CLI checks what it reads to report errors on the file's lines, and the
 * namespace it then builds need not check the same object again.
 */
const checkedAlready = new WeakMap<Ruleset, ExtensionRegistry>();

/** Notes that `ruleset` passed `check` with `registry`'s extensions and no other option. @internal */
export function noteChecked(ruleset: Ruleset, registry: ExtensionRegistry): void {
  checkedAlready.set(ruleset, { matches: registry.matches, targets: registry.targets });
}

export function loadRules(rules: string | Ruleset | undefined, family: Family, registry: ExtensionRegistry, options: CheckOptions | undefined, lenient: boolean, warnings: Diagnostic[]): Ruleset {
  if (rules === undefined) return { family, tables: [] };
  let ruleset: Ruleset;
  if (typeof rules === 'string') {
    const r = parseIptablesSave(rules, { family, mode: lenient ? 'lenient' : 'strict' });
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new NetfilterSimError(errors);
    for (const d of r.diagnostics) if (d.severity === 'warning') warnings.push({ ...d, message: `IPv${family} rules: ${d.message}` });
    ruleset = r.ruleset;
  } else ruleset = rules;
  if (ruleset.family !== family) bad('BAD_CONFIG', `the IPv${family} rules are an IPv${ruleset.family} rule set`);
  const seen = typeof rules !== 'string' && options === undefined ? checkedAlready.get(ruleset) : undefined;
  if (seen !== undefined && seen.matches === registry.matches && seen.targets === registry.targets) return ruleset;
  const diags: Diagnostic[] = check(ruleset, { ...options, registry });
  const errors = diags.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new NetfilterSimError(errors);
  return ruleset;
}

export function gatewayFor(spec: InterfaceSpec | undefined, family: Family): string | null {
  const a = spec?.addresses.map(parseIfaceAddress).find((x) => x.family === family);
  if (!a || a.prefix >= (family === 4 ? 31 : 127)) return null;
  const mask = prefixMask(a.prefix, family);
  const words = a.addr.map((w, i) => (w & mask[i]!) >>> 0);
  // The first host of the network (10.0.0.1 for 10.0.0.2/24), or the next one if that is ours.
  words[words.length - 1] = (words[words.length - 1]! + 1) >>> 0;
  if (sameAddr(words, a.addr)) words[words.length - 1] = (words[words.length - 1]! + 1) >>> 0;
  return addressText(words, family);
}

export function parseListener(l: number | string | ListenerSpec): SocketRecord[] {
  const spec: ListenerSpec = typeof l === 'number' ? { port: l } : typeof l === 'string' ? listenerFromString(l) : l;
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) bad('BAD_CONFIG', `bad listening port "${String(spec.port)}"`);
  const owner: SocketView = { uid: spec.uid ?? 0, gid: spec.gid ?? spec.uid ?? 0, groups: [] };
  const protos = spec.proto === undefined ? [PROTO.TCP, PROTO.UDP] : [spec.proto === 'udp' ? PROTO.UDP : PROTO.TCP];
  const out: SocketRecord[] = [];
  let binds: { family: Family; addr: number[] | null }[];
  if (spec.address === undefined || spec.address === '*') binds = [{ family: 4, addr: null }, { family: 6, addr: null }];
  else {
    const a = parseAnyAddress(spec.address);
    if (!a) bad('BAD_CONFIG', `bad listening address "${spec.address}"`);
    const wildcard = a.addr.every((w) => w === 0);
    binds = [{ family: a.family, addr: wildcard ? null : a.addr }];
  }
  for (const b of binds) {
    for (const proto of protos) {
      out.push({ family: b.family, proto, local: b.addr, localPort: spec.port, remote: null, remotePort: 0, owner, transparent: spec.transparent ?? false, mark: 0, listener: null, state: SOCKET_FULL });
    }
  }
  return out;
}

/** A listener string (`4140`, `127.0.0.1:15001`, `[::1]:53/udp`) as a {@link ListenerSpec}. @internal */
export function listenerFromString(text: string): ListenerSpec {
  let t = text.trim();
  let proto: 'tcp' | 'udp' | undefined;
  const m = /\/(tcp|udp)$/i.exec(t);
  if (m) {
    proto = m[1]!.toLowerCase() as 'tcp' | 'udp';
    t = t.slice(0, m.index);
  }
  if (/^\d+$/.test(t)) return proto ? { port: Number(t), proto } : { port: Number(t) };
  const e = parseEndpoint(t, true);
  const address = addressText(e.addr, e.family);
  return proto ? { address, port: e.port, proto } : { address, port: e.port };
}
