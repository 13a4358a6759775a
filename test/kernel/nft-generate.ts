/**
 * Seeded generators of nft rule sets for the kernel differentials (mulberry32 via {@link Rng}):
 *
 * - {@link generateNftText}: a rule set in the shapes people and tools write — the command form
 *   knftables/Istio use (`add table`, `flush table`, `add chain … { type … ; }`, `insert rule …
 *   index N`) or the block form `nft list ruleset` prints; families ip, ip6, inet; base chains
 *   of every type at varied priorities (numbers and names); sets, maps, verdict maps; bitwise
 *   marks; nat, tproxy, reject, log, limit, ct and meta statements where the kernel takes them.
 * - {@link mutateNft}: a small, named damage to a valid text; some still load.
 */
import { Rng } from './generate.js';

type Family = 'ip' | 'ip6' | 'inet';
type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
type ChainType = 'filter' | 'nat' | 'route';

interface GenChain {
  readonly name: string;
  readonly base?: { type: ChainType; hook: Hook; priority: string; policy?: 'accept' | 'drop' };
  readonly rules: string[];
}
interface GenSet {
  readonly name: string;
  readonly decl: string;
  readonly key: 'ipv4_addr' | 'ipv6_addr' | 'inet_service' | 'mark';
  readonly map?: 'verdict' | 'mark' | 'ipv4_addr';
}
interface GenTable {
  readonly family: Family;
  readonly name: string;
  readonly chains: GenChain[];
  readonly sets: GenSet[];
}

const V4 = ['10.0.0.1', '10.0.0.2', '127.0.0.1', '127.0.0.6', '169.254.7.127', '192.168.1.10', '10.96.0.10', '172.16.5.4', '8.8.8.8'];
const V4NET = ['10.0.0.0/8', '10.1.0.0/16', '192.168.0.0/24', '172.16.0.0/12', '10.0.0.0/30', '127.0.0.1/32', '10.0.0.5/24'];
const V6 = ['::1', 'fd00::2', 'fd00::1', '::6', '2001:db8::1', 'fe80::1', '::127.0.0.53', '::ffff:10.0.0.1', 'fd16:9254:7127:1337:ffff:ffff:ffff:ffff'];
const V6NET = ['fd00::/64', '2001:db8::/32', '::1/128', 'fe80::/10', 'fd00::1/112'];
const PORTS = [22, 53, 80, 443, 8080, 15001, 15006, 15008, 15053, 15090, 3306, 9090];

function portSet(rng: Rng): string {
  const ports = rng.sample(PORTS, rng.int(2, 5)).map(String);
  if (rng.chance(0.3)) ports.push(`${rng.int(1000, 2000)}-${rng.int(2001, 3000)}`);
  if (rng.chance(0.2)) ports.push('81', '80');
  return `{ ${rng.shuffle(ports).join(', ')} }`;
}

function hex(rng: Rng): string {
  return rng.pick(['0x10', '0x539', '0x53a', '0xfff', '1337', '0x111', '0x1', '0x0', '0xff00', '0x4000']);
}

/** Priorities a hook/type can take, as text (numbers and names). */
function priorityFor(rng: Rng, type: ChainType, hook: Hook): string {
  if (type === 'nat') {
    const named = hook === 'prerouting' ? ['dstnat', 'dstnat + 5', 'dstnat - 10'] : hook === 'postrouting' ? ['srcnat', 'srcnat - 3', 'srcnat + 10'] : [];
    return rng.pick([...named, '-100', '100', '-150', '0', '50', '-199', '10', '-95', '105', '200']);
  }
  const named = ['raw', 'mangle', 'filter', 'security', 'raw + 1', 'mangle - 5', 'filter + 10', 'security - 1', 'filter - 11'];
  if (hook === 'prerouting') named.push('dstnat', 'dstnat + 3');
  if (hook === 'postrouting') named.push('srcnat', 'srcnat - 10');
  return rng.pick([...named, '-300', '-310', '-290', '-225', '-200', '-150', '-155', '-160', '-161', '-100', '0', '5', '11', '25', '50', '100', '110', '300', '-1']);
}

interface RuleCtx {
  readonly family: Family;
  readonly table: GenTable;
  readonly chain: GenChain;
  /** Hooks from which this chain is reachable (base chains' hooks), with chain types. */
  readonly reach: readonly { type: ChainType; hook: Hook }[];
  readonly laterChains: readonly string[];
}

