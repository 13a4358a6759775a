/**
 * Linkerd pods end to end: each scenario with the verdict and the diagnosis it must give.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/compile/pod.js';
import { prepareMeshPod, simulateMesh } from '../../../src/mesh/index.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { annotate, diagnosisText, hopLines, namespace, pod } from './helpers.js';

const web = pod('linkerd-web.yaml');
const api = pod('linkerd-api.yaml');

describe('Linkerd: meshed', () => {
  it('the built-in pair is meshed through 4140 and 4143', () => {
    const r = simulateMesh({ mesh: 'linkerd' });
    expect(r.verdict).toBe('meshed');
    expect(hopLines(r)).toEqual([
      'client: web (uid 1000) → 127.0.0.1:4140 | PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
      'client: linkerd-proxy (uid 2102) → 10.0.1.5:8080 | SO_ORIGINAL_DST 10.0.1.5:8080, no Service there: connects to it as is; PROXY_INIT_OUTPUT rule 1 RETURN "proxy-init/ignore-proxy-user-id"',
      'server: 10.0.0.2:52120 (client) → 10.0.1.5:4143 | PROXY_INIT_REDIRECT rule 2 REDIRECT "proxy-init/redirect-all-incoming-to-proxy-port"',
      'server: linkerd-proxy (uid 2102) → 10.0.1.5:8080 | forwards to the original destination 10.0.1.5:8080; PROXY_INIT_OUTPUT rule 1 RETURN "proxy-init/ignore-proxy-user-id"',
    ]);
    expect(r.hops.map((h) => h.receiver)).toEqual([
      'linkerd-proxy outbound (SO_ORIGINAL_DST 10.0.1.5:8080)',
      'the network (left through eth0)',
      'linkerd-proxy inbound (SO_ORIGINAL_DST 10.0.1.5:8080)',
      'api (uid 1000)',
    ]);
    expect(r.diagnosis).toEqual([]);
    expect(r.client.source).toBe('injected');
    expect(r.client.proxy?.nativeSidecar).toBe(true);
  });

  it('pods as written (YAML) and as running give the same hops', () => {
    const written = simulateMesh({ mesh: 'linkerd', client: web, server: api });
    const running = simulateMesh({ mesh: 'linkerd', client: pod('linkerd-web-running.yaml'), server: api });
    expect(written.verdict).toBe('meshed');
    expect(running.verdict).toBe('meshed');
    expect(running.client.source).toBe('running');
    expect(hopLines(running)).toEqual(hopLines(written));
    expect(running.client.ruleNotes.map((n) => n.text)).toEqual(written.client.ruleNotes.map((n) => n.text));
  });

  it('a Service VIP is resolved by the outbound proxy to an endpoint', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst: '10.96.0.10:80', services: '10.96.0.10:80=10.0.1.5:8080' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[0]!.originalDestination).toBe('10.96.0.10:80');
    expect(r.hops[1]!.why).toMatch(/^resolves Service 10\.96\.0\.10:80 to endpoint 10\.0\.1\.5:8080; /);
  });

  it('opaque ports still go through 4143: only protocol detection changes', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: pod('linkerd-api-opaque.json') });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[1]!.to).toBe('10.0.1.5:4143');
    expect(r.hops[2]!.receiver).toBe('linkerd-proxy inbound (opaque transport header: port 8080)');
    expect(r.hops[3]!.to).toBe('10.0.1.5:8080');
    expect(diagnosisText(r)).toContain('port 8080 is opaque on pod api (config.linkerd.io/opaque-ports: "8080"): the proxies do no protocol detection');
    // 3306 is in the default proxy.opaquePorts.
    const mysql = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst: '10.0.1.5:3306' });
    expect(mysql.verdict).toBe('meshed');
    expect(diagnosisText(mysql)).toContain('port 3306 is opaque on pod api (the default proxy.opaquePorts)');
  });

  it('CNI with native sidecars: an init container meets a running proxy', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, cni: true, phase: 'init:fetch-config' });
    expect(r.verdict).toBe('meshed');
    expect(r.client.startup.map((s) => `${s.stage}:${s.name}:${s.effect}`)).toEqual([
      'sandbox:linkerd-cni:rules',
      'init:linkerd-network-validator:validator',
      'init:linkerd-proxy:proxy',
      'init:fetch-config:none',
      'container:web:none',
    ]);
    // linkerd-cni writes no Galera skips: the redirect is rule 3.
    expect(r.hops[0]!.why).toBe('PROXY_INIT_OUTPUT rule 3 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"');
    expect(r.validators.map((v) => [v.pod, v.container, v.ok, v.exitCode])).toEqual([
      ['web', 'linkerd-network-validator', true, 0],
      ['api', 'linkerd-network-validator', true, 0],
    ]);
  });

  it('a pod injected for linkerd-cni, as running, is recognised by its validator', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: pod('linkerd-web-cni-running.yaml'), server: api, phase: 'init:fetch-config' });
    expect(r.client.install).toBe('cni');
    expect(r.verdict).toBe('meshed');
  });
});

describe('Linkerd: bypasses', () => {
  it('skip-outbound-ports on the client: client-bypass', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: annotate(web, { 'config.linkerd.io/skip-outbound-ports': '8080' }), server: api });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('PROXY_INIT_OUTPUT rule 3 RETURN "proxy-init/ignore-port-8080"');
    expect(r.hops[1]!.to).toBe('10.0.1.5:4143');
    const d = diagnosisText(r);
    expect(d).toContain('client: web (uid 1000) → 10.0.1.5:8080 was not redirected to linkerd-proxy: PROXY_INIT_OUTPUT rule 3 RETURN "proxy-init/ignore-port-8080"');
    expect(d).toContain('linkerd-init --outbound-ports-to-ignore 8080, from config.linkerd.io/skip-outbound-ports: "8080" on pod web');
    expect(d).toContain('Fix: remove 8080 from config.linkerd.io/skip-outbound-ports on pod web');
  });

  it('skip-outbound-ports from the Namespace', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: pod('plain-web.yaml'), server: api, namespace: namespace('namespace-linkerd.yaml'), dst: '10.0.1.5:3306' });
    expect(r.client.source).toBe('injected');
    expect(r.verdict).toBe('client-bypass');
    expect(diagnosisText(r)).toContain('from config.linkerd.io/skip-outbound-ports: "3306" on namespace shop');
  });

  it('skip-inbound-ports on the server: server-bypass', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: annotate(api, { 'config.linkerd.io/skip-inbound-ports': '8080' }) });
    expect(r.verdict).toBe('server-bypass');
    expect(r.hops.at(-1)!.why).toBe('PROXY_INIT_REDIRECT rule 1 RETURN "proxy-init/ignore-port-4190,4191,8080"');
    expect(r.hops.at(-1)!.receiver).toBe('api (uid 1000)');
    const d = diagnosisText(r);
    expect(d).toContain('skipped linkerd-proxy: PROXY_INIT_REDIRECT rule 1 RETURN "proxy-init/ignore-port-4190,4191,8080"');
    expect(d).toContain('from config.linkerd.io/skip-inbound-ports: "8080" on pod api');
    expect(d).toContain('Fix: remove 8080 from config.linkerd.io/skip-inbound-ports on pod api');
  });

  it('UDP is never captured: plaintext', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst: '10.0.1.5:5353', proto: 'udp' });
    expect(r.verdict).toBe('plaintext');
    expect(r.hops.map((h) => h.receiver)).toEqual(['the network (left through eth0)', 'api (uid 1000)']);
    const d = diagnosisText(r);
    expect(d).toContain('client: UDP is never redirected: proxy-init REDIRECTs only -p tcp');
    expect(d).toContain('server: UDP arriving at pod api is never redirected to the inbound proxy');
  });

  it.each(['10.0.0.2:8080', '127.0.0.1:8080'])('an app calling itself at %s: plaintext over lo', (dst) => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst });
    expect(r.verdict).toBe('plaintext');
    expect(hopLines(r)).toEqual([`web: web (uid 1000) → ${dst} | PROXY_INIT_OUTPUT rule 2 RETURN "proxy-init/ignore-loopback"`]);
    const d = diagnosisText(r);
    expect(d).toContain('PROXY_INIT_OUTPUT rule 2 RETURN "proxy-init/ignore-loopback"');
    expect(d).toContain('traffic inside a pod is not meshed by design');
    expect(d).toContain('server: the destination is pod web itself');
  });

  it('a client without the inject annotation: the node DNATs its Service call; client-bypass', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: pod('plain-web.yaml'), server: api, dst: '10.96.0.10:80', services: '10.96.0.10:80=10.0.1.5:8080' });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[1]).toMatchObject({ pod: 'network', to: '10.0.1.5:8080', why: "the node's Service DNAT (kube-proxy): 10.96.0.10:80 → 10.0.1.5:8080" });
    expect(diagnosisText(r)).toContain('client: pod web is not meshed (no linkerd-proxy container, no linkerd.io/inject annotation on the pod or its namespace)');
    expect(diagnosisText(r)).toContain('Fix: add linkerd.io/inject: enabled');
  });
});

describe('Linkerd: start-up phases', () => {
  it('linkerd-cni, legacy sidecars, an init container that needs the network: refused on 4140', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, cni: true, nativeSidecars: false, phase: 'init:fetch-config' });
    expect(r.verdict).toBe('refused');
    expect(r.client.startup.map((s) => s.name)).toEqual(['linkerd-cni', 'fetch-config', 'linkerd-network-validator', 'linkerd-proxy', 'web']);
    expect(hopLines(r)).toEqual(['web: fetch-config (uid 1000) → 127.0.0.1:4140 | PROXY_INIT_OUTPUT rule 3 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"']);
    expect(r.hops[0]!.outcome).toBe('refused');
    const d = diagnosisText(r);
    expect(d).toContain('sent fetch-config (uid 1000)\'s connection to 127.0.0.1:4140, but linkerd-proxy is not running at phase init:fetch-config');
    expect(d).toContain('with linkerd-cni the rules exist from sandbox creation');
    expect(d).toContain('with native sidecars off, linkerd-proxy starts only with the containers');
    expect(d).toContain('Fix: use native sidecars (config.linkerd.io/proxy-enable-native-sidecar: "true"');
    expect(d).toContain('securityContext.runAsUser: 2102');
    expect(d).toContain('config.linkerd.io/skip-outbound-ports: "8080"');
  });

  it('the same init container as UID 2102 bypasses the proxy', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, cni: true, nativeSidecars: false, phase: 'init:fetch-config', uid: 2102 });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('PROXY_INIT_OUTPUT rule 1 RETURN "proxy-init/ignore-proxy-user-id"');
    const d = diagnosisText(r);
    expect(d).toContain('fetch-config (uid 2102) runs as the proxy\'s UID');
    expect(d).toContain('the documented workaround for init containers that need the network under linkerd-cni without native sidecars');
  });

  it('linkerd-init with legacy sidecars: an earlier init container meets no rules yet', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, nativeSidecars: false, phase: 'init:fetch-config' });
    expect(r.client.startup.map((s) => s.name)).toEqual(['fetch-config', 'linkerd-init', 'linkerd-proxy', 'web']);
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('no mesh rules in the pod');
    const d = diagnosisText(r);
    expect(d).toContain('at phase init:fetch-config the rules do not exist yet: linkerd-init writes them later in the start-up (init containers: fetch-config → linkerd-init)');
    expect(d).toContain('the injector appends linkerd-init at the end of initContainers');
  });

  it('linkerd-init with native sidecars: the init container is meshed', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, phase: 'init:fetch-config' });
    expect(r.client.startup.map((s) => s.name)).toEqual(['linkerd-init', 'linkerd-proxy', 'fetch-config', 'web']);
    expect(r.verdict).toBe('meshed');
  });

  it('the CNI plugin was not ready: no rules, plaintext, and the validator fails with 95', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, cni: true, cniNotReady: true });
    expect(r.verdict).toBe('plaintext');
    expect(r.hops.map((h) => h.why)).toEqual(['no mesh rules in the pod', 'no mesh rules in the pod']);
    expect(r.validators.map((v) => [v.pod, v.ok, v.exitCode])).toEqual([['web', false, 95], ['api', false, 95]]);
    const d = diagnosisText(r);
    expect(d).toContain('client: pod web has no rules: linkerd-cni was not ready on the node when the pod\'s sandbox was created');
    expect(d).toContain('server: pod api has no rules');
    expect(d).toContain('linkerd-network-validator exits with 95: its connection to 1.1.1.1:20001 was not redirected to its listener on 4140');
    expect(d).toContain('LinkerdCNINotConfigured');
  });

  it('an unknown init container is bad input', () => {
    expect(() => simulateMesh({ mesh: 'linkerd', client: web, server: api, phase: 'init:nope' })).toThrow(NetfilterSimError);
    expect(() => simulateMesh({ mesh: 'linkerd', client: web, server: api, phase: 'init:nope' })).toThrow(/no init container "nope"/);
  });
});

describe('Linkerd: loops and families', () => {
  it('a proxy running under a UID the rules do not exempt: loop', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: pod('linkerd-web-uid-mismatch.json'), server: api });
    expect(r.verdict).toBe('loop');
    expect(hopLines(r)).toEqual([
      'web: web (uid 1000) → 127.0.0.1:4140 | PROXY_INIT_OUTPUT rule 3 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
      'web: linkerd-proxy (uid 2103) → 127.0.0.1:4140 | SO_ORIGINAL_DST 10.0.1.5:8080, no Service there: connects to it as is; PROXY_INIT_OUTPUT rule 3 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
    ]);
    const d = diagnosisText(r);
    expect(d).toContain('sends its own connection back to its outbound listener 127.0.0.1:4140: a loop. The rules exempt PROXY_INIT_OUTPUT rule 1 (--uid-owner 2102), not uid 2103.');
    expect(d).toContain('Fix: make the rules and the proxy agree: config.linkerd.io/proxy-uid');
  });

  it('proxy-uid 0 writes no exemption at all: loop', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: annotate(web, { 'config.linkerd.io/proxy-uid': '0' }), server: api });
    expect(r.client.ruleNotes.some((n) => n.text.includes('--uid-owner'))).toBe(false);
    expect(r.verdict).toBe('loop');
    expect(diagnosisText(r)).toContain('The rules exempt no UID, not uid 0.');
  });

  it('IPv4-only rules on a dual-stack pod: IPv6 is plaintext, IPv4 meshed', () => {
    const client = pod('linkerd-web-dual.yaml');
    const server = pod('linkerd-api-dual.yaml');
    const v6 = simulateMesh({ mesh: 'linkerd', client, server, dst: '[fd00::1:5]:8080' });
    expect(v6.verdict).toBe('plaintext');
    expect(hopLines(v6)).toEqual([
      'web: web (uid 1000) → [fd00::1:5]:8080 | no IPv6 rules in the pod',
      'api: [fd00::2]:58130 (web) → [fd00::1:5]:8080 | no IPv6 rules in the pod',
    ]);
    const d = diagnosisText(v6);
    expect(d).toContain('client: pod web has no IPv6 rules (linkerd-init ran with --ipv6=false, which the injector passes while the chart value disableIPv6 is true, its default)');
    expect(d).toContain('Fix: install Linkerd with disableIPv6: false');
    expect(simulateMesh({ mesh: 'linkerd', client, server, dst: '10.0.1.5:8080' }).verdict).toBe('meshed');
  });

  it('with the IPv6 pass (disableIPv6: false) the IPv6 connection is meshed through [::1]:4140', () => {
    const dual = (p: Pod): Pod => {
      const injected = prepareMeshPod('linkerd', p).pod;
      return { ...injected, initContainers: injected.initContainers.map((c) => (c.name === 'linkerd-init' ? { ...c, args: c.args.filter((a) => a !== '--ipv6=false') } : c)) };
    };
    const r = simulateMesh({ mesh: 'linkerd', client: dual(pod('linkerd-web-dual.yaml')), server: dual(pod('linkerd-api-dual.yaml')), dst: '[fd00::1:5]:8080' });
    expect(r.client.rules6).not.toBeNull();
    expect(r.verdict).toBe('meshed');
    expect(r.hops.map((h) => h.to)).toEqual(['[::1]:4140', '[fd00::1:5]:8080', '[fd00::1:5]:4143', '[fd00::1:5]:8080']);
  });
});

describe('Linkerd: the proxy\'s own ports and odd inputs', () => {
  it("the server proxy's admin port is skipped by design", () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst: '10.0.1.5:4191' });
    expect(r.verdict).toBe('server-bypass');
    expect(r.hops.at(-1)!.receiver).toBe('linkerd-proxy admin (metrics, probes)');
    expect(diagnosisText(r)).toContain("4191 is the proxy's own admin (metrics, probes) port: always skipped, by design");
  });

  it('a destination outside the scenario has no server side', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, dst: '192.0.2.10:443' });
    expect(r.verdict).toBe('server-bypass');
    expect(r.hops.at(-1)!.receiver).toBe('the network (left through eth0)');
    expect(diagnosisText(r)).toContain('server: the connection left for 192.0.2.10:443, which is not a pod of this scenario');
  });

  it('an init container at phase app is pointed at --phase', () => {
    expect(() => simulateMesh({ mesh: 'linkerd', client: web, server: api, container: 'fetch-config' })).toThrow(/use --phase init:fetch-config/);
  });

  it('the native-sidecar setting does not rewrite a pod given as it runs', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: pod('linkerd-web-running.yaml'), server: api, nativeSidecars: false });
    expect(r.verdict).toBe('meshed');
    expect(diagnosisText(r)).toContain('note: pod web is given as it runs: its proxy runs as a native sidecar, whatever the native-sidecars setting says');
  });

  it('--cni-not-ready without --cni is noted', () => {
    const r = simulateMesh({ mesh: 'linkerd', client: web, server: api, cniNotReady: true });
    expect(r.verdict).toBe('meshed');
    expect(diagnosisText(r)).toContain('neither pod gets its rules from the CNI plugin');
  });
});
