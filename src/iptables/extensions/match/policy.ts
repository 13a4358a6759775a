/**
 * `-m policy` (`libxt_policy.c`, kernel `xt_policy.c`): the IPsec policy a packet was (`--dir
 * in`) or will be (`--dir out`) processed by. `--pol none` matches packets without IPsec;
 * `--pol ipsec` with optional elements (`--reqid`, `--spi`, `--proto`, `--mode`,
 * `--tunnel-src`, `--tunnel-dst`, separated by `--next` in `--strict` mode).
 *
 * Not evaluated faithfully beyond that: IPsec is not modelled, so every packet is taken to have
 * no policy: `--pol none` matches, `--pol ipsec` does not.
 *
 * @module
 */
import { diagnostic, fail, type Diagnostic } from '../../../model/errors.js';
import type { Family, HookName, Negatable } from '../../../model/types.js';
import { checkentryHooks, hookDiagnostic } from '../placement.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, formatAddrMask, hex, missing, parseHostMask, parseUint32, unknownOption } from '../values.js';

/** `XT_POLICY_MAX_ELEM`. */
const MAX_ELEMENTS = 4;

/** One policy element. */
export interface PolicyElement {
  readonly reqid?: Negatable<number>;
  readonly spi?: Negatable<number>;
  readonly proto?: Negatable<'esp' | 'ah' | 'ipcomp'>;
  readonly mode?: Negatable<'transport' | 'tunnel'>;
  readonly tunnelSrc?: Negatable<{ readonly addr: readonly number[]; readonly mask: readonly number[] }>;
  readonly tunnelDst?: Negatable<{ readonly addr: readonly number[]; readonly mask: readonly number[] }>;
}

/** Options of `-m policy`. */
export interface PolicyOptions {
  readonly dir: 'in' | 'out';
  readonly pol: 'none' | 'ipsec';
  readonly strict: boolean;
  readonly elements: readonly PolicyElement[];
}

const IN_HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD'];
const OUT_HOOKS: readonly HookName[] = ['POSTROUTING', 'OUTPUT', 'FORWARD'];

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): PolicyOptions {
  let dir: PolicyOptions['dir'] | undefined;
  let pol: PolicyOptions['pol'] | undefined;
  let strict = false;
  const elements: PolicyElement[] = [];
  let cur: { -readonly [K in keyof PolicyElement]: PolicyElement[K] } = {};
  const once = (o: OptionOccurrence, present: unknown): void => {
    if (present !== undefined) fail('DUPLICATE_OPTION', `policy: option "${o.written}" can only be used once per element`, o.span, o.written);
  };
  for (const o of occurrences) {
    const neg = <T>(value: T): Negatable<T> => ({ negated: o.negated, value });
    switch (o.name) {
      case 'dir': {
        const v = argOf(o);
        if (v !== 'in' && v !== 'out') badValue(o, `policy: bad direction "${v}" (in or out)`);
        dir = v;
        break;
      }
      case 'pol': {
        const v = argOf(o);
        if (v !== 'none' && v !== 'ipsec') badValue(o, `policy: bad policy "${v}" (none or ipsec)`);
        pol = v;
        break;
      }
      case 'strict': strict = true; break;
      case 'reqid': once(o, cur.reqid); cur.reqid = neg(parseUint32(o, 'policy')); break;
      case 'spi': once(o, cur.spi); cur.spi = neg(parseUint32(o, 'policy')); break;
      case 'proto': {
        once(o, cur.proto);
        const v = argOf(o).toLowerCase();
        const p = v === '50' ? 'esp' : v === '51' ? 'ah' : v === '108' ? 'ipcomp' : v;
        if (p !== 'esp' && p !== 'ah' && p !== 'ipcomp') badValue(o, `policy: protocol "${o.arg}" is not an IPsec protocol (esp, ah, ipcomp)`);
        cur.proto = neg(p);
        break;
      }
      case 'mode': {
        once(o, cur.mode);
        const v = argOf(o);
        if (v !== 'transport' && v !== 'tunnel') badValue(o, `policy: bad mode "${v}" (transport or tunnel)`);
        cur.mode = neg(v);
        break;
      }
      case 'tunnel-src': once(o, cur.tunnelSrc); cur.tunnelSrc = neg(parseHostMask(o, 'policy', ctx.family)); break;
      case 'tunnel-dst': once(o, cur.tunnelDst); cur.tunnelDst = neg(parseHostMask(o, 'policy', ctx.family)); break;
      case 'next':
        if (Object.keys(cur).length === 0) fail('BAD_VALUE', 'policy: empty policy element before --next', o.span, o.written);
        if (elements.length + 1 >= MAX_ELEMENTS) fail('BAD_VALUE', `policy: at most ${MAX_ELEMENTS} policy elements`, o.span, o.written);
        elements.push(cur);
        cur = {};
        break;
      default:
        unknownOption('policy', o);
    }
  }
  if (dir === undefined) missing(ctx, 'policy', 'neither --dir in nor --dir out specified');
  pol ??= 'ipsec'; // policy_parse: XT_POLICY_MATCH_NONE only with --pol none
  if (Object.keys(cur).length > 0) elements.push(cur);
  for (const e of elements) {
    if ((e.tunnelSrc || e.tunnelDst) && e.mode?.value !== 'tunnel') {
      fail('CONFLICTING_OPTIONS', 'policy: --tunnel-src/--tunnel-dst is only valid in tunnel mode (--mode tunnel)', ctx.span, 'policy');
    }
  }
  if (pol === 'none') {
    if (strict) fail('CONFLICTING_OPTIONS', 'policy: --pol none cannot be used with --strict', ctx.span, 'policy');
    if (elements.length > 0) fail('CONFLICTING_OPTIONS', 'policy: --pol none cannot be used with policy elements', ctx.span, 'policy');
  } else if (!strict && elements.length > 1) {
    fail('MISSING_OPTION', 'policy: several elements need --strict', ctx.span, 'policy');
  }
  return { dir, pol, strict, elements };
}