function l3For(rng: Rng, family: Family): 'ip' | 'ip6' {
  return family === 'inet' ? (rng.chance(0.5) ? 'ip' : 'ip6') : family;
}

function addr(rng: Rng, l3: 'ip' | 'ip6', net: boolean): string {
  if (l3 === 'ip') return net && rng.chance(0.5) ? rng.pick(V4NET) : rng.pick(V4);
  return net && rng.chance(0.5) ? rng.pick(V6NET) : rng.pick(V6);
}

function allows(ctx: RuleCtx, ok: (t: ChainType, h: Hook) => boolean): boolean {
  return ctx.reach.every((r) => ok(r.type, r.hook));
}

/** One rule: matches, then maybe a counter, then maybe an action. */
function rule(rng: Rng, ctx: RuleCtx): string {
  const parts: string[] = [];
  const l3 = l3For(rng, ctx.family);
  let l4: 'tcp' | 'udp' | undefined;
  const useL3 = rng.chance(0.6);
  const n = rng.int(0, 4);
  const l3Sets = ctx.table.sets.filter((s) => !s.map && (s.key === (l3 === 'ip' ? 'ipv4_addr' : 'ipv6_addr')));
  const portSets = ctx.table.sets.filter((s) => !s.map && s.key === 'inet_service');
  for (let i = 0; i < n; i++) {
    const kind = rng.weighted<string>([
      [useL3 ? 4 : 0, 'addr'], [3, 'l4'], [2, 'mark'], [2, 'ct'], [2, 'owner'], [2, 'iface'], [1, 'misc'], [1, 'set'], [1, 'concat'],
    ]);
    switch (kind) {
      case 'addr': {
        const dir = rng.pick(['saddr', 'daddr']);
        const form = rng.int(0, 4);
        if (form === 0) parts.push(`${l3} ${dir} ${addr(rng, l3, true)}`);
        else if (form === 1) parts.push(`${l3} ${dir} != ${addr(rng, l3, true)}`);
        else if (form === 2) parts.push(`${l3} ${dir} { ${rng.sample(l3 === 'ip' ? [...V4, ...V4NET] : [...V6, ...V6NET], rng.int(1, 4)).join(', ')} }`);
        else if (form === 3 && l3 === 'ip') parts.push(`ip ${dir} 10.0.${rng.int(0, 3)}.${rng.int(1, 9)}-10.0.${rng.int(4, 9)}.${rng.int(1, 200)}`);
        else if (l3Sets.length > 0) parts.push(`${l3} ${dir} ${rng.chance(0.3) ? '!= ' : ''}@${rng.pick(l3Sets).name}`);
        else parts.push(`${l3} ${dir} ${addr(rng, l3, false)}`);
        break;
      }
      case 'l4': {
        if (l4) {
          parts.push(`${l4} ${rng.pick(['sport', 'dport'])} ${rng.chance(0.3) ? '!= ' : ''}${rng.chance(0.5) ? rng.pick(PORTS) : portSet(rng)}`);
          break;
        }
        l4 = rng.chance(0.7) ? 'tcp' : 'udp';
        const form = rng.int(0, 6);
        if (form === 0) parts.push(`meta l4proto ${l4}`);
        else if (form === 1) parts.push(`meta l4proto ${l4} ${l4} dport ${rng.pick(PORTS)}`);
        else if (form === 2) parts.push(`${l4} dport ${rng.chance(0.4) ? '!= ' : ''}${portSet(rng)}`);
        else if (form === 3) parts.push(`${l4} sport ${rng.int(1, 1023)}-${rng.int(1024, 65535)}`);
        else if (form === 4 && ctx.family === 'ip') parts.push(`ip protocol ${l4} ${l4} dport ${rng.pick(PORTS)}`);
        else if (form === 5 && l4 === 'tcp') parts.push(rng.pick(['tcp flags syn / syn,ack', 'tcp flags syn', 'tcp flags != syn', 'tcp flags { syn, ack }', 'tcp flags == syn,ack']));
        else if (form === 6) parts.push(`meta l4proto ${l4} th dport ${rng.pick(PORTS)}`);
        else parts.push(`${l4} dport ${rng.pick(PORTS)}`);
        if (portSets.length > 0 && rng.chance(0.3)) parts.push(`${l4} dport @${rng.pick(portSets).name}`);
        break;
      }
      case 'mark': {
        const m = rng.int(0, 5);
        if (m === 0) parts.push(`meta mark ${hex(rng)}`);
        else if (m === 1) parts.push(`mark and 0xfff != 0x539`);
        else if (m === 2) parts.push(`meta mark & ${hex(rng)} == ${hex(rng)}`);
        else if (m === 3) parts.push(`ct mark ${rng.chance(0.5) ? '!= ' : ''}${hex(rng)}`);
        else if (m === 4) parts.push(`ct mark and 0xfff == 0x111`);
        else parts.push(`meta mark { ${hex(rng)}, 0x2 }`);
        break;
      }
      case 'ct':
        parts.push(rng.pick(['ct state established,related', 'ct state { established, related }', 'ct state != invalid', 'ct state new', 'ct state invalid',
          'ct status dnat', 'ct direction original', 'ct zone 1', 'ct state new,established', 'ct status { snat, dnat }']));
        break;
      case 'owner':
        if (!allows(ctx, (_t, h) => h === 'output' || h === 'postrouting' || true)) break;
        parts.push(rng.pick(['meta skuid 1337', 'skuid != 1337', 'skgid 1337', 'meta skgid != 0', 'meta skuid { 0, 1000, 1337 }', 'skuid root', 'meta skuid 3']));
        break;
      case 'iface':
        parts.push(rng.pick(['iifname "eth0"', 'oifname lo', 'oifname != lo', 'iifname "veth*"', 'iif lo', 'oif "lo"', 'iifname { "eth0", "lo" }', 'oifname "istioout"']));
        break;
      case 'misc': {
        const opts = ['meta pkttype host', 'meta pkttype { broadcast, multicast }', 'numgen random mod 2 0', 'numgen inc mod 4 offset 1 2', 'ip ttl 64'.replace('ip', l3 === 'ip' ? 'ip' : 'ip6').replace('ttl', l3 === 'ip' ? 'ttl' : 'hoplimit')];
        if (ctx.family === 'inet') opts.push(`meta nfproto ${l3 === 'ip' ? 'ipv4' : 'ipv6'}`);
        if (allows(ctx, (_t, h) => h !== 'postrouting')) opts.push('fib daddr type local', 'fib daddr type != { local, broadcast }');
        if (allows(ctx, (_t, h) => h === 'prerouting' || h === 'input')) opts.push('socket transparent 1', 'fib saddr . iif oif missing');
        if (!l4 && l3 === 'ip' && ctx.family !== 'ip6') opts.push('icmp type echo-request', 'icmp type { echo-request, echo-reply }');
        if (!l4 && l3 === 'ip6' && ctx.family !== 'ip') opts.push('icmpv6 type echo-request');
        parts.push(rng.pick(opts));
        if (parts[parts.length - 1]!.startsWith('icmp')) l4 = 'udp'; // no more l4 matches after icmp
        break;
      }
      case 'set':
        if (ctx.table.sets.length === 0) break;
        {
          const s = rng.pick(ctx.table.sets);
          if (s.map === 'verdict') break;
          if (s.key === 'mark' && !s.map) parts.push(`meta mark @${s.name}`);
        }
        break;
      case 'concat':
        if (useL3 && !l4) {
          l4 = 'tcp';
          parts.push(`${l3} daddr . tcp dport { ${addr(rng, l3, false)} . ${rng.pick(PORTS)}, ${addr(rng, l3, false)} . ${rng.pick(PORTS)} }`);
        }
        break;
    }
  }
  if (rng.chance(0.6)) parts.push(rng.chance(0.3) ? `counter packets ${rng.int(0, 9)} bytes ${rng.int(0, 999)}` : 'counter');
  // An action.
  const actions: [number, () => string | undefined][] = [
    [3, () => rng.pick(['accept', 'drop', 'return', 'continue'])],
    [3, () => (ctx.laterChains.length > 0 ? `${rng.pick(['jump', 'goto'])} ${rng.pick(ctx.laterChains)}` : undefined)],
    [1, () => rng.pick(['log prefix "nfsim: " level info', 'log', 'limit rate 10/second', 'limit rate over 5/minute burst 10 packets', 'log prefix "x" group 2'])],
    [2, () => rng.pick([`meta mark set ${hex(rng)}`, 'meta mark set mark | 0x10', 'ct mark set meta mark', 'ct mark set ct mark and 0xffff0000 or 0x1',
      'meta mark set ct mark', 'ct mark set ct mark & 0xfffff000 |  0x111', 'meta mark set mark and 0xff', 'meta mark set mark ^ 0x3'])],
    [1, () => rng.pick(['ct zone set 1', 'ct zone set 2'])],
    [1, () => (allows(ctx, (t, h) => t === 'filter' && (h === 'prerouting' || h === 'output')) ? 'notrack' : undefined)],
    [1, () => (allows(ctx, (_t, h) => h === 'input' || h === 'forward' || h === 'output') ? rng.pick(['reject', l4 === 'tcp' ? 'reject with tcp reset' : 'reject',
      ctx.family !== 'ip6' && l3 === 'ip' ? 'reject with icmp type host-unreachable' : 'reject', ctx.family !== 'ip' && l3 === 'ip6' ? 'reject with icmpv6 type admin-prohibited' : 'reject',
      ctx.family === 'inet' ? 'reject with icmpx type admin-prohibited' : 'reject']) : undefined)],
    [3, () => {
      if (!allows(ctx, (t) => t === 'nat')) return undefined;
      const opts: string[] = [];
      if (allows(ctx, (_t, h) => h === 'prerouting' || h === 'output')) {
        opts.push(l4 ? `redirect to :${rng.pick(PORTS)}` : 'redirect');
        if (useL3 || ctx.family !== 'inet') {
          const fam = ctx.family === 'inet' ? ` ${l3}` : '';
          const a = addr(rng, l3, false);
          opts.push(`dnat${fam} to ${a}`);
          if (l4) opts.push(`dnat${fam} to ${l3 === 'ip6' ? `[${a}]` : a}:${rng.pick(PORTS)}`);
          if (l4 && l3 === 'ip') opts.push(`dnat${fam} to ${l4} dport map { 80 : 10.0.0.1, 443 : 10.0.0.2 }`);
        }
      }
      if (allows(ctx, (_t, h) => h === 'postrouting')) opts.push('masquerade', 'masquerade random', l4 ? 'masquerade to :1024-2048' : 'masquerade');
      if (allows(ctx, (_t, h) => h === 'postrouting' || h === 'input') && (useL3 || ctx.family !== 'inet')) {
        opts.push(`snat${ctx.family === 'inet' ? ` ${l3}` : ''} to ${addr(rng, l3, false)}`);
      }
      return opts.length > 0 ? rng.pick(opts) : undefined;
    }],
    [1, () => (l4 && allows(ctx, (_t, h) => h === 'prerouting') ? (ctx.family === 'inet' ? `tproxy ${l3} to :15006` : 'tproxy to :15006') + (rng.chance(0.5) ? ' meta mark set 0x539 accept' : '') : undefined)],
    [1, () => {
      const vm = ctx.table.sets.find((s) => s.map === 'verdict' && (s.key === 'inet_service' ? !!l4 : s.key === (l3 === 'ip' ? 'ipv4_addr' : 'ipv6_addr')));
      if (vm && useL3) return vm.key === 'inet_service' ? `${l4} dport vmap @${vm.name}` : `${l3} saddr vmap @${vm.name}`;
      if (l4) return `${l4} dport vmap { 22 : accept, 80 : drop${ctx.laterChains.length > 0 ? `, 443 : jump ${ctx.laterChains[0]}` : ''} }`;
      return undefined;
    }],
    [1, () => 'meta mark set numgen random mod 2 map { 0 : 0x1, 1 : 0x2 }'],
  ];
  if (rng.chance(0.85)) {
    for (let tries = 0; tries < 5; tries++) {
      const a = rng.weighted(actions.map(([w, f]) => [w, f] as const))();
      if (a) {
        parts.push(a);
        break;
      }
    }
  }
  if (parts.length === 0) parts.push('counter');
  if (rng.chance(0.1)) parts.push(`comment "${rng.pick(['istio', 'kube-proxy', 'a b'])}"`);
  return parts.join(' ');
}

