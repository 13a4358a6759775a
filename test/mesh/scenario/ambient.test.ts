/**
 * Istio ambient pods end to end: ztunnel's in-pod sockets, HBONE between pods, plaintext inbound,
 * DNS capture, kubelet probes through the node's host rule; each scenario with its verdict and
 * its diagnosis, on both of istio-cni's backends where the rules differ.
 */
import { describe, expect, it } from 'vitest';
import { prepareMeshPod, renderMesh, simulateMesh } from '../../../src/mesh/index.js';
import { annotate, diagnosisText, hopLines, namespace, pod } from './helpers.js';

const aWeb = pod('ambient-web.yaml');
const aApi = pod('ambient-api.yaml');
const plainWeb = pod('plain-web.yaml');
const plainApi = pod('plain-api.yaml');
const sWeb = pod('istio-web.yaml');
const sApi = pod('istio-api.yaml');

describe('ambient enrolment', () => {
  it('a pod is ambient from its label, its namespace label, or --ambient; not with a sidecar or none', () => {
    expect(prepareMeshPod('istio', aWeb).ambient?.reason).toBe('pod label istio.io/dataplane-mode: ambient');
    expect(prepareMeshPod('istio', plainWeb, { namespace: namespace('namespace-ambient.yaml') }).ambient?.reason).toBe('namespace label istio.io/dataplane-mode: ambient');
    expect(prepareMeshPod('istio', plainWeb).ambient).toBeUndefined();
    expect(prepareMeshPod('istio', plainWeb, { ambient: true }).ambient?.reason).toMatch(/^--ambient/);
    const optOut = { ...plainWeb, labels: { 'istio.io/dataplane-mode': 'none' } };
    const p = prepareMeshPod('istio', optOut, { namespace: namespace('namespace-ambient.yaml') });
    expect(p.ambient).toBeUndefined();
    expect(p.settings[0]).toContain('not ambient: the pod opts out with label istio.io/dataplane-mode: none');
    // A pod written for the sidecar injector stays a sidecar pod.
    expect(prepareMeshPod('istio', sWeb, { ambient: true }).ambient).toBeUndefined();
    expect(prepareMeshPod('istio', { ...plainWeb, hostNetwork: true }, { ambient: true }).ambient).toBeUndefined();
  });

  it('the ambient pod has istio-cni rules, ztunnel as its proxy with mark 0x539, and its routing', () => {
    const p = prepareMeshPod('istio', aApi);
    expect(p.rulesBy).toBe('istio-cni');
    expect(p.proxy).toMatchObject({ container: 'ztunnel', outboundPort: 15001, inboundPort: 15006, mark: 0x539, kind: 'ztunnel' });
    expect(p.proxy?.otherPorts.map((o) => `${o.port}/${o.proto}`)).toEqual(['15008/tcp', '15053/udp', '15053/tcp']);
    expect(p.ipCommands.map((c) => c.join(' '))).toEqual(['ip -4 route replace local 0.0.0.0/0 dev lo table 100', 'ip -4 rule add fwmark 0x111/0xfff pref 32764 lookup 100']);
    expect(p.startup.map((s) => `${s.stage}:${s.name}:${s.effect}`)).toEqual(['sandbox:istio-cni:rules', 'sandbox:ztunnel:proxy', 'container:api:none']);
    expect(p.ambient).toMatchObject({ backend: 'iptables', dnsCapture: true, bypassInbound: false });
    expect(prepareMeshPod('istio', aApi, { nativeNftables: true }).nft).toContain('add chain inet istio-ambient-nat output');
  });
});

