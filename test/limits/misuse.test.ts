// Misuse of the library from plain JavaScript: every public entry point is called with a valid
// argument list, then with each field of each option object (and each argument) replaced by a
// wrong value — another type, null, an unknown enum word, or removed. Each call must answer
// normally or throw a NetfilterSimError; a raw TypeError (or any other error) fails. A wrong
// *type* where the valid value is an object, an array, a string, a number or a boolean must be
// refused, and a BAD_ARGUMENT must name the field by its path (`options.interfaces`).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
// The built package: NetnsPool's workers run dist/engine/batch/worker.js.
import * as L from '../../dist/index.js';
import * as A from '../../dist/arbitraries/index.js';
import { NetfilterSimError } from '../../dist/index.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures');
const SNAPSHOT = readFileSync(join(FIXTURES, 'cluster/two-nodes.yaml'), 'utf8');
const KUBE_PROXY = readFileSync(join(FIXTURES, 'cluster/kube-proxy.rules'), 'utf8');
const SAVE = '*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp --dport 80 -j REDIRECT --to-ports 4140\nCOMMIT\n';
const NFT = 'table inet t {\n  chain out {\n    type filter hook output priority 0; policy accept;\n    tcp dport 81 reject\n  }\n}\n';
const POD = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: app\n    image: nginx\n    ports:\n    - containerPort: 8080\nstatus:\n  podIP: 10.0.0.5\n';

interface Entry {
  readonly name: string;
  /** Names of the arguments, as the messages name them. */
  readonly params: readonly string[];
  readonly args: () => unknown[];
  readonly call: (...args: unknown[]) => unknown;
  /** Paths whose value may be of several kinds: path → the kinds accepted beside the valid value's. */
  readonly accepts?: Readonly<Record<string, readonly Kind[]>>;
  /**
   * Arguments that are the library's own output (an explore result): a changed field there must
   * not crash, but it need not be refused.
   */
  readonly output?: readonly string[];
  /** Paths not mutated (a value the API takes as-is, e.g. a parsed rule set). */
  readonly skip?: readonly string[];
}

type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null' | 'undefined' | 'function';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as Kind;
}

const ns = (): L.Netns => new L.Netns({});
const mesh = (): L.MeshResult => L.simulateMesh({ mesh: 'linkerd' });
const trace = (): readonly L.TraceEvent[] => new L.Netns({ rules: SAVE }).connect({ from: 'local', uid: 1000, dst: '10.0.0.9:80' }).trace ?? [];
const explored = (): L.ExploreResult => L.explore({ from: 'local', rules: SAVE, family: 4 });
const cluster = (): L.Cluster => new L.Cluster({ snapshot: SNAPSHOT, kubeProxy: 'none', netpol: 'none', nodeRules: { 'worker-1': KUBE_PROXY, 'worker-2': KUBE_PROXY } });
const ruleset = (): L.Ruleset => L.parseIptablesSaveOrThrow(SAVE);

const NETNS_ACCEPTS = {
  'options.rules': ['object'],
  'options.rules6': ['object'],
  'options.nft': ['object', 'array'],
  'options.interfaces': ['array'],
  'options.gateway': ['array'],
  'options.listen[0]': ['string', 'object'],
  'options.listen[1]': ['number', 'object'],
  'options.ipsets': ['array'],
} as const;

