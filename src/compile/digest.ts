/**
 * The digests the node components name their chains with: SHA-256 (kube-proxy's `KUBE-SVC-*`,
 * `KUBE-SEP-*` and the nftables mode's `service-XXXXXXXX-…` prefixes, base32 of the digest) and
 * SHA-512 (the CNI plugins' `CNI-*`, `CNI-DN-*` chain names and the ipmasq nftables comments,
 * hex of the digest). Written here rather than taken from `node:crypto` so the compilers run
 * unchanged in the browser.
 *
 * @module
 */

const utf8 = new TextEncoder();

/** Pads a message as both digests do: 0x80, zeros, then the bit length (big-endian). */
function pad(bytes: Uint8Array, block: number, lengthBytes: number): Uint8Array {
  const total = Math.ceil((bytes.length + 1 + lengthBytes) / block) * block;
  const out = new Uint8Array(total);
  out.set(bytes);
  out[bytes.length] = 0x80;
  // Messages here are far below 2^53 bits: the high words of the length stay zero.
  const bits = bytes.length * 8;
  const view = new DataView(out.buffer);
  view.setUint32(total - 4, bits >>> 0);
  view.setUint32(total - 8, Math.floor(bits / 0x100000000));
  return out;
}

const K256 = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 (FIPS 180-4) of the UTF-8 bytes of `text`. */
export function sha256(text: string): Uint8Array {
  const m = pad(utf8.encode(text), 64, 8);
  const view = new DataView(m.buffer);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  for (let off = 0; off < m.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + S1 + ch + K256[i]! + w[i]!) >>> 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) >>> 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = (h[0]! + a) >>> 0;
    h[1] = (h[1]! + b) >>> 0;
    h[2] = (h[2]! + c) >>> 0;
    h[3] = (h[3]! + d) >>> 0;
    h[4] = (h[4]! + e) >>> 0;
    h[5] = (h[5]! + f) >>> 0;
    h[6] = (h[6]! + g) >>> 0;
    h[7] = (h[7]! + k) >>> 0;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, h[i]!);
  return out;
}

// SHA-512 round constants as (high, low) 32-bit halves.
const K512 = [
  '428a2f98d728ae22', '7137449123ef65cd', 'b5c0fbcfec4d3b2f', 'e9b5dba58189dbbc', '3956c25bf348b538', '59f111f1b605d019',
  '923f82a4af194f9b', 'ab1c5ed5da6d8118', 'd807aa98a3030242', '12835b0145706fbe', '243185be4ee4b28c', '550c7dc3d5ffb4e2',
  '72be5d74f27b896f', '80deb1fe3b1696b1', '9bdc06a725c71235', 'c19bf174cf692694', 'e49b69c19ef14ad2', 'efbe4786384f25e3',
  '0fc19dc68b8cd5b5', '240ca1cc77ac9c65', '2de92c6f592b0275', '4a7484aa6ea6e483', '5cb0a9dcbd41fbd4', '76f988da831153b5',
  '983e5152ee66dfab', 'a831c66d2db43210', 'b00327c898fb213f', 'bf597fc7beef0ee4', 'c6e00bf33da88fc2', 'd5a79147930aa725',
  '06ca6351e003826f', '142929670a0e6e70', '27b70a8546d22ffc', '2e1b21385c26c926', '4d2c6dfc5ac42aed', '53380d139d95b3df',
  '650a73548baf63de', '766a0abb3c77b2a8', '81c2c92e47edaee6', '92722c851482353b', 'a2bfe8a14cf10364', 'a81a664bbc423001',
  'c24b8b70d0f89791', 'c76c51a30654be30', 'd192e819d6ef5218', 'd69906245565a910', 'f40e35855771202a', '106aa07032bbd1b8',
  '19a4c116b8d2d0c8', '1e376c085141ab53', '2748774cdf8eeb99', '34b0bcb5e19b48a8', '391c0cb3c5c95a63', '4ed8aa4ae3418acb',
  '5b9cca4f7763e373', '682e6ff3d6b2b8a3', '748f82ee5defb2fc', '78a5636f43172f60', '84c87814a1f0ab72', '8cc702081a6439ec',
  '90befffa23631e28', 'a4506cebde82bde9', 'bef9a3f7b2c67915', 'c67178f2e372532b', 'ca273eceea26619c', 'd186b8c721c0c207',
  'eada7dd6cde0eb1e', 'f57d4f7fee6ed178', '06f067aa72176fba', '0a637dc5a2c898a6', '113f9804bef90dae', '1b710b35131c471b',
  '28db77f523047d84', '32caab7b40c72493', '3c9ebe0a15c9bebc', '431d67c49c100d4c', '4cc5d4becb3e42b6', '597f299cfc657e2a',
  '5fcb6fab3ad6faec', '6c44198c4a475817',
];
const K512_HI = new Uint32Array(K512.map((x) => parseInt(x.slice(0, 8), 16)));
const K512_LO = new Uint32Array(K512.map((x) => parseInt(x.slice(8), 16)));

