/**
 * Bounds on input size, nesting and counts. Past each one the input is refused with a typed error
 * naming the limit, so that hostile or runaway input (a dump pasted from a node, a manifest from a
 * pull request) ends in an answer within bounded time and memory. docs/semantics.md lists them.
 *
 * @module
 */

/** Bytes the CLI reads from one file or from standard input (64 MiB). */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * Rules one parse may create (2^20), counting each rule an `-s a,b -d c,d` expansion produces.
 * iptables itself has no fixed limit; this one bounds memory.
 */
export const MAX_RULES = 1 << 20;

/** Nesting depth of a YAML/JSON manifest (mappings and sequences). Kubernetes objects use about 10. */
export const MAX_MANIFEST_DEPTH = 64;

/**
 * Bytes of YAML one manifest may have (2 MiB; etcd keeps objects up to 1.5 MiB). The yaml package
 * needs tens of bytes of memory per byte of input; JSON manifests are read with `JSON.parse` and
 * only the input limit applies.
 */
export const MAX_YAML_BYTES = 2 * 1024 * 1024;

/** Arguments one argv-style parse accepts (an iptables command, a proxy-init or istio-iptables command line). */
export const MAX_ARGS = 65_536;

/** Characters of one argument given as a string where an argv array is also accepted. */
export const MAX_ARG_STRING_LENGTH = 1024 * 1024;

/**
 * Rule-level trace events (`rule`, `return`) one traced call keeps; past it they are counted in
 * `ConnectResult.traceOmitted`. Hook, verdict, conntrack, NAT and routing events are all kept.
 */
export const MAX_TRACE_RULE_EVENTS = 65_536;

/** Worker threads a batch or pool may start. */
export const MAX_WORKERS = 64;

/**
 * `nf_conntrack_max` when a namespace is created without one: the kernel sizes it from memory
 * (nf_conntrack_core.c, `nf_conntrack_init_start`: 4 × the hash-table size); 262144 is the value
 * of a host with 8 GiB or more, which is what most nodes report.
 */
export const DEFAULT_CONNTRACK_MAX = 262_144;

/** Largest `nf_conntrack_max` a namespace accepts here (2^24 entries). */
export const MAX_CONNTRACK_MAX = 1 << 24;

/**
 * Probes whose recorded outcome one namespace keeps for {@link Netns.connect}'s outcome cache; when
 * a new recording would pass it, the cache is emptied and starts again.
 */
export const MAX_OUTCOME_TEMPLATES = 16_384;

/**
 * Appends `items` to `target` one by one. `target.push(...items)` passes every item as an argument
 * and throws `RangeError` past about 120,000 items; this never does.
 */
export function pushAll<T>(target: T[], items: Iterable<T>): void {
  for (const x of items) target.push(x);
}

/**
 * Length of `s` in UTF-8 bytes, which is what iptables and the kernel count for names, comments
 * and lines (a character outside ASCII takes 2 to 4).
 */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/** The longest prefix of `s` that fits in `bytes` UTF-8 bytes, without splitting a character. */
export function truncateUtf8(s: string, bytes: number): string {
  if (s.length * 3 <= bytes || utf8Length(s) <= bytes) return s;
  let n = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (n + w > bytes) break;
    n += w;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}