const ENTRIES: readonly Entry[] = [
  {
    name: 'new Netns',
    params: ['options'],
    args: () => [{ rules: SAVE, rules6: SAVE.replace('*nat', '*nat'), nft: NFT, listen: [4140, '127.0.0.1:8080'], interfaces: { eth0: ['10.0.0.2/24', 'fd00::2/64'] }, gateway: '10.0.0.1', routes: [{ dst: '10.9.0.0/16', dev: 'eth0' }], ipRules: [{ fwmark: 1, table: 100 }], routeLocalnet: false, ipForward: false, peers: { '10.0.0.9': [80] }, evaluator: 'lowered', seed: 1, clock: 0, conntrack: true, conntrackMax: 100, ipsets: '', localPortRange: [32768, 60999], outcomeCache: true, lenient: false }],
    call: (o) => new L.Netns(o as L.NetnsOptions),
    accepts: NETNS_ACCEPTS,
  },
  {
    name: 'Netns.connect (local)',
    params: ['spec', 'options'],
    args: () => [{ from: 'local', uid: 1000, gid: 1000, groups: [1000], dst: '10.0.0.9:80', sport: 40000, proto: 'tcp', src: '10.0.0.2', transparent: false, mark: 1 }, { trace: true, close: false }],
    call: (s, o) => ns().connect(s as L.ConnectSpec, o as L.CallOptions),
  },
  {
    name: 'Netns.connect (remote)',
    params: ['spec', 'options'],
    args: () => [{ from: 'remote', src: '10.0.0.9', dst: '10.0.0.2:80', sport: 40000, iface: 'eth0', proto: 'tcp' }, { trace: false }],
    call: (s, o) => ns().connect(s as L.ConnectSpec, o as L.CallOptions),
  },
  {
    name: 'Netns.connectAll',
    params: ['spec', 'options'],
    args: () => [{ from: 'local', uid: 0, dst: '10.0.0.9:80' }, {}],
    call: (s, o) => ns().connectAll(s as L.ConnectSpec, o as L.CallOptions),
  },
  {
    name: 'Netns.trace',
    params: ['packet', 'options'],
    args: () => ['tcp > 10.0.0.9:80 uid 1000', {}],
    call: (p, o) => ns().trace(p as string, o as L.CallOptions),
    accepts: { packet: ['object'] },
  },
  { name: 'Netns.advance', params: ['seconds'], args: () => [1], call: (s) => ns().advance(s as number) },
  { name: 'Netns.counters', params: ['family'], args: () => [4], call: (f) => ns().counters(f as 4) },
  { name: 'parsePacketSpec', params: ['packet'], args: () => ['tcp > 10.0.0.9:80'], call: (p) => L.parsePacketSpec(p as string) },
  { name: 'parseEndpoint', params: ['text', 'requirePort'], args: () => ['10.0.0.9:80', true], call: (p, r) => L.parseEndpoint(p as string, r as boolean) },
  { name: 'needsConntrack', params: ['ruleset'], args: () => [ruleset()], call: (r) => L.needsConntrack(r as L.Ruleset), skip: ['ruleset.tables'] },
  {
    name: 'connectBatch',
    params: ['options', 'probes', 'batch'],
    args: () => [{ rules: SAVE }, [{ from: 'local', uid: 1000, dst: '10.0.0.9:80' }], { workers: 1, trace: false }],
    call: (o, p, b) => L.connectBatch(o as L.NetnsOptions, p as L.ConnectSpec[], b as L.BatchOptions),
    accepts: { 'options.rules': ['object'] },
  },
  {
    name: 'new NetnsPool',
    params: ['options', 'pool'],
    args: () => [{ rules: SAVE }, { workers: 1 }],
    call: async (o, p) => {
      const pool = new L.NetnsPool(o as L.NetnsOptions, p as L.PoolOptions);
      await pool.close();
    },
    accepts: { 'options.rules': ['object'] },
  },
  {
    name: 'NetnsPool.connectBatch',
    params: ['probes', 'options'],
    args: () => [[{ from: 'local', uid: 1000, dst: '10.0.0.9:80' }], { trace: true }],
    call: async (p, b) => {
      const pool = new L.NetnsPool({ rules: SAVE }, { workers: 1 });
      try {
        return await pool.connectBatch(p as L.ConnectSpec[], b as L.BatchOptions);
      } finally {
        await pool.close();
      }
    },
  },
  {
    name: 'explore',
    params: ['options'],
    args: () => [{ from: 'local', rules: SAVE, proto: 'tcp', family: 4, sport: 41000, maxRegions: 100000, listen: [4140] }],
    call: (o) => L.explore(o as L.ExploreOptions),
    accepts: NETNS_ACCEPTS,
  },
  {
    name: 'classOf',
    params: ['result', 'probe'],
    args: () => [explored(), { uid: 1000, gid: 1000, dst: '10.0.0.9:80' }],
    call: (r, p) => L.classOf(r as L.ExploreResult, p as { dst: string }),
    skip: ['result.classes', 'result.options', 'result.fields'],
    output: ['result'],
  },
  { name: 'renderExplore', params: ['result'], args: () => [explored()], call: (r) => L.renderExplore(r as L.ExploreResult), skip: ['result.classes', 'result.options', 'result.fields'], output: ['result'] },
  {
    name: 'check',
    params: ['ruleset', 'options'],
    args: () => [ruleset(), { backend: 'nft' }],
    call: (r, o) => L.check(r as L.Ruleset, o as L.CheckOptions),
    skip: ['ruleset.tables'],
  },
  { name: 'parseIptablesSave', params: ['text', 'options'], args: () => [SAVE, { family: 4 }], call: (t, o) => L.parseIptablesSave(t as string, o as L.SaveParseOptions) },
  { name: 'parseIptablesSaveOrThrow', params: ['text', 'options'], args: () => [SAVE, { family: 4 }], call: (t, o) => L.parseIptablesSaveOrThrow(t as string, o as L.SaveParseOptions) },
  { name: 'parseIptablesArgv', params: ['argv', 'options'], args: () => [['-A', 'INPUT', '-j', 'ACCEPT'], { family: 4, mode: 'strict' }], call: (a, o) => L.parseIptablesArgv(a as string[], o as L.CommandOptions) },
  { name: 'formatIptablesSave', params: ['text', 'options'], args: () => [SAVE, { strict: true, family: 4 }], call: (t, o) => L.formatIptablesSave(t as string, o as L.FormatOptions) },
  { name: 'printIptablesSave', params: ['ruleset'], args: () => [ruleset()], call: (r) => L.printIptablesSave(r as L.Ruleset), skip: ['ruleset.tables'] },
  { name: 'parseCidr', params: ['text', 'family'], args: () => ['10.0.0.0/8', 4], call: (t, f) => L.parseCidr(t as string, f as 4) },
  { name: 'parseAddress', params: ['text', 'family'], args: () => ['10.0.0.1', 4], call: (t, f) => L.parseAddress(t as string, f as 4) },
  { name: 'parseNftRuleset', params: ['text', 'options'], args: () => [NFT, {}], call: (t, o) => L.parseNftRuleset(t as string, o as L.NftParseOptions) },
  { name: 'formatNftRuleset', params: ['text', 'options'], args: () => [NFT, {}], call: (t, o) => L.formatNftRuleset(t as string, o as object) },
  { name: 'checkNftRuleset', params: ['ruleset', 'options'], args: () => [L.parseNftRulesetOrThrow(NFT), {}], call: (r, o) => L.checkNftRuleset(r as L.NftRuleset, o as L.NftCheckOptions), skip: ['ruleset.tables'], output: ['ruleset'] },
  { name: 'detectRulesSyntax', params: ['text'], args: () => [NFT], call: (t) => L.detectRulesSyntax(t as string) },
  {
    name: 'compileLinkerd',
    params: ['config', 'options'],
    args: () => [{ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, ipv6: false, portsToRedirect: [80], inboundPortsToIgnore: ['4190'], outboundPortsToIgnore: ['443'], subnetsToIgnore: ['10.0.0.0/8'] }, { timestamp: 1 }],
    call: (c, o) => L.compileLinkerd(c as object, o as object),
  },
  {
    name: 'compileIstio',
    params: ['config', 'options'],
    args: () => [{ proxyPort: '15001', inboundCapturePort: '15006', proxyUID: '1337', inboundPortsInclude: '*', outboundIPRangesInclude: '*' }, {}],
    call: (c, o) => L.compileIstio(c as object, o as object),
  },
  { name: 'compileIstioAmbient', params: ['input'], args: () => [{ config: {}, pod: {}, host: false }], call: (i) => L.compileIstioAmbient(i as object) },
  { name: 'compileIstioCni', params: ['input'], args: () => [{ pod: L.readPod(POD), enableIPv6: false, env: {}, excludeNamespaces: ['kube-system'] }], call: (i) => L.compileIstioCni(i as L.IstioCniInput), skip: ['input.pod'] },
  { name: 'readPod', params: ['text'], args: () => [POD], call: (t) => L.readPod(t as string) },
  {
    name: 'compileKubeProxy',
    params: ['snapshot', 'node', 'options'],
    args: () => [L.readSnapshot(SNAPSHOT), 'worker-1', { mode: 'iptables' }],
    call: (s, n, o) => L.compileKubeProxy(s as L.Snapshot, n as string, o as L.KubeProxyOptions),
    skip: ['snapshot'],
  },
  {
    name: 'compileCniNodeRules',
    params: ['snapshot', 'node', 'options'],
    args: () => [L.readSnapshot(SNAPSHOT), 'worker-1', {}],
    call: (s, n, o) => L.compileCniNodeRules(s as L.Snapshot, n as string, o as L.CniNodeRulesOptions),
    skip: ['snapshot'],
  },
  {
    name: 'compileNetworkPolicy',
    params: ['snapshot', 'node', 'options'],
    args: () => [L.readSnapshot(SNAPSHOT), 'worker-1', { implementation: 'kube-router' }],
    call: (s, n, o) => L.compileNetworkPolicy(s as L.Snapshot, n as string, o as L.CompileNetworkPolicyOptions),
    skip: ['snapshot'],
  },
  { name: 'readSnapshot', params: ['snapshot'], args: () => [SNAPSHOT], call: (i) => L.readSnapshot(i as string), accepts: { snapshot: ['object', 'array'] } },
  {
    name: 'new Cluster',
    params: ['options'],
    args: () => [{ snapshot: SNAPSHOT, kubeProxy: 'none', netpol: 'none', nodeRules: { 'worker-1': KUBE_PROXY } }],
    call: (o) => new L.Cluster(o as L.ClusterOptions),
    accepts: { 'options.snapshot': ['object', 'array'], 'options.nodeRules.worker-1': ['array'] },
  },
  {
    name: 'Cluster.connect',
    params: ['spec', 'options'],
    args: () => [{ from: 'shop/client', to: 'shop/web-2', port: 80, proto: 'tcp' }, { trace: false }],
    call: (s, o) => cluster().connect(s as L.ClusterConnectSpec, o as object),
  },
  { name: 'Cluster.reach', params: ['options'], args: () => [{ port: 80, proto: 'tcp', to: 'pod', namespaces: ['shop'] }], call: (o) => cluster().reach(o as L.ReachOptions) },
  {
    name: 'simulateMesh',
    params: ['options'],
    args: () => [{ mesh: 'linkerd', dst: '10.0.0.9:80', cni: false, nativeSidecars: false, uid: 1000, proto: 'tcp', mtls: 'permissive', ambient: false, kubelet: false }],
    call: (o) => L.simulateMesh(o as L.MeshScenarioOptions),
    accepts: { 'options.ambient': ['string'], 'options.cniNotReady': ['string'] },
  },
  { name: 'simulateMeshAllPorts', params: ['options'], args: () => [{ mesh: 'istio', uid: 1000 }], call: (o) => L.simulateMeshAllPorts(o as L.MeshScenarioOptions) },
  { name: 'renderMesh', params: ['result', 'format'], args: () => [mesh(), 'text'], call: (r, f) => L.renderMesh(r as L.MeshResult, f as L.MeshFormat), skip: ['result'] },
  { name: 'renderTrace', params: ['trace', 'format', 'options'], args: () => [trace(), 'text', { color: false }], call: (t, f, o) => L.renderTrace(t as L.TraceEvent[], f as L.TraceFormat, o as L.RenderOptions), skip: ['trace'] },
  { name: 'renderTraceText', params: ['trace', 'options'], args: () => [trace(), { color: false }], call: (t, o) => L.renderTraceText(t as L.TraceEvent[], o as L.RenderOptions), skip: ['trace'] },
  { name: 'renderOutcome', params: ['result', 'options'], args: () => [ns().connect({ from: 'local', uid: 0, dst: '10.0.0.9:80' }), {}], call: (r, o) => L.renderOutcome(r as L.ConnectResult, o as L.RenderOptions), skip: ['result.steps', 'result.trace'], output: ['result'] },
  { name: 'linkerdCapture', params: ['config'], args: () => [{ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102 }], call: (c) => L.linkerdCapture(c as object) },
  { name: 'istioCapture', params: ['config'], args: () => [{ proxyUID: '1337' }], call: (c) => L.istioCapture(c as object) },
  { name: 'arbitraries.cidr', params: ['constraints'], args: () => [{ family: 4 }], call: (c) => A.cidr(c as A.CidrConstraints) },
  { name: 'arbitraries.portRange', params: ['constraints'], args: () => [{}], call: (c) => A.portRange(c as A.PortRangeConstraints) },
  { name: 'arbitraries.connection', params: ['constraints'], args: () => [{ protocols: ['tcp'] }], call: (c) => A.connection(c as A.ConnectionConstraints) },
  { name: 'arbitraries.rulesetText', params: ['constraints'], args: () => [{ tables: ['nat'] }], call: (c) => A.rulesetText(c as A.RulesetTextConstraints) },
  { name: 'arbitraries.linkerdConfig', params: ['constraints'], args: () => [{}], call: (c) => A.linkerdConfig(c as A.LinkerdConfigConstraints) },
  { name: 'arbitraries.pod', params: ['constraints'], args: () => [{}], call: (c) => A.pod(c as A.PodConstraints) },
];