/** SHA-512 (FIPS 180-4) of the UTF-8 bytes of `text`, in 32-bit halves. */
export function sha512(text: string): Uint8Array {
  const m = pad(utf8.encode(text), 128, 16);
  const view = new DataView(m.buffer);
  const hh = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const hl = new Uint32Array([0xf3bcc908, 0x84caa73b, 0xfe94f82b, 0x5f1d36f1, 0xade682d1, 0x2b3e6c1f, 0xfb41bd6b, 0x137e2179]);
  const wh = new Uint32Array(80);
  const wl = new Uint32Array(80);
  // 64-bit helpers on (hi, lo) pairs.
  const rotr = (h: number, l: number, n: number): [number, number] =>
    n < 32 ? [((h >>> n) | (l << (32 - n))) >>> 0, ((l >>> n) | (h << (32 - n))) >>> 0] : [((l >>> (n - 32)) | (h << (64 - n))) >>> 0, ((h >>> (n - 32)) | (l << (64 - n))) >>> 0];
  const shr = (h: number, l: number, n: number): [number, number] => [h >>> n, ((l >>> n) | (h << (32 - n))) >>> 0];
  for (let off = 0; off < m.length; off += 128) {
    for (let i = 0; i < 16; i++) {
      wh[i] = view.getUint32(off + i * 8);
      wl[i] = view.getUint32(off + i * 8 + 4);
    }
    for (let i = 16; i < 80; i++) {
      const [a1h, a1l] = rotr(wh[i - 15]!, wl[i - 15]!, 1);
      const [a8h, a8l] = rotr(wh[i - 15]!, wl[i - 15]!, 8);
      const [a7h, a7l] = shr(wh[i - 15]!, wl[i - 15]!, 7);
      const s0h = a1h ^ a8h ^ a7h;
      const s0l = a1l ^ a8l ^ a7l;
      const [b19h, b19l] = rotr(wh[i - 2]!, wl[i - 2]!, 19);
      const [b61h, b61l] = rotr(wh[i - 2]!, wl[i - 2]!, 61);
      const [b6h, b6l] = shr(wh[i - 2]!, wl[i - 2]!, 6);
      const s1h = b19h ^ b61h ^ b6h;
      const s1l = b19l ^ b61l ^ b6l;
      let lo = wl[i - 16]! + (s0l >>> 0) + wl[i - 7]! + (s1l >>> 0);
      const hi = wh[i - 16]! + (s0h >>> 0) + wh[i - 7]! + (s1h >>> 0) + Math.floor(lo / 0x100000000);
      lo >>>= 0;
      wh[i] = hi >>> 0;
      wl[i] = lo;
    }
    let ah = hh[0]!, al = hl[0]!, bh = hh[1]!, bl = hl[1]!, ch = hh[2]!, cl = hl[2]!, dh = hh[3]!, dl = hl[3]!;
    let eh = hh[4]!, el = hl[4]!, fh = hh[5]!, fl = hl[5]!, gh = hh[6]!, gl = hl[6]!, kh = hh[7]!, kl = hl[7]!;
    for (let i = 0; i < 80; i++) {
      const [e14h, e14l] = rotr(eh, el, 14);
      const [e18h, e18l] = rotr(eh, el, 18);
      const [e41h, e41l] = rotr(eh, el, 41);
      const S1h = (e14h ^ e18h ^ e41h) >>> 0;
      const S1l = (e14l ^ e18l ^ e41l) >>> 0;
      const chh = ((eh & fh) ^ (~eh & gh)) >>> 0;
      const chl = ((el & fl) ^ (~el & gl)) >>> 0;
      let t1l = kl + S1l + chl + K512_LO[i]! + wl[i]!;
      const t1h = (kh + S1h + chh + K512_HI[i]! + wh[i]! + Math.floor(t1l / 0x100000000)) >>> 0;
      t1l >>>= 0;
      const [a28h, a28l] = rotr(ah, al, 28);
      const [a34h, a34l] = rotr(ah, al, 34);
      const [a39h, a39l] = rotr(ah, al, 39);
      const S0h = (a28h ^ a34h ^ a39h) >>> 0;
      const S0l = (a28l ^ a34l ^ a39l) >>> 0;
      const mjh = ((ah & bh) ^ (ah & ch) ^ (bh & ch)) >>> 0;
      const mjl = ((al & bl) ^ (al & cl) ^ (bl & cl)) >>> 0;
      let t2l = S0l + mjl;
      const t2h = (S0h + mjh + Math.floor(t2l / 0x100000000)) >>> 0;
      t2l >>>= 0;
      kh = gh; kl = gl;
      gh = fh; gl = fl;
      fh = eh; fl = el;
      let nl = dl + t1l;
      eh = (dh + t1h + Math.floor(nl / 0x100000000)) >>> 0;
      el = nl >>> 0;
      dh = ch; dl = cl;
      ch = bh; cl = bl;
      bh = ah; bl = al;
      nl = t1l + t2l;
      ah = (t1h + t2h + Math.floor(nl / 0x100000000)) >>> 0;
      al = nl >>> 0;
    }
    const add = (i: number, h: number, l: number): void => {
      const lo = hl[i]! + l;
      hh[i] = (hh[i]! + h + Math.floor(lo / 0x100000000)) >>> 0;
      hl[i] = lo >>> 0;
    };
    add(0, ah, al); add(1, bh, bl); add(2, ch, cl); add(3, dh, dl);
    add(4, eh, el); add(5, fh, fl); add(6, gh, gl); add(7, kh, kl);
  }
  const out = new Uint8Array(64);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) {
    ov.setUint32(i * 8, hh[i]!);
    ov.setUint32(i * 8 + 4, hl[i]!);
  }
  return out;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 with padding, as Go's `base32.StdEncoding.EncodeToString`. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = ((acc << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(acc << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/** Lower-case hex, as Go's `%x`. */
export function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