function chainName(rng: Rng, i: number): string {
  return rng.pick(['istio-output', 'istio-inbound', 'istio-redirect', 'KUBE-SVC', 'chain', 'svc', 'c']) + `-${i}`;
}

function makeSets(rng: Rng, family: Family): GenSet[] {
  const sets: GenSet[] = [];
  const n = rng.int(0, 3);
  for (let i = 0; i < n; i++) {
    const kind = rng.int(0, 5);
    const name = `s${i}`;
    if (kind === 0 && family !== 'ip6') {
      const interval = rng.chance(0.5);
      const elems = interval ? rng.sample([...V4, ...V4NET.filter((x) => !x.endsWith('/32'))], rng.int(0, 5)) : rng.sample(V4, rng.int(0, 7));
      sets.push({ name, key: 'ipv4_addr', decl: `type ipv4_addr;${interval ? ' flags interval;' : ''}${elems.length ? ` elements = { ${elems.join(', ')} };` : ''}` });
    } else if (kind === 1 && family !== 'ip') {
      const elems = rng.sample(V6, rng.int(0, 3));
      sets.push({ name, key: 'ipv6_addr', decl: `type ipv6_addr;${elems.length ? ` elements = { ${elems.join(', ')} };` : ''}` });
    } else if (kind === 2) {
      const elems = rng.sample(PORTS, rng.int(1, 12));
      sets.push({ name, key: 'inet_service', decl: `type inet_service; elements = { ${elems.join(', ')} };` });
    } else if (kind === 3) {
      sets.push({ name, key: 'inet_service', map: 'verdict', decl: `type inet_service : verdict; elements = { 22 : accept, 53 : drop };` });
    } else if (kind === 4 && family !== 'ip6') {
      sets.push({ name, key: 'ipv4_addr', map: 'verdict', decl: `type ipv4_addr : verdict; elements = { 10.0.0.1 : accept, 10.0.0.2 : drop, 192.168.1.10 : continue };` });
    } else {
      sets.push({ name, key: 'mark', decl: `type mark; elements = { 0x1, 0x539, 1338 };` });
    }
  }
  return sets;
}

