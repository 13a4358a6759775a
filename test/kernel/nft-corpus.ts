/**
 * The real-world nft corpus (test/fixtures/nft-corpus): rule sets written here in the shape that
 * OpenWrt's fw4, firewalld with libvirt, Docker 29, LXD, libvirt's nftables backend, k3s
 * (flannel + kube-proxy), NixOS, Debian's and Arch's defaults, a home router, wg-quick,
 * Tailscale and nftables' own examples produce. Each file has `NAME.list`: what nft 1.0.6 listed
 * after loading it (recorded here, and checked live by nft-corpus.differential.test.ts), and
 * below, the probes its connect differential makes in the harness's pod (lo, eth0 10.0.0.2/24,
 * the world behind 10.0.0.1).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimProbe } from './generate.js';

export const CORPUS_DIR = join(import.meta.dirname, '..', 'fixtures', 'nft-corpus');

export interface CorpusEntry {
  readonly name: string;
  /** What the file is in the shape of. */
  readonly shape: string;
  /** Interfaces the host must have beside eth0 (the rules name them by index). */
  readonly interfaces?: readonly string[];
  readonly listen: readonly number[];
  readonly probes: readonly SimProbe[];
}

const remote = (port: number, src = '10.1.0.5'): SimProbe => ({ from: 'remote', src, dst: `10.0.0.2:${port}` });
const local = (dst: string, uid = 1000): SimProbe => ({ from: 'local', uid, gid: uid, dst });

export const CORPUS: readonly CorpusEntry[] = [
  {
    name: 'fw4-router', shape: 'OpenWrt fw4', listen: [22, 80],
    probes: [remote(22), remote(80), remote(8022), remote(8080), local('10.9.0.1:443'), local('127.0.0.1:80')],
  },
  {
    name: 'firewalld-libvirt', shape: 'firewalld 1.x with libvirt', listen: [22, 80, 9090],
    probes: [remote(22), remote(9090), remote(80), remote(2222), local('10.9.0.1:80'), local('127.0.0.1:80')],
  },
  {
    name: 'docker29', shape: 'Docker 29 nftables backend', listen: [22, 8080],
    probes: [local('10.0.0.2:8080'), local('127.0.0.1:8080'), remote(22), remote(8080)],
  },
  { name: 'lxd', shape: 'LXD bridge', listen: [22], probes: [remote(22), local('10.9.0.1:80')] },
  {
    name: 'libvirt-network', shape: "libvirt's nftables backend", interfaces: ['virbr0p', 'virbr0'], listen: [22],
    probes: [remote(22), local('10.9.0.1:80'), local('127.0.0.1:22')],
  },
  {
    name: 'k3s-flannel', shape: 'k3s: flannel and kube-proxy (nftables)', listen: [53],
    probes: [local('10.43.0.10:53'), local('10.43.0.10:80'), local('127.0.0.1:53'), remote(53)],
  },
  {
    name: 'nixos-firewall', shape: 'NixOS nftables firewall', listen: [22, 80],
    probes: [remote(22), remote(80), local('10.9.0.1:443'), local('127.0.0.1:80')],
  },
  { name: 'debian-default', shape: 'Debian /etc/nftables.conf', listen: [22], probes: [remote(22), local('10.9.0.1:80')] },
  {
    name: 'arch-default', shape: 'Arch Linux /etc/nftables.conf', listen: [22, 80],
    probes: [remote(22), remote(80), local('10.9.0.1:443'), local('127.0.0.1:80')],
  },
  {
    name: 'home-router', shape: 'a hand-written home router', listen: [22, 443, 80],
    probes: [remote(22), remote(22, '10.2.0.5'), remote(443), remote(80), remote(2222), local('10.9.0.1:443'), local('127.0.0.1:80')],
  },
  { name: 'wireguard-wg-quick', shape: 'wg-quick', listen: [22], probes: [remote(22), local('10.9.0.1:80')] },
  {
    name: 'tailscale', shape: 'Tailscale (nftables mode)', listen: [22],
    probes: [remote(22), remote(22, '100.64.1.1'), remote(22, '100.115.92.9'), local('10.9.0.1:80')],
  },
  {
    name: 'nft-examples', shape: "nftables' examples", listen: [22, 23, 80, 443],
    probes: [remote(22), remote(22, '192.0.2.9'), remote(22, '172.16.0.5'), remote(443), remote(23), remote(80), local('127.0.0.1:22')],
  },
];

/** The corpus file's text. */
export function corpusText(name: string): string {
  return readFileSync(join(CORPUS_DIR, `${name}.nft`), 'utf8');
}

/** What nft 1.0.6 listed after loading the file. */
export function corpusListing(name: string): string {
  return readFileSync(join(CORPUS_DIR, `${name}.list`), 'utf8');
}
