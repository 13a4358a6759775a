/**
 * The renderers: text tree, JSON, Mermaid, DOT.
 */
import { describe, expect, it } from 'vitest';
import {
  demoLinkerd,
  meshJson,
  renderMesh,
  renderMeshDot,
  renderMeshJson,
  renderMeshMermaid,
  renderMeshText,
  simulateMesh,
} from '../../../src/mesh/index.js';
import { pod } from './helpers.js';

const meshed = simulateMesh({ mesh: 'linkerd' });
const refused = simulateMesh({ mesh: 'linkerd', client: pod('linkerd-web.yaml'), server: pod('linkerd-api.yaml'), cni: true, nativeSidecars: false, phase: 'init:fetch-config' });

describe('text', () => {
  it('nests each hop under the one before it and ends with the verdict', () => {
    const text = renderMeshText(meshed);
    expect(text.split('\n')).toEqual([
      'linkerd: web (uid 1000) in pod client → 10.0.1.5:8080/tcp',
      '└─ client: web (uid 1000) → 127.0.0.1:4140  [linkerd-proxy outbound (SO_ORIGINAL_DST 10.0.1.5:8080)]',
      '   PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
      '   └─ client: linkerd-proxy (uid 2102) → 10.0.1.5:8080  [the network (left through eth0)]',
      '      SO_ORIGINAL_DST 10.0.1.5:8080, no Service there: connects to it as is; PROXY_INIT_OUTPUT rule 1 RETURN "proxy-init/ignore-proxy-user-id"',
      '      └─ server: 10.0.0.2:52120 (client) → 10.0.1.5:4143  [linkerd-proxy inbound (SO_ORIGINAL_DST 10.0.1.5:8080)]',
      '         PROXY_INIT_REDIRECT rule 2 REDIRECT "proxy-init/redirect-all-incoming-to-proxy-port"',
      '         └─ server: linkerd-proxy (uid 2102) → 10.0.1.5:8080  [api (uid 1000)]',
      '            forwards to the original destination 10.0.1.5:8080; PROXY_INIT_OUTPUT rule 1 RETURN "proxy-init/ignore-proxy-user-id"',
      'verdict: meshed (both proxies were traversed)',
      '',
    ]);
  });

  it('lists the diagnosis for anything but meshed; colour only when asked', () => {
    const text = renderMeshText(refused);
    expect(text).toContain('linkerd: fetch-config (uid 1000) in pod web at phase init:fetch-config → 10.0.1.5:8080/tcp');
    expect(text).toContain('verdict: refused (the connection was refused)\ndiagnosis:\n  - client: ');
    expect(text).not.toContain('\u001b[');
    expect(renderMeshText(refused, { color: true })).toContain('\u001b[');
  });
});

describe('json', () => {
  it('is the contract object: verdict, hops with pod/from/to/why, diagnosis', () => {
    const o = JSON.parse(renderMeshJson(refused)) as ReturnType<typeof meshJson>;
    expect(Object.keys(o)).toEqual(['verdict', 'hops', 'diagnosis']);
    expect(o.verdict).toBe('refused');
    expect(o.hops).toEqual([{
      pod: 'web',
      from: 'fetch-config (uid 1000)',
      to: '127.0.0.1:4140',
      why: 'PROXY_INIT_OUTPUT rule 3 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
      receiver: 'nothing: connection refused (no listener at 127.0.0.1:4140: connection reset)',
      outcome: 'refused',
    }]);
    expect(o.diagnosis.length).toBeGreaterThan(0);
    expect(renderMesh(refused, 'json')).toBe(renderMeshJson(refused));
  });
});

describe('mermaid', () => {
  it('is a sequence diagram with one participant per process and -x for a refused hop', () => {
    expect(renderMeshMermaid(meshed)).toBe(`sequenceDiagram
  participant P0 as web @ client
  participant P1 as linkerd-proxy @ client
  participant P2 as network
  participant P3 as linkerd-proxy @ server
  participant P4 as api @ server
  P0->>P1: 127.0.0.1:4140: PROXY_INIT_OUTPUT rule 4 REDIRECT 'proxy-init/redirect-all-outgoing-to-proxy-port'
  P1->>P2: 10.0.1.5:8080: SO_ORIGINAL_DST 10.0.1.5:8080, no Service there: connects to it as is, PROXY_INIT_OUTPUT rule 1 RETURN 'proxy-init/ignore-proxy-user-id'
  P2->>P3: 10.0.1.5:4143: PROXY_INIT_REDIRECT rule 2 REDIRECT 'proxy-init/redirect-all-incoming-to-proxy-port'
  P3->>P4: 10.0.1.5:8080: forwards to the original destination 10.0.1.5:8080, PROXY_INIT_OUTPUT rule 1 RETURN 'proxy-init/ignore-proxy-user-id'
  Note over P0,P4: verdict: meshed
`);
    expect(renderMeshMermaid(refused)).toContain('P0-xP1: 127.0.0.1:4140: PROXY_INIT_OUTPUT rule 3 REDIRECT');
  });
});

describe('dot', () => {
  it('groups processes by pod and numbers the edges', () => {
    const dot = renderMeshDot(meshed);
    expect(dot.startsWith('digraph mesh {\n')).toBe(true);
    expect(dot).toContain('subgraph cluster_0 {\n    label="pod client";\n    n0 [label="web"];\n    n1 [label="linkerd-proxy"];\n  }');
    expect(dot).toContain('n2 [label="network", shape=ellipse];');
    expect(dot).toContain('n0 -> n1 [label="1: 127.0.0.1:4140\\nPROXY_INIT_OUTPUT rule 4 REDIRECT \\"proxy-init/redirect-all-outgoing-to-proxy-port\\""];');
    expect(dot.trimEnd().endsWith('}')).toBe(true);
    expect(renderMeshDot(refused)).toContain('color=red');
  });
});

describe('demoLinkerd', () => {
  it('shows the pods, their rules, the meshed trace and a refused init container', () => {
    const text = demoLinkerd();
    expect(text).toContain('pod client (10.0.0.2): injected with the injector\'s defaults');
    expect(text).toContain('PROXY_INIT_OUTPUT 4: -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT --to-ports 4140');
    expect(text).toContain('verdict: meshed (both proxies were traversed)');
    expect(text).toContain('verdict: refused (the connection was refused)');
  });
});