function makeTable(rng: Rng, family: Family, name: string): GenTable {
  const sets = makeSets(rng, family);
  const nBase = rng.int(1, 3);
  const chains: GenChain[] = [];
  const usedHooks = new Set<string>();
  for (let i = 0; i < nBase; i++) {
    const type = rng.weighted<ChainType>([[5, 'filter'], [4, 'nat'], [1, 'route']]);
    const hooks: Hook[] = type === 'nat' ? ['prerouting', 'input', 'output', 'postrouting'] : type === 'route' ? ['output'] : ['prerouting', 'input', 'forward', 'output', 'postrouting'];
    const hook = rng.pick(hooks);
    const key = `${type}:${hook}`;
    if (usedHooks.has(key)) continue;
    usedHooks.add(key);
    const name = rng.chance(0.5) && !usedHooks.has(hook) ? hook : `${hook}-${type}`;
    usedHooks.add(name);
    const policy = type === 'filter' && rng.chance(0.2) ? 'drop' : rng.chance(0.2) ? 'accept' : undefined;
    chains.push({ name, base: { type, hook, priority: priorityFor(rng, type, hook), ...(policy ? { policy } : {}) }, rules: [] });
  }
  const nRegular = rng.int(0, 3);
  for (let i = 0; i < nRegular; i++) chains.push({ name: chainName(rng, i), rules: [] });
  const table: GenTable = { family, name, chains, sets };
  // Reachability: base chains jump only to later regular chains, regular chains to later ones.
  const reach = new Map<string, { type: ChainType; hook: Hook }[]>();
  for (const c of chains) if (c.base) reach.set(c.name, [{ type: c.base.type, hook: c.base.hook }]);
  const regular = chains.filter((c) => !c.base);
  chains.forEach((c) => {
    const later = c.base ? regular.map((r) => r.name) : regular.slice(regular.indexOf(c) + 1).map((r) => r.name);
    const myReach = reach.get(c.name) ?? [];
    const nRules = rng.int(0, 5);
    for (let k = 0; k < nRules; k++) {
      const r = rule(rng, { family, table, chain: c, reach: myReach, laterChains: later });
      c.rules.push(r);
      for (const m of r.matchAll(/(?:jump|goto) (\S+)/g)) {
        const list = reach.get(m[1]!) ?? [];
        for (const x of myReach) if (!list.some((y) => y.type === x.type && y.hook === x.hook)) list.push(x);
        reach.set(m[1]!, list);
      }
    }
  });
  return table;
}