/** The wrong values tried at each path. */
const WRONG: readonly unknown[] = [null, 5, 'zz-not-valid', true, [], {}, -1, Number.NaN];

interface Mutation {
  readonly path: string;
  readonly args: unknown[];
  readonly valid: unknown;
  readonly wrong: unknown;
}

/** Paths of the plain values inside `v` (objects and arrays, first two elements), to depth 3. */
function paths(v: unknown, path: string, depth: number, skip: readonly string[], out: { path: string; at: (string | number)[] }[], at: (string | number)[]): void {
  if (skip.includes(path)) return;
  out.push({ path, at });
  if (depth === 0) return;
  if (Array.isArray(v)) v.slice(0, 2).forEach((e, i) => paths(e, `${path}[${i}]`, depth - 1, skip, out, [...at, i]));
  else if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    for (const k of Object.keys(v)) paths((v as Record<string, unknown>)[k], `${path}.${k}`, depth - 1, skip, out, [...at, k]);
  }
}

function setAt(args: unknown[], at: readonly (string | number)[], value: unknown, remove: boolean): unknown[] {
  const copy = structuredClone(args.map((a) => (a instanceof L.Cluster || typeof a === 'function' ? a : a))) as unknown[];
  let o: Record<string | number, unknown> = copy as unknown as Record<string | number, unknown>;
  for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = at[at.length - 1]!;
  if (remove && !Array.isArray(o)) delete o[last];
  else o[last] = value;
  return copy;
}

