/**
 * Linkerd releases: unknown proxy-init and cni-plugin tags are refused instead of being taken for
 * the newest, and cni-plugin v1.7's iptables binary fallback (linkerd2-proxy-init #587).
 */
import { describe, expect, it } from 'vitest';
import { compileLinkerdCni } from '../../../src/compile/linkerd/cni.js';
import { parseProxyInitArgs, proxyInitConfig } from '../../../src/compile/linkerd/config.js';
import { compileProxyInit } from '../../../src/compile/linkerd/proxy-init.js';
import { cniPluginFeatures, isKnownProxyInitRelease, parseProxyInitVersion } from '../../../src/compile/linkerd/version.js';
import { NetfilterSimError } from '../../../src/model/errors.js';

const config = proxyInitConfig({ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102 });

describe('proxy-init tags', () => {
  it('knows the released tags and main, not versions past them', () => {
    for (const v of ['v1.3.12', 'v1.4', 'proxy-init/v2.2.4', 'v2.4.9', 'main']) expect(isKnownProxyInitRelease(parseProxyInitVersion(v)!), v).toBe(true);
    for (const v of ['v2.4.10', 'v2.5.0', 'v3.0.0', 'v1.3.14', 'v2.1.1']) expect(isKnownProxyInitRelease(parseProxyInitVersion(v)!), v).toBe(false);
  });

  it('compileProxyInit and parseProxyInitArgs refuse an unknown tag (BAD_CONFIG), keep refusing old ones as older (UNSUPPORTED)', () => {
    const err = (v: string): NetfilterSimError => {
      try {
        compileProxyInit(config, { upstreamVersion: v });
      } catch (e) {
        return e as NetfilterSimError;
      }
      throw new Error(`${v} was accepted`);
    };
    expect(err('v2.5.0').diagnostics[0]).toMatchObject({ code: 'BAD_CONFIG', message: 'proxy-init v2.5.0 is not a release (releases: v1.0.0 … v2.4.9, or main)' });
    expect(err('v1.2.0').diagnostics[0]!.code).toBe('UNSUPPORTED');
    expect(compileProxyInit(config, { upstreamVersion: 'v2.4.9' }).commands.length).toBeGreaterThan(0);
    expect(parseProxyInitArgs(['-p', '4143'], { upstreamVersion: 'v2.4.10' })).toEqual({ ok: false, error: 'unknown proxy-init version "v2.4.10"' });
  });
});

describe('cni-plugin tags', () => {
  it('knows v1.4.0 … v1.6.8 and v1.7.0-alpha.1; refuses what was never released', () => {
    expect(cniPluginFeatures('cni-plugin/v1.6.8')).toEqual({ proxyInit: 'v2.4.9', nativeSidecarDetection: true, iptablesBinFallback: false });
    expect(cniPluginFeatures('v1.7.0-alpha.1')).toEqual({ proxyInit: 'v2.4.9', nativeSidecarDetection: true, iptablesBinFallback: true });
    for (const v of ['v1.6.9', 'v1.7.0', 'v2.0.0', 'v1.7.0-alpha.2']) expect(cniPluginFeatures(v), v).toBeUndefined();
    expect(() => compileLinkerdCni({ conf: {}, pod: {}, upstreamVersion: 'v1.6.9' })).toThrow('unknown or unmodelled cni-plugin version "v1.6.9" (a release from v1.4.0 to v1.7.0-alpha.1, or main)');
  });
});

describe('cni-plugin v1.7: iptables binary fallback', () => {
  const conf = { 'incoming-proxy-port': 4143, 'outgoing-proxy-port': 4140, 'proxy-uid': 2102, 'iptables-mode': 'legacy' };
  const pod = { kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'web' }, { name: 'linkerd-proxy' }] } };
  const nftOnly = ['iptables-nft', 'iptables-nft-save', 'ip6tables-nft', 'ip6tables-nft-save'];

  it('configured binaries present: used as they are, no warning', () => {
    const r = compileLinkerdCni({ conf, pod, binaries: ['iptables-legacy', 'iptables-legacy-save'], upstreamVersion: 'v1.7.0-alpha.1' });
    expect(r.commands[0]).toMatch(/^iptables-legacy-save /);
    expect(r.warnings).toEqual([]);
  });

  it('v1.7: legacy configured, only nft on the node: the nft pair, with the warning', () => {
    const r = compileLinkerdCni({ conf, pod, binaries: nftOnly, upstreamVersion: 'v1.7.0-alpha.1' });
    expect(r.error).toBeUndefined();
    expect(r.commands[0]).toMatch(/^iptables-nft-save /);
    expect(r.commands.every((c) => !c.startsWith('iptables-legacy'))).toBe(true);
    expect(r.warnings).toContain('iptables: configured binaries not found; applying fallback to available binaries (requested iptables-legacy and iptables-legacy-save, fallback iptables-nft and iptables-nft-save)');
    // Order: nft, then plain, then legacy.
    const plain = compileLinkerdCni({ conf: { ...conf, 'iptables-mode': 'nft' }, pod, binaries: ['iptables', 'iptables-save', 'iptables-legacy', 'iptables-legacy-save'], upstreamVersion: 'main' });
    expect(plain.commands[0]).toMatch(/^iptables-save /);
  });

  it('v1.6.8: the same node fails on the first command', () => {
    const r = compileLinkerdCni({ conf, pod, binaries: nftOnly, upstreamVersion: 'v1.6.8' });
    expect(r.error).toMatchObject({ stage: 'iptables', message: 'exec: "iptables-legacy-save": executable file not found in $PATH', pass: 'ipv4' });
    expect(r.commands).toEqual([]);
  });

  it('v1.7 with no pair on the node: a warning, then the same failure', () => {
    const r = compileLinkerdCni({ conf, pod, binaries: ['iptables-legacy'], upstreamVersion: 'v1.7.0-alpha.1' });
    expect(r.warnings[0]).toMatch(/^iptables: no suitable binaries found on PATH/);
    expect(r.error?.message).toBe('exec: "iptables-legacy-save": executable file not found in $PATH');
  });
});
