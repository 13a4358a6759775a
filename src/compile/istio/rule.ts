/**
 * What every Istio compiler hands back: restore inputs and rules with their reasons.
 *
 * @module
 */
/**
 * One `iptables-restore --noflush` (family 4) or `ip6tables-restore --noflush` (family 6) input.
 *
 * @example
 * ```ts
 * const r: IstioRestore = { family: 4, text: '* nat\n-N ISTIO_INBOUND\n…\nCOMMIT\n' };
 * ```
 */
export interface IstioRestore {
  readonly family: 4 | 6;
  readonly text: string;
}

/**
 * One generated rule with the reason it exists, for traces and diagnoses.
 *
 * @example
 * ```ts
 * const r: IstioRule = { family: 4, table: 'nat', chain: 'ISTIO_REDIRECT',
 *   text: '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
 *   why: 'outbound listener', option: '-p/--envoy-port' };
 * ```
 */
export interface IstioRule {
  readonly family: 4 | 6;
  readonly table: string;
  readonly chain: string;
  /** The line as it appears in the restore text (`-A …` or `-I CHAIN N …`). */
  readonly text: string;
  readonly why: string;
  /** The flag, environment variable or annotation behind the rule, when one is. */
  readonly option?: string;
}