describe('ambient ↔ ambient', () => {
  for (const nativeNftables of [false, true]) {
    it(`meshed: 15001, HBONE to the peer's 15008, the peer's ztunnel to the app (${nativeNftables ? 'nftables' : 'iptables'})`, () => {
      const r = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, nativeNftables });
      expect(r.verdict).toBe('meshed');
      expect(r.hops.map((h) => `${h.pod}: ${h.from} → ${h.to} [${h.receiver}]`)).toEqual([
        'web: web (uid 1000) → 127.0.0.1:15001 [ztunnel outbound (SO_ORIGINAL_DST 10.0.1.5:8080)]',
        'web: ztunnel (uid 0 gid 1337) → 10.0.1.5:15008 [the network (left through eth0)]',
        'api: 10.0.0.2:47690 (web) → 10.0.1.5:15008 [ztunnel HBONE inbound (HBONE CONNECT 10.0.1.5:8080)]',
        'api: ztunnel (uid 0 gid 1337) → 10.0.1.5:8080 [api (uid 1000)]',
      ]);
      expect(r.hops[1]!.why).toContain('HBONE (mTLS) to 10.0.1.5:15008, CONNECT 10.0.1.5:8080, socket mark 0x539');
      expect(r.hops[3]!.why).toContain("from the client's address 10.0.0.2 (IP_TRANSPARENT), socket mark 0x539");
      expect(r.diagnosis).toEqual([]);
    });
  }

  it('the iptables hops name the in-pod rules', () => {
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi });
    expect(hopLines(r)[0]).toBe("web: web (uid 1000) → 127.0.0.1:15001 | ISTIO_OUTPUT rule 6 REDIRECT (outbound TCP not from ztunnel (no mark 0x539) goes to ztunnel's outbound port 15001)");
    expect(r.hops[2]!.why).toBe('no rule of ISTIO_PRERT matched (nat PREROUTING policy ACCEPT)');
  });

  it('without ztunnel\'s mark its own connection would be captured again: the mark is what breaks the loop', () => {
    // The same rules, with ztunnel's connection as a mark-less process of the pod: back to 15001.
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, container: 'web', uid: 0 });
    expect(r.verdict).toBe('meshed');
    const p = prepareMeshPod('istio', aWeb);
    expect(p.ruleNotes.find((n) => n.chain === 'ISTIO_OUTPUT' && n.text.includes('--to-ports 15001'))?.text).toContain('! --mark 0x539/0xfff');
  });
});

describe('ambient and sidecars', () => {
  it('ambient → sidecar: ztunnel sends HBONE to the sidecar\'s 15008, Envoy delivers from 127.0.0.6', () => {
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: sApi });
    expect(r.verdict).toBe('meshed');
    expect(r.hops.map((h) => h.receiver)).toEqual([
      'ztunnel outbound (SO_ORIGINAL_DST 10.0.1.5:8080)',
      'the network (left through eth0)',
      'istio-proxy HBONE tunnel (HBONE CONNECT 10.0.1.5:8080)',
      'api (uid 1000)',
    ]);
    expect(r.hops[2]!.why).toMatch(/^ISTIO_INBOUND rule 1 RETURN/);
    expect(r.hops[3]!.why).toContain('terminates HBONE and connects to 10.0.1.5:8080 from 127.0.0.6');
  });

  it('sidecar → ambient pod address: Envoy\'s passthrough is plain text, taken by ztunnel\'s 15006; STRICT refuses it', () => {
    const r = simulateMesh({ mesh: 'istio', client: sWeb, server: aApi });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[1]!.to).toBe('10.0.1.5:8080');
    expect(r.hops[1]!.why).toContain('pod api is ambient: plain text');
    expect(r.hops[2]!.receiver).toBe('ztunnel inbound plaintext (SO_ORIGINAL_DST 10.0.1.5:8080)');
    expect(r.hops[2]!.why).toMatch(/^ISTIO_PRERT rule 2 REDIRECT/);
    expect(diagnosisText(r)).toContain("Envoy's PassthroughCluster (ORIGINAL_DST, no TLS)");
    const strict = simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, mtls: 'strict' });
    expect(strict.verdict).toBe('refused');
    expect(strict.hops[2]!.receiver).toBe('ztunnel inbound plaintext (plain text under STRICT mTLS: rejected)');
    const d = diagnosisText(strict);
    expect(d).toContain("web's Envoy sent the connection to ambient pod api in plain text");
    expect(d).toContain('Fix: call the pod through its Service, with Istio 1.22 or later');
    expect(d).toContain('portLevelMtls exception for port 8080');
  });

  const viaService = { dst: '10.96.0.20:80', services: '10.96.0.20:80=10.0.1.5:8080' } as const;

  it('sidecar → ambient Service endpoint (Istio 1.22+, the default): HBONE to 15008, meshed under STRICT', () => {
    for (const istioVersion of [undefined, '1.22', '1.31']) {
      const r = simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, ...viaService, mtls: 'strict', ...(istioVersion ? { istioVersion } : {}) });
      expect(r.verdict).toBe('meshed');
      expect(r.hops.map((h) => `${h.pod}: ${h.from} → ${h.to} [${h.receiver}]`)).toEqual([
        'web: web (uid 1000) → 127.0.0.1:15001 [istio-proxy outbound (Envoy virtualOutbound) (SO_ORIGINAL_DST 10.96.0.20:80)]',
        'web: istio-proxy (uid 1337) → 10.0.1.5:15008 [the network (left through eth0)]',
        'api: 10.0.0.2:47690 (web) → 10.0.1.5:15008 [ztunnel HBONE inbound (HBONE CONNECT 10.0.1.5:8080)]',
        'api: ztunnel (uid 0 gid 1337) → 10.0.1.5:8080 [api (uid 1000)]',
      ]);
      expect(r.hops[1]!.why).toContain('pod api is ambient: HBONE (mTLS) to 10.0.1.5:15008, CONNECT 10.0.1.5:8080');
      expect(diagnosisText(r)).toContain('PILOT_ENABLE_SENDING_HBONE');
    }
  });

  it('sidecar → ambient Service endpoint before Istio 1.22: plain text to 15006, refused under STRICT', () => {
    const r = simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, ...viaService, istioVersion: '1.21', mtls: 'strict' });
    expect(r.verdict).toBe('refused');
    expect(r.hops[1]!.to).toBe('10.0.1.5:8080');
    expect(r.hops[2]!.to).toBe('10.0.1.5:15006');
    expect(diagnosisText(r)).toContain('Envoy before Istio 1.22 cannot send HBONE');
    expect(simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, ...viaService, istioVersion: '1.21' }).verdict).toBe('meshed');
  });

  it('a bad Istio version is a typed error', () => {
    expect(() => simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, istioVersion: 'one' })).toThrow(/bad Istio version "one"/);
    expect(() => simulateMesh({ mesh: 'istio', client: sWeb, server: aApi, istioVersion: 122 as unknown as string })).toThrow(/options\.istioVersion/);
  });
});