function save(o: PolicyOptions, family: Family): string {
  const out = [`--dir ${o.dir}`, `--pol ${o.pol}`];
  if (o.strict) out.push('--strict');
  const neg = (v: Negatable<unknown>): string => (v.negated ? '! ' : '');
  o.elements.forEach((e, i) => {
    if (i > 0) out.push('--next');
    if (e.reqid) out.push(`${neg(e.reqid)}--reqid ${e.reqid.value}`);
    if (e.spi) out.push(`${neg(e.spi)}--spi ${hex(e.spi.value)}`);
    if (e.proto) out.push(`${neg(e.proto)}--proto ${e.proto.value}`);
    if (e.mode) out.push(`${neg(e.mode)}--mode ${e.mode.value}`);
    if (e.tunnelDst) out.push(`${neg(e.tunnelDst)}--tunnel-dst ${formatAddrMask(e.tunnelDst.value.addr, e.tunnelDst.value.mask, family)}`);
    if (e.tunnelSrc) out.push(`${neg(e.tunnelSrc)}--tunnel-src ${formatAddrMask(e.tunnelSrc.value.addr, e.tunnelSrc.value.mask, family)}`);
  });
  return out.join(' ');
}

/** `-m policy`. */
export const policy: MatchExtension<PolicyOptions> = {
  kind: 'match',
  name: 'policy',
  family: 'both',
  options: [
    { name: 'dir', arg: true },
    { name: 'pol', arg: true },
    { name: 'strict', arg: false },
    { name: 'reqid', arg: true, negatable: true, multi: true },
    { name: 'spi', arg: true, negatable: true, multi: true },
    { name: 'proto', arg: true, negatable: true, multi: true },
    { name: 'mode', arg: true, negatable: true, multi: true },
    { name: 'tunnel-src', arg: true, negatable: true, multi: true },
    { name: 'tunnel-dst', arg: true, negatable: true, multi: true },
    { name: 'next', arg: false, multi: true },
  ],
  parse,
  save,
  // policy_mt_check: --dir in only before routing/local delivery, --dir out only after (a test of
  // hook_mask, so a user chain loads either under nft).
  check(o, ctx): Diagnostic[] {
    const out: Diagnostic[] = [];
    const hooks = checkentryHooks(ctx);
    if (hooks) {
      const allowed = o.dir === 'in' ? IN_HOOKS : OUT_HOOKS;
      const bad = hooks.filter((h) => !allowed.includes(h));
      if (bad.length > 0) out.push(hookDiagnostic(`policy match --dir ${o.dir}`, bad, allowed, undefined, 'policy'));
    }
    if (o.elements.length > MAX_ELEMENTS) out.push(diagnostic('BAD_VALUE', `policy: at most ${MAX_ELEMENTS} elements`, undefined, 'policy'));
    return out;
  },
  lower(o) {
    const result = o.pol === 'none';
    return () => result;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `IPsec is not modelled: packets carry no policy, so --pol ${o.pol} ${o.pol === 'none' ? 'matches' : 'never matches'}`;
  },
};
