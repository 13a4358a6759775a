// The connection probes the benches share: addresses spread by index, a deterministic mix of
// weighted probe shapes, and the Linkerd and Istio default pods' mixes.

/** An IPv4 address as text. */
export function ip(n) {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** The i-th Service address (10.96/16), external address (10.1/16) and client (10.2/16). */
export const svc = (i) => ip((10 << 24) | (96 << 16) | (i & 0xffff));
export const ext = (i) => ip((10 << 24) | (1 << 16) | (i & 0xffff));
export const client = (i) => ip((10 << 24) | (2 << 16) | (i & 0xffff));

/** A deterministic mix of `n` connection probes from weighted shapes; `i` spreads the addresses. */
export function mix(shapes, n) {
  const out = [];
  const total = shapes.reduce((s, [w]) => s + w, 0);
  for (let i = 0; out.length < n; i++) {
    let k = (i * 7919) % total;
    for (const [w, make] of shapes) {
      if (k < w) {
        out.push(make(i));
        break;
      }
      k -= w;
    }
  }
  return out;
}

/**
 * The Linkerd default pod's probes: the app's outbound TCP (redirected to 4140), the proxy's own
 * traffic, a skipped port, loopback, inbound (redirected to 4143) and the proxy's admin port.
 */
export const LINKERD_SHAPES = [
  [4, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:80` })],
  [2, (i) => ({ from: 'local', uid: 2102, dst: `${ext(i)}:8080` })],
  [1, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:4567` })],
  [1, () => ({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' })],
  [3, (i) => ({ from: 'remote', src: client(i), dst: '10.0.0.2:8080' })],
  [1, (i) => ({ from: 'remote', src: client(i), dst: '10.0.0.2:4191' })],
];

/**
 * The Istio default pod's probes: the app's outbound TCP (redirected to 15001), the proxy's own
 * traffic, loopback, the proxy to the pod's own address, inbound (redirected to 15006) and the
 * proxy's stats port.
 */
export const ISTIO_SHAPES = [
  [4, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:80` })],
  [2, (i) => ({ from: 'local', uid: 1337, gid: 1337, dst: `${ext(i)}:8080` })],
  [1, () => ({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' })],
  [1, () => ({ from: 'local', uid: 1337, gid: 1337, dst: '10.0.0.2:8080' })],
  [3, (i) => ({ from: 'remote', src: client(i), dst: '10.0.0.2:8080' })],
  [1, (i) => ({ from: 'remote', src: client(i), dst: '10.0.0.2:15090' })],
];