describe('ambient and pods outside the mesh', () => {
  it('ambient → uninjected: ztunnel connects in plain text; server-bypass, the server is not meshed', () => {
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: plainApi });
    expect(r.verdict).toBe('server-bypass');
    expect(r.hops[1]!.why).toContain('10.0.1.5:8080 is not in the mesh: connects to it in plain text, socket mark 0x539');
    const d = diagnosisText(r);
    expect(d).toContain('server: pod api is not meshed');
    expect(d).toContain('label the pod (or its namespace) istio.io/dataplane-mode: ambient');
  });

  it('uninjected → ambient: plaintext inbound to 15006 (client-bypass); STRICT refuses it', () => {
    const r = simulateMesh({ mesh: 'istio', client: plainWeb, server: aApi });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[1]!.to).toBe('10.0.1.5:15006');
    expect(diagnosisText(r)).toContain("api's ztunnel accepted the connection on its inbound plaintext port 15006");
    const strict = simulateMesh({ mesh: 'istio', client: plainWeb, server: aApi, mtls: 'strict' });
    expect(strict.verdict).toBe('refused');
    expect(diagnosisText(strict)).toContain('ztunnel rejects plain-text connections: the PeerAuthentication mode is STRICT');
  });
});

describe('ambient.istio.io/bypass-inbound-capture', () => {
  const bypass = annotate(aApi, { 'ambient.istio.io/bypass-inbound-capture': 'true' });

  it('plain text reaches the app directly: plaintext, and the diagnosis names the annotation', () => {
    const r = simulateMesh({ mesh: 'istio', client: plainWeb, server: bypass });
    expect(r.verdict).toBe('plaintext');
    expect(r.hops[1]!.receiver).toBe('api (uid 1000)');
    const d = diagnosisText(r);
    expect(d).toContain('pod api has ambient.istio.io/bypass-inbound-capture: "true", so istio-cni writes no inbound REDIRECT');
    expect(d).toContain('Fix: remove the annotation');
  });

  it('HBONE from an ambient client still goes through ztunnel: meshed', () => {
    expect(simulateMesh({ mesh: 'istio', client: aWeb, server: bypass }).verdict).toBe('meshed');
  });

  it('from a sidecar: Envoy\'s connection reaches the app without ztunnel (server-bypass)', () => {
    const r = simulateMesh({ mesh: 'istio', client: sWeb, server: bypass });
    expect(r.verdict).toBe('server-bypass');
    expect(diagnosisText(r)).toContain('bypass-inbound-capture');
  });
});