function blockForm(t: GenTable, rng: Rng): string {
  let out = `table ${t.family} ${t.name} {\n`;
  for (const s of t.sets) out += `\t${s.map ? 'map' : 'set'} ${s.name} { ${s.decl} }\n`;
  for (const c of t.chains) {
    out += `\tchain ${c.name} {\n`;
    if (c.base) out += `\t\ttype ${c.base.type} hook ${c.base.hook} priority ${c.base.priority};${c.base.policy ? ` policy ${c.base.policy};` : ''}\n`;
    for (const r of c.rules) out += rng.chance(0.1) ? `\t\t${r.replace(' ', ' \\\n\t\t\t')}\n` : `\t\t${r}\n`;
    out += '\t}\n';
  }
  return out + '}\n';
}

function commandForm(t: GenTable, rng: Rng): string {
  const fam = t.family === 'ip' && rng.chance(0.3) ? '' : `${t.family} `;
  let out = `add table ${fam}${t.name}\n`;
  if (rng.chance(0.5)) out += `flush table ${fam}${t.name}\n`;
  for (const s of t.sets) out += `add ${s.map ? 'map' : 'set'} ${fam}${t.name} ${s.name} { ${s.decl} }\n`;
  for (const c of t.chains) {
    if (c.base) out += `add chain ${fam}${t.name} ${c.name} { type ${c.base.type} hook ${c.base.hook} priority ${c.base.priority} ;${c.base.policy ? ` policy ${c.base.policy} ;` : ''} }\n`;
    else out += `add chain ${fam}${t.name} ${c.name}\n`;
  }
  for (const c of t.chains) {
    const written: string[] = [];
    for (const r of c.rules) {
      // knftables writes some rules with `insert … index N` (Istio's builder does).
      if (written.length > 0 && rng.chance(0.2)) {
        const idx = rng.int(0, written.length - 1);
        out += `insert rule ${fam}${t.name} ${c.name} index ${idx} ${r}\n`;
        written.splice(idx, 0, r);
      } else if (rng.chance(0.1)) {
        out += `insert rule ${fam}${t.name} ${c.name} ${r}\n`;
        written.unshift(r);
      } else {
        out += `add rule ${fam}${t.name} ${c.name} ${r}\n`;
        written.push(r);
      }
    }
  }
  return out;
}

