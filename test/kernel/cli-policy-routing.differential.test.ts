// `connect --rule/--route/--listen …,transparent,uid=N/--probes` against the kernel: the same
// rules, policy routing (`ip rule add …`, `ip route add …` with the flags' own arguments),
// IP_TRANSPARENT and owned listeners are set up in a real pod namespace, the same probes are made
// in order in one namespace, and each line of `connect --probes FILE --json` must agree with the
// kernel on outcome, address, port and SO_ORIGINAL_DST. The simulator side goes through the CLI.
import { expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { describeKernel, kernelConnectMany } from './harness.js';
import type { KernelCase, KernelConnectReport, KernelListener, KernelProbe } from './harness.js';

interface Case {
  readonly name: string;
  readonly rules4: string;
  /** `--rule` arguments (kernel: `ip rule add ARGS`). */
  readonly rules: readonly string[];
  /** `--route` arguments (kernel: `ip route add ARGS`). */
  readonly routes: readonly string[];
  readonly listeners: readonly KernelListener[];
  readonly probes: readonly KernelProbe[];
}

const MANGLE_TPROXY = [
  '*mangle',
  ':PREROUTING ACCEPT [0:0]',
  ':INPUT ACCEPT [0:0]',
  ':FORWARD ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':POSTROUTING ACCEPT [0:0]',
  '-A PREROUTING -d 10.9.9.0/24 -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1',
  'COMMIT',
  '',
].join('\n');
const OWNER_DROP = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m owner --uid-owner 1337 -j DROP\nCOMMIT\n';
const POLICY = { rules: ['fwmark 1 lookup 100'], routes: ['local default dev lo table 100'] };
const remote = (dst: string): KernelProbe => ({ from: 'remote', src: '10.1.0.5', dst });
const local = (uid: number, dst: string): KernelProbe => ({ from: 'local', uid, dst });
const TPROXY_PROBES = [remote('10.9.9.9:80'), remote('10.9.9.10:443'), remote('10.0.0.2:15006'), local(1000, '10.0.0.2:15006')];

const CASES: Case[] = [
  { name: 'TPROXY with fwmark policy routing to a transparent listener owned by 1337', rules4: MANGLE_TPROXY, ...POLICY, listeners: [{ port: 15006, transparent: true, uid: 1337 }], probes: TPROXY_PROBES },
  { name: 'TPROXY with policy routing, listener without IP_TRANSPARENT', rules4: MANGLE_TPROXY, ...POLICY, listeners: [{ port: 15006, uid: 1337 }], probes: TPROXY_PROBES },
  { name: 'TPROXY to a transparent listener without the policy rule', rules4: MANGLE_TPROXY, rules: [], routes: ['local default dev lo table 100'], listeners: [{ port: 15006, transparent: true }], probes: TPROXY_PROBES },
  { name: 'TPROXY with the rule in a table without the local route', rules4: MANGLE_TPROXY, rules: ['fwmark 0x1/0x1 pref 100 lookup 200'], routes: ['local default dev lo table 100'], listeners: [{ port: 15006, transparent: true }], probes: TPROXY_PROBES },
  {
    name: 'owned listeners: the SYN-ACK of the listener owned by 1337 is dropped by an owner rule',
    rules4: OWNER_DROP, rules: [], routes: [],
    listeners: [{ port: 8080, uid: 1337 }, { port: 8081, uid: 1000 }, { port: 8082 }],
    probes: [local(1000, '10.0.0.2:8080'), local(1000, '10.0.0.2:8081'), local(0, '127.0.0.1:8082'), remote('10.0.0.2:8080'), remote('10.0.0.2:8081')],
  },
  {
    name: 'recent across the probes of one namespace: the third SYN within 60 s is dropped',
    rules4: '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n'
      + '-A INPUT -p tcp -m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN -m recent --update --seconds 60 --hitcount 2 --name ssh --mask 255.255.255.255 --rsource -j DROP\n'
      + '-A INPUT -p tcp -m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN -m recent --set --name ssh --mask 255.255.255.255 --rsource\nCOMMIT\n',
    rules: [], routes: [],
    listeners: [{ port: 22 }],
    probes: [remote('10.0.0.2:22'), remote('10.0.0.2:22'), remote('10.0.0.2:22'), local(0, '10.0.0.2:22')],
  },
];

/** The listener as a `--listen` value. */
function listenFlag(l: KernelListener): string {
  return [l.address === undefined ? String(l.port) : `${l.address}:${l.port}`, ...(l.transparent ? ['transparent'] : []), ...(l.uid === undefined ? [] : [`uid=${l.uid}`])].join(',');
}

/** The probe as a line of a `--probes` file. */
function probeLine(p: KernelProbe): string {
  return p.from === 'local' ? `--uid ${p.uid} --dst ${p.dst}` : `--from remote --src ${p.src} --dst ${p.dst}`;
}

interface View {
  readonly outcome: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
}

const view = (r: View): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

async function viaCli(c: Case): Promise<{ code: number; views: View[]; err: string }> {
  const args = ['connect', '--rules', 'pod.rules', '--probes', 'probes.txt', '--json'];
  for (const l of c.listeners) args.push('--listen', listenFlag(l));
  for (const r of c.rules) args.push('--rule', r);
  for (const r of c.routes) args.push('--route', r);
  const io = memoryIO({ 'pod.rules': c.rules4, 'probes.txt': `# ${c.name}\n${c.probes.map(probeLine).join('\n')}\n` });
  const code = await run(args, io);
  const views = io.out.split('\n').filter((l) => l !== '').map((l) => view(JSON.parse(l) as View));
  return { code, views, err: io.err };
}

describeKernel('connect --rule/--route/--listen transparent,uid/--probes against the kernel', () => {
  let kernel: Promise<KernelConnectReport[]> | undefined;
  const kernelReports = (): Promise<KernelConnectReport[]> => {
    kernel ??= kernelConnectMany(CASES.map((c): KernelCase => ({
      rules4: c.rules4,
      listeners: c.listeners,
      probes: c.probes,
      ipBatch: [...c.rules.map((r) => `rule add ${r}`), ...c.routes.map((r) => `route add ${r}`)],
      worldBatch: ['route add 10.9.9.0/24 via 10.0.0.2'],
    })));
    return kernel;
  };

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', async (_name, i) => {
    const c = CASES[i]!;
    const report = (await kernelReports())[i]!;
    if (!report.ok) throw new Error(`kernel setup failed at ${report.stage}: ${report.stderr}`);
    const ours = await viaCli(c);
    expect(ours.err).toBe('');
    expect(ours.code).toBe(0);
    const theirs = report.results.map(view);
    const lines = c.probes.map((p, j) => `${JSON.stringify(theirs[j]) === JSON.stringify(ours.views[j]) ? ' ' : '✗'} ${probeLine(p)}\n    kernel: ${JSON.stringify(theirs[j])}\n    ours:   ${JSON.stringify(ours.views[j])}`);
    expect(ours.views, `${c.name}\n${lines.join('\n')}`).toEqual(theirs);
  }, 60_000);
});