describe('UDP to an ambient pod', () => {
  it('the diagnosis names the ambient pod\'s own chain (ISTIO_PRERT, or the nft chain), not the sidecar\'s ISTIO_INBOUND', () => {
    for (const client of [plainWeb, sWeb, aWeb]) {
      const r = simulateMesh({ mesh: 'istio', client, server: aApi, proto: 'udp', dst: '10.0.1.5:5353' });
      expect(r.verdict).toBe('plaintext');
      const d = diagnosisText(r);
      expect(d).toContain('server: UDP arriving at ambient pod api is never redirected to ztunnel (the ISTIO_PRERT REDIRECT to 15006 is -p tcp)');
      expect(d).not.toContain('ISTIO_INBOUND');
    }
    const nft = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, proto: 'udp', dst: '10.0.1.5:5353', nativeNftables: true });
    expect(diagnosisText(nft)).toContain('(inet istio-ambient-nat istio-prerouting redirects only tcp to :15006)');
  });
});

describe('DNS capture', () => {
  const dns = { mesh: 'istio', client: aWeb, server: aApi, proto: 'udp', dst: '10.96.0.10:53' } as const;

  it('on (the default): the query goes to ztunnel\'s DNS proxy on 15053, which forwards it with its mark', () => {
    const r = simulateMesh(dns);
    expect(r.hops.map((h) => `${h.from} → ${h.to} [${h.receiver}]`)).toEqual([
      'web (uid 1000) → 127.0.0.1:15053 [ztunnel DNS proxy (SO_ORIGINAL_DST 10.96.0.10:53)]',
      'ztunnel (uid 0 gid 1337) → 10.96.0.10:53 [the network (left through eth0)]',
    ]);
    expect(r.hops[0]!.why).toBe("ISTIO_OUTPUT rule 2 REDIRECT (DNS over UDP to a resolver goes to ztunnel's DNS proxy on 15053)");
    expect(r.hops[0]!.rule?.setting).toBe("the node's ambient.dnsCapture (on, the chart default)");
    expect(r.verdict).toBe('server-bypass');
    expect(diagnosisText(r)).toContain('a resolver has no proxy, and DNS is not tunnelled. Expected.');
    expect(diagnosisText(r)).toContain("ztunnel's DNS proxy answers the names of Services and ServiceEntries itself");
  });

  it('off on the node: the query goes out as it is, and the diagnosis says how to turn it on', () => {
    const r = simulateMesh({ ...dns, dnsCapture: false });
    expect(r.verdict).toBe('plaintext');
    expect(r.hops).toHaveLength(1);
    expect(r.hops[0]!.receiver).toBe('the network (left through eth0)');
    expect(diagnosisText(r)).toContain("client: DNS capture is off for pod web (the node's ambient.dnsCapture (off))");
    expect(diagnosisText(r)).toContain('Fix: set ambient.istio.io/dns-capture: "true" on the pod');
  });

  it('the pod annotation overrides the node either way', () => {
    const off = simulateMesh({ ...dns, client: annotate(aWeb, { 'ambient.istio.io/dns-capture': 'false' }) });
    expect(off.verdict).toBe('plaintext');
    expect(diagnosisText(off)).toContain('ambient.istio.io/dns-capture: "false" on pod web');
    const on = simulateMesh({ ...dns, dnsCapture: false, client: annotate(aWeb, { 'ambient.istio.io/dns-capture': 'true' }) });
    expect(on.hops[0]!.to).toBe('127.0.0.1:15053');
  });
});

