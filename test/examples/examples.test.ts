/**
 * The scripts in examples/ run with plain `node` against the built package, as the README and
 * the guides say, and print what the guides show. Needs the built `dist/` (`npm test` builds
 * first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function runExample(name: string): string {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['FORCE_COLOR'];
  const r = spawnSync(process.execPath, [join(ROOT, 'examples', name)], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

describe.skipIf(!existsSync(join(ROOT, 'dist/index.js')))('examples/', () => {
  it('quick-start.mjs: the app is redirected to the proxy, SO_ORIGINAL_DST is the Service', () => {
    const out = runExample('quick-start.mjs');
    expect(out.split('\n')[0]).toBe('local 127.0.0.1 4140 10.96.0.10:80');
    expect(out).toContain('★ OUTPUT:1 REDIRECT');
    expect(out).toContain('-A OUTPUT -p tcp -m owner ! --uid-owner 2102 -j REDIRECT --to-ports 4140');
    expect(out.trimEnd().split('\n').at(-1)).toBe('delivered to 127.0.0.1:4140 (the listener 0.0.0.0:4140); SO_ORIGINAL_DST = 10.96.0.10:80');
  });

  it('linkerd-pod.mjs: the injector defaults give the kept rules, and four connections end where Linkerd means them to', () => {
    const out = runExample('linkerd-pod.mjs');
    const rules = readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8');
    expect(out).toContain(rules);
    expect(out).toContain('linkerd-init --firewall-bin-path iptables-nft --firewall-save-bin-path iptables-nft-save --ipv6=false');
    const rows = out.trimEnd().split('\n').slice(-4).map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => r.slice(1, 3))).toEqual([
      ['local', '127.0.0.1:4140'],
      ['remote', '10.1.0.7:8080'],
      ['local', '10.0.0.2:4143'],
      ['local', '10.0.0.2:4191'],
    ]);
    expect(rows.map((r) => r.at(-1))).toEqual([
      'PROXY_INIT_OUTPUT:4 -j REDIRECT',
      'PROXY_INIT_OUTPUT:1 -j RETURN',
      'PROXY_INIT_REDIRECT:2 -j REDIRECT',
      'PROXY_INIT_REDIRECT:1 -j RETURN',
    ]);
  });

  it('kube-proxy-trace.mjs: ClusterIP 50/50, NodePort masqueraded, no endpoints refused', () => {
    const out = runExample('kube-proxy-trace.mjs');
    expect(out).toContain('filter, nat: 0 problems');
    expect(out).toContain('pod 10.244.0.5 → 10.96.0.10:80: remote 10.244.1.5:8080 p=0.5');
    expect(out).toContain('pod 10.244.0.5 → 10.96.0.10:80: remote 10.244.2.7:8080 p=0.5');
    expect(out).toContain('client 192.168.0.50 → node:30080: remote 10.244.1.5:8080 (masqueraded)');
    expect(out).toMatch(/PREROUTING\/nat\s+PREROUTING:1 → KUBE-SERVICES:2 → KUBE-NODEPORTS:1 → KUBE-EXT-WEB:1 → KUBE-MARK-MASQ:1/);
    expect(out).toContain('pod 10.244.0.5 → 10.96.0.20:5432: refused');
    expect(out).toMatch(/FORWARD\/filter\s+FORWARD:1 → FORWARD:2 → KUBE-SERVICES:1\n?$/);
  });

  it('mesh-verdict.mjs: one verdict per scenario', () => {
    const verdicts = runExample('mesh-verdict.mjs')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('  '))
      .map((l) => l.replace(/ \(\d+ hops\)$/, ''));
    expect(verdicts).toEqual([
      'defaults: meshed',
      'init container, linkerd-cni, no native sidecars: refused',
      'init container, linkerd-init, no native sidecars: client-bypass',
      'server skips inbound port 8080: server-bypass',
      'proxy runs as 2103, rules exempt 2102: loop',
      'through a Service: meshed',
    ]);
  });

  it('network-policy.mjs: the verdicts, the API server\'s refusal, and kube-router\'s REJECT of web → db in the node', () => {
    const out = runExample('network-policy.mjs').trimEnd().split('\n');
    expect(out.slice(0, 6).map((l) => l.split(':')[0])).toEqual(['allowed', 'blocked', 'allowed', 'allowed', 'allowed', 'blocked']);
    expect(out[6]).toBe('{"namespace":"shop","name":"default-deny","direction":"ingress","rule":null}');
    expect(out[7]).toBe('shop/range: spec.ingress[0].ports[0].endPort: Invalid value: 8000: must be greater than or equal to `port`');
    expect(out[8]).toBe('refused - rejected (icmp-port-unreachable)');
    expect(out.at(-1)).toMatch(/^  FORWARD KUBE-POD-FW-\w{16} \d+ REJECT$/);
  });

  it('linkerd-default.rules is what compile linkerd prints for the injector defaults', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'compile', 'linkerd', '--firewall-bin-path', 'iptables-nft',
      '--firewall-save-bin-path', 'iptables-nft-save', '--ipv6=false', '-p', '4143', '-o', '4140', '-u', '2102',
      '--inbound-ports-to-ignore', '4190,4191,4567,4568', '--outbound-ports-to-ignore', '4567,4568'], { encoding: 'utf8' });
    expect(r.stdout).toBe(readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8'));
  });

  it('the example rule files are what iptables-save prints (node.rules) and what check says they are', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { cwd: ROOT, encoding: 'utf8' });
    const node = readFileSync(join(ROOT, 'examples/kube-proxy/node.rules'), 'utf8');
    expect(cli('fmt', 'examples/kube-proxy/node.rules').stdout).toBe(node.split('\n').filter((l) => !l.startsWith('#')).join('\n'));
    expect(cli('check', 'examples/kube-proxy/node.rules').status).toBe(0);
    expect(cli('fmt', 'examples/kube-proxy/broken.rules').status).toBe(0);
    expect(cli('check', 'examples/kube-proxy/broken.rules').status).toBe(1);
  });
});
