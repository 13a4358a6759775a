/**
 * The node harness for NetworkPolicy enforcers: a node namespace with its pods on veths (the
 * topology of test/netpol/node.ts), the enforcer's ipsets, iptables rules or nft table loaded in
 * the node, and TCP probes between the pods (and from the node) with real sockets
 * (netpol-node.py). Namespaces are anonymous, as in the other kernel suites.
 */
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kernelTools, mapLimit, nftBinary, run } from './harness.js';
import type { NodeLayout } from '../netpol/node.js';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'netpol-node.py');

/** One TCP connection through the node. `from` is a pod key or `node`. */
export interface NodeProbe {
  readonly from: string;
  readonly to: string;
  readonly port: number;
}

/** The node's rules and its pods. */
export interface NodeCase {
  readonly layout: NodeLayout;
  readonly ports: readonly number[];
  readonly rules4?: string;
  readonly ipsets?: string;
  readonly nft?: string;
  readonly probes: readonly NodeProbe[];
}

/** What the kernel did with a probe. */
export interface NodeProbeResult {
  readonly outcome: 'reached' | 'refused' | 'dropped';
  readonly error?: string;
}

export type NodeReport =
  | { readonly ok: true; readonly results: readonly NodeProbeResult[]; readonly timing: { readonly setupMs: number; readonly probesMs: number } }
  | { readonly ok: false; readonly stage: string; readonly status: number; readonly stderr: string };

/** Runs one case in fresh namespaces. */
export async function kernelNodeCase(c: NodeCase, options: { connectTimeoutMs?: number } = {}): Promise<NodeReport> {
  const tools = kernelTools();
  const connectTimeoutMs = options.connectTimeoutMs ?? 400;
  const request = {
    tools,
    nodeAddress: c.layout.nodeAddress,
    pods: c.layout.pods,
    ports: c.ports,
    ...(c.rules4 ? { rules4: c.rules4 } : {}),
    ...(c.ipsets ? { ipsets: c.ipsets } : {}),
    ...(c.nft ? { nft: c.nft, nftBinary: nftBinary() } : {}),
    probes: c.probes,
    connectTimeoutMs,
  };
  const timeoutMs = 60_000 + c.probes.length * (connectTimeoutMs + 300);
  const r = await run([tools.python, SCRIPT], JSON.stringify(request), timeoutMs);
  if (r.timedOut) return { ok: false, stage: 'timeout', status: -1, stderr: r.stderr };
  try {
    return JSON.parse(r.stdout) as NodeReport;
  } catch {
    return { ok: false, stage: 'netpol-node.py', status: r.status, stderr: r.stderr || r.stdout };
  }
}

/** {@link kernelNodeCase} over many cases, a few at a time. */
export function kernelNodeCases(cases: readonly NodeCase[], options: { concurrency?: number; connectTimeoutMs?: number } = {}): Promise<NodeReport[]> {
  return mapLimit(cases, options.concurrency ?? Math.max(2, availableParallelism() * 2), (c) => kernelNodeCase(c, options));
}