function mutations(e: Entry): Mutation[] {
  const base = e.args();
  const ps: { path: string; at: (string | number)[] }[] = [];
  base.forEach((a, i) => paths(a, e.params[i]!, 3, e.skip ?? [], ps, [i]));
  const out: Mutation[] = [];
  for (const { path, at } of ps) {
    let valid: unknown = base;
    for (const k of at) valid = (valid as Record<string | number, unknown>)[k];
    for (const wrong of WRONG) out.push({ path, args: setAt(base, at, wrong, false), valid, wrong });
    out.push({ path, args: setAt(base, at, undefined, true), valid, wrong: undefined });
  }
  return out;
}

async function outcome(e: Entry, args: unknown[]): Promise<{ error: unknown } | { ok: true }> {
  try {
    await e.call(...args);
    return { ok: true };
  } catch (error) {
    return { error };
  }
}

describe('every public entry point answers misuse with its own errors', () => {
  it.each(ENTRIES.map((e) => [e.name, e] as const))('%s: the valid call answers', async (_n, e) => {
    const r = await outcome(e, e.args());
    expect('error' in r ? String((r as { error: unknown }).error) : 'ok').toBe('ok');
  });

  it.each(ENTRIES.map((e) => [e.name, e] as const))('%s: each wrong field is a typed error naming it', { timeout: 120_000 }, async (_n, e) => {
    const problems: string[] = [];
    for (const m of mutations(e)) {
      const r = await outcome(e, m.args);
      const shown = `${m.path} = ${m.wrong === undefined ? '(removed)' : JSON.stringify(m.wrong)}`;
      if ('error' in r) {
        const err = r.error;
        if (!(err instanceof NetfilterSimError)) {
          problems.push(`${shown}: raw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
          continue;
        }
        if (err.code === 'BAD_ARGUMENT' && !err.message.includes(m.path.replace(/\[\d+\]$/, ''))) problems.push(`${shown}: BAD_ARGUMENT does not name ${m.path}: ${err.message}`);
        continue;
      }
      // Answered: only a value of the valid kind (or one the field also takes) may be.
      const wk = kindOf(m.wrong);
      const vk = kindOf(m.valid);
      const also = e.accepts?.[m.path] ?? [];
      const sameKind = wk === vk || (wk === 'number' && vk === 'number');
      if (m.wrong === undefined || sameKind || also.includes(wk)) continue;
      if (e.output?.some((o) => m.path === o || m.path.startsWith(`${o}.`))) continue;
      problems.push(`${shown}: accepted (the valid value is ${vk})`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the misuses users met, each named', () => {
  const message = async (f: () => unknown): Promise<string> => {
    try {
      await f();
      return 'no error';
    } catch (e) {
      return e instanceof NetfilterSimError ? `${e.code}: ${e.message}` : `raw ${String(e)}`;
    }
  };

  it.each([
    ['connect from remote without src', () => new L.Netns({}).connect({ from: 'remote', dst: '10.0.0.2:80' } as unknown as L.ConnectSpec), 'BAD_ARGUMENT: spec.src must be a string, not undefined'],
    ['connect from "lokal"', () => new L.Netns({}).connect({ from: 'lokal', uid: 0, dst: '10.0.0.2:80' } as unknown as L.ConnectSpec), 'BAD_ARGUMENT: spec.from must be "local" or "remote", not "lokal"'],
    ['interfaces: 5', () => new L.Netns({ interfaces: 5 } as unknown as L.NetnsOptions), 'BAD_ARGUMENT: options.interfaces must be an object or an array (or nothing), not an integer'],
    ['rules: 5', () => new L.Netns({ rules: 5 } as unknown as L.NetnsOptions), 'BAD_ARGUMENT: options.rules must be a string or an object (or nothing), not an integer'],
    ['listen: "4140"', () => new L.Netns({ listen: '4140' } as unknown as L.NetnsOptions), 'BAD_ARGUMENT: options.listen must be an array (or nothing), not a string'],
    ['explore family 5', () => L.explore({ from: 'local', family: 5 } as unknown as L.ExploreOptions), 'BAD_ARGUMENT: options.family must be 4 or 6, not 5'],
    ['an interface address that is a number', () => new L.Netns({ interfaces: { eth0: [5] } } as unknown as L.NetnsOptions), 'BAD_ARGUMENT: options.interfaces.eth0[0] must be a string, not an integer'],
    ['a batch probe without dst', () => L.connectBatch({}, [{ from: 'local', uid: 0 } as unknown as L.ConnectSpec]), 'BAD_ARGUMENT: probes[0].dst must be a string, not undefined'],
    ['a mesh verdict under mtls "strikt"', () => L.simulateMesh({ mesh: 'istio', mtls: 'strikt' } as unknown as L.MeshScenarioOptions), 'BAD_ARGUMENT: options.mtls must be "permissive" or "strict", not "strikt"'],
    ['a linkerd port list given as a string', () => L.compileLinkerd({ portsToRedirect: '80' } as unknown as object), 'BAD_ARGUMENT: config.portsToRedirect must be an array, not a string'],
  ])('%s', async (_n, f, want) => {
    expect(await message(f as () => unknown)).toBe(want);
  });
});
