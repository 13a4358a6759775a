/**
 * JSON output written in pieces, so that a result larger than one JavaScript string (about 512 MiB
 * in V8) is still printed. Output is byte-for-byte `JSON.stringify(value, null, 2) + '\n'`.
 * @internal
 */

const CHUNK = 1 << 16;

/** Writes `value` as indented JSON followed by a newline, in chunks of about 64 KiB. */
export function writeJson(value: unknown, write: (text: string) => void): void {
  let buf = '';
  const emit = (s: string): void => {
    buf += s;
    if (buf.length >= CHUNK) {
      write(buf);
      buf = '';
    }
  };
  // The structures printed here (rule sets, traces, results) nest a few levels; arrays and objects
  // are walked, everything else goes through JSON.stringify.
  const walk = (v: unknown, pad: string): void => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
      const inner = pad + '  ';
      if (Array.isArray(v)) {
        if (v.length === 0) return emit('[]');
        emit('[\n');
        for (let i = 0; i < v.length; i++) {
          emit(inner);
          const x: unknown = v[i];
          if (x === undefined || typeof x === 'function' || typeof x === 'symbol') emit('null');
          else walk(x, inner);
          emit(i < v.length - 1 ? ',\n' : '\n');
        }
        return emit(pad + ']');
      }
      const entries = Object.entries(v).filter(([, x]) => x !== undefined && typeof x !== 'function' && typeof x !== 'symbol');
      if (entries.length === 0) return emit('{}');
      emit('{\n');
      entries.forEach(([k, x], i) => {
        emit(`${inner}${JSON.stringify(k)}: `);
        walk(x, inner);
        emit(i < entries.length - 1 ? ',\n' : '\n');
      });
      return emit(pad + '}');
    }
    emit(JSON.stringify(v, null, 2)?.replace(/\n/g, '\n' + pad) ?? 'null');
  };
  walk(value, '');
  emit('\n');
  if (buf.length > 0) write(buf);
}