describe('kubelet probes', () => {
  it('with the host rule: SNAT to 169.254.7.127 on the node, the pod lets it through to the app', () => {
    for (const nativeNftables of [false, true]) {
      const r = simulateMesh({ mesh: 'istio', server: aApi, kubelet: true, nativeNftables });
      expect(r.verdict).toBe('plaintext');
      expect(r.origin).toBe('kubelet (uid 0) on the node');
      expect(r.hops.map((h) => `${h.pod}: ${h.from} → ${h.to} [${h.receiver}]`)).toEqual([
        'node: kubelet (uid 0) on the node → 10.0.1.5:8080 [the network (from 169.254.7.127:54878)]',
        'api: 169.254.7.127:54878 (kubelet) → 10.0.1.5:8080 [api (uid 1000)]',
      ]);
      expect(diagnosisText(r)).toContain('rewrote the probe\'s source to 169.254.7.127');
    }
    const r = simulateMesh({ mesh: 'istio', server: aApi, kubelet: true });
    expect(r.hops[0]!.why).toMatch(/^ISTIO_POSTRT rule 1 SNAT to 169\.254\.7\.127/);
    expect(r.hops[1]!.why).toMatch(/^ISTIO_PRERT rule 1 ACCEPT/);
  });

  it('without the host rule: captured by ztunnel; PERMISSIVE lets it through, STRICT makes it fail', () => {
    const r = simulateMesh({ mesh: 'istio', server: aApi, kubelet: true, hostRules: false });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[1]!.to).toBe('10.0.1.5:15006');
    expect(diagnosisText(r)).toContain('the node has no ISTIO_POSTRT rule');
    expect(diagnosisText(r)).toContain('It gets through only because the PeerAuthentication mode is PERMISSIVE');
    const strict = simulateMesh({ mesh: 'istio', server: aApi, kubelet: true, hostRules: false, mtls: 'strict' });
    expect(strict.verdict).toBe('refused');
    const d = diagnosisText(strict);
    expect(d).toContain('so the probe arrives from the node\'s address 10.0.0.1');
    expect(d).toContain('ztunnel rejects it: plain text is refused under STRICT mTLS, so the probe fails');
    expect(d).toContain("Fix: let istio-cni write its host rules on the node");
    // With the rule, STRICT does not matter: the probe never meets ztunnel.
    expect(simulateMesh({ mesh: 'istio', server: aApi, kubelet: true, mtls: 'strict' }).verdict).toBe('plaintext');
  });
});

describe('an app that sets ztunnel\'s mark itself', () => {
  it('bypasses ztunnel (client-bypass), and the diagnosis says it is the mark', () => {
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, mark: 0x539 });
    expect(r.verdict).toBe('client-bypass');
    expect(r.hops[0]!.receiver).toBe('the network (left through eth0)');
    const d = diagnosisText(r);
    expect(d).toContain('client: web (uid 1000) sets SO_MARK 0x539 on its socket, and 0x539 under mask 0xfff is ztunnel\'s own mark');
    expect(d).toContain('Fix: do not set mark bits 0x539/0xfff in the application');
    // Bits outside the mask do not matter: 0x1539 is ztunnel's mark as well; 0x538 is not.
    expect(simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, mark: 0x1539 }).verdict).toBe('client-bypass');
    expect(simulateMesh({ mesh: 'istio', client: aWeb, server: aApi, mark: 0x538 }).verdict).toBe('meshed');
  });
});

describe('renderings', () => {
  it('text, JSON, Mermaid and DOT render an ambient scenario', () => {
    const r = simulateMesh({ mesh: 'istio', client: aWeb, server: aApi });
    expect(renderMesh(r, 'text')).toContain('ztunnel HBONE inbound (HBONE CONNECT 10.0.1.5:8080)');
    const j = JSON.parse(renderMesh(r, 'json')) as { verdict: string; hops: { pod: string; to: string }[] };
    expect(j.verdict).toBe('meshed');
    expect(j.hops.map((h) => h.to)).toEqual(['127.0.0.1:15001', '10.0.1.5:15008', '10.0.1.5:15008', '10.0.1.5:8080']);
    const mmd = renderMesh(r, 'mermaid');
    expect(mmd).toContain('participant P1 as ztunnel @ web');
    expect(mmd).toContain('participant P3 as ztunnel @ api');
    const dot = renderMesh(r, 'dot');
    expect(dot).toContain('label="pod api"');
    expect(dot.match(/\[label="ztunnel"\]/g)).toHaveLength(2);
    const k = simulateMesh({ mesh: 'istio', server: aApi, kubelet: true });
    expect(renderMesh(k, 'text').split('\n')[0]).toBe('istio: kubelet (uid 0) on the node → 10.0.1.5:8080/tcp');
    expect(renderMesh(k, 'mermaid')).toContain('kubelet @ node');
  });
});
