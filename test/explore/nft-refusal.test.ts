import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/errors.js';
import { explore } from '../../src/explore/index.js';

const NFT = `table ip t {
\tchain out {
\t\ttype nat hook output priority -100; policy accept;
\t\ttcp dport 80 redirect to :4140
\t}
}
`;

describe('explore and native nftables', () => {
  it('refuses a namespace with nft chains instead of leaving their rules out of the partition', () => {
    let caught: unknown;
    try {
      explore({ from: 'local', rules: NFT, listen: [4140] });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NetfilterSimError);
    expect((caught as NetfilterSimError).diagnostics[0]!.code).toBe('UNSUPPORTED');
    expect((caught as NetfilterSimError).message).toMatch(/nftables/);
  });
});
