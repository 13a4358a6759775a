/**
 * `-j LOG` (`libxt_LOG.c`, kernel `xt_LOG.c`): logs the packet and continues. `--log-prefix`
 * (at most 29 characters: longer ones are cut, as `XTOPT_PUT` strings are), `--log-level`
 * (0-7 or a syslog level name; printed only when not 4, "warning"), and flags printed in the order
 * tcp-sequence, tcp-options, ip-options, uid, macdecode.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { LogOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, saveString, strtoul, unknownOption } from '../values.js';

/** `LOG_WARNING`, the default level. */
const LOG_DEFAULT_LEVEL = 4;
/** `sizeof(xt_log_info.prefix) - 1`. */
const MAX_PREFIX = 29;

/** The level names iptables 1.8.9 takes (`xtopt_sysloglevel`; case-sensitive, checked against the binary). */
const LEVELS: ReadonlyMap<string, number> = new Map([
  ['emerg', 0], ['panic', 0], ['alert', 1], ['crit', 2], ['error', 3], ['warning', 4], ['notice', 5],
  ['info', 6], ['debug', 7],
]);

/** The LOG flags in save order. */
export const LOG_FLAGS: readonly string[] = ['tcp-sequence', 'tcp-options', 'ip-options', 'uid', 'macdecode'];

/** `-j LOG`. */
export const LOG: TargetExtension<LogOptions> = {
  kind: 'target',
  name: 'LOG',
  family: 'both',
  terminal: false,
  options: [
    { name: 'log-level', arg: true },
    { name: 'log-prefix', arg: true },
    { name: 'log-tcp-sequence', arg: false },
    { name: 'log-tcp-options', arg: false },
    { name: 'log-ip-options', arg: false },
    { name: 'log-uid', arg: false },
    { name: 'log-macdecode', arg: false },
  ],
  parse(occurrences) {
    let prefix: string | undefined;
    let level = LOG_DEFAULT_LEVEL;
    const flags = new Set<string>();
    for (const o of occurrences) {
      switch (o.name) {
        case 'log-level': {
          const text = argOf(o);
          const n = strtoul(text, 0, 7) ?? LEVELS.get(text);
          if (n === undefined) badValue(o, `LOG: "${text}" is not a log level (0-7 or a syslog level name)`);
          level = n;
          break;
        }
        case 'log-prefix': {
          const text = argOf(o);
          if (text.length === 0) badValue(o, 'LOG: --log-prefix must have at least 1 character');
          if (text.includes('\n')) fail('BAD_VALUE', 'LOG: newlines are not allowed in --log-prefix', o.argSpan ?? o.span, text);
          prefix = text.slice(0, MAX_PREFIX);
          break;
        }
        default:
          if (!o.name.startsWith('log-') || !LOG_FLAGS.includes(o.name.slice(4))) unknownOption('LOG', o);
          flags.add(o.name.slice(4));
      }
    }
    const r: { -readonly [K in keyof LogOptions]: LogOptions[K] } = { flags: LOG_FLAGS.filter((f) => flags.has(f)) };
    if (prefix !== undefined) r.prefix = prefix;
    if (level !== LOG_DEFAULT_LEVEL) r.level = level;
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.prefix) out.push(`--log-prefix ${saveString(o.prefix)}`);
    if (o.level !== undefined && o.level !== LOG_DEFAULT_LEVEL) out.push(`--log-level ${o.level}`);
    for (const f of LOG_FLAGS) if (o.flags.includes(f)) out.push(`--log-${f}`);
    return out.join(' ');
  },
};
