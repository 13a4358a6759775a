import { describe, expect, it } from 'vitest';
import { compileIstioAmbient } from '../../../src/compile/istio/ambient.js';
import { formatIstioAmbientResult } from '../../../src/compile/istio/format.js';
import { ambientCases, ambientFixture, ambientInput, stripSaveComments } from './ambient-vectors.js';

const iptables = ambientCases('iptables');
const nftables = ambientCases('nftables');

describe('istio-cni ambient, iptables backend: the upstream goldens', () => {
  it('has the 10 iptables cases', () => expect(iptables).toHaveLength(10));

  it.each(iptables)('%s: the recorded commands, byte for byte', (_n, c) => {
    const r = compileIstioAmbient(ambientInput(c, 'iptables'));
    // The upstream file has no newline after its last line; the output ends every line.
    expect(formatIstioAmbientResult(r, 'commands')).toBe(`${ambientFixture(c.file)}\n`);
  });

  it.each(iptables)('%s: save equals what iptables-save and ip6tables-save listed', (_n, c) => {
    const r = compileIstioAmbient(ambientInput(c, 'iptables'));
    expect(c.kernel.accepted).toBe(true);
    expect(formatIstioAmbientResult(r, 'save')).toBe(stripSaveComments(c.kernel.save4!) + stripSaveComments(c.kernel.save6!));
  });
});

describe('istio-cni ambient, nftables backend: the upstream goldens', () => {
  it('has the 10 nftables cases', () => expect(nftables).toHaveLength(10));

  it.each(nftables)('%s: the nft -f transaction, byte for byte', (_n, c) => {
    const r = compileIstioAmbient(ambientInput(c, 'nftables'));
    expect(formatIstioAmbientResult(r, 'commands')).toBe(ambientFixture(c.file));
  });

  it.each(nftables.filter(([, c]) => !c.host))('%s: save equals what nft list ruleset listed', (_n, c) => {
    const r = compileIstioAmbient(ambientInput(c, 'nftables'));
    expect(formatIstioAmbientResult(r, 'save')).toBe(c.kernel.list);
  });

  it('hostprobe: save lists the probe sets istio-cni creates, then the SNAT rule', () => {
    const c = nftables.find(([n]) => n === 'hostprobe')![1];
    const save = formatIstioAmbientResult(compileIstioAmbient(ambientInput(c, 'nftables')), 'save');
    expect(save).toContain('\t\tmeta l4proto tcp meta skuid 1000 ip daddr @istio-inpod-probes-v4 counter packets 0 bytes 0 snat ip to 169.254.7.127\n');
    expect(save).toContain('\tset istio-inpod-probes-v4 {\n\t\ttype ipv4_addr\n');
  });
});
