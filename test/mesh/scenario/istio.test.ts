/**
 * Istio pods end to end: each scenario with the verdict and the diagnosis it must give.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/compile/pod.js';
import { prepareMeshPod, simulateMesh, validateMeshPod } from '../../../src/mesh/index.js';
import { annotate, diagnosisText, hopLines, pod } from './helpers.js';

const web = pod('istio-web.yaml');
const api = pod('istio-api.yaml');

describe('Istio: meshed', () => {
  it('the built-in pair is meshed through 15001 and 15006', () => {
    const r = simulateMesh({ mesh: 'istio' });
    expect(r.verdict).toBe('meshed');
    expect(hopLines(r)).toEqual([
      "client: web (uid 1000) → 127.0.0.1:15001 | ISTIO_OUTPUT rule 9 → ISTIO_REDIRECT rule 1 REDIRECT (outbound capture: Envoy's outbound listener)",
      "client: istio-proxy (uid 1337) → 10.0.1.5:8080 | SO_ORIGINAL_DST 10.0.1.5:8080, no Service there: connects to it as is; ISTIO_OUTPUT rule 4 RETURN (loop prevention: the proxy's own traffic is never redirected back to it)",
      "server: 10.0.0.2:52120 (client) → 10.0.1.5:15006 | ISTIO_INBOUND rule 5 → ISTIO_IN_REDIRECT rule 1 REDIRECT (inbound capture: Envoy's inbound listener (also used for app → own service via Envoy))",
      "server: istio-proxy (uid 1337) → 10.0.1.5:8080 | inbound passthrough from 127.0.0.6 to 10.0.1.5:8080; ISTIO_OUTPUT rule 1 RETURN (Envoy's inbound passthrough connections to the app (source 127.0.0.6 / ::6) must not loop back into Envoy)",
    ]);
    expect(r.diagnosis).toEqual([]);
  });

  it('a pod as running (istio-init arguments, JSON) gives the same hops as the same pod as written', () => {
    const running = simulateMesh({ mesh: 'istio', client: pod('istio-web-running.json'), server: api });
    const written = simulateMesh({ mesh: 'istio', client: web, server: api, nativeSidecars: false });
    expect(running.client.source).toBe('running');
    expect(running.client.rulesBy).toBe('istio-init');
    expect(running.verdict).toBe('meshed');
    expect(hopLines(running)).toEqual(hopLines(written));
  });

  it('an app calling itself through its Service goes through Envoy twice (15001, then 15006)', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, dst: '10.96.0.20:80', services: '10.96.0.20:80=10.0.0.2:8080' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops.map((h) => `${h.pod}: ${h.from} → ${h.to} [${h.receiver}]`)).toEqual([
      'web: web (uid 1000) → 127.0.0.1:15001 [istio-proxy outbound (Envoy virtualOutbound) (SO_ORIGINAL_DST 10.96.0.20:80)]',
      'web: istio-proxy (uid 1337) → 127.0.0.1:15006 [istio-proxy inbound (Envoy virtualInbound) (SO_ORIGINAL_DST 10.0.0.2:8080)]',
      'web: istio-proxy (uid 1337) → 10.0.0.2:8080 [web (uid 1000)]',
    ]);
    expect(r.hops[1]!.why).toContain('ISTIO_OUTPUT rule 2 → ISTIO_IN_REDIRECT rule 1 REDIRECT');
    expect(r.hops[2]!.why).toContain('inbound passthrough from 127.0.0.6 to 10.0.0.2:8080; ISTIO_OUTPUT rule 1 RETURN');
  });

  it('an included outbound range captures the Service VIP', () => {
    const client = annotate(web, { 'traffic.sidecar.istio.io/includeOutboundIPRanges': '10.96.0.0/12' });
    const r = simulateMesh({ mesh: 'istio', client, server: api, dst: '10.96.0.20:80', services: '10.96.0.20:80=10.0.1.5:8080' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[0]!.why).toMatch(/^ISTIO_OUTPUT rule 9 → ISTIO_REDIRECT rule 1 REDIRECT/);
  });

  it('included outbound ports capture only those ports', () => {
    const client = annotate(web, { 'traffic.sidecar.istio.io/includeOutboundIPRanges': '', 'traffic.sidecar.istio.io/includeOutboundPorts': '8080' });
    expect(simulateMesh({ mesh: 'istio', client, server: api }).verdict).toBe('meshed');
    const other = simulateMesh({ mesh: 'istio', client, server: api, dst: '10.0.1.5:9090' });
    expect(other.hops[0]!.receiver).toBe('the network (left through eth0)');
    expect(other.hops[0]!.why).toBe('no rule of ISTIO_OUTPUT matched (nat OUTPUT policy ACCEPT)');
    // The server's Envoy takes it, and finds nothing on 9090.
    expect(other.verdict).toBe('refused');
    expect(diagnosisText(other)).toContain('server: nothing listens at 10.0.1.5:9090 (tcp) in pod api');
  });

  it('TPROXY on the server: the inbound listener gets the connection with its addresses preserved', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: annotate(api, { 'sidecar.istio.io/interceptionMode': 'TPROXY' }) });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[2]!.to).toBe('10.0.1.5:8080');
    expect(r.hops[2]!.receiver).toBe('istio-proxy inbound (Envoy virtualInbound) (TPROXY, addresses preserved: SO_ORIGINAL_DST 10.0.1.5:8080)');
    expect(r.hops[2]!.why).toMatch(/^ISTIO_INBOUND rule 8 → ISTIO_TPROXY rule 1 TPROXY/);
  });
});

describe('Istio: bypasses', () => {
  it('excludeOutboundIPRanges: client-bypass', () => {
    const r = simulateMesh({ mesh: 'istio', client: annotate(web, { 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.0.1.0/24' }), server: api });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('ISTIO_OUTPUT rule 9 RETURN (10.0.1.0/24 is never captured)');
    const d = diagnosisText(r);
    expect(d).toContain('istio-init -x 10.0.1.0/24, from traffic.sidecar.istio.io/excludeOutboundIPRanges: "10.0.1.0/24" on pod web');
    expect(d).toContain("Fix: remove the destination's range from traffic.sidecar.istio.io/excludeOutboundIPRanges on pod web");
  });

  it('includeOutboundIPRanges without the destination: client-bypass, no rule matched', () => {
    const r = simulateMesh({ mesh: 'istio', client: annotate(web, { 'traffic.sidecar.istio.io/includeOutboundIPRanges': '10.96.0.0/12' }), server: api });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('no rule of ISTIO_OUTPUT matched (nat OUTPUT policy ACCEPT)');
    const d = diagnosisText(r);
    expect(d).toContain('ISTIO_OUTPUT redirects only -d 10.96.0.0/12 (traffic.sidecar.istio.io/includeOutboundIPRanges: "10.96.0.0/12" on pod web)');
    expect(d).toContain("Fix: add the destination's range to traffic.sidecar.istio.io/includeOutboundIPRanges");
  });

  it('excludeOutboundPorts: client-bypass', () => {
    const r = simulateMesh({ mesh: 'istio', client: annotate(web, { 'traffic.sidecar.istio.io/excludeOutboundPorts': '8080' }), server: api });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.why).toBe('ISTIO_OUTPUT rule 1 RETURN (outbound port 8080 is never captured (checked before the self-redirect rules))');
    const d = diagnosisText(r);
    expect(d).toContain('istio-init -o 8080, from traffic.sidecar.istio.io/excludeOutboundPorts: "8080" on pod web');
    expect(d).toContain('Fix: remove 8080 from traffic.sidecar.istio.io/excludeOutboundPorts on pod web');
  });

  it('excludeInboundPorts on the server: server-bypass', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: annotate(api, { 'traffic.sidecar.istio.io/excludeInboundPorts': '8080' }) });
    expect(r.verdict).toBe('server-bypass');
    expect(r.hops.at(-1)!.why).toBe('ISTIO_INBOUND rule 4 RETURN (inbound port 8080 is reached directly, not through Envoy)');
    const d = diagnosisText(r);
    expect(d).toContain('istio-init -d 15090,15021,8080,15020, from traffic.sidecar.istio.io/excludeInboundPorts: "8080" on pod api');
    expect(d).toContain('Fix: remove 8080 from traffic.sidecar.istio.io/excludeInboundPorts on pod api');
  });

  it('UDP is never captured: plaintext', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, dst: '10.0.1.5:5353', proto: 'udp' });
    expect(r.verdict).toBe('plaintext');
    expect(diagnosisText(r)).toContain('client: UDP is never redirected: istio-iptables REDIRECTs only TCP');
  });

  it.each([
    ['10.0.0.2:8080', 'ISTIO_OUTPUT rule 3 RETURN'],
    ['127.0.0.1:8080', 'ISTIO_OUTPUT rule 3 RETURN'],
  ])('an app calling itself at %s bypasses Envoy (%s)', (dst, rule) => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, dst });
    expect(r.verdict).toBe('plaintext');
    expect(r.hops).toHaveLength(1);
    expect(r.hops[0]!.why.startsWith(rule)).toBe(true);
    const d = diagnosisText(r);
    expect(d).toContain('bypasses Envoy by design');
    expect(d).toContain('call the pod through its Service');
  });
});

describe('Istio: start-up phases', () => {
  it('istio-cni, legacy sidecars, an init container that needs the network: refused on 15001', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, cni: true, nativeSidecars: false, phase: 'init:fetch-config' });
    expect(r.client.startup.map((s) => s.name)).toEqual(['istio-cni', 'istio-validation', 'fetch-config', 'istio-proxy', 'web']);
    expect(r.verdict).toBe('refused');
    expect(r.hops[0]!.to).toBe('127.0.0.1:15001');
    const d = diagnosisText(r);
    expect(d).toContain('but istio-proxy is not running at phase init:fetch-config');
    expect(d).toContain('Fix: use native sidecars (sidecar.istio.io/nativeSidecar: "true"');
    expect(d).toContain('securityContext.runAsUser: 1337');
  });

  it('the same init container as UID 1337 bypasses Envoy; with native sidecars it is meshed', () => {
    const asProxy = simulateMesh({ mesh: 'istio', client: web, server: api, cni: true, nativeSidecars: false, phase: 'init:fetch-config', uid: 1337 });
    expect(asProxy.verdict).toBe('client-bypass');
    expect(asProxy.hops[0]!.why).toMatch(/^ISTIO_OUTPUT rule 6 RETURN/);
    expect(diagnosisText(asProxy)).toContain("fetch-config (uid 1337) runs as the proxy's UID");
    const native = simulateMesh({ mesh: 'istio', client: web, server: api, cni: true, phase: 'init:fetch-config' });
    expect(native.verdict).toBe('meshed');
  });

  it('istio-init with legacy sidecars: an earlier init container meets no rules', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, nativeSidecars: false, phase: 'init:fetch-config' });
    expect(r.client.startup.map((s) => s.name)).toEqual(['fetch-config', 'istio-init', 'istio-proxy', 'web']);
    expect(r.verdict).toBe('client-bypass');
    expect(diagnosisText(r)).toContain('at phase init:fetch-config the rules do not exist yet: istio-init writes them later');
  });

  it('istio-cni not ready: plaintext, and istio-validation fails with 126', () => {
    const r = simulateMesh({ mesh: 'istio', client: web, server: api, cni: true, cniNotReady: true });
    expect(r.verdict).toBe('plaintext');
    expect(r.validators.map((v) => [v.pod, v.ok, v.exitCode])).toEqual([['web', false, 126], ['api', false, 126]]);
    const d = diagnosisText(r);
    expect(d).toContain('istio-cni was not ready on the node');
    expect(d).toContain('istio-validation exits with 126: its probe to 127.0.0.6:15002 was refused');
  });

  it('the validation probe: 127.0.0.6:15002 reaches 15006 with original port 15002', () => {
    const v = validateMeshPod(prepareMeshPod('istio', web, { cni: true }));
    expect(v).toMatchObject({ container: 'istio-validation', ok: true, exitCode: 0, probe: '127.0.0.6:15002', landed: 'was accepted at 127.0.0.1:15006', originalDestination: '127.0.0.6:15002' });
    expect(validateMeshPod(prepareMeshPod('istio', web, {}))).toBeNull();
  });
});

describe('Istio: loops and families', () => {
  it('a proxy running under a UID and GID the rules do not exempt: loop', () => {
    const r = simulateMesh({ mesh: 'istio', client: pod('istio-web-uid-mismatch.yaml'), server: api });
    expect(r.verdict).toBe('loop');
    expect(r.hops).toHaveLength(2);
    expect(r.hops[1]!.from).toBe('istio-proxy (uid 1000)');
    const d = diagnosisText(r);
    expect(d).toContain('The rules exempt ISTIO_OUTPUT rule 4 (--uid-owner 1337), ISTIO_OUTPUT rule 7 (--gid-owner 1337), not uid 1000.');
    expect(d).toContain("Fix: istio-init's -u (and -g, which defaults to -u) must be the istio-proxy container's runAsUser/runAsGroup");
  });

  it('IPv4-first dual-stack pods get IPv4 rules only: IPv6 is plaintext', () => {
    const r = simulateMesh({ mesh: 'istio', client: pod('istio-web-dual.yaml'), server: pod('istio-api-dual.yaml'), dst: '[fd00::1:5]:8080' });
    expect(r.verdict).toBe('plaintext');
    const d = diagnosisText(r);
    expect(d).toContain("client: pod web has no IPv6 rules (istio-iptables writes ip6tables rules only when the pod's first address is IPv6 (10.0.0.2, fd00::2), or when any is and ISTIO_DUAL_STACK is set)");
    expect(d).toContain('Fix: turn on dual stack for the pod (ISTIO_DUAL_STACK=true');
  });

  it('with ISTIO_DUAL_STACK the same IPv6 connection is meshed (passthrough from ::6)', () => {
    const dual = (p: Pod): Pod => {
      const injected = prepareMeshPod('istio', p, { nativeSidecars: true }).pod;
      return {
        ...injected,
        initContainers: injected.initContainers.map((c) => (c.name === 'istio-init' ? { ...c, env: [{ name: 'ISTIO_DUAL_STACK', value: 'true' }] } : c)),
      };
    };
    const r = simulateMesh({ mesh: 'istio', client: dual(pod('istio-web-dual.yaml')), server: dual(pod('istio-api-dual.yaml')), dst: '[fd00::1:5]:8080' });
    expect(r.client.rules6).not.toBeNull();
    expect(r.verdict).toBe('meshed');
    expect(r.hops[0]!.to).toBe('[::1]:15001');
    expect(r.hops.at(-1)!.why).toContain('inbound passthrough from ::6 to [fd00::1:5]:8080');
  });

  it('IPv6-only pods get ip6tables rules and are meshed; their validation probe uses [::6]:15002', () => {
    const v6 = (p: Pod, ip: string): Pod => ({ ...p, podIPs: [ip] });
    const r = simulateMesh({ mesh: 'istio', client: v6(web, 'fd00::2'), server: v6(api, 'fd00::1:5'), dst: '[fd00::1:5]:8080' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops.map((h) => h.to)).toEqual(['[::1]:15001', '[fd00::1:5]:8080', '[fd00::1:5]:15006', '[fd00::1:5]:8080']);
    const v = validateMeshPod(prepareMeshPod('istio', v6(web, 'fd00::2'), { cni: true }), ['fd00::2']);
    expect(v).toMatchObject({ ok: true, probe: '[::6]:15002', originalDestination: '[::6]:15002' });
  });
});