/** A seeded nft rule set, in the command or the block form. */
export function generateNftText(seed: number): string {
  const rng = new Rng(seed * 7919 + 17);
  const nTables = rng.int(1, 3);
  const out: string[] = [];
  if (rng.chance(0.2)) out.push('#!/usr/sbin/nft -f\n# generated\n');
  if (rng.chance(0.15)) out.push('define PROXY = 15001\ndefine LOCAL = 127.0.0.1\n');
  const names = new Set<string>();
  for (let i = 0; i < nTables; i++) {
    const family = rng.pick<Family>(['ip', 'ip6', 'inet', 'inet']);
    let name = rng.pick(['istio-proxy-nat', 'istio-ambient-mangle', 'filter', 'kube-proxy', 'nat', 'mangle', 't']);
    while (names.has(`${family} ${name}`)) name += 'x';
    names.add(`${family} ${name}`);
    const t = makeTable(rng, family, name);
    out.push(rng.chance(0.5) ? blockForm(t, rng) : commandForm(t, rng));
  }
  let text = out.join('');
  if (text.includes('define PROXY')) text = text.replace(/redirect to :15001/g, 'redirect to :$PROXY').replace(/ip daddr 127\.0\.0\.1 /g, 'ip daddr $LOCAL ');
  return text;
}

/** A named damage to a text. */
export interface NftMutation {
  readonly text: string;
  readonly kind: string;
  readonly line: number;
}

