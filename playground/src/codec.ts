// The page's state in the URL fragment: JSON, deflated (CompressionStream 'deflate-raw'), base64url.
// `#s=` then the text. Nothing leaves the browser: a fragment is never sent to a server.

const PREFIX = 's=';

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function pipe(bytes: Uint8Array, stream: CompressionStream | DecompressionStream, limit = Infinity): Promise<Uint8Array> {
  const reader = new Blob([bytes as BlobPart]).stream().pipeThrough(stream).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error('the link holds more than the page accepts');
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The fragment (without `#`) for a state. */
export async function encodeState(state: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  return PREFIX + toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')));
}

/** The state a fragment holds, or null when it holds none; throws when it is damaged. */
export async function decodeState(fragment: string, limitBytes: number): Promise<unknown> {
  const f = fragment.replace(/^#/, '');
  if (!f.startsWith(PREFIX)) return null;
  const bytes = await pipe(fromBase64Url(f.slice(PREFIX.length)), new DecompressionStream('deflate-raw'), limitBytes);
  return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
}
