/**
 * Option shapes of the targets whose effect the engine applies. The target modules in
 * `src/iptables/extensions/target/` parse and print these; the engine reads them.
 *
 * @module
 */

/** An inclusive port range. */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

/** A NAT range (`--to-destination`, `--to-source`): addresses and ports, each optional. */
export interface NatRange {
  /** Lowest and highest address, as 32-bit words; absent when only a port was given. */
  readonly addrMin?: readonly number[];
  readonly addrMax?: readonly number[];
  readonly ports?: PortRange;
  /**
   * `…:a-b/base` (DNAT revision 2, `NF_NAT_RANGE_PROTO_OFFSET`): ports are shifted so that `base`
   * maps to `a`, instead of being picked from the range. SNAT saves it as 0 (see `nat-range.ts`).
   */
  readonly baseport?: number;
}

/** `-j REDIRECT [--to-ports p[-q]] [--random]`. */
export interface RedirectOptions {
  readonly toPorts?: PortRange;
  readonly random: boolean;
}

/** `-j DNAT --to-destination …`. */
export interface DnatOptions {
  readonly to: NatRange;
  readonly random: boolean;
  readonly persistent: boolean;
}

/** `-j SNAT --to-source …`. */
export interface SnatOptions {
  readonly to: NatRange;
  readonly random: boolean;
  readonly randomFully: boolean;
  readonly persistent: boolean;
}

/** `-j MASQUERADE [--to-ports …]`. */
export interface MasqueradeOptions {
  readonly toPorts?: PortRange;
  /** `--to-ports a-b/base`: iptables 1.8.9 keeps the offset flag but saves the base as 0. */
  readonly baseport?: number;
  readonly random: boolean;
  readonly randomFully: boolean;
}

/** `-j MARK`: every form is stored as the kernel does, `mark = (mark & ~mask) ^ value`. */
export interface MarkOptions {
  readonly value: number;
  readonly mask: number;
}

/** `-j CONNMARK`. */
export type ConnmarkOptions =
  /** `--set-xmark value/mask`: ctmark = (ctmark & ~mask) ^ value. */
  | { readonly mode: 'set'; readonly value: number; readonly mask: number }
  /** `--save-mark`: ctmark = (ctmark & ~ctmask) ^ (nfmark & nfmask). */
  | { readonly mode: 'save'; readonly nfmask: number; readonly ctmask: number }
  /** `--restore-mark`: nfmark = (nfmark & ~nfmask) ^ (ctmark & ctmask). */
  | { readonly mode: 'restore'; readonly nfmask: number; readonly ctmask: number };

/** `-j TPROXY --on-port p [--on-ip a] [--tproxy-mark v/m]`. */
export interface TproxyOptions {
  readonly onPort: number;
  readonly onIp?: readonly number[];
  readonly markValue: number;
  readonly markMask: number;
}

/** `-j CT`. */
export interface CtOptions {
  readonly notrack: boolean;
  readonly zone?: number;
  readonly zoneDirection?: 'orig' | 'reply';
  readonly helper?: string;
}

/** `-j REJECT [--reject-with type]`; `rejectWith` is the canonical name iptables-save prints. */
export interface RejectOptions {
  readonly rejectWith: string;
}

/** `-j LOG`. */
export interface LogOptions {
  readonly prefix?: string;
  readonly level?: number;
  readonly flags: readonly string[];
}
