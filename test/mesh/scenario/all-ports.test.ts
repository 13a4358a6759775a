// mesh --all-ports: the port ranges cover 1-65535, and each range's verdict is what simulateMesh
// gives for any port in it (checked at the ends of every range and at random ports).
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../../src/cli/io.js';
import { run } from '../../../src/cli/run.js';
import { simulateMeshAllPorts } from '../../../src/mesh/all-ports.js';
import type { MeshAllPortsResult } from '../../../src/mesh/all-ports.js';
import { simulateMesh } from '../../../src/mesh/simulate.js';
import { mulberry32 } from '../../kernel/generate.js';

function expectExact(r: MeshAllPortsResult, mesh: 'linkerd' | 'istio', seed: number): void {
  expect(r.ranges[0]!.ports[0]).toBe(1);
  expect(r.ranges[r.ranges.length - 1]!.ports[1]).toBe(65535);
  for (let i = 1; i < r.ranges.length; i++) {
    expect(r.ranges[i]!.ports[0]).toBe(r.ranges[i - 1]!.ports[1] + 1);
    expect(r.ranges[i]!.verdict).not.toBe(r.ranges[i - 1]!.verdict);
  }
  const rand = mulberry32(seed);
  const verdictAt = (port: number): string => r.ranges.find((x) => x.ports[0] <= port && port <= x.ports[1])!.verdict;
  const ports = [...r.ranges.flatMap((x) => [x.ports[0], x.ports[1]]), ...Array.from({ length: 20 }, () => 1 + Math.floor(rand() * 65535))];
  for (const port of ports) expect(simulateMesh({ mesh, dst: `${r.address}:${port}` }).verdict, `port ${port}`).toBe(verdictAt(port));
}

describe('mesh --all-ports', () => {
  it('linkerd defaults: exact port ranges, and the proxy uid gets its own', () => {
    const r = simulateMeshAllPorts({ mesh: 'linkerd' });
    expectExact(r, 'linkerd', 1);
    expect(r.ranges).toContainEqual({ ports: [8080, 8080], verdict: 'meshed' });
    expect(r.ranges).toContainEqual({ ports: [4190, 4191], verdict: 'server-bypass' });
    const proxy = r.byUid!.find((u) => u.uids[0] === 2102 && u.uids[1] === 2102)!;
    expect(proxy.ranges).toContainEqual({ ports: [8080, 8080], verdict: 'client-bypass' });
    for (const port of [8080, 4190]) {
      const at = proxy.ranges.find((x) => x.ports[0] <= port && port <= x.ports[1])!.verdict;
      expect(simulateMesh({ mesh: 'linkerd', dst: `${r.address}:${port}`, uid: 2102 }).verdict).toBe(at);
    }
  });

  it('istio defaults', () => {
    const r = simulateMeshAllPorts({ mesh: 'istio' });
    expectExact(r, 'istio', 2);
    expect(r.ranges).toContainEqual({ ports: [8080, 8080], verdict: 'meshed' });
  });

  it('the CLI: text and --json', async () => {
    const io = memoryIO({}, '');
    expect(await run(['mesh', 'linkerd', '--all-ports'], io)).toBe(0);
    expect(io.out).toMatch(/^linkerd: every port of 10\.0\.1\.5, from uid 1000\n {2}1–4142 refused · 4143 loop · /);
    const j = memoryIO({}, '');
    expect(await run(['mesh', 'linkerd', '--all-ports', '--json'], j)).toBe(0);
    expect(JSON.parse(j.out)).toMatchObject({ mesh: 'linkerd', address: '10.0.1.5', uid: 1000 });
  });
});