const MUTATIONS: readonly { kind: string; apply: (line: string, rng: Rng) => string | undefined }[] = [
  { kind: 'drop-token', apply: (l, rng) => { const w = l.split(' '); if (w.length < 3) return undefined; w.splice(rng.int(1, w.length - 1), 1); return w.join(' '); } },
  { kind: 'swap-tokens', apply: (l, rng) => { const w = l.split(' '); if (w.length < 4) return undefined; const i = rng.int(1, w.length - 2); [w[i], w[i + 1]] = [w[i + 1]!, w[i]!]; return w.join(' '); } },
  { kind: 'bad-port', apply: (l) => (/dport \d+/.test(l) ? l.replace(/dport \d+/, 'dport 70000') : undefined) },
  { kind: 'bad-address', apply: (l) => (/\b10\.0\.0\.\d+/.test(l) ? l.replace(/\b10\.0\.0\.\d+/, '10.0.0.300') : undefined) },
  { kind: 'bad-prefix', apply: (l) => (/\/(8|16|24)\b/.test(l) ? l.replace(/\/(8|16|24)\b/, '/33') : undefined) },
  { kind: 'missing-chain', apply: (l) => (/(jump|goto) \S+/.test(l) ? l.replace(/(jump|goto) \S+/, '$1 nowhere') : undefined) },
  { kind: 'nat-in-filter', apply: (l) => (/type filter hook (input|forward)/.test(l) ? undefined : / (accept|drop)$/.test(l) && !/type /.test(l) ? l.replace(/ (accept|drop)$/, ' meta l4proto tcp redirect to :15001') : undefined) },
  { kind: 'wrong-family-addr', apply: (l) => (/ip saddr [0-9.]+/.test(l) ? l.replace(/ip saddr [0-9.]+/, 'ip saddr fd00::1') : undefined) },
  { kind: 'conflict', apply: (l) => (/tcp dport/.test(l) ? l.replace(/tcp dport/, 'udp sport 1 tcp dport') : undefined) },
  { kind: 'unknown-keyword', apply: (l) => (/counter/.test(l) ? l.replace('counter', 'countr') : undefined) },
  { kind: 'bad-hook', apply: (l) => (/type nat hook (output|prerouting)/.test(l) ? l.replace(/type nat hook (output|prerouting)/, 'type nat hook forward') : /type route hook output/.test(l) ? l.replace('type route hook output', 'type route hook input') : undefined) },
  { kind: 'bad-priority-name', apply: (l) => (/priority (filter|mangle|raw)/.test(l) ? l.replace(/priority (filter|mangle|raw)/, 'priority srcnat') : /priority -?\d+/.test(l) ? l.replace(/priority -?\d+/, 'priority dstnat') : undefined) },
  { kind: 'unknown-set', apply: (l) => (/@s\d/.test(l) ? l.replace(/@s\d/, '@nosuchset') : undefined) },
  { kind: 'masquerade-in-output', apply: (l) => (/ accept$/.test(l) && !/type /.test(l) ? l.replace(/ accept$/, ' masquerade') : undefined) },
  { kind: 'tproxy-no-l4', apply: (l) => (/ drop$/.test(l) && !/type /.test(l) && !/(tcp|udp|l4proto)/.test(l) ? l.replace(/ drop$/, ' tproxy ip to :15006') : undefined) },
  { kind: 'bad-mark', apply: (l) => (/mark set 0x[0-9a-f]+/.test(l) ? l.replace(/mark set 0x[0-9a-f]+/, 'mark set 0x1ffffffff') : undefined) },
  { kind: 'bad-state', apply: (l) => (/ct state \S+/.test(l) ? l.replace(/ct state (\S+)/, 'ct state establised') : undefined) },
  { kind: 'unbalanced-brace', apply: (l) => (l.includes('}') ? l.replace('}', '') : undefined) },
  { kind: 'policy-on-regular', apply: (l) => (/^add chain \S+ \S+( \S+)?$/.test(l) ? `${l} { policy drop ; }` : undefined) },
  { kind: 'dup-rule-line', apply: (l) => l },
];

/** Damages one line of a valid text (seeded); `line` is the 1-based line changed. */
export function mutateNft(text: string, seed: number): NftMutation {
  const rng = new Rng(seed * 104729 + 3);
  const lines = text.split('\n');
  for (let tries = 0; tries < 50; tries++) {
    const m = rng.pick(MUTATIONS);
    const i = rng.int(0, lines.length - 1);
    const line = lines[i]!;
    // Continuation lines are left alone: their errors depend on bison's lookahead, not on the rule.
    if (line.trim() === '' || line.trim().startsWith('#') || line.endsWith('\\') || (lines[i - 1] ?? '').endsWith('\\')) continue;
    const out = m.apply(line, rng);
    if (out === undefined || out === line && m.kind !== 'dup-rule-line') continue;
    const copy = [...lines];
    if (m.kind === 'dup-rule-line') copy.splice(i, 0, line);
    else copy[i] = out;
    return { text: copy.join('\n'), kind: m.kind, line: i + 1 };
  }
  return { text: text + 'add rule ip nosuch table x accept\n', kind: 'missing-table', line: lines.length };
}
