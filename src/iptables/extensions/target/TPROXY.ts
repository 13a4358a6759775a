/**
 * `-j TPROXY` (`libxt_TPROXY.c` revision 1, kernel `xt_TPROXY.c`): hands the packet to a local
 * socket without rewriting it: `--on-port` (0 keeps the port), `--on-ip` (default: the incoming
 * interface's address), `--tproxy-mark v[/m]`. mangle table, PREROUTING only, with `-p tcp` or
 * `-p udp`. iptables-save always prints all three (`--on-ip 0.0.0.0`, `--tproxy-mark 0x0/0x0`).
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { formatAddress, parseAddress } from '../../../model/address.js';
import type { TproxyOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, hex, parseMarkMask, serviceToPort, unknownOption } from '../values.js';

/** `-j TPROXY`. */
export const TPROXY: TargetExtension<TproxyOptions> = {
  kind: 'target',
  name: 'TPROXY',
  family: 'both',
  terminal: true,
  options: [
    { name: 'on-port', arg: true },
    { name: 'on-ip', arg: true },
    { name: 'tproxy-mark', arg: true },
  ],
  placement: { tables: ['mangle'], hooks: ['PREROUTING'], protocols: ['tcp', 'udp'] },
  parse(occurrences, ctx) {
    let onPort: number | undefined;
    let onIp: readonly number[] | undefined;
    let markValue = 0;
    let markMask = 0;
    for (const o of occurrences) {
      switch (o.name) {
        case 'on-port': {
          // XTTYPE_PORT: getaddrinfo's service lookup, a decimal number (kept modulo 2^16, as
          // `htons` truncates it: 70000 loads as 4464) or a service name.
          const text = argOf(o);
          const n = /^\d+$/.test(text) ? Number(BigInt(text) % 65536n) : serviceToPort(text, null);
          if (n === null) fail('BAD_PORT', `TPROXY: port "${text}" does not resolve to anything`, o.argSpan ?? o.span, text);
          onPort = n;
          break;
        }
        case 'on-ip': {
          const a = parseAddress(argOf(o), ctx.family);
          if (!a) badValue(o, `TPROXY: bad ${ctx.family === 4 ? 'IPv4' : 'IPv6'} address "${o.arg}"`);
          onIp = a.some((w) => w !== 0) ? a : undefined;
          break;
        }
        case 'tproxy-mark': {
          const m = parseMarkMask(o, 'TPROXY');
          markValue = m.value;
          markMask = m.mask;
          break;
        }
        default:
          unknownOption('TPROXY', o);
      }
    }
    if (onPort === undefined) fail('MISSING_OPTION', 'TPROXY: option "--on-port" must be specified', ctx.span, 'TPROXY');
    const r: { -readonly [K in keyof TproxyOptions]: TproxyOptions[K] } = { onPort, markValue, markMask };
    if (onIp) r.onIp = onIp;
    return r;
  },
  save(o, family) {
    const ip = o.onIp ?? (family === 4 ? [0] : [0, 0, 0, 0]);
    return `--on-port ${o.onPort} --on-ip ${formatAddress(ip, family)} --tproxy-mark ${hex(o.markValue)}/${hex(o.markMask)}`;
  },
};
