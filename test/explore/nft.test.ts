// explore over native nftables chains (and nft beside iptables): the partition law, agreement
// with connect, and the typed refusals for what cannot be split exactly.
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/errors.js';
import { explore } from '../../src/explore/index.js';
import { mulberry32 } from '../kernel/generate.js';
import { cornerProbes, expectAgreement, expectPartition } from './helpers.js';

const NFT = `table ip t {
\tchain out {
\t\ttype nat hook output priority -100; policy accept;
\t\tmeta skuid 1337 return
\t\tip daddr 127.0.0.1 return
\t\ttcp dport { 22, 100-200 } return
\t\tip daddr . tcp dport { 10.0.0.1 . 80, 10.0.0.2 . 443 } accept
\t\ttcp dport 80 redirect to :4140
\t}
}
`;

describe('explore over native nftables', () => {
  it('splits on uid, address, port sets and concatenations, and agrees with connect', () => {
    const options = { from: 'local' as const, rules: NFT, listen: [4140], family: 4 as const };
    const r = explore(options);
    expectPartition(r, 4);
    const redirected = r.classes.filter((c) => c.outcome === 'local' && c.port === 4140);
    expect(redirected.length).toBeGreaterThan(0);
    for (const p of cornerProbes(r, 4, mulberry32(7), 60)) expectAgreement(r, options, p);
  });
});
