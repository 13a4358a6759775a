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

/** Arguments one argv-style parse accepts (an iptables command, a proxy-init or istio-iptables command line). */
export const MAX_ARGS = 65_536;

/** Characters of one argument given as a string where an argv array is also accepted. */
export const MAX_ARG_STRING_LENGTH = 1024 * 1024;

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
 * Appends `items` to `target` one by one. `target.push(...items)` passes every item as an argument
 * and throws `RangeError` past about 120,000 items; this never does.
 */
export function pushAll<T>(target: T[], items: Iterable<T>): void {
  for (const x of items) target.push(x);
}
